"""A pipeline whose command stream makes N sequential transfers from the
caller's buffer into N channels in a memory tile (test/xdna/refusals.test):
each transfer takes a shim buffer descriptor, and they are not reused within
an invocation.

python3 many-transfers.py N > many.loom
"""
import sys

n = int(sys.argv[1])
print("aie2p.target<array> @npu\n")
print("pipeline.def<kernel> public target(@npu) @many_transfers() run(%in: buffer) {")
print("  %memory = pipeline.memory<workgroup>[0, 1] : pool")
print("  %origin = index.constant 0 : offset")
print("  %bytes = index.constant 4 : offset")
print("  %slots = index.constant 1 : index")
for i in range(n):
    print(f"  %s{i} = buffer.alloca<workgroup> pool(%memory) align(4) %bytes : buffer")
    print(f"  %v{i} = buffer.view %s{i}[%origin] : buffer -> view<1x1xf32>")
    print(f"  %c{i} = channel.bind<fifo> %v{i}, %slots : view<1x1xf32>, index -> channel<tile<1xf32>>")
print("\n  pipeline.strand workers([0, 2], [1, 1], [1, 1]) {")
for i in range(n):
    print(f"    %source{i} = buffer.view %in[%origin] : buffer -> view<1xf32>")
    print(f"    %w{i}, %d{i} = channel.reserve %c{i} : channel<tile<1xf32>> -> (write<tile<1xf32>>, view<1xf32>)")
    print(f"    %copy{i} = kernel.async.copy %source{i} to %d{i} {{cache_scope = workgroup, cache_temporal = regular, direction = global_to_workgroup}} : view<1xf32> to view<1xf32> -> kernel.async.token")
    print(f"    %pending{i} = kernel.async.group %copy{i} : kernel.async.token -> kernel.async.group")
    print(f"    kernel.async.wait %pending{i} {{newer_groups = 0}} : kernel.async.group")
    print(f"    channel.publish %w{i} : write<tile<1xf32>>")
print("  }")
print("}")
