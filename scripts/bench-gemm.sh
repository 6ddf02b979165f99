#!/usr/bin/env bash
# Whole-array GEMM benchmark (`make bench`, see docs/PERFORMANCE.md,
# "Whole-array GEMM").
#
# For i8 (into i32) and bf16 (into f32), 512^3 and 2048^3 on the 32 cores,
# in the simulator's cycle model at the AIE clock measured on Strix Halo,
# 1.8 GHz: on the Low IR core (each worker op one modelled cycle) and, for
# i8, as machine code on the isa core:
#   - one invocation computes a 256 x 512 block of C over all of K (each
#     core's block fits its 64 KiB, each column's joined blocks its memory
#     tile), so 512^3 is 2 invocations of the
#     256 x 512 x 512 design and 2048^3 is 32 of the 256 x 512 x 2048 design
#     with rows of 2048 elements; the invocations are identical in the
#     model (its cycles do not depend on the values), so one is simulated
#     and the figure is that many times its cycles (the host's submission
#     between invocations is not modelled);
#   - the 512 designs run on the reference's data and are checked bit for
#     bit; the 2048 ones bind zeros (the pure-Python reference would take
#     minutes) and are checked by nothing but the run;
#   - the peak is 32 cores x one vector.mmac a cycle: 8x8x8 = 512 MACs (i8),
#     4x8x8 = 256 (bf16), 2 operations per MAC: 59.0 TOPS and 29.5 TFLOP/s.
# The compile time of the 32-core i8 design (machine code, and Low IR
# workers) is measured with hyperfine against mlir-opt parsing, verifying
# and printing its generic form.
#
# Environment: LOOM_BIN_DIR (default target/release), LOOM_LLVM_PREFIX
# (default /usr/lib/llvm-22), BENCH_RUNS (default 10).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${LOOM_BIN_DIR:-target/release}
LLVM_BIN=${LOOM_LLVM_PREFIX:-/usr/lib/llvm-22}/bin
RUNS=${BENCH_RUNS:-10}
for tool in "$BIN/loom-test" "$BIN/loom-compile" "$BIN/loom-format" "$LLVM_BIN/mlir-opt"; do
  [ -x "$tool" ] || { echo "bench: $tool not found (build with: cargo build --release --bins)" >&2; exit 1; }
done
command -v hyperfine >/dev/null || { echo "bench: hyperfine is required (scripts/bench.sh installs it)" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
GEN=scripts/examples/whole_array_gemm.py
REF=scripts/reference/whole_array_gemm.py

# name dtype K chunk row-length check invocations-of-the-problem
DESIGNS=(
  "i8-512 i8 512 64 512 yes 2"
  "i8-2048 i8 2048 64 2048 no 32"
  "bf16-512 bf16 512 32 512 yes 2"
  "bf16-2048 bf16 2048 32 2048 no 32"
)
: > "$WORK/figures.txt"
for design in "${DESIGNS[@]}"; do
  read -r name dtype k chunk ld check times <<< "$design"
  dir="$WORK/$name"
  mkdir -p "$dir"
  if [ "$check" = yes ]; then
    python3 $GEN --dtype "$dtype" --m 256 --n 512 --k "$k" --chunk "$chunk" --out "$dir/gemm.loom"
    python3 $REF --dtype "$dtype" --m 256 --n 512 --k "$k" --out "$dir/data/whole-array-gemm-$dtype"
  else
    python3 $GEN --dtype "$dtype" --m 256 --n 512 --k "$k" --chunk "$chunk" --ldb "$ld" --ldc "$ld" \
      --timing-only --out "$dir/gemm.loom"
  fi
  # i8 also as machine code on the isa core (bf16 vector.mmac is not selected).
  cores=lowir
  [ "$dtype" = i8 ] && cores="lowir isa"
  for core in $cores; do
    limit=--max-steps=100000000
    [ "$core" = isa ] && limit=--max-cycles=100000000
    out=$("$BIN/loom-test" "$dir/gemm.loom" --device=sim --core=$core $limit) || true
    line=${out%%$'\n'*}
    case "$line" in PASS*) ;; *) echo "bench: $name ($core) did not pass: $line" >&2; exit 1 ;; esac
    cycles=$(sed -nE 's/^[^;]*; ([0-9]+) modelled cycles.*/\1/p' <<< "$line")
    echo "$name $dtype $k $times $cycles $check $core" >> "$WORK/figures.txt"
    echo "bench: $name ($core): $(cut -c1-240 <<< "$line")"
  done
done

"$BIN/loom-format" "$WORK/i8-512/gemm.loom" --to=mlir -o "$WORK/gemm.mlir"
TARGET=amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11
COMPILE=("$BIN/loom-compile" "$WORK/i8-512/gemm.loom" --root=gemm --target=$TARGET --format=xdna -o /dev/null)
COMPILE_LOWIR=("$BIN/loom-compile" "$WORK/i8-512/gemm.loom" --root=gemm --target=$TARGET --format=xdna \
  --worker-code=lowir -o /dev/null)
PARSE_REF=("$LLVM_BIN/mlir-opt" --allow-unregistered-dialect "$WORK/gemm.mlir" -o /dev/null)
quote() { printf '%q ' "$@"; }
hyperfine --style none -N --warmup 2 --runs "$RUNS" --export-json "$WORK/compile.json" \
  -n loom-compile "$(quote "${COMPILE[@]}")" -n loom-compile-lowir "$(quote "${COMPILE_LOWIR[@]}")" \
  -n mlir-opt "$(quote "${PARSE_REF[@]}")" >/dev/null

python3 - "$WORK/figures.txt" "$WORK/compile.json" <<'PY'
import json, sys
CLOCK = 1.8e9
PEAK = {"i8": 32 * 512 * 2 * CLOCK, "bf16": 32 * 256 * 2 * CLOCK}
print()
print("Whole-array GEMM, simulator cycle model, 1.8 GHz; unverified on hardware")
print("(lowir: each worker op one cycle; isa: the machine code, bundle by bundle)")
print(f"{'problem':<14}{'core':>6}{'invocation':>22}{'cycles each':>13}{'total cycles':>14}{'rate':>16}{'of peak':>9}  checked")
for line in open(sys.argv[1]):
    name, dtype, k, times, cycles, check, core = line.split()
    times, cycles, size = int(times), int(cycles), 512 if k == "512" else 2048
    total = times * cycles
    rate = 2 * size ** 3 / (total / CLOCK)
    unit = "TOPS" if dtype == "i8" else "TFLOP/s"
    print(f"{dtype + ' ' + str(size) + '^3':<14}{core:>6}{f'{times} x 256x512x{k}':>22}{cycles:>13,}{total:>14,}"
          f"{rate / 1e12:>9.2f} {unit:<7}{100 * rate / PEAK[dtype]:>8.1f}%  {'bit-exact' if check == 'yes' else 'no (zeros)'}")
results = {r["command"]: r for r in json.load(open(sys.argv[2]))["results"]}
loom, lowir = results["loom-compile"]["median"], results["loom-compile-lowir"]["median"]
ref = results["mlir-opt"]["median"]
print()
print(f"compile of the 32-core i8 design (256x512x512) to .xdna, medians: machine code "
      f"{loom * 1000:.0f} ms ({loom / ref:.1f}x), Low IR workers {lowir * 1000:.0f} ms ({lowir / ref:.2f}x), "
      f"against mlir-opt parse+verify+print of its generic form {ref * 1000:.1f} ms")
PY
