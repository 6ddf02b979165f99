#!/usr/bin/env bash
# The most complete user journey that works today: check, verify, convert and
# round-trip the walkthrough's gated projection, then compile it to the
# walkthrough's outlined module with its trace and report, and execute its
# checked scenario on the reference interpreter at every compile stage. (The
# .xdna artifact, the simulator and the NPU arrive later; see README.md.)
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

step "loom-compile $EXAMPLE --root=@ffn_gate_up_quadratic_bf16 \\
    --target=amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11 --config=ffn_gate_up.input_size=512 \\
    --dump-ir-after=outline-pipeline-strands --dump-ir-output=trajectory/ \\
    --compile-report=summary --compile-report-output=projection.report.json --output=projection.loom"
"$BIN/loom-compile" $EXAMPLE --root=@ffn_gate_up_quadratic_bf16 \
  --target=amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11 --config=ffn_gate_up.input_size=512 \
  --dump-ir-after=outline-pipeline-strands --dump-ir-output="$OUT/trajectory" \
  --compile-report=summary --compile-report-output="$OUT/projection.report.json" \
  --output="$OUT/projection.loom"
python3 - "$OUT/projection.report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
print("passes run (ms):", ", ".join(f"{p['pass']} {p['seconds'] * 1000:.1f}" for p in report["passes"]))
m = report["module"]
print(f"outlined module: {m['pipelines']} pipeline, {m['strands']} strands calling {m['functions']} functions, "
      f"{m['target_contexts']} target contexts, {m['ops']['total']} ops")
PY
echo "trace index: $(tr -d ' \n' < "$OUT/trajectory/index.json")"
echo "the strand functions and their target contexts:"
grep -E '^(func.def|aie2p.target)' "$OUT/projection.loom" | sed -E 's/\(%.*\) \{$/(...)/; s/^/  /'
WALKTHROUGH=${LOOM_WALKTHROUGH:-../shared/reference/loom-resident-pipelines-walkthrough.txt}
if [ -f "$WALKTHROUGH" ]; then
  python3 scripts/walkthrough-listings.py "$WALKTHROUGH" outlined-module > "$OUT/walkthrough.loom"
  echo "equal to the walkthrough's outlined module up to renaming: $(python3 scripts/compare-modulo-renaming.py "$OUT/walkthrough.loom" "$OUT/projection.loom" >/dev/null && echo yes || echo NO)"
fi

step "loom-test $EXAMPLE --each-pass   (its TEST-SCENARIO, on the best available device)"
"$BIN/loom-test" $EXAMPLE --each-pass | sed 's/^/  /'
step "loom-test projection.loom --scenario-file=$EXAMPLE   (the same scenario on the outlined module)"
"$BIN/loom-test" "$OUT/projection.loom" --scenario-file=$EXAMPLE | sed 's/^/  /'

step "loom-compile $EXAMPLE --root=@ffn_gate_up_quadratic_bf16 --config=ffn_gate_up.input_size=500"
"$BIN/loom-compile" $EXAMPLE --root=@ffn_gate_up_quadratic_bf16 --config=ffn_gate_up.input_size=500 \
  2>&1 >/dev/null | sed 's/^/  /' || true

printf '\nNot yet available: --format=xdna (the xdna target: aie2p-lower-pipeline, TXN, ELF), and\n'
printf 'loom-test --device=sim|xdna (array simulator, NPU HAL). See README.md for the status of each.\n'
