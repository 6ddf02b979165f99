#!/usr/bin/env bash
# Seed the parse_print corpus (fuzz/corpus/parse_print/, not committed):
#   - every .loom file under test/ and examples/, whole, and, for files with
#     `// -----` separators, each chunk on its own (as --split-input-file
#     reads them: the invalid.loom tests hold one error case per chunk);
#   - the hand-written seeds in fuzz/seeds/ (Loom text and generic MLIR);
#   - when loom-format is available (LOOM_BIN_DIR, else target/release or
#     target/debug), the bytecode and generic MLIR forms of every seed that
#     parses, so the bytecode and generic readers are fuzzed too.
# Running it again refreshes the copies; inputs the fuzzer added stay.
set -euo pipefail
FUZZ=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$FUZZ")
CORPUS=$FUZZ/corpus/parse_print
mkdir -p "$CORPUS"

added=0
add() { # add NAME < contents
  cat > "$CORPUS/$1"
  added=$((added + 1))
}

while IFS= read -r file; do
  rel=${file#"$ROOT"/}
  name=seed-$(printf '%s' "$rel" | tr '/' '_')
  add "$name" < "$file"
  if grep -q '^[[:space:]]*// -----[[:space:]]*$' "$file"; then
    chunks=$(mktemp -d)
    awk -v dir="$chunks" '
      /^[[:space:]]*\/\/ -----[[:space:]]*$/ { n++; next }
      { print > (dir "/" sprintf("%03d", n)) }' "$file"
    for chunk in "$chunks"/*; do
      add "$name.chunk$(basename "$chunk")" < "$chunk"
    done
    rm -rf "$chunks"
  fi
done < <(find "$ROOT/test" "$ROOT/examples" -name '*.loom' -type f | sort)

for file in "$FUZZ"/seeds/*; do
  add "seed-fuzz_$(basename "$file")" < "$file"
done

BIN=${LOOM_BIN_DIR:-}
if [ -z "$BIN" ]; then
  for dir in "$ROOT/target/release" "$ROOT/target/debug"; do
    [ -x "$dir/loom-format" ] && { BIN=$dir; break; }
  done
fi
if [ -n "$BIN" ] && [ -x "$BIN/loom-format" ]; then
  converted=0
  for file in "$CORPUS"/seed-*; do
    case $file in *.bc-form | *.mlir-form) continue ;; esac
    # Never `-o /dev/null` or another special file: see docs/PERFORMANCE.md.
    if "$BIN/loom-format" "$file" --to=bc -o "$file.bc-form" 2>/dev/null; then
      "$BIN/loom-format" "$file" --to=mlir -o "$file.mlir-form" 2>/dev/null || rm -f "$file.mlir-form"
      converted=$((converted + 1))
    else
      rm -f "$file.bc-form"
    fi
  done
  echo "seed.sh: bytecode and generic forms of $converted seeds (with $BIN/loom-format)"
  # The xdna_read corpus: artifacts of the example and of three simulator
  # programs, on both profiles.
  XDNA=$FUZZ/corpus/xdna_read
  mkdir -p "$XDNA"
  artifacts=0
  for profile in amd.xdna.strix.17f0_10 amd.xdna.strix_halo.17f0_11; do
    for k in 512 4096; do
      "$BIN/loom-compile" "$ROOT/examples/gated-projection.loom" --root=@ffn_gate_up_quadratic_bf16 \
        --target=amd.xdna.aie2p:$profile --config=ffn_gate_up.input_size=$k --format=xdna \
        -o "$XDNA/seed-gated-$k-$profile.xdna" && artifacts=$((artifacts + 1))
    done
    for pair in ring:ring memtile-copy:memtile_copy command-stream:two_tiles; do
      "$BIN/loom-compile" "$ROOT/test/sim/Inputs/${pair%%:*}.loom" --root=@${pair#*:} \
        --target=amd.xdna.aie2p:$profile --format=xdna \
        -o "$XDNA/seed-${pair#*:}-$profile.xdna" && artifacts=$((artifacts + 1))
    done
  done
  echo "seed.sh: $artifacts .xdna seeds in $XDNA"
else
  echo "seed.sh: no loom-format found (set LOOM_BIN_DIR); text seeds only"
fi
echo "seed.sh: $added text seeds; corpus $CORPUS holds $(find "$CORPUS" -type f | wc -l) inputs"

# isa_decode: one bundle file per golden pair of the instruction-set tables.
ISA=$FUZZ/corpus/isa_decode
mkdir -p "$ISA"
python3 - "$ROOT/targets/aie2p-isa/data/golden.json" "$ISA" <<'PY'
import json, sys
pairs = json.load(open(sys.argv[1]))["pairs"]
for n, p in enumerate(pairs):
    with open(f"{sys.argv[2]}/seed-{p['family']}-{n}", "wb") as out:
        out.write(bytes(int(b, 16) for b in p["bytes"].split()))
print(f"seed.sh: {len(pairs)} bundle seeds in {sys.argv[2]}")
PY
