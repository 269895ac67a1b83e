#!/usr/bin/env bash
# Runs llama-bench (the pinned llama.cpp b11434 build) and `sanad bench` for every available engine on the same
# machine, in one run, alternating, and prints one table: each engine's t/s and its ratio to llama-bench.
# Each figure is the median over the repeated pairs (these machines are shared and noisy).
set -euo pipefail

usage() {
    cat <<USAGE
Usage: bench/compare.sh [-m MODEL] [-t THREADS] [-p N] [-n N] [-d N[,N...]] [-ctk TYPE] [-ctv TYPE] [-r REPS]
                        [--pairs K] [--backends LIST]
                        [--save] [--label NAME] [--plot FILE.svg]

Alternates K times: llama-bench, then sanad bench (all engines), each with -r REPS repetitions of pp N and tg N.
Prints a markdown table of medians over the K pairs with each engine's ratio to llama-bench.

Options:
  -m MODEL         model path or file name in the models folder (default: SmolLM2-135M-Instruct.Q4_1.gguf)
  -t THREADS       threads for both tools (default: 2)
  -p N             prompt length (default: 512)
  -n N             generation length (default: 128)
  -d LIST          context depths, passed to both tools (llama-bench's -d: the KV cache holds that many tokens
                   before each test; default: 0)
  -ctk, -ctv TYPE  KV cache key/value type, passed to both tools (f16, the default, or q8_0: llama-bench's
                   -ctk/-ctv; llama-bench turns flash attention on for a q8_0 value cache)
  -r REPS          repetitions inside each tool run (default: 3)
  --pairs K        alternating pairs (default: 3)
  --backends LIST  sanad engines (default: all)
  --save           also write the table to bench/results/<date>-<model>-<cpu>.md
  --label NAME     with --save: write bench/results/<date>-NAME-<model>-<cpu>.md instead, so that a run (a family
                   of synthetic models, a kernel change) gets its own file beside the tables the README's plot reads
  --plot FILE.svg  also draw the ratios as an SVG (bench/plot.py; 'bench/plot.py OUT.svg bench/results/X.md ...'
                   draws saved tables, one panel per model)
  -h, --help       this help

Environment: LLAMA_BENCH (default: llama-bench on PATH, else /usr/local/bin/llama-bench), SANAD (default: the
release build .build/release/sanad, built if missing), SANAD_MODELS (models folder).
USAGE
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODEL="SmolLM2-135M-Instruct.Q4_1.gguf"
THREADS=2
PP=512
TG=128
DEPTHS=0
CACHE_K=f16
CACHE_V=f16
REPS=3
PAIRS=3
BACKENDS=all
SAVE=0
LABEL=""
PLOT=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        -m) MODEL="$2"; shift 2 ;;
        -t) THREADS="$2"; shift 2 ;;
        -p) PP="$2"; shift 2 ;;
        -n) TG="$2"; shift 2 ;;
        -d) DEPTHS="$2"; shift 2 ;;
        -ctk) CACHE_K="$2"; shift 2 ;;
        -ctv) CACHE_V="$2"; shift 2 ;;
        -r) REPS="$2"; shift 2 ;;
        --pairs) PAIRS="$2"; shift 2 ;;
        --backends) BACKENDS="$2"; shift 2 ;;
        --save) SAVE=1; shift ;;
        --label) LABEL="$2"; shift 2 ;;
        --plot) PLOT="$2"; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; echo "Error: unknown option '$1'" >&2; exit 64 ;;
    esac
done
[[ -z "$LABEL" || $SAVE -eq 1 ]] || { echo "Error: --label names the file --save writes; add --save" >&2; exit 64; }

MODELS_DIR="${SANAD_MODELS:-$ROOT/models}"
MODEL_PATH="$MODEL"
[[ -f "$MODEL_PATH" ]] || MODEL_PATH="$MODELS_DIR/$MODEL"
[[ -f "$MODEL_PATH" ]] || { echo "Error: model '$MODEL' not found (looked in $MODELS_DIR); run scripts/setup" >&2; exit 1; }

LLAMA_BENCH="${LLAMA_BENCH:-$(command -v llama-bench || echo /usr/local/bin/llama-bench)}"
[[ -x "$LLAMA_BENCH" ]] || { echo "Error: llama-bench not found; run scripts/install-llama" >&2; exit 1; }
SANAD="${SANAD:-$ROOT/.build/release/sanad}"
if [[ ! -x "$SANAD" ]]; then
    echo "==> building sanad (release)" >&2
    (cd "$ROOT" && swift build -c release --product sanad >&2)
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
for ((i = 1; i <= PAIRS; i++)); do
    echo "==> pair $i/$PAIRS: llama-bench" >&2
    "$LLAMA_BENCH" -m "$MODEL_PATH" -t "$THREADS" -p "$PP" -n "$TG" -d "$DEPTHS" -ctk "$CACHE_K" -ctv "$CACHE_V" -r "$REPS" -o jsonl >"$WORK/llama-$i.jsonl" 2>"$WORK/llama-$i.err" \
        || { cat "$WORK/llama-$i.err" >&2; exit 1; }
    echo "==> pair $i/$PAIRS: sanad bench --backends $BACKENDS" >&2
    "$SANAD" bench -m "$MODEL_PATH" --backends "$BACKENDS" -t "$THREADS" -p "$PP" -n "$TG" -d "$DEPTHS" -ctk "$CACHE_K" -ctv "$CACHE_V" -r "$REPS" -o jsonl \
        >"$WORK/sanad-$i.jsonl"
done

CPU="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//' || uname -m)"
STAMP="${SANAD_LLAMA_STAMP:-/usr/local/share/sanad/llama-b11434.stamp}"
LLAMA_BUILD="$(grep -E '^(build|flags):' "$STAMP" 2>/dev/null | tr '\n' ' ' || true)"
KERNELS="$("$SANAD" backends 2>/dev/null | grep -o 'kernels: [a-z0-9]*' | head -1 || true)"
TABLE="$(python3 - "$WORK" "$PAIRS" "$THREADS" "$MODEL" "$CPU" <<'PY'
import json, statistics, sys, glob, os
work, pairs, threads, model, cpu = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def test_name(r):
    p, n, d = int(r["n_prompt"]), int(r["n_gen"]), int(r.get("n_depth", 0))
    name = f"pp{p}" if n == 0 else (f"tg{n}" if p == 0 else f"pp{p}+tg{n}")
    return f"{name} @ d{d}" if d > 0 else name
ref, ours, errors = {}, {}, {}
for i in range(1, pairs + 1):
    for line in open(os.path.join(work, f"llama-{i}.jsonl")):
        if line.strip():
            r = json.loads(line); ref.setdefault(test_name(r), []).append(r["avg_ts"])
    for line in open(os.path.join(work, f"sanad-{i}.jsonl")):
        if line.strip():
            r = json.loads(line)
            key = (r["sanad_backend"], test_name(r))
            if r.get("error"): errors[key] = r["error"]
            else: ours.setdefault(key, []).append(r["avg_ts"])
print(f"Model {model}, {threads} threads, CPU: {cpu}; medians of {pairs} alternating pairs.\n")
print("| engine | test | t/s (median) | llama-bench t/s (median) | ratio |")
print("| --- | --- | ---: | ---: | ---: |")
tests = sorted(ref)
for t in tests:
    r = statistics.median(ref[t])
    print(f"| llama-bench b11434 | {t} | {r:.2f} | {r:.2f} | 1.00 |")
    for (b, tt) in sorted(set(list(ours) + list(errors))):
        if tt != t: continue
        if (b, tt) in errors and (b, tt) not in ours:
            print(f"| sanad {b} | {t} | unavailable | {r:.2f} | — |"); continue
        m = statistics.median(ours[(b, tt)])
        print(f"| sanad {b} | {t} | {m:.2f} | {r:.2f} | {m / r:.2f} |")
PY
)"
echo "$TABLE"
{ echo "# bench/compare.sh $(date -u +%Y-%m-%dT%H:%MZ)"; echo; echo "Command: bench/compare.sh -m $MODEL -t $THREADS -p $PP -n $TG -d $DEPTHS -ctk $CACHE_K -ctv $CACHE_V -r $REPS --pairs $PAIRS --backends $BACKENDS"; echo; echo "CPU: $CPU; llama.cpp ${LLAMA_BUILD:-build unknown}; pure-swift ${KERNELS:-kernels unknown}"; echo; echo "$TABLE"; } >"$WORK/results.md"
if [[ $SAVE -eq 1 ]]; then
    slug="$(echo "$CPU" | tr -cs 'A-Za-z0-9' '-' | sed 's/-*$//')"
    stem="$(basename "$MODEL" .gguf | tr -cs 'A-Za-z0-9._' '-' | sed 's/-*$//')"
    label="${LABEL:+$(echo "$LABEL" | tr -cs 'A-Za-z0-9._' '-' | sed 's/-*$//')-}"
    out="$ROOT/bench/results/$(date +%Y-%m-%d)-$label$stem-$slug.md"
    cp "$WORK/results.md" "$out"
    echo "saved $out" >&2
fi
if [[ -n "$PLOT" ]]; then
    python3 "$ROOT/bench/plot.py" "$PLOT" "$WORK/results.md"
    echo "plotted $PLOT" >&2
fi
