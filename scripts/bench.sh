#!/usr/bin/env bash
# Parse + verify + print benchmark (`make bench`, see docs/PERFORMANCE.md).
#
# Generates a Loom module of >= 100,000 operations (scripts/gen-module.py),
# converts it to generic MLIR with `loom-format --to=mlir`, then measures in
# the same run
#   (a) loom-opt big.loom                  Loom text: parse, verify, print
#   (b) mlir-opt --allow-unregistered-dialect big.mlir -o /dev/null
#                                          the same module, generic form
# wall time (hyperfine, median; the commands take turns in rounds) and peak
# RSS (/usr/bin/time -f %M, median of 5),
# and prints the ratios loom/mlir-opt against the targets (time <= 1.5,
# memory <= 2).
#
# big.mlir carries Loom's source names and comments in its locations (that is
# how the generic form round-trips), which makes it ~3x the bytes of big.loom.
# As a tighter reference, the script also times mlir-opt on the same module
# printed by mlir-opt without locations (big-noloc.mlir); the targets are
# checked against (b) as specified, the reference ratio is reported beside.
#
# loom-opt's output goes to standard output, which hyperfine (and this script)
# send to /dev/null: the same single write as `-o /dev/null`. Builds before
# 0e96858 wrote `-o FILE` atomically (temporary file + rename) even for a
# device, and as root that rename replaced the /dev/null node with a regular
# file (see docs/PERFORMANCE.md); standard output is safe with every build.
#
# Environment: LOOM_BIN_DIR (default target/release), LOOM_LLVM_PREFIX
# (default /usr/lib/llvm-22), BENCH_OPS (default 100000), BENCH_RUNS (timed
# runs per command, default 12, at least 5), BENCH_ROUNDS (the runs are split
# into rounds in which the commands take turns, default 4), BENCH_KEEP=DIR
# (keep the inputs in DIR).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${LOOM_BIN_DIR:-target/release}
LLVM_BIN=${LOOM_LLVM_PREFIX:-/usr/lib/llvm-22}/bin
OPS=${BENCH_OPS:-100000}
RUNS=${BENCH_RUNS:-12}
[ "$RUNS" -ge 5 ] || RUNS=5
ROUNDS=${BENCH_ROUNDS:-4}
[ "$ROUNDS" -ge 1 ] || ROUNDS=1
TIME_RATIO_TARGET=1.5
RSS_RATIO_TARGET=2

for tool in "$BIN/loom-opt" "$BIN/loom-format" "$LLVM_BIN/mlir-opt"; do
  [ -x "$tool" ] || { echo "bench: $tool not found (build with: cargo build --release --bins)" >&2; exit 1; }
done

# Debian packages the measurements need, installed only when missing.
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
need=""
[ -x /usr/bin/time ] || need="$need time"
command -v hyperfine >/dev/null || need="$need hyperfine"
if [ -n "$need" ]; then
  echo "bench: installing Debian packages:$need"
  $SUDO apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need >/dev/null ||
    echo "bench: could not install$need; falling back where possible" >&2
fi
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time (Debian package time) is required" >&2; exit 1; }

if [ -n "${BENCH_KEEP:-}" ]; then
  WORK=$BENCH_KEEP
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
fi
LOOM="$WORK/big.loom"
MLIR="$WORK/big.mlir"

python3 scripts/gen-module.py --ops "$OPS" -o "$LOOM"
"$BIN/loom-format" "$LOOM" --to=mlir -o "$MLIR"
# The module must verify and be canonical; mlir-opt must read the generic form.
"$BIN/loom-opt" "$LOOM" -o "$WORK/printed.loom"
cmp -s "$LOOM" "$WORK/printed.loom" || { echo "bench: loom-opt does not print the module back unchanged" >&2; exit 1; }
"$LLVM_BIN/mlir-opt" --allow-unregistered-dialect "$MLIR" -o "$WORK/big-noloc.mlir"
NOLOC="$WORK/big-noloc.mlir"
ir_ops=$(grep -cE '^[[:space:]]*(%[^=]*= )?"[A-Za-z_][A-Za-z0-9_.$]*"' "$MLIR")
echo "bench: $ir_ops operations (generic form, incl. builtin.module);" \
  "big.loom $(stat -c %s "$LOOM") bytes, big.mlir $(stat -c %s "$MLIR") bytes," \
  "big-noloc.mlir $(stat -c %s "$NOLOC") bytes"

LOOM_CMD=("$BIN/loom-opt" "$LOOM")
MLIR_CMD=("$LLVM_BIN/mlir-opt" --allow-unregistered-dialect "$MLIR" -o /dev/null)
NOLOC_CMD=("$LLVM_BIN/mlir-opt" --allow-unregistered-dialect "$NOLOC" -o /dev/null)
quote() { printf '%q ' "$@"; }

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Wall time: median of ROUNDS x RUNS runs per command. The commands take
# turns, round by round (hyperfine runs its commands one after the other), so
# a slow spell of a shared or virtual machine hits them alike.
ROUND_RUNS=$(( (RUNS + ROUNDS - 1) / ROUNDS ))
[ "$ROUND_RUNS" -ge 2 ] || ROUND_RUNS=2
TOTAL_RUNS=$((ROUNDS * ROUND_RUNS))
: > "$WORK/times"
if command -v hyperfine >/dev/null; then
  timer="hyperfine, $ROUNDS rounds x $ROUND_RUNS runs (+1 warm-up per round), median of $TOTAL_RUNS"
  for round in $(seq "$ROUNDS"); do
    echo "bench: round $round of $ROUNDS"
    hyperfine --style none -N --warmup 1 --runs "$ROUND_RUNS" \
      --export-json "$WORK/round.json" \
      -n loom-opt "$(quote "${LOOM_CMD[@]}")" \
      -n mlir-opt "$(quote "${MLIR_CMD[@]}")" \
      -n mlir-opt-noloc "$(quote "${NOLOC_CMD[@]}")" >/dev/null
    python3 -c '
import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    for t in x["times"]:
        print(x["command"], t)' "$WORK/round.json" >> "$WORK/times"
  done
else
  timer="/usr/bin/time, $ROUNDS rounds x $ROUND_RUNS runs (+1 warm-up per round), median of $TOTAL_RUNS"
  for round in $(seq "$ROUNDS"); do
    echo "bench: round $round of $ROUNDS"
    for name in loom-opt mlir-opt mlir-opt-noloc; do
      case $name in
        loom-opt) cmd=("${LOOM_CMD[@]}") ;;
        mlir-opt) cmd=("${MLIR_CMD[@]}") ;;
        *) cmd=("${NOLOC_CMD[@]}") ;;
      esac
      "${cmd[@]}" >/dev/null
      for _ in $(seq "$ROUND_RUNS"); do
        /usr/bin/time -f %e -o "$WORK/t" "${cmd[@]}" >/dev/null
        echo "$name $(cat "$WORK/t")" >> "$WORK/times"
      done
    done
  done
fi
times_of() { awk -v n="$1" '$1 == n { print $2 }' "$WORK/times"; }
loom_time=$(times_of loom-opt | median)
mlir_time=$(times_of mlir-opt | median)
noloc_time=$(times_of mlir-opt-noloc | median)
spread() { times_of "$1" | sort -g | awk '{ v[NR] = $1 } END { printf "%.3f-%.3f s", v[1], v[NR] }'; }
echo "bench: wall time ranges: loom-opt $(spread loom-opt), mlir-opt $(spread mlir-opt), mlir-opt (no locations) $(spread mlir-opt-noloc)"

# Peak resident set size: median KiB of 5 runs.
rss() {
  for _ in 1 2 3 4 5; do
    /usr/bin/time -f %M -o "$WORK/m" "$@" >/dev/null
    cat "$WORK/m"
  done | median
}
loom_rss=$(rss "${LOOM_CMD[@]}")
mlir_rss=$(rss "${MLIR_CMD[@]}")
noloc_rss=$(rss "${NOLOC_CMD[@]}")

python3 - "$loom_time" "$mlir_time" "$noloc_time" "$loom_rss" "$mlir_rss" "$noloc_rss" \
  "$TIME_RATIO_TARGET" "$RSS_RATIO_TARGET" <<'EOF'
import sys
lt, mt, nt, lr, mr, nr, tt, rt = map(float, sys.argv[1:])
ok = lambda r, t: "ok" if r <= t else "MISSED"
print()
print("| measurement            | loom-opt | mlir-opt | loom/mlir-opt | target       | mlir-opt, no locations | loom/that |")
print("| ---                    | ---:     | ---:     | ---:          | ---          | ---:                   | ---:      |")
print(f"| wall time, median (s)  | {lt:8.3f} | {mt:8.3f} | {lt / mt:13.2f} | {'<= %g %s' % (tt, ok(lt / mt, tt)):12} | {nt:22.3f} | {lt / nt:9.2f} |")
print(f"| peak RSS, median (MiB) | {lr / 1024:8.1f} | {mr / 1024:8.1f} | {lr / mr:13.2f} | {'<= %g %s' % (rt, ok(lr / mr, rt)):12} | {nr / 1024:22.1f} | {lr / nr:9.2f} |")
EOF
echo
echo "timing: $timer; peak RSS: /usr/bin/time -f %M, 5 runs, median"
echo "loom-opt: $(quote "${LOOM_CMD[@]}")>/dev/null"
echo "mlir-opt: $(quote "${MLIR_CMD[@]}")"
echo "no locs:  $(quote "${NOLOC_CMD[@]}")"
echo "machine:  $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(date -u +%Y-%m-%d)"
