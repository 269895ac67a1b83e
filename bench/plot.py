#!/usr/bin/env python3
"""Draws bench/compare.sh result tables as one SVG: each engine's ratio to llama-bench per test, a panel per
results file (model), the CPU and llama.cpp build named, the llama-bench line at 1.0.

Usage: bench/plot.py OUT.svg RESULTS.md [RESULTS.md ...]

RESULTS.md is what `bench/compare.sh --save` writes (or its table on standard output): the line 'Model M, N
threads, CPU: C; …' and rows '| sanad ENGINE | TEST | t/s | llama-bench t/s | ratio |'. Hand-written SVG, no
dependencies; rows marked unavailable are left out and said in the panel.
"""
import html
import re
import sys

COLORS = {"pure-swift": "#1f77b4", "blas": "#2ca02c", "llama": "#d62728", "openai": "#9467bd"}
OTHER = ["#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"]


def read(path):
    text = open(path, encoding="utf-8").read()
    head = re.search(r"Model (\S+), (\d+) threads, CPU: ([^;]+);", text)
    if not head:
        sys.exit(f"plot: {path}: no 'Model …, N threads, CPU: …;' line (is it a bench/compare.sh table?)")
    build = re.search(r"llama\.cpp (build: \S+[^;\n]*)", text)
    rows, missing = [], []
    for m in re.finditer(r"^\| sanad (\S+) \| ([^|]+?) \| ([^|]+?) \| ([^|]+?) \| ([^|]+?) \|$", text, re.M):
        engine, test, ratio = m.group(1), m.group(2).strip(), m.group(5).strip()
        if ratio in ("—", "-"):
            missing.append(f"{engine} {test}")
        else:
            rows.append((engine, test, float(ratio)))
    if not rows:
        sys.exit(f"plot: {path}: no '| sanad ENGINE | TEST | … | ratio |' rows")
    return {"model": head.group(1), "threads": head.group(2), "cpu": head.group(3).strip(),
            "build": build.group(1).strip() if build else "", "rows": rows, "missing": missing}


def panel(p, x0, y0, width, height, colors, top):
    """One model's grouped bars on a shared scale (`top`, the largest ratio shown); returns SVG elements."""
    tests = list(dict.fromkeys(t for _, t, _ in p["rows"]))
    engines = list(dict.fromkeys(e for e, _, _ in p["rows"]))
    ratio = {(e, t): r for e, t, r in p["rows"]}
    left, bottom = 46, 54
    plot_w, plot_h = width - left - 10, height - bottom - 34
    y = lambda v: y0 + 34 + plot_h * (1 - v / top)
    out = [f'<text x="{x0 + width / 2}" y="{y0 + 18}" text-anchor="middle" font-weight="bold">'
           f'{html.escape(p["model"])}, {p["threads"]} threads</text>']
    step = 0.5 if top <= 3 else 1.0
    v = 0.0
    while v <= top + 1e-9:
        out.append(f'<line x1="{x0 + left}" x2="{x0 + left + plot_w}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 + left - 6}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="11">{v:g}×</text>')
        v += step
    group = plot_w / len(tests)
    bar = min(28, group * 0.8 / len(engines))
    for i, t in enumerate(tests):
        gx = x0 + left + i * group + (group - bar * len(engines)) / 2
        for j, e in enumerate(engines):
            if (e, t) not in ratio:
                continue
            r = ratio[(e, t)]
            bx = gx + j * bar
            out.append(f'<rect x="{bx:.1f}" y="{y(r):.1f}" width="{bar - 2:.1f}" height="{y(0) - y(r):.1f}" '
                       f'fill="{colors[e]}"><title>{html.escape(e)} {html.escape(t)}: {r:.2f}×</title></rect>')
            out.append(f'<text x="{bx + (bar - 2) / 2:.1f}" y="{y(r) - 3:.1f}" text-anchor="middle" '
                       f'font-size="10">{r:.2f}</text>')
        out.append(f'<text x="{x0 + left + (i + 0.5) * group:.1f}" y="{y(0) + 16:.1f}" text-anchor="middle" '
                   f'font-size="11">{html.escape(t)}</text>')
    out.append(f'<line x1="{x0 + left}" x2="{x0 + left + plot_w}" y1="{y(1):.1f}" y2="{y(1):.1f}" stroke="#000" '
               f'stroke-dasharray="5,3"/>')
    if p["missing"]:
        out.append(f'<text x="{x0 + left}" y="{y(0) + 34:.1f}" font-size="10" fill="#666">unavailable: '
                   f'{html.escape(", ".join(p["missing"]))}</text>')
    return out


def main(argv):
    if len(argv) < 3 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) > 1 and argv[1] in ("-h", "--help") else 64
    panels = [read(path) for path in argv[2:]]
    engines = list(dict.fromkeys(e for p in panels for e, _, _ in p["rows"]))
    colors = {e: COLORS.get(e) or OTHER[i % len(OTHER)] for i, e in enumerate(engines)}
    pw, ph = max(360, 120 * max(len({t for _, t, _ in p["rows"]}) for p in panels)), 300
    width, height = pw * len(panels), ph + 70
    cpus = sorted({p["cpu"] for p in panels})
    builds = sorted({p["build"] for p in panels if p["build"]})
    body = [f'<rect width="{width}" height="{height}" fill="#fff"/>',
            f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">'
            f'Sanad engines, t/s as a multiple of llama-bench (b11434), CPU: {html.escape(", ".join(cpus))}</text>']
    top = max(2.0, max(r for p in panels for _, _, r in p["rows"]) * 1.15)
    for i, p in enumerate(panels):
        body += panel(p, i * pw, 26, pw, ph, colors, top)
    body.append(f'<line x1="20" x2="44" y1="{height - 24}" y2="{height - 24}" stroke="#000" stroke-dasharray="5,3"/>')
    body.append(f'<text x="50" y="{height - 20}" font-size="12">llama-bench b11434 (1×)</text>')
    lx = 240
    for e in engines:
        body.append(f'<rect x="{lx}" y="{height - 30}" width="12" height="12" fill="{colors[e]}"/>')
        body.append(f'<text x="{lx + 16}" y="{height - 20}" font-size="12">sanad {html.escape(e)}</text>')
        lx += 40 + 8 * len(e) + 40
    if builds:
        body.append(f'<text x="{width - 10}" y="{height - 20}" text-anchor="end" font-size="10" fill="#666">'
                    f'llama.cpp {html.escape(builds[0])}</text>')
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">\n'
           + "\n".join(body) + "\n</svg>\n")
    with open(argv[1], "w", encoding="utf-8") as f:
        f.write(svg)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
