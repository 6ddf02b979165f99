"builtin.module"() ({
  "loom.func.def"() <{arg_dims = array<i64: 7>, function_type = (index, !view.view<?xf32>) -> (), sym_name = "decl", sym_visibility = "private"}> ({
  }) : () -> ()
  "loom.func.def"() <{arg_dims = array<i64: 0>, function_type = (index, !view.view<?xf32>) -> (), sym_name = "f", sym_visibility = "private"}> ({
  ^bb0(%arg0: index, %arg1: !view.view<?xf32>):
    "loom.func.call"(%arg0, %arg1, %arg0) <{callee = @decl, operandSegmentSizes = array<i32: 2, 1>}> : (index, !view.view<?xf32>, index) -> ()
    "loom.func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
