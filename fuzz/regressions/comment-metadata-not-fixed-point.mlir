"builtin.module"() ({
  "aie2p.target"() <{kind = "array", sym_name = "npu"}> : () -> () loc(fused<{loom.before = ["    // x", "", ""]}>["a.loom":1:1])
}) : () -> ()
