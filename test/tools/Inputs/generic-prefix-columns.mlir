"builtin.module"() ({
  "loom.func.def"() <{arg_dims = array<i64>, function_type = () -> (), sym_name = "f"}> ({
    "loom.func.return"(%undefined) : (index) -> ()
  }) : () -> ()
}) : () -> ()
