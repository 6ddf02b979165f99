//===- Scalar.td - the scalar dialect -------------------------------------===//
//
// Scalar arithmetic: floats (f32, bf16) and integers (i8, i16, i32), and
// float conversions.
//
//===----------------------------------------------------------------------===//

include "common/LoomBase.td"

def Scalar_Dialect : Dialect {
  let name = "scalar";
  let cppNamespace = "::loom::scalar";
  let summary = "Scalars: constants, float and integer arithmetic, float conversions";
}

class Scalar_Op<string mnemonic, list<Trait> traits = []>
    : Loom_Op<Scalar_Dialect, mnemonic, traits>;

def Scalar_ConstantOp : Scalar_Op<"constant", [ConstantLike, Pure]> {
  let summary = "A float or integer constant";
  let description = [{
    ```
    %zero = scalar.constant 0.0 : f32
    %three = scalar.constant -3 : i8
    ```
    An integer literal is a signed value that fits the type, or `0x...`, its
    bits.
  }];
  let arguments = (ins Loom_NumberAttr:$value);
  let results = (outs Loom_NumberScalar:$result);
  let assemblyFormat = "custom<NumberLiteral>($value, type($result)) attr-dict";
  let hasFolder = 1;
  let hasVerifier = 1;
}

class Scalar_BinaryOp<string mnemonic, string what>
    : Scalar_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = what;
  let arguments = (ins Loom_FloatScalar:$lhs, Loom_FloatScalar:$rhs);
  let results = (outs Loom_FloatScalar:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` custom<LoomType>(type($result))";
}

class Scalar_IntBinaryOp<string mnemonic, string what>
    : Scalar_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = what;
  let arguments = (ins Loom_IntScalar:$lhs, Loom_IntScalar:$rhs);
  let results = (outs Loom_IntScalar:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` custom<LoomType>(type($result))";
}

def Scalar_AddFOp : Scalar_BinaryOp<"addf", "IEEE addition, rounded to nearest even">;
def Scalar_SubFOp : Scalar_BinaryOp<"subf", "IEEE subtraction, rounded to nearest even">;
def Scalar_MulFOp : Scalar_BinaryOp<"mulf", "IEEE multiplication, rounded to nearest even">;
def Scalar_AddIOp : Scalar_IntBinaryOp<"addi", "Two's-complement addition, wrapping">;
def Scalar_SubIOp : Scalar_IntBinaryOp<"subi", "Two's-complement subtraction, wrapping">;
def Scalar_MulIOp : Scalar_IntBinaryOp<"muli", "Two's-complement multiplication, the low bits">;

def Scalar_FPTruncOp : Scalar_Op<"fptrunc", [Pure]> {
  let summary = "Round to a narrower float type (nearest even)";
  let description = "`%g = scalar.fptrunc %gate : f32 to bf16`";
  let arguments = (ins Loom_FloatScalar:$input);
  let results = (outs Loom_FloatScalar:$result);
  let assemblyFormat = [{
    $input attr-dict `:` custom<LoomType>(type($input)) `to` custom<LoomType>(type($result))
  }];
  let hasVerifier = 1;
}

def Scalar_ExtFOp : Scalar_Op<"extf", [Pure]> {
  let summary = "Widen to a wider float type (exact)";
  let description = "`%r = scalar.extf %x : bf16 to f32`";
  let arguments = (ins Loom_FloatScalar:$input);
  let results = (outs Loom_FloatScalar:$result);
  let assemblyFormat = [{
    $input attr-dict `:` custom<LoomType>(type($input)) `to` custom<LoomType>(type($result))
  }];
  let hasVerifier = 1;
}
