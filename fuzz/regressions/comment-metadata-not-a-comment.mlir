"builtin.module"() ({
  "aie2p.target"() <{kind = "array", sym_name = "npu"}> : () -> () loc(fused<{loom.before = ["not a comment"]}>["a.loom":1:1])
}) : () -> ()
