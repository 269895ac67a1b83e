#!/usr/bin/env bash
# Generation speed on a busy machine: each engine's tg on an idle machine with its default thread count, then with
# busy processes beside it (default threads, and all cores as the old default), alternating, medians.
set -euo pipefail

usage() {
    cat <<USAGE
Usage: bench/busy.sh [-m MODEL] [-n N] [-r REPS] [--pairs K] [--load L] [--backends LIST] [--save]

For each engine, K times: 'sanad bench -p 0 -n N' with the default thread count on the idle machine, then with L
busy processes running beside it, with the default thread count (measured at start: the idle cores) and with
every core (-t all cores, the default before 'idle cores'). Prints a markdown table of medians and each loaded
figure as a share of the idle one. The machine must be otherwise quiet for the idle figures to mean anything.

Options:
  -m MODEL         model (default: SmolLM2-135M-Instruct.Q4_1.gguf)
  -n N             generation length (default: 64)
  -r REPS          repetitions inside each sanad bench run (default: 3)
  --pairs K        idle/loaded rounds (default: 3)
  --load L         busy processes (default: the number of cores)
  --backends LIST  engines (default: pure-swift,blas,llama)
  --save           also write the table to bench/results/<date>-busy-<cpu>.md
  -h, --help       this help

Environment: SANAD (default: .build/release/sanad, built if missing), SANAD_MODELS (models folder).
USAGE
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODEL="SmolLM2-135M-Instruct.Q4_1.gguf"
TG=64
REPS=3
PAIRS=3
LOAD="$(nproc)"
BACKENDS="pure-swift,blas,llama"
SAVE=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        -m) MODEL="$2"; shift 2 ;;
        -n) TG="$2"; shift 2 ;;
        -r) REPS="$2"; shift 2 ;;
        --pairs) PAIRS="$2"; shift 2 ;;
        --load) LOAD="$2"; shift 2 ;;
        --backends) BACKENDS="$2"; shift 2 ;;
        --save) SAVE=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "bench/busy.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
    esac
done

SANAD="${SANAD:-$ROOT/.build/release/sanad}"
if [[ ! -x "$SANAD" ]]; then (cd "$ROOT" && swift build -c release --product sanad >&2); fi
CORES="$(nproc)"
LOADERS=()
start_load() { for _ in $(seq "$LOAD"); do (while :; do :; done) & LOADERS+=($!); done; sleep 1; }
stop_load() { for p in "${LOADERS[@]}"; do kill "$p" 2>/dev/null || true; done; wait "${LOADERS[@]}" 2>/dev/null || true; LOADERS=(); }
trap stop_load EXIT

# tg t/s and the thread count of one 'sanad bench' run.
run() {
    "$SANAD" bench -m "$MODEL" --backends "$1" -p 0 -n "$TG" -r "$REPS" -o jsonl "${@:2}" 2>/dev/null \
        | python3 -c 'import json,sys; r=json.loads(sys.stdin.readline()); print("%.2f %d" % (r["avg_ts"], r["n_threads"]))'
}

RESULTS="$(mktemp)"
IFS=',' read -ra ENGINES <<<"$BACKENDS"
for pair in $(seq "$PAIRS"); do
    for e in "${ENGINES[@]}"; do
        echo "busy: round $pair/$PAIRS: $e idle" >&2
        echo "$e idle $(run "$e")" >>"$RESULTS"
        start_load
        echo "busy: round $pair/$PAIRS: $e with $LOAD busy processes" >&2
        echo "$e loaded-default $(run "$e")" >>"$RESULTS"
        echo "$e loaded-all $(run "$e" -t "$CORES")" >>"$RESULTS"
        stop_load
    done
done

CPU="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
TABLE="$(python3 - "$RESULTS" "$MODEL" "$TG" "$LOAD" "$CORES" "$PAIRS" "$CPU" <<'PY'
import statistics, sys
path, model, tg, load, cores, pairs, cpu = sys.argv[1:]
rows = {}
for line in open(path):
    engine, kind, ts, threads = line.split()
    rows.setdefault(engine, {}).setdefault(kind, []).append((float(ts), int(threads)))
print(f"{model}, tg{tg}, {load} busy processes on {cores} cores, {cpu}; medians of {pairs} rounds (bench/busy.sh)")
print()
print("| engine | idle t/s (threads) | busy, default threads: t/s (threads) | share | busy, all cores: t/s | share |")
print("|---|---|---|---|---|---|")
for engine, kinds in rows.items():
    med = {k: statistics.median(t for t, _ in v) for k, v in kinds.items()}
    th = {k: statistics.median(n for _, n in v) for k, v in kinds.items()}
    idle = med["idle"]
    print(f"| {engine} | {idle:.1f} ({th['idle']:.0f}) | {med['loaded-default']:.1f} ({th['loaded-default']:.0f}) | "
          f"{med['loaded-default'] / idle:.0%} | {med['loaded-all']:.1f} | {med['loaded-all'] / idle:.0%} |")
PY
)"
echo "$TABLE"
if [[ $SAVE == 1 ]]; then
    OUT="$ROOT/bench/results/$(date +%F)-busy-$(echo "$CPU" | tr -cs 'A-Za-z0-9' '-' | sed 's/-$//').md"
    printf '# Generation on a busy machine\n\n%s\n' "$TABLE" >"$OUT"
    echo "busy: wrote $OUT" >&2
fi
