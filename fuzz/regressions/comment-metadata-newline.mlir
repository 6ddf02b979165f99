"builtin.module"() ({
  "aie2p.target"() <{kind = "array", sym_name = "npu"}> : () -> () loc(fused<{loom.after = "// ok\0Aaie2p.target<array> @npu"}>["a.loom":1:1])
}) : () -> ()
