#!/usr/bin/env python3
"""Generate a large Loom module for `make bench` (scripts/bench.sh).

The module repeats the walkthrough's gated projection (examples/gated-projection.loom)
as independent "units": per unit a config value, the fill/drain helpers (index
arithmetic, buffer views with dependent dimensions `view<[%n]xbf16>`, channel
reserve/publish/acquire/release, async copies), the BF16 multiply (vector ops),
the projection tile (nested scf.for loops with iter_args, view loads/stores,
scf.select), and a pipeline.def with two pipeline.strand bodies driving the
channels. Symbols get a per-unit suffix and a few constants vary per unit, so
the module is realistic Loom, not one op repeated. Comments are kept (Loom
carries them through its locations), as in hand-written sources.

    scripts/gen-module.py [--ops N | --units N] [-o FILE]

writes at least N operations (default 100000; the implicit builtin.module is
not counted) and reports the exact count on stderr. The output verifies with
`loom-opt` and is printed back unchanged (it is in canonical form).
"""

import argparse
import re
import sys

UNIT = """\
// Unit @@U: the gated projection of the walkthrough, K in [@@KLO, @@KHI].

// K, the row width of this unit.
config.def @ffn_gate_up_@@U.input_size : index [range(@@KLO, @@KHI), multiple_of(32)]

func.def inline @fill_input_@@U(%input_size: index, %record: index, %input: buffer, %inputs: channel<tile<[%input_size]xbf16>>) {
  %element_bytes = index.constant 2 : index
  %record_elements = index.mul %record, %input_size : index
  %byte_index = index.mul %record_elements, %element_bytes : index
  %byte_offset = index.cast %byte_index : index to offset
  %source = buffer.view %input[%byte_offset] : buffer -> view<[%input_size]xbf16>
  %write, %destination = channel.reserve %inputs : channel<tile<[%input_size]xbf16>> -> (write<tile<[%input_size]xbf16>>, view<[%input_size]xbf16>)
  %copy = kernel.async.copy %source to %destination {cache_scope = workgroup, cache_temporal = regular, direction = global_to_workgroup} : view<[%input_size]xbf16> to view<[%input_size]xbf16> -> kernel.async.token
  %pending = kernel.async.group %copy : kernel.async.token -> kernel.async.group
  kernel.async.wait %pending {newer_groups = 0} : kernel.async.group
  channel.publish %write : write<tile<[%input_size]xbf16>>
  func.return
}

func.def inline @drain_output_@@U(%record: index, %outputs: channel<tile<1xf32>>, %output: buffer) {
  %element_bytes = index.constant 4 : index
  %byte_index = index.mul %record, %element_bytes : index
  %byte_offset = index.cast %byte_index : index to offset
  %destination = buffer.view %output[%byte_offset] : buffer -> view<1xf32>
  %read, %source = channel.acquire %outputs : channel<tile<1xf32>> -> (read<tile<1xf32>>, view<1xf32>)
  %copy = kernel.async.copy %source to %destination {cache_scope = workgroup, cache_temporal = regular, direction = workgroup_to_global} : view<1xf32> to view<1xf32> -> kernel.async.token
  %pending = kernel.async.group %copy : kernel.async.token -> kernel.async.group
  kernel.async.wait %pending {newer_groups = 0} : kernel.async.group
  channel.release %read : read<tile<1xf32>>
  func.return
}

// One BF16 multiplication on 16 lanes: lanes interleaved with zeros,
// multiplied pairwise into F32, rounded to BF16.
func.def inline @multiply_bf16_@@U(%a: vector<16xbf16>, %b: vector<16xbf16>) -> (vector<16xbf16>) {
  %c0 = vector.constant 0.0 : vector<16xbf16>
  %zero = vector.constant 0.0 : vector<16xf32>
  %left = vector.interleave<0> %a, %c0 : vector<16xbf16>, vector<16xbf16> -> vector<32xbf16>
  %right = vector.interleave<0> %b, %c0 : vector<16xbf16>, vector<16xbf16> -> vector<32xbf16>
  %product = vector.dot2f %left, %right, %zero : vector<32xbf16>, vector<32xbf16>, vector<16xf32>
  %result = vector.fptrunc %product : vector<16xf32> to vector<16xbf16>
  func.return %result : vector<16xbf16>
}

// Gate and up dot products over K in 32-element steps, the partial sums
// reduced through a private scratch buffer, then the quadratic gate.
func.def inline @gate_up_tile_@@U(%input_size: index, %input_values: view<[%input_size]xbf16>, %weight_values: view<2x[%input_size]xbf16>, %output_values: view<1xf32>) {
  %base = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %step = index.constant 32 : index
  %initial = vector.constant 0.0 : vector<16xf32>
  %scratch_bytes = index.constant 64 : offset
  %scratch = buffer.alloca<private> align(64) %scratch_bytes : buffer
  %scratch_view = buffer.view %scratch[%base] : buffer -> view<16xf32>
  %lanes = index.constant 16 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %fzero = scalar.constant 0.0 : f32
  %gate_sum, %up_sum = scf.for %row = [%c0 to %c2 step %c1] iter_args(%gate_iter = %fzero, %up_iter = %fzero) -> (f32, f32) {
    %partials = scf.for %position = [%c0 to %input_size step %step] iter_args(%accumulator = %initial) -> (vector<16xf32>) {
      %x = vector.load %input_values[%position] : view<[%input_size]xbf16> -> vector<32xbf16>
      %w = vector.load %weight_values[%row, %position] : view<2x[%input_size]xbf16> -> vector<32xbf16>
      %next = vector.dot2f %x, %w, %accumulator : vector<32xbf16>, vector<32xbf16>, vector<16xf32>
      scf.yield %next : vector<16xf32>
    }
    vector.store %partials, %scratch_view[0] : vector<16xf32>, view<16xf32>
    %sum = scf.for %lane = [%c0 to %lanes step %c1] iter_args(%sum_iter = %fzero) -> (f32) {
      %part = view.load %scratch_view[%lane] : view<16xf32> -> f32
      %next_sum = scalar.addf %sum_iter, %part : f32
      scf.yield %next_sum : f32
    }
    %is_gate = index.cmp eq, %row, %c0 : index
    %gate_next = scf.select %is_gate, %sum, %gate_iter : f32
    %up_next = scf.select %is_gate, %up_iter, %sum : f32
    scf.yield %gate_next, %up_next : f32, f32
  }
  %gate_bf16 = scalar.fptrunc %gate_sum : f32 to bf16
  %gate = vector.splat %gate_bf16 : vector<16xbf16>
  %up_bf16 = scalar.fptrunc %up_sum : f32 to bf16
  %up = vector.splat %up_bf16 : vector<16xbf16>
  %quarters = vector.constant @@QUARTER : vector<16xbf16>
  %halves = vector.constant @@HALF : vector<16xf32>
  %linear = func.call @multiply_bf16_@@U(%gate, %quarters) : (vector<16xbf16>, vector<16xbf16>) -> (vector<16xbf16>)
  %linear_f32 = vector.extf %linear : vector<16xbf16> to vector<16xf32>
  %scale_f32 = vector.addf %halves, %linear_f32 : vector<16xf32>
  %scale = vector.fptrunc %scale_f32 : vector<16xf32> to vector<16xbf16>
  %gated = func.call @multiply_bf16_@@U(%gate, %scale) : (vector<16xbf16>, vector<16xbf16>) -> (vector<16xbf16>)
  %projected = func.call @multiply_bf16_@@U(%gated, %up) : (vector<16xbf16>, vector<16xbf16>) -> (vector<16xbf16>)
  %result = vector.extract %projected[0] : vector<16xbf16> -> bf16
  %result_f32 = scalar.extf %result : bf16 to f32
  view.store %result_f32, %output_values[0] : f32, view<1xf32>
  func.return
}

pipeline.def<kernel> public retain target(@npu) @ffn_gate_up_quadratic_bf16_@@U() run(%input_arg: buffer, %weights_arg: buffer, %output_arg: buffer) {
  %input_size = config.get @ffn_gate_up_@@U.input_size : index
  %record_count = index.constant @@RECORDS : index
  %input, %weights, %output = buffer.assume.alignment %input_arg, %weights_arg, %output_arg {minimum_alignment = 64} : buffer, buffer, buffer
  %tile_memory = pipeline.memory<workgroup>[@@COL, 3] : pool
  %origin = index.constant 0 : offset
  %single = index.constant 1 : index
  %double_buffer = index.constant 2 : index
  %element_bytes = index.constant 2 : index
  %pair_elements = index.mul %double_buffer, %input_size : index
  %pair_byte_count = index.mul %pair_elements, %element_bytes : index
  %pair_bytes = index.cast %pair_byte_count : index to offset
  %input_storage = buffer.alloca<workgroup> pool(%tile_memory) align(64) %pair_bytes : buffer
  %input_slots = buffer.view %input_storage[%origin] : buffer -> view<2x[%input_size]xbf16>
  %inputs = channel.bind<fifo> %input_slots, %double_buffer : view<2x[%input_size]xbf16>, index -> channel<tile<[%input_size]xbf16>>
  %weight_storage = buffer.alloca<workgroup> pool(%tile_memory) align(64) %pair_bytes : buffer
  %weight_slots = buffer.view %weight_storage[%origin] : buffer -> view<1x2x[%input_size]xbf16>
  %resident_weights = channel.bind<fifo> %weight_slots, %single : view<1x2x[%input_size]xbf16>, index -> channel<tile<2x[%input_size]xbf16>>
  %output_bytes = index.constant 8 : offset
  %output_storage = buffer.alloca<workgroup> pool(%tile_memory) align(64) %output_bytes : buffer
  %output_slots = buffer.view %output_storage[%origin] : buffer -> view<2x1xf32>
  %outputs = channel.bind<fifo> %output_slots, %double_buffer : view<2x1xf32>, index -> channel<tile<1xf32>>

  pipeline.strand workers([@@COL, 2], [1, 1], [1, 1]) {
    %source_weights = buffer.view %weights[%origin] : buffer -> view<2x[%input_size]xbf16>
    %weight_write, %weight_destination = channel.reserve %resident_weights : channel<tile<2x[%input_size]xbf16>> -> (write<tile<2x[%input_size]xbf16>>, view<2x[%input_size]xbf16>)
    %weight_copy = kernel.async.copy %source_weights to %weight_destination {cache_scope = workgroup, cache_temporal = regular, direction = global_to_workgroup} : view<2x[%input_size]xbf16> to view<2x[%input_size]xbf16> -> kernel.async.token
    %weight_pending = kernel.async.group %weight_copy : kernel.async.token -> kernel.async.group
    kernel.async.wait %weight_pending {newer_groups = 0} : kernel.async.group
    channel.publish %weight_write : write<tile<2x[%input_size]xbf16>>
    %begin = index.constant 0 : index
    %step = index.constant 1 : index
    %prefetch_count = index.min %double_buffer, %record_count : index
    scf.for %record = [%begin to %prefetch_count step %step] {
      func.call @fill_input_@@U(%input_size, %record, %input, %inputs) : (index, index, buffer, channel<tile<[%input_size]xbf16>>)
    }
    scf.for %record = [%begin to %record_count step %step] {
      func.call @drain_output_@@U(%record, %outputs, %output) : (index, channel<tile<1xf32>>, buffer)
      %next_record = index.add %record, %prefetch_count : index
      %has_next = index.cmp ult, %next_record, %record_count : index
      scf.if %has_next {
        func.call @fill_input_@@U(%input_size, %next_record, %input, %inputs) : (index, index, buffer, channel<tile<[%input_size]xbf16>>)
      }
    }
  }

  pipeline.strand workers([@@COL, 3], [1, 1], [1, 1]) {
    %weight_read, %weight_values = channel.acquire %resident_weights : channel<tile<2x[%input_size]xbf16>> -> (read<tile<2x[%input_size]xbf16>>, view<2x[%input_size]xbf16>)
    %begin = index.constant 0 : index
    %step = index.constant 1 : index
    scf.for %record = [%begin to %record_count step %step] {
      %input_read, %input_values = channel.acquire %inputs : channel<tile<[%input_size]xbf16>> -> (read<tile<[%input_size]xbf16>>, view<[%input_size]xbf16>)
      %output_write, %output_values = channel.reserve %outputs : channel<tile<1xf32>> -> (write<tile<1xf32>>, view<1xf32>)
      func.call @gate_up_tile_@@U(%input_size, %input_values, %weight_values, %output_values) : (index, view<[%input_size]xbf16>, view<2x[%input_size]xbf16>, view<1xf32>)
      channel.publish %output_write : write<tile<1xf32>>
      channel.release %input_read : read<tile<[%input_size]xbf16>>
    }
    channel.release %weight_read : read<tile<2x[%input_size]xbf16>>
  }
}
"""

HEADER = """\
// Generated by scripts/gen-module.py for the parse/verify/print benchmark
// (scripts/bench.sh): @@UNITS copies of the walkthrough's gated projection,
// @@OPS operations.

aie2p.target<array> @npu
"""

# Lines that are neither blank, comments, closing braces nor block labels
# start an operation (region-holding ops are counted on their opening line).
NOT_AN_OP = re.compile(r"^\s*($|//|}|\^)")
# scf.for / scf.if without results end their region with an implicit scf.yield
# that the parser inserts: an operation that the text does not show.
IMPLICIT_YIELD = re.compile(r"^\s*scf\.(for|if)\b")


def count_ops(text):
    """Operations of the parsed IR, as the generic form lists them (without
    the implicit builtin.module)."""
    lines = text.splitlines()
    shown = sum(1 for line in lines if not NOT_AN_OP.match(line))
    return shown + sum(1 for line in lines if IMPLICIT_YIELD.match(line))


def unit(index):
    k_lo = 512 + 32 * (index % 8)
    k_hi = 4096 - 256 * (index % 4)
    values = {
        "@@U": str(index),
        "@@KLO": str(k_lo),
        "@@KHI": str(k_hi),
        "@@RECORDS": str(1 + index % 4),
        "@@COL": str(index % 4),
        "@@QUARTER": ("0.25", "0.125", "0.375", "0.5")[index % 4],
        "@@HALF": ("0.5", "0.25", "0.75", "1.0")[index % 4],
    }
    text = UNIT
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=100_000,
                        help="minimum number of operations (default 100000)")
    parser.add_argument("--units", type=int,
                        help="exactly this many units (two strands each) instead of --ops")
    parser.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    args = parser.parse_args()

    per_unit = count_ops(unit(0))
    header_ops = count_ops(HEADER)
    units = args.units or max(1, -(-(args.ops - header_ops) // per_unit))
    ops = header_ops + units * per_unit
    parts = [HEADER.replace("@@UNITS", str(units)).replace("@@OPS", str(ops))]
    parts.extend("\n" + unit(i) for i in range(units))
    text = "".join(parts)
    assert count_ops(text) == ops

    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as out:
            out.write(text)
    print(f"gen-module: {units} units, {ops} operations, {len(text)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
