#!/usr/bin/env python3
"""Writes the whole-array GEMM in Loom: C = A B over the 4 core rows x 8
columns of the AIE2P array, the shape of mlir-aie's
programming_examples/basic/matrix_multiplication/whole_array.

    whole_array_gemm.py --dtype i8|bf16 --m M --n N --k K [--chunk KC] [--out FILE]

A is M x K and B is K x N, row-major; C is M x N row-major, i32 for i8
inputs and f32 for bf16. Core (c, 2 + r) computes the M/4 x N/8 block of C
at block row r and block column c, over all of K in chunks of KC:

- The command stream reads each chunk of A's block row r into memory tile
  (r, 1) and each chunk of B's block column c into memory tile (c, 1),
  through strided views that the shim descriptors' dimensions address: a
  chunk arrives as slabs of 8 columns (A) or 8-column panels (B), so every
  block the multiply-accumulate unit takes is contiguous.
- One SPMD forwarding strand on memory tiles 0-3 broadcasts A's chunks along
  the core rows, one on all eight memory tiles broadcasts B's down the
  columns: one MM2S stream each, branched by the switches.
- One SPMD compute strand on the 32 cores picks its channels by its
  coordinates and accumulates its block of C with vector.mmac, 8x8x8 (i8)
  or 4x8x8 (bf16) blocks.
- One SPMD forwarding strand on the eight memory tiles joins C per column:
  it reserves a slot of the column's channel in memory tile (c, 1) and
  copies the four cores' blocks into its four parts (`view.part`), each by
  its own S2MM channel; the command stream drains the eight joined
  columns (mlir-aie's object FIFO join), the realization striping each
  over the column's two shim S2MM channels.

Loom has no loops over declarations, so this script writes the 32 cores'
channels out, as mlir-aie's IRON designs are written by Python loops; the
strands are SPMD. examples/whole-array-gemm-{i8,bf16}.loom are its output
for the sizes their headers name (test/example/whole-array-gemm.test
checks that they are); scripts/bench-gemm.sh writes the benchmark sizes.
"""

import argparse
import sys

COLUMNS, ROWS = 8, 4
# dtype: (element, C element, element bytes, mmac shape [m, k, n])
TYPES = {"i8": ("i8", "i32", 1, (8, 8, 8)), "bf16": ("bf16", "f32", 2, (4, 8, 8))}


class Writer:
    def __init__(self):
        self.lines = []
        self.indent = 0

    def __call__(self, text=""):
        self.lines.append(("  " * self.indent + text) if text else "")


def channel(w, name, pool, shape, elem, ebytes, slots):
    """Declares a channel of `slots` records of `shape` in `pool`."""
    dims = "x".join(str(d) for d in shape)
    count = 1
    for d in shape:
        count *= d
    w(f"%{name}_storage = buffer.alloca<workgroup> pool(%{pool}) align(64) %bytes_{slots * count * ebytes} : buffer")
    w(f"%{name}_slots = buffer.view %{name}_storage[%origin] : buffer -> view<{slots}x{dims}x{elem}>")
    w(f"%{name} = channel.bind<fifo> %{name}_slots, %slots_{slots} : view<{slots}x{dims}x{elem}>, index -> channel<tile<{dims}x{elem}>>")


def tile(shape, elem):
    return f"tile<{'x'.join(str(d) for d in shape)}x{elem}>"


def view(shape, elem, strides=None):
    dims = "x".join(str(d) for d in shape)
    layout = f", strided<[{', '.join(str(s) for s in strides)}]>" if strides else ""
    return f"view<{dims}x{elem}{layout}>"


def generate(dtype, m, n, k, chunk, ldb, ldc, timing_only=False):
    elem, celem, ebytes, (bm, bk, bn) = TYPES[dtype]
    mc, nc = m // ROWS, n // COLUMNS
    problems = []
    if m % (ROWS * 2 * bm) or n % (COLUMNS * 2 * bn):
        problems.append(f"M must be a multiple of {ROWS * 2 * bm} and N of {COLUMNS * 2 * bn}")
    if chunk % bk or k % chunk:
        problems.append(f"the chunk must be a multiple of {bk} dividing K")
    if ldb < n or ldc < n:
        problems.append("B's and C's rows must hold N elements")
    if problems:
        sys.exit("whole_array_gemm.py: " + "; ".join(problems))
    chunks = k // chunk
    # Record shapes: A's chunk as slabs of bk columns, B's as panels of bn
    # columns, C as bm x bn blocks, row of blocks by row of blocks; a
    # column's joined C is its four cores' blocks, row 2's first.
    a_shape = (chunk // bk, mc, bk)
    b_shape = (nc // bn, chunk, bn)
    c_shape = (mc // bm, nc // bn, bm, bn)
    column_shape = (ROWS,) + c_shape
    a_flat = (chunk // bk, mc * bk)
    b_flat = (nc // bn, chunk * bn)
    c_flat = (mc // bm, (nc // bn) * bm * bn)
    sizes = {mc * chunk * ebytes * 2, chunk * nc * ebytes * 2, mc * nc * 4, ROWS * mc * nc * 4}
    cores = [(column, row) for column in range(COLUMNS) for row in range(ROWS)]

    w = Writer()
    w(f"// The whole-array GEMM, {dtype}: C = A B with A {m} x {k} and B {k} x {n},")
    w(f"// row-major, C {m} x {n} {celem}, on the 4 core rows x 8 columns. Written by")
    w(f"// scripts/examples/whole_array_gemm.py --dtype {dtype} --m {m} --n {n} --k {k} --chunk {chunk}"
      + (f" --ldb {ldb} --ldc {ldc}" if (ldb, ldc) != (n, n) else "")
      + (" --timing-only" if timing_only else "") + ";")
    w("// its docstring describes the design. The reference is")
    w("// scripts/reference/whole_array_gemm.py (docs/semantics.md, \"Matrix")
    w("// multiply-accumulate\"). Unverified on hardware.")
    w()
    w(f"// TEST-SCENARIO: gemm entry=@gemm")
    if timing_only:
        # The modelled cycles do not depend on the values: zeros, unchecked.
        w(f"// TEST-BIND: gemm %a = zeros({elem}, {m * k})")
        w(f"// TEST-BIND: gemm %b = zeros({elem}, {k * ldb})")
        w(f"// TEST-BIND: gemm %c = zeros({celem}, {m * ldc})")
    else:
        w(f"// TEST-BIND: gemm %a = npy(data/whole-array-gemm-{dtype}/a.npy, {elem}, {m * k})")
        w(f"// TEST-BIND: gemm %b = npy(data/whole-array-gemm-{dtype}/b.npy, {elem}, {k * ldb})")
        w(f"// TEST-BIND: gemm %c = zeros({celem}, {m * ldc})")
        w(f"// TEST-EXPECT: gemm %c = npy(data/whole-array-gemm-{dtype}/c.npy, {celem}, {m * ldc}) exact")
    w()
    w("aie2p.target<array> @npu")
    w()
    w("pipeline.def<kernel> public target(@npu) @gemm() run(%a: buffer, %b: buffer, %c: buffer) {")
    w.indent = 1
    w("%origin = index.constant 0 : offset")
    w("%slots_1 = index.constant 1 : index")
    w("%slots_2 = index.constant 2 : index")
    for size in sorted(sizes):
        w(f"%bytes_{size} = index.constant {size} : offset")
    for column in range(COLUMNS):
        w(f"%memory_{column} = pipeline.memory<workgroup>[{column}, 1] : pool")
        for row in range(ROWS):
            w(f"%core_{column}_{row} = pipeline.memory<workgroup>[{column}, {row + 2}] : pool")
    w()
    w("// A's chunks of block row r in memory tile (r, 1), B's of block column c")
    w("// in memory tile (c, 1).")
    for row in range(ROWS):
        channel(w, f"a_stage_{row}", f"memory_{row}", a_shape, elem, ebytes, 2)
    for column in range(COLUMNS):
        channel(w, f"b_stage_{column}", f"memory_{column}", b_shape, elem, ebytes, 2)
    w()
    w("// Column c's C, joined in memory tile (c, 1): part r is core (c, r + 2)'s")
    w("// block.")
    for column in range(COLUMNS):
        channel(w, f"c_column_{column}", f"memory_{column}", column_shape, celem, 4, 1)
    w()
    w("// Each core's inputs and its block of C.")
    for column in range(COLUMNS):
        for row in range(ROWS):
            core = f"core_{column}_{row}"
            channel(w, f"a_{column}_{row}", core, a_shape, elem, ebytes, 2)
            channel(w, f"b_{column}_{row}", core, b_shape, elem, ebytes, 2)
            channel(w, f"c_{column}_{row}", core, c_shape, celem, 4, 1)

    # The command stream.
    w()
    w("// The command stream: chunk by chunk, A's four block rows and B's eight")
    w("// block columns, then each column's C.")
    w("pipeline.strand workers([0, 0], [1, 1], [1, 1]) {")
    w.indent = 2
    w("%c0 = index.constant 0 : index")
    w("%c1 = index.constant 1 : index")
    w(f"%chunks = index.constant {chunks} : index")
    w(f"%a_chunk_bytes = index.constant {chunk * ebytes} : index")
    w(f"%b_chunk_bytes = index.constant {chunk * ldb * ebytes} : index")
    w(f"scf.for %kk = [%c0 to %chunks step %c1] {{")
    w.indent = 3
    w("%a_along = index.mul %kk, %a_chunk_bytes : index")
    w("%b_down = index.mul %kk, %b_chunk_bytes : index")
    a_view = view(a_shape, elem, (bk, k, 1))
    b_view = view(b_shape, elem, (bn, ldb, 1))
    a_slot = view(a_shape, elem)
    b_slot = view(b_shape, elem)
    for row in range(ROWS):
        w(f"%a_row_{row} = index.constant {row * mc * k * ebytes} : index")
        w(f"%a_at_{row} = index.add %a_along, %a_row_{row} : index")
        fill(w, f"a_stage_{row}", "a", f"a_at_{row}", a_view, a_slot, tile(a_shape, elem))
    for column in range(COLUMNS):
        w(f"%b_column_{column} = index.constant {column * nc * ebytes} : index")
        w(f"%b_at_{column} = index.add %b_down, %b_column_{column} : index")
        fill(w, f"b_stage_{column}", "b", f"b_at_{column}", b_view, b_slot, tile(b_shape, elem))
    w.indent = 2
    w("}")
    c_view = view(column_shape, celem, (mc * ldc, bm * ldc, bn, ldc, 1))
    c_slot = view(column_shape, celem)
    c_tile = tile(column_shape, celem)
    # Every drain is started before the one wait: a drain's descriptor
    # starts only after the waits the program made before it.
    for column in range(COLUMNS):
        name = f"c_column_{column}"
        w(f"%{name}_at = index.constant {column * nc * 4} : offset")
        w(f"%{name}_target = buffer.view %c[%{name}_at] : buffer -> {c_view}")
        w(f"%{name}_read, %{name}_record = channel.acquire %{name} : channel<{c_tile}> -> (read<{c_tile}>, {c_slot})")
        w(f"%{name}_copy = kernel.async.copy %{name}_record to %{name}_target {{cache_scope = workgroup, cache_temporal = regular, direction = workgroup_to_global}} : {c_slot} to {c_view} -> kernel.async.token")
    wait_all(w, "drained", [f"c_column_{column}_copy" for column in range(COLUMNS)])
    for column in range(COLUMNS):
        w(f"channel.release %c_column_{column}_read : read<{c_tile}>")
    w.indent = 1
    w("}")

    # The broadcasts.
    broadcast(w, "A's chunks along the core rows: memory tile (r, 1) to the eight cores of row r + 2.",
              ROWS, [f"a_stage_{row}" for row in range(ROWS)],
              [[f"a_{column}_{row}" for row in range(ROWS)] for column in range(COLUMNS)],
              a_shape, elem, chunks)
    broadcast(w, "B's chunks down the columns: memory tile (c, 1) to the four cores of column c.",
              COLUMNS, [f"b_stage_{column}" for column in range(COLUMNS)],
              [[f"b_{column}_{row}" for column in range(COLUMNS)] for row in range(ROWS)],
              b_shape, elem, chunks)

    join(w, column_shape, c_shape, celem)

    # The compute strand.
    shapes = dict(bm=bm, bk=bk, bn=bn, elem=elem, celem=celem, chunks=chunks,
                  a_shape=a_shape, b_shape=b_shape, a_flat=a_flat, b_flat=b_flat)
    in_tiles = {"a": tile(a_shape, elem), "b": tile(b_shape, elem)}
    c_tile, c_slot = tile(c_shape, celem), view(c_shape, celem)
    w()
    w("// Every core: a block of C, accumulated over K chunk by chunk.")
    w(f"pipeline.strand workers([0, 2], [{COLUMNS}, {ROWS}], [1, 1]) {{")
    w.indent = 2
    w("%column, %row = pipeline.instance : index, index")
    w(f"%rows = index.constant {ROWS} : index")
    w("%column_first = index.mul %column, %rows : index")
    w("%core = index.add %column_first, %row : index")
    for name, t in (("a", in_tiles["a"]), ("b", in_tiles["b"]), ("c", c_tile)):
        choices = ", ".join(f"%{name}_{c}_{r}" for c, r in cores)
        w(f"%{name}_in = scf.pick %core [{choices}] : channel<{t}>")
    w(f"%c_write, %c_slot = channel.reserve %c_in : channel<{c_tile}> -> (write<{c_tile}>, {c_slot})")
    w(f"%c_blocks = view.reinterpret %c_slot : {c_slot} -> {view(c_flat, celem)}")
    accumulate(w, c_flat, mc // bm, nc // bn, shapes)
    w(f"channel.publish %c_write : write<{c_tile}>")
    w.indent = 1
    w("}")
    w.indent = 0
    w("}")
    return "\n".join(w.lines) + "\n"


def join(w, column_shape, c_shape, celem):
    """The SPMD forwarding strand on the memory tiles that joins each
    column's four blocks of C into one slot of its channel."""
    whole, part = tile(column_shape, celem), tile(c_shape, celem)
    whole_view, part_view = view(column_shape, celem), view(c_shape, celem)
    w()
    w("// C joined per column: memory tile (c, 1) takes the four cores' blocks of")
    w("// column c into the parts of one slot.")
    w(f"pipeline.strand workers([0, 1], [{COLUMNS}, 1], [1, 1]) {{")
    w.indent = 2
    w("%column, %row = pipeline.instance : index, index")
    w(f"%joined = scf.pick %column [{', '.join(f'%c_column_{c}' for c in range(COLUMNS))}] : channel<{whole}>")
    for r in range(ROWS):
        w(f"%from_{r} = scf.pick %column [{', '.join(f'%c_{c}_{r}' for c in range(COLUMNS))}] : channel<{part}>")
    w(f"%write, %slot = channel.reserve %joined : channel<{whole}> -> (write<{whole}>, {whole_view})")
    for r in range(ROWS):
        w(f"%part_{r} = index.constant {r} : index")
        w(f"%read_{r}, %block_{r} = channel.acquire %from_{r} : channel<{part}> -> (read<{part}>, {part_view})")
        w(f"%into_{r} = view.part %slot[%part_{r}] : {whole_view} -> {part_view}")
        w(f"%copy_{r} = kernel.async.copy %block_{r} to %into_{r} {{cache_scope = workgroup, cache_temporal = regular, direction = workgroup_to_workgroup}} : {part_view} to {part_view} -> kernel.async.token")
    wait_all(w, "joined_all", [f"copy_{r}" for r in range(ROWS)])
    for r in range(ROWS):
        w(f"channel.release %read_{r} : read<{part}>")
    w(f"channel.publish %write : write<{whole}>")
    w.indent = 1
    w("}")


def accumulate(w, flat, block_rows, block_columns, s):
    """Zero the first block_rows rows of blocks of %c_blocks, then add A B
    into them chunk by chunk."""
    bm, bk, bn, elem, celem = s["bm"], s["bk"], s["bn"], s["elem"], s["celem"]
    a_slot, b_slot = view(s["a_shape"], elem), view(s["b_shape"], elem)
    a_tile, b_tile = tile(s["a_shape"], elem), tile(s["b_shape"], elem)
    a_flat, b_flat, c_flat = view(s["a_flat"], elem), view(s["b_flat"], elem), view(flat, celem)
    acc = f"vector<{bm * bn}x{celem}>"
    av, bv = f"vector<{bm * bk}x{elem}>", f"vector<{bk * bn}x{elem}>"
    w("%c0 = index.constant 0 : index")
    w("%c1 = index.constant 1 : index")
    w(f"%chunks = index.constant {s['chunks']} : index")
    w(f"%block_rows = index.constant {block_rows} : index")
    w(f"%block_columns = index.constant {block_columns} : index")
    w(f"%slabs = index.constant {s['a_shape'][0]} : index")
    w(f"%a_block = index.constant {bm * bk} : index")
    w(f"%b_block = index.constant {bk * bn} : index")
    w(f"%c_block = index.constant {bm * bn} : index")
    w(f"%zero = vector.constant {'0.0' if celem == 'f32' else '0'} : {acc}")
    w("scf.for %i = [%c0 to %block_rows step %c1] {")
    w("  scf.for %j = [%c0 to %block_columns step %c1] {")
    w("    %c_at = index.mul %j, %c_block : index")
    w(f"    vector.store %zero, %c_blocks[%i, %c_at] : {acc}, {c_flat}")
    w("  }")
    w("}")
    w("scf.for %kk = [%c0 to %chunks step %c1] {")
    w.indent += 1
    w(f"%a_read, %a_chunk = channel.acquire %a_in : channel<{a_tile}> -> (read<{a_tile}>, {a_slot})")
    w(f"%b_read, %b_chunk = channel.acquire %b_in : channel<{b_tile}> -> (read<{b_tile}>, {b_slot})")
    w(f"%a_slabs = view.reinterpret %a_chunk : {a_slot} -> {a_flat}")
    w(f"%b_panels = view.reinterpret %b_chunk : {b_slot} -> {b_flat}")
    # Two by two blocks of C at a time: each block of A and of B loaded
    # once for two multiply-accumulates.
    w("%c2 = index.constant 2 : index")
    w("scf.for %i = [%c0 to %block_rows step %c2] {")
    w("  %i1 = index.add %i, %c1 : index")
    w("  %a_at = index.mul %i, %a_block : index")
    w("  %a_at1 = index.mul %i1, %a_block : index")
    w("  scf.for %j = [%c0 to %block_columns step %c2] {")
    w("    %j1 = index.add %j, %c1 : index")
    w("    %c_at = index.mul %j, %c_block : index")
    w("    %c_at1 = index.mul %j1, %c_block : index")
    blocks = (("00", "%i", "%c_at"), ("01", "%i", "%c_at1"), ("10", "%i1", "%c_at"), ("11", "%i1", "%c_at1"))
    for tag, row, at in blocks:
        w(f"    %partial{tag} = vector.load %c_blocks[{row}, {at}] : {c_flat} -> {acc}")
    w(f"    %sum00, %sum01, %sum10, %sum11 = scf.for %p = [%c0 to %slabs step %c1] iter_args(%s00 = %partial00, %s01 = %partial01, %s10 = %partial10, %s11 = %partial11) -> ({acc}, {acc}, {acc}, {acc}) {{")
    w("      %b_at = index.mul %p, %b_block : index")
    w(f"      %x0 = vector.load %a_slabs[%p, %a_at] : {a_flat} -> {av}")
    w(f"      %x1 = vector.load %a_slabs[%p, %a_at1] : {a_flat} -> {av}")
    w(f"      %y0 = vector.load %b_panels[%j, %b_at] : {b_flat} -> {bv}")
    w(f"      %y1 = vector.load %b_panels[%j1, %b_at] : {b_flat} -> {bv}")
    for tag in ("00", "01", "10", "11"):
        w(f"      %n{tag} = vector.mmac [{bm}, {bk}, {bn}] %x{tag[0]}, %y{tag[1]}, %s{tag} : {av}, {bv}, {acc}")
    w(f"      scf.yield %n00, %n01, %n10, %n11 : {acc}, {acc}, {acc}, {acc}")
    w("    }")
    for tag, row, at in blocks:
        w(f"    vector.store %sum{tag}, %c_blocks[{row}, {at}] : {acc}, {c_flat}")
    w("  }")
    w("}")
    w(f"channel.release %b_read : read<{b_tile}>")
    w(f"channel.release %a_read : read<{a_tile}>")
    w.indent -= 1
    w("}")


def wait_all(w, group, copies):
    """Groups the copies' tokens and waits for them."""
    tokens = ", ".join(f"%{c}" for c in copies)
    types = ", ".join("kernel.async.token" for _ in copies)
    w(f"%{group} = kernel.async.group {tokens} : {types} -> kernel.async.group")
    w(f"kernel.async.wait %{group} {{newer_groups = 0}} : kernel.async.group")


def fill(w, channel_name, source, at, source_view, slot_view, tile_type):
    """One command-stream transfer into `channel_name` from `source` at `at`."""
    w(f"%{channel_name}_offset = index.cast %{at} : index to offset")
    w(f"%{channel_name}_source = buffer.view %{source}[%{channel_name}_offset] : buffer -> {source_view}")
    w(f"%{channel_name}_write, %{channel_name}_slot = channel.reserve %{channel_name} : channel<{tile_type}> -> (write<{tile_type}>, {slot_view})")
    w(f"%{channel_name}_copy = kernel.async.copy %{channel_name}_source to %{channel_name}_slot {{cache_scope = workgroup, cache_temporal = regular, direction = global_to_workgroup}} : {source_view} to {slot_view} -> kernel.async.token")
    w(f"%{channel_name}_filled = kernel.async.group %{channel_name}_copy : kernel.async.token -> kernel.async.group")
    w(f"kernel.async.wait %{channel_name}_filled {{newer_groups = 0}} : kernel.async.group")
    w(f"channel.publish %{channel_name}_write : write<{tile_type}>")


def broadcast(w, comment, tiles, stages, destinations, shape, elem, chunks):
    """An SPMD forwarding strand on memory tiles 0 .. tiles-1: instance t
    copies each record of stages[t] into destinations[d][t] for every d."""
    t = tile(shape, elem)
    v = view(shape, elem)
    w()
    w(f"// {comment}")
    w(f"pipeline.strand workers([0, 1], [{tiles}, 1], [1, 1]) {{")
    w.indent = 2
    w("%column, %row = pipeline.instance : index, index")
    w(f"%stage = scf.pick %column [{', '.join('%' + s for s in stages)}] : channel<{t}>")
    for d, choices in enumerate(destinations):
        w(f"%to_{d} = scf.pick %column [{', '.join('%' + c for c in choices)}] : channel<{t}>")
    w("%c0 = index.constant 0 : index")
    w("%c1 = index.constant 1 : index")
    w(f"%chunks = index.constant {chunks} : index")
    w("scf.for %kk = [%c0 to %chunks step %c1] {")
    w.indent = 3
    w(f"%read, %record = channel.acquire %stage : channel<{t}> -> (read<{t}>, {v})")
    for d in range(len(destinations)):
        w(f"%write_{d}, %slot_{d} = channel.reserve %to_{d} : channel<{t}> -> (write<{t}>, {v})")
    for d in range(len(destinations)):
        w(f"%copy_{d} = kernel.async.copy %record to %slot_{d} {{cache_scope = workgroup, cache_temporal = regular, direction = workgroup_to_workgroup}} : {v} to {v} -> kernel.async.token")
    wait_all(w, "moved", [f"copy_{d}" for d in range(len(destinations))])
    for d in range(len(destinations)):
        w(f"channel.publish %write_{d} : write<{t}>")
    w(f"channel.release %read : read<{t}>")
    w.indent = 2
    w("}")
    w.indent = 1
    w("}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dtype", choices=sorted(TYPES), required=True)
    parser.add_argument("--m", type=int, required=True)
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--k", type=int, required=True)
    parser.add_argument("--chunk", type=int, default=32)
    parser.add_argument("--ldb", type=int, help="elements between B's rows (default N)")
    parser.add_argument("--ldc", type=int, help="elements between C's rows (default N)")
    parser.add_argument("--timing-only", action="store_true",
                        help="bind zeros and check nothing (for the cycle figures of sizes too large for the reference)")
    parser.add_argument("--out", default="-")
    args = parser.parse_args()
    text = generate(args.dtype, args.m, args.n, args.k, args.chunk, args.ldb or args.n, args.ldc or args.n, args.timing_only)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
