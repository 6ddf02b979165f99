#!/usr/bin/env bash
# The most complete user journey that works today: check, verify, convert and
# round-trip the walkthrough's gated projection; compile it with the
# walkthrough's command to the .xdna artifact (trace of both boundaries,
# realization report, decoded TXN, llvm-readelf) and resume from the dumped
# native module; execute its checked scenario on the reference interpreter at
# every compile stage up to the outlined module, and the artifact on the
# AIE2P array simulator (also with an injected fault). (The NPU HAL arrives
# later; see README.md.)
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

step "loom-compile $EXAMPLE \\
    --root=@ffn_gate_up_quadratic_bf16 \\
    --target=amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11 \\
    --config=ffn_gate_up.input_size=512 --format=xdna \\
    --dump-ir-after=outline-pipeline-strands \\
    --dump-ir-after=aie2p-lower-pipeline \\
    --dump-ir-output=trajectory/ \\
    --compile-report=summary --compile-report-output=projection.report.json \\
    --output=projection.xdna"
HERE=$PWD
(cd "$OUT" && "$HERE/$BIN/loom-compile" "$HERE/$EXAMPLE" \
  --root=@ffn_gate_up_quadratic_bf16 \
  --target=amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11 \
  --config=ffn_gate_up.input_size=512 --format=xdna \
  --dump-ir-after=outline-pipeline-strands \
  --dump-ir-after=aie2p-lower-pipeline \
  --dump-ir-output=trajectory/ \
  --compile-report=summary --compile-report-output=projection.report.json \
  --output=projection.xdna)
python3 - "$OUT/projection.report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
print("passes run (ms):", ", ".join(f"{p['pass']} {p['seconds'] * 1000:.1f}" for p in report["passes"]))
r = report["realization"]
print(f"profile {r['profile']}: admitted {r['admission']['admitted']}, device_loadable {r['admission']['device_loadable']}")
print(f"  ({r['admission']['reason'] or r['admission']['hardware']})")
for t in r["tiles"]:
    line = (f"  tile {t['tile']} ({t['kind']}): locks {t['locks']['used']}/{t['locks']['available']}, "
            f"BDs {t['buffer_descriptors']['used']}/{t['buffer_descriptors']['available']}")
    if t["kind"] != "shim":
        line += (f", memory {t['data_memory']['used_bytes']}/{t['data_memory']['available_bytes']} B"
                 f" = channel storage {t['authored_channel_storage_bytes']} + private {t['private_bytes']}"
                 f" + stack {t['added_by_lowering']['stack_bytes']} + alignment {t['added_by_lowering']['alignment_bytes']}")
    print(line)
    if "worker_image" in t:
        w = t["worker_image"]
        if w.get("machine_code_bytes") is not None:
            print(f"    worker image {w['symbol']}: {w['machine_code_bytes']} bytes of AIE2P machine code of "
                  f"{w['program_memory_budget_bytes']} B program memory, {w['bundles']} bundles, "
                  f"{100 * w['nop_bundle_share']:.0f}% NOP bundles, spill frame {w['spill_frame_bytes']} B")
        else:
            print(f"    worker image {w['symbol']}: {w['low_ir_bytes']} bytes of Low IR (--worker-code=lowir)")
print(f"command stream: {len(r['command_stream'])} configuration instructions -> TXN of {r['txn']['ops']} ops, {r['txn']['bytes']} bytes")
PY
echo "trace index: $(tr -d ' \n' < "$OUT/trajectory/index.json")"
WALKTHROUGH=${LOOM_WALKTHROUGH:-../shared/reference/loom-resident-pipelines-walkthrough.txt}
if [ -f "$WALKTHROUGH" ]; then
  python3 scripts/walkthrough-listings.py "$WALKTHROUGH" outlined-module > "$OUT/walkthrough.loom"
  echo "outlined module equal to the walkthrough's up to renaming: $(python3 scripts/compare-modulo-renaming.py "$OUT/walkthrough.loom" "$OUT/trajectory/09-outline-pipeline-strands.loom" >/dev/null && echo yes || echo NO)"
fi
echo "the native realization's configuration function (trajectory/11-aie2p-lower-pipeline.loom):"
sed -n '/^func.def public target(@__loom_target_configuration/,/^}/p' "$OUT/trajectory/11-aie2p-lower-pipeline.loom" | sed 's/^/  /'

step "loom-compile trajectory/11-aie2p-lower-pipeline.loom --root=@ffn_gate_up_quadratic_bf16 --format=txn-text"
"$BIN/loom-compile" "$OUT/trajectory/11-aie2p-lower-pipeline.loom" --root=@ffn_gate_up_quadratic_bf16 \
  --format=txn-text | sed 's/^/  /'

step "llvm-readelf --sections --relocs projection.xdna"
"$LLVM_BIN/llvm-readelf" --sections --relocs --wide "$OUT/projection.xdna" 2>&1 \
  | sed -n '/Section Headers/,/Key to Flags/p;/Relocation section/,$p' | grep -v 'Key to Flags' | sed 's/^/  /'

step "loom-objdump projection.xdna   (what the artifact holds: profile, partition, tile images, the two empty PDIs)"
"$BIN/loom-objdump" "$OUT/projection.xdna" | sed 's/^/  /'
step "loom-objdump -d projection.xdna   (the worker's dot-product loop as machine code, its source lines between the bundles)"
"$BIN/loom-objdump" -d "$OUT/projection.xdna" > "$OUT/projection.objdump"
# From the loop's last source line for the input load (the first ones are its hoisted constants).
from=$(grep -n '%x = vector.load %input_values' "$OUT/projection.objdump" | tail -1 | cut -d: -f1)
tail -n +"$from" "$OUT/projection.objdump" | sed '/^$/q' | grep -v '^$' | cut -c1-150 | sed 's/^/  /'

step "echo 'acq #1, r31 ; mov r1, r2' | loom-mc --show-encoding   (the AIE2P instruction set, from llvm-aie's tables)"
echo 'acq #1, r31 ; mov r1, r2' | "$BIN/loom-mc" --show-encoding | sed 's/^/  /'

step "loom-format native.loom --to=bc; loom-compile native.loombc --root=@ffn_gate_up_quadratic_bf16 --format=xdna"
"$BIN/loom-format" "$OUT/trajectory/11-aie2p-lower-pipeline.loom" --to=bc --output="$OUT/native.loombc"
"$BIN/loom-compile" "$OUT/native.loombc" --root=@ffn_gate_up_quadratic_bf16 --format=xdna --output="$OUT/resumed.xdna"
"$BIN/loom-compile" "$OUT/trajectory/11-aie2p-lower-pipeline.loom" --root=@ffn_gate_up_quadratic_bf16 --format=xdna --output="$OUT/resumed-text.xdna"
echo "  resumed from bytecode and from text: byte-identical: $(cmp -s "$OUT/resumed-text.xdna" "$OUT/resumed.xdna" && echo yes || echo NO)"
code() { "$BIN/loom-objdump" -d "$1" | grep -E '^ *[0-9a-f]+:|^ *[0-9]+  [A-Z]' || true; }
echo "  the same control code and machine code as the direct compile: $([ "$(code "$OUT/projection.xdna")" = "$(code "$OUT/resumed.xdna")" ] && echo yes || echo NO)"
echo "  (the line table differs: the Loom text carries no source locations, so a resumed compile names the native module's lines)"

step "loom-test $EXAMPLE --each-pass   (its TEST-SCENARIO, on the best available device)"
"$BIN/loom-test" $EXAMPLE --each-pass | sed 's/^/  /'
step "loom-test trajectory/09-outline-pipeline-strands.loom --scenario-file=$EXAMPLE   (the same scenario, outlined)"
"$BIN/loom-test" "$OUT/trajectory/09-outline-pipeline-strands.loom" --scenario-file=$EXAMPLE | sed 's/^/  /'

step "loom-test $EXAMPLE --device=sim   (compile to .xdna, run it on the AIE2P array simulator: machine code, bundle by bundle, hazard checker on)"
"$BIN/loom-test" $EXAMPLE --device=sim | sed 's/^/  /'
step "loom-test $EXAMPLE --device=sim --core=lowir   (the oracle: the worker's Low IR at a modelled cycle per op)"
"$BIN/loom-test" $EXAMPLE --device=sim --core=lowir | sed 's/^/  /'
step "loom-test projection.xdna --device=sim --scenario-file=$EXAMPLE   (the walkthrough's artifact itself)"
"$BIN/loom-test" "$OUT/projection.xdna" --device=sim --scenario-file=$EXAMPLE | sed 's/^/  /'
step "loom-test test/interp/Inputs/eight-records.loom --device=sim   (eight records: the command stream's loops become DMA rings)"
python3 scripts/reference/gated_projection.py --k 4096 --records 8 --seed 4 --out "$OUT/r8" >/dev/null
"$BIN/loom-test" test/interp/Inputs/eight-records.loom --device=sim \
  --scenario-file=test/interp/Inputs/eight-scenarios.loom --data-dir="$OUT" | sed 's/^/  /'
step "the same artifact with the worker's output publication removed (a fault)"
grep -v 'aie2p.lock.release \[0, 3\] lock 5 add 1' "$OUT/trajectory/11-aie2p-lower-pipeline.loom" > "$OUT/faulty.loom"
"$BIN/loom-test" "$OUT/faulty.loom" --device=sim --scenario-file=$EXAMPLE | sed 's/^/  /' || true

BROADCAST=examples/broadcast-column.loom
step "loom-test $BROADCAST --device=sim   (data movement without cores: a memory tile's stream broadcast to the four cores of a column)"
"$BIN/loom-test" $BROADCAST --device=sim | cut -c1-220 | sed 's/^/  /'
echo "  its routes (one MM2S stream of memory tile [0, 1] to four cores, and two columns' shims back):"
"$BIN/loom-compile" $BROADCAST --root=@broadcast --target=amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11 \
  | grep 'aie2p.route' | sed 's/^ */    /'

TRANSPOSE=examples/transpose-tiles.loom
step "loom-test $TRANSPOSE --device=sim   (a matrix transposed tile by tile by the shim's descriptors, through a memory tile)"
"$BIN/loom-test" $TRANSPOSE --device=sim | cut -c1-220 | sed 's/^/  /'
echo "  its two shim descriptors (the strided views and the tiles' order as dimensions: read transposed, write in place):"
"$BIN/loom-compile" $TRANSPOSE --root=@transpose_tiles --target=amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11 \
  | grep 'aie2p.shim.bd' | sed 's/^ */    /'

SCALAR=test/codegen/Inputs/scale-clamp.loom
step "loom-compile $SCALAR   (a scalar worker as AIE2P machine code, unverified on hardware)"
"$BIN/loom-compile" $SCALAR --root=@scale_clamp --target=amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11 \
  --format=xdna --output="$OUT/scale-clamp.xdna"
"$BIN/loom-objdump" -d "$OUT/scale-clamp.xdna" > "$OUT/scale-clamp.objdump"
# The worker's first bundles, with the source lines of its line table between them.
sed -n '/Disassembly of the program/,$p' "$OUT/scale-clamp.objdump" | grep -v '^$' | sed -n '1,12p' | cut -c1-150 | sed 's/^/  /'
step "loom-test scale-clamp.xdna --device=sim --core=isa   (the machine code, executed bundle by bundle, hazard checker on)"
"$BIN/loom-test" "$OUT/scale-clamp.xdna" --device=sim --core=isa --scenario-file=$SCALAR | sed 's/^/  /'

INTEGERS=test/sim/Inputs/integers.loom
step "loom-test $INTEGERS --device=sim --core=lowir   (integer data: i8 copy, i16 scale, i32 add, scalar i8, an int8 GEMV with vector.mac and vector.srs)"
for k in copy scale add scalars gemv; do
  python3 scripts/reference/integer_kernels.py $k --out "$OUT/$k"
done
"$BIN/loom-test" $INTEGERS --device=sim --core=lowir --data-dir="$OUT" | cut -c1-160 | sed 's/^/  /'
step "loom-test $INTEGERS --device=sim --scenario=add --scenario=scalars   (the integer kernels the code generator selects, as machine code: vadd.32, scalar i8)"
"$BIN/loom-test" $INTEGERS --device=sim --scenario=add --scenario=scalars --data-dir="$OUT" | cut -c1-160 | sed 's/^/  /'

GEMM=examples/whole-array-gemm-i8.loom
step "loom-test $GEMM --device=sim --core=lowir   (C = A B on all 32 cores: A broadcast along the rows, B down the columns, C joined per column in the memory tiles, 8x8x8 vector.mmac; checked bit for bit)"
"$BIN/loom-test" $GEMM --device=sim --core=lowir | cut -c1-200 | sed 's/^/  /'
step "loom-test $GEMM --device=sim   (the i8 GEMM as AIE2P machine code on the isa core: the int8 matrix vmac, bundle by bundle)"
"$BIN/loom-test" $GEMM --device=sim | cut -c1-200 | sed 's/^/  /'
step "loom-test ${GEMM%-i8.loom}-bf16.loom --device=sim --core=lowir   (the same in bf16 into f32)"
"$BIN/loom-test" ${GEMM%-i8.loom}-bf16.loom --device=sim --core=lowir | cut -c1-200 | sed 's/^/  /'

step "loom-test $EXAMPLE --device=xdna   (an NPU through the amdxdna driver, docs/xdna-runtime.md)"
"$BIN/loom-test" $EXAMPLE --device=xdna 2>&1 | sed 's/^/  /' || true

step "loom-compile $EXAMPLE --root=@ffn_gate_up_quadratic_bf16 --config=ffn_gate_up.input_size=500"
"$BIN/loom-compile" $EXAMPLE --root=@ffn_gate_up_quadratic_bf16 --config=ffn_gate_up.input_size=500 \
  2>&1 >/dev/null | sed 's/^/  /' || true

printf '\nThe artifacts above run on the isa core carry AIE2P machine code (device_loadable: true) and are\n'
printf 'unverified on hardware: nothing has run on an NPU. Their vector results rest on the isa core'"'"'s\n'
printf 'documented assumptions A1-A11. The --core=lowir runs (the integer kernels, the bf16 GEMM) carry\n'
printf 'Low IR, which no NPU loads: bf16 vector.mmac and integer vector multiplies are not selected yet.\n'
