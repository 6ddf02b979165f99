#!/usr/bin/env bash
# Compile-pipeline benchmark (`make bench`, see docs/PERFORMANCE.md).
#
# Measures in the same run, with hyperfine (the commands take turns, median):
#   (a) the gated projection: `loom-compile` (the whole pipeline, from source
#       to the native realization) vs `mlir-opt --canonicalize --cse` on the
#       generic form of the same source;
#   (w) the walkthrough's compile command verbatim (--format=xdna, both IR
#       dumps, the summary report) vs `mlir-opt` parsing, verifying and
#       printing the generic form of the same source;
#   (b) a generated module with BENCH_UNITS copies of the projection (two
#       strands each: 1,000 strands by default): the same eight passes through
#       `loom-opt --pass-pipeline` (without root selection, so every pipeline
#       is compiled and every strand outlined) vs `mlir-opt --canonicalize
#       --cse` on the generic form of the same module.
# mlir-opt's canonicalize + cse is the reference for what a pass pipeline
# over this IR costs in stock MLIR; it does less work than Loom's pipeline
# (no inlining, lowering or outlining), so the ratio is an upper bound on
# Loom's overhead.
#
# Environment: LOOM_BIN_DIR (default target/release), LOOM_LLVM_PREFIX
# (default /usr/lib/llvm-22), BENCH_UNITS (default 500), BENCH_RUNS (runs per
# command, default 10).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${LOOM_BIN_DIR:-target/release}
LLVM_BIN=${LOOM_LLVM_PREFIX:-/usr/lib/llvm-22}/bin
UNITS=${BENCH_UNITS:-500}
RUNS=${BENCH_RUNS:-10}
TARGET=amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11
for tool in "$BIN/loom-opt" "$BIN/loom-format" "$BIN/loom-compile" "$LLVM_BIN/mlir-opt"; do
  [ -x "$tool" ] || { echo "bench: $tool not found (build with: cargo build --release --bins)" >&2; exit 1; }
done
command -v hyperfine >/dev/null || { echo "bench: hyperfine is required (scripts/bench.sh installs it)" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

EXAMPLE=examples/gated-projection.loom
"$BIN/loom-format" $EXAMPLE --to=mlir -o "$WORK/example.mlir"
python3 scripts/gen-module.py --units "$UNITS" -o "$WORK/big.loom"
"$BIN/loom-format" "$WORK/big.loom" --to=mlir -o "$WORK/big.mlir"
# Every unit's K at the bottom of its declared range.
values=$(sed -nE 's/^config\.def @([^ ]+) : index \[range\(([0-9]+),.*/\1=\2/p' "$WORK/big.loom" | paste -sd,)
PIPELINE="builtin.module(loom-specialize-config{values=$values},loom-inline,loom-canonicalize,loom-cse,loom-structured-to-cfg,loom-resolve-target{target=$TARGET},outline-pipeline-strands)"
printf '%s' "$PIPELINE" > "$WORK/pipeline.txt"

# The work is real: every strand of the generated module is outlined.
"$BIN/loom-opt" "$WORK/big.loom" --pass-pipeline="$PIPELINE" -o "$WORK/big-outlined.loom"
strands=$(grep -c '^func.def inline target(@__loom_target_context_1_[0-9]*) @__pipeline_strand_' "$WORK/big-outlined.loom")
[ "$strands" -eq $((2 * UNITS)) ] || { echo "bench: expected $((2 * UNITS)) outlined strands, got $strands" >&2; exit 1; }
ops=$(grep -cE '^[[:space:]]*(%[^=]*= )?"[A-Za-z_][A-Za-z0-9_.$]*"' "$WORK/big.mlir")
echo "bench: generated module: $UNITS units, $ops operations, $strands strands outlined"

COMPILE=("$BIN/loom-compile" $EXAMPLE --root=@ffn_gate_up_quadratic_bf16 --target=$TARGET
         --config=ffn_gate_up.input_size=512 -o /dev/null)
EXAMPLE_REF=("$LLVM_BIN/mlir-opt" --allow-unregistered-dialect --canonicalize --cse "$WORK/example.mlir" -o /dev/null)
WALK=(sh -c "cd \"$WORK\" && exec \"$(realpath "$BIN")/loom-compile\" \"$(realpath $EXAMPLE)\" \
  --root=@ffn_gate_up_quadratic_bf16 --target=$TARGET --config=ffn_gate_up.input_size=512 \
  --format=xdna --dump-ir-after=outline-pipeline-strands --dump-ir-after=aie2p-lower-pipeline \
  --dump-ir-output=trajectory/ --compile-report=summary --compile-report-output=projection.report.json \
  --output=projection.xdna")
PARSE_REF=("$LLVM_BIN/mlir-opt" --allow-unregistered-dialect "$WORK/example.mlir" -o /dev/null)
BIG=(sh -c "exec \"$BIN/loom-opt\" \"$WORK/big.loom\" --pass-pipeline=\"\$(cat \"$WORK/pipeline.txt\")\" >/dev/null")
BIG_REF=("$LLVM_BIN/mlir-opt" --allow-unregistered-dialect --canonicalize --cse "$WORK/big.mlir" -o /dev/null)
quote() { printf '%q ' "$@"; }

hyperfine --style none -N --warmup 2 --runs "$RUNS" --export-json "$WORK/example.json" \
  -n loom-compile "$(quote "${COMPILE[@]}")" -n mlir-opt "$(quote "${EXAMPLE_REF[@]}")" >/dev/null
hyperfine --style none -N --warmup 2 --runs "$RUNS" --export-json "$WORK/walk.json" \
  -n walkthrough "$(quote "${WALK[@]}")" -n mlir-opt "$(quote "${PARSE_REF[@]}")" >/dev/null
hyperfine --style none -N --warmup 1 --runs "$RUNS" --export-json "$WORK/big.json" \
  -n loom-pipeline "$(quote "${BIG[@]}")" -n mlir-opt "$(quote "${BIG_REF[@]}")" >/dev/null

python3 - "$WORK/example.json" "$WORK/big.json" "$UNITS" "$WORK/walk.json" <<'PY'
import json, sys
def medians(path):
    return {r["command"]: r["median"] for r in json.load(open(path))["results"]}
example, big, walk = medians(sys.argv[1]), medians(sys.argv[2]), medians(sys.argv[4])
print()
print("| module | Loom pipeline (s) | mlir-opt --canonicalize --cse (s) | Loom / mlir-opt |")
print("| --- | ---: | ---: | ---: |")
print(f"| gated projection (loom-compile, 10 passes, native module) | {example['loom-compile']:.4f} | {example['mlir-opt']:.4f} | {example['loom-compile'] / example['mlir-opt']:.2f} |")
print(f"| {sys.argv[3]} units, {2 * int(sys.argv[3])} strands (loom-opt, passes 1-8 but root selection) | {big['loom-pipeline']:.3f} | {big['mlir-opt']:.3f} | {big['loom-pipeline'] / big['mlir-opt']:.2f} |")
print()
print("| command | loom-compile (s) | mlir-opt parse + verify + print (s) | Loom / mlir-opt |")
print("| --- | ---: | ---: | ---: |")
print(f"| the walkthrough's compile command (.xdna, both dumps, report) | {walk['walkthrough']:.4f} | {walk['mlir-opt']:.4f} | {walk['walkthrough'] / walk['mlir-opt']:.2f} |")
PY
echo
echo "timing: hyperfine, $RUNS runs per command (+ warm-up), medians, commands in turn"
echo "example:   $(quote "${COMPILE[@]}")"
echo "reference: $(quote "${EXAMPLE_REF[@]}")"
echo "walk:      (in a temp dir) $(quote "${WALK[@]}")"
echo "reference: $(quote "${PARSE_REF[@]}")"
echo "big:       loom-opt big.loom --pass-pipeline='builtin.module(loom-specialize-config{values=<$UNITS values>},loom-inline,loom-canonicalize,loom-cse,loom-structured-to-cfg,loom-resolve-target{target=$TARGET},outline-pipeline-strands)'"
echo "reference: $(quote "${BIG_REF[@]}")"
echo "machine:   $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(date -u +%Y-%m-%d)"
