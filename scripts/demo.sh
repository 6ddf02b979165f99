#!/usr/bin/env bash
# The most complete user journey that works today: check, verify, convert and
# round-trip the walkthrough's gated projection. (Compilation to .xdna and
# loom-test execution arrive with later milestones; see README.md.)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${LOOM_BIN:-target/debug}
EXAMPLE=examples/gated-projection.loom
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step loom-format --check $EXAMPLE
"$BIN/loom-format" --check $EXAMPLE && echo "canonical: yes"

step loom-opt $EXAMPLE "| grep -c ''   (parse, verify, print)"
"$BIN/loom-opt" $EXAMPLE -o "$OUT/printed.loom"
echo "$(grep -c '' "$OUT/printed.loom") lines printed, identical to the source: $(cmp -s $EXAMPLE "$OUT/printed.loom" && echo yes || echo NO)"
echo "top-level ops:"
grep -E '^(config|aie2p|func|pipeline)\.' "$OUT/printed.loom" | sed -E 's/ *[(\[].*//; s/^/  /'

step loom-format $EXAMPLE --to=bc --output=projection.loombc
"$BIN/loom-format" $EXAMPLE --to=bc --output="$OUT/projection.loombc"
echo "bytecode: $(stat -c %s "$OUT/projection.loombc") bytes; back to text identical: $("$BIN/loom-format" "$OUT/projection.loombc" | cmp -s $EXAMPLE - && echo yes || echo NO)"

step loom-format $EXAMPLE --to=mlir --output=projection.mlir
"$BIN/loom-format" $EXAMPLE --to=mlir --output="$OUT/projection.mlir"
echo "generic MLIR: $(grep -c '' "$OUT/projection.mlir") lines; back to text identical: $("$BIN/loom-format" "$OUT/projection.mlir" | cmp -s $EXAMPLE - && echo yes || echo NO)"
LLVM_BIN=${LOOM_LLVM_PREFIX:-/usr/lib/llvm-22}/bin
"$LLVM_BIN/mlir-opt" --allow-unregistered-dialect "$OUT/projection.mlir" -o /dev/null \
  && echo "mlir-opt --allow-unregistered-dialect reads it: yes"

step "a broken variant: publishing the input record twice"
sed '0,/channel.publish %write : write/s//channel.publish %write : write<tile<[%input_size]xbf16>>\n  channel.publish %write : write/' \
  $EXAMPLE > "$OUT/broken.loom"
"$BIN/loom-opt" "$OUT/broken.loom" >/dev/null 2>"$OUT/errors" || true
sed 's/^/  /' "$OUT/errors" | head -12

step "loom-opt $EXAMPLE --loom-specialize-config=values=ffn_gate_up.input_size=512 --canonicalize --cse"
"$BIN/loom-opt" $EXAMPLE --loom-specialize-config=values=ffn_gate_up.input_size=512 \
  --canonicalize --cse -o "$OUT/specialized.loom"
echo "K bound to 512; the pipeline's construction code after folding:"
sed -n '/^pipeline.def/,/pipeline.strand/p' "$OUT/specialized.loom" | head -12 | sed 's/^/  /'
step "loom-opt $EXAMPLE --loom-specialize-config=values=ffn_gate_up.input_size=500"
"$BIN/loom-opt" $EXAMPLE --loom-specialize-config=values=ffn_gate_up.input_size=500 \
  2>&1 >/dev/null | sed 's/^/  /' || true

printf '\nNot yet available: loom-compile (the rest of the pass pipeline, the xdna target) and\n'
printf 'loom-test (interpreter, simulator, NPU). See README.md for the status of each.\n'
