//===- Vector.td - the vector dialect -------------------------------------===//
//
// Fixed-width vectors (MLIR's builtin `vector<NxT>`): constants, loads and
// stores through views, lane arithmetic and the paired-lane dot product.
//
//===----------------------------------------------------------------------===//

include "common/LoomBase.td"

def Vector_Dialect : Dialect {
  let name = "vector";
  let cppNamespace = "::loom::vector";
  let summary = "Fixed-width vector arithmetic and view access";
  let hasConstantMaterializer = 1;
}

class Vector_Op<string mnemonic, list<Trait> traits = []>
    : Loom_Op<Vector_Dialect, mnemonic, traits>;

def Vector_ConstantOp : Vector_Op<"constant", [ConstantLike, Pure]> {
  let summary = "A vector with every lane equal to one float or integer constant";
  let description = [{
    ```
    %quarters = vector.constant 0.25 : vector<16xbf16>
    %ones = vector.constant 1 : vector<32xi8>
    ```
  }];
  let arguments = (ins Loom_NumberAttr:$value);
  let results = (outs Loom_NumberVector:$result);
  let assemblyFormat = "custom<NumberLiteral>($value, type($result)) attr-dict";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Vector_LoadOp : Vector_Op<"load", [Loom_DependentTypeOpInterface, AttrSizedOperandSegments]> {
  let summary = "Load consecutive elements of a view's innermost dimension";
  let description = [{
    ```
    %w = vector.load %weight_values[%row, %position] : view<2x[%n]xbf16> -> vector<32xbf16>
    ```
  }];
  let arguments = (ins Loom_ViewType:$view, Variadic<Index>:$indices,
                       DenseI64ArrayAttr:$static_indices, Variadic<Index>:$type_dims);
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = loomNaming # [{
    ::llvm::SmallVector<::mlir::Value> getTypedValues() { return {getView(), getResult()}; }
  }];
}

def Vector_StoreOp : Vector_Op<"store", [Loom_DependentTypeOpInterface, AttrSizedOperandSegments]> {
  let summary = "Store a vector into consecutive elements of a view";
  let description = [{
    ```
    vector.store %accumulator, %scratch_view[0] : vector<16xf32>, view<16xf32>
    ```
  }];
  let arguments = (ins AnyVectorOfNonZeroRank:$value, Loom_ViewType:$view,
                       Variadic<Index>:$indices, DenseI64ArrayAttr:$static_indices,
                       Variadic<Index>:$type_dims);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = loomNaming # [{
    ::llvm::SmallVector<::mlir::Value> getTypedValues() { return {getValue(), getView()}; }
  }];
}

def Vector_Dot2FOp : Vector_Op<"dot2f", [Pure, AllTypesMatch<["lhs", "rhs"]>,
    AllTypesMatch<["accumulator", "result"]>]> {
  let summary = "Paired-lane dot product accumulated in F32";
  let description = [{
    ```
    %next = vector.dot2f %x, %w, %acc : vector<32xbf16>, vector<32xbf16>, vector<16xf32>
    ```
    Lane i of the result is (acc[i] + x[2i] * w[2i]) + x[2i+1] * w[2i+1]:
    each product in F32 (exact for BF16 inputs), each sum rounded to F32 in
    that order (docs/semantics.md).
  }];
  let arguments = (ins Loom_FloatVector:$lhs, Loom_FloatVector:$rhs, Loom_FloatVector:$accumulator);
  let results = (outs Loom_FloatVector:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $accumulator attr-dict `:` custom<LoomType>(type($lhs)) `,`
    custom<LoomType>(type($rhs)) `,` custom<LoomType>(type($accumulator))
  }];
  let hasVerifier = 1;
}

def Vector_SplatOp : Vector_Op<"splat", [Pure,
    TypesMatchWith<"input is the result's element type", "result", "input",
                   "::llvm::cast<::mlir::VectorType>($_self).getElementType()">]> {
  let summary = "A vector with every lane equal to a scalar";
  let description = "`%gate = vector.splat %g : vector<16xbf16>`";
  let arguments = (ins AnyType:$input);
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = "$input attr-dict `:` custom<LoomType>(type($result))";
  let hasVerifier = 1;
}

def Vector_InterleaveOp : Vector_Op<"interleave", [Pure, AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "Interleave the lanes of two vectors";
  let description = [{
    ```
    %pairs = vector.interleave<0> %a, %b : vector<16xbf16>, vector<16xbf16> -> vector<32xbf16>
    ```
    Mode 0: result[2i] = a[i], result[2i+1] = b[i].
  }];
  let arguments = (ins I64Attr:$mode, AnyVectorOfNonZeroRank:$lhs, AnyVectorOfNonZeroRank:$rhs);
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    `<` $mode `>` $lhs `,` $rhs attr-dict `:` custom<LoomType>(type($lhs)) `,`
    custom<LoomType>(type($rhs)) `->` custom<LoomType>(type($result))
  }];
  let hasVerifier = 1;
}

class Vector_ConvertOp<string mnemonic, string what> : Vector_Op<mnemonic, [Pure]> {
  let summary = what;
  let arguments = (ins Loom_FloatVector:$input);
  let results = (outs Loom_FloatVector:$result);
  let assemblyFormat = [{
    $input attr-dict `:` custom<LoomType>(type($input)) `to` custom<LoomType>(type($result))
  }];
  let hasVerifier = 1;
}

def Vector_FPTruncOp : Vector_ConvertOp<"fptrunc", "Round each lane to a narrower float type (nearest even)">;
def Vector_ExtFOp : Vector_ConvertOp<"extf", "Widen each lane to a wider float type (exact)">;

class Vector_BinaryOp<string mnemonic, string what>
    : Vector_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = what;
  let arguments = (ins Loom_FloatVector:$lhs, Loom_FloatVector:$rhs);
  let results = (outs Loom_FloatVector:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` custom<LoomType>(type($result))";
}

def Vector_AddFOp : Vector_BinaryOp<"addf", "Lane-wise IEEE addition">;
def Vector_MulFOp : Vector_BinaryOp<"mulf", "Lane-wise IEEE multiplication">;

class Vector_IntBinaryOp<string mnemonic, string what>
    : Vector_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = what;
  let arguments = (ins Loom_IntVector:$lhs, Loom_IntVector:$rhs);
  let results = (outs Loom_IntVector:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` custom<LoomType>(type($result))";
  let hasVerifier = 1;
}

def Vector_AddIOp : Vector_IntBinaryOp<"addi", "Lane-wise two's-complement addition, wrapping">;
def Vector_SubIOp : Vector_IntBinaryOp<"subi", "Lane-wise two's-complement subtraction, wrapping">;
def Vector_MulIOp : Vector_IntBinaryOp<"muli", "Lane-wise two's-complement multiplication, the low bits">;

def Vector_MacOp : Vector_Op<"mac", [Pure, AllTypesMatch<["lhs", "rhs"]>,
    AllTypesMatch<["accumulator", "result"]>]> {
  let summary = "Lane-wise widening multiply-accumulate into i32 lanes";
  let description = [{
    ```
    %next = vector.mac %a, %b, %acc : vector<32xi8>, vector<32xi8>, vector<32xi32>
    ```
    Lane i of the result is acc[i] + a[i] * b[i]: the product of the
    sign-extended i8 or i16 lanes is exact in 32 bits, the sum wraps
    (docs/semantics.md). The AIE's integer multiply-accumulate, lane by lane.
  }];
  let arguments = (ins Loom_IntVector:$lhs, Loom_IntVector:$rhs, Loom_IntVector:$accumulator);
  let results = (outs Loom_IntVector:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $accumulator attr-dict `:` custom<LoomType>(type($lhs)) `,`
    custom<LoomType>(type($rhs)) `,` custom<LoomType>(type($accumulator))
  }];
  let hasVerifier = 1;
}

def Vector_MmacOp : Vector_Op<"mmac", [Pure, AllTypesMatch<["accumulator", "result"]>]> {
  let summary = "Matrix multiply-accumulate of row-major blocks, widening";
  let description = [{
    ```
    %next = vector.mmac [8, 8, 8] %a, %b, %acc : vector<64xi8>, vector<64xi8>, vector<64xi32>
    %sum = vector.mmac [4, 8, 8] %x, %w, %partial : vector<32xbf16>, vector<64xbf16>, vector<32xf32>
    ```
    With shape [m, k, n], %a is an m x k block, %b a k x n block and %acc an
    m x n block, each row-major in its lanes. Element (i, j) of the result
    is acc(i, j) plus the sum over p of a(i, p) * b(p, j): exact products
    with a wrapping 32-bit sum for i8 or i16 inputs into i32, and for bf16
    inputs into f32 the products added in order of p, each sum rounded to
    f32 (docs/semantics.md). The AIE's matrix multiply-accumulate
    (aie::mmul); [8, 8, 8] for i8 and [4, 8, 8] for bf16 are the shapes its
    multiply-accumulate unit takes in one operation.
  }];
  let arguments = (ins DenseI64ArrayAttr:$shape, AnyVectorOfNonZeroRank:$lhs,
                   AnyVectorOfNonZeroRank:$rhs, AnyVectorOfNonZeroRank:$accumulator);
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    $shape $lhs `,` $rhs `,` $accumulator attr-dict `:` custom<LoomType>(type($lhs)) `,`
    custom<LoomType>(type($rhs)) `,` custom<LoomType>(type($accumulator))
  }];
  let hasVerifier = 1;
}

def Vector_SrsOp : Vector_Op<"srs", [Pure]> {
  let summary = "Shift right, round and saturate each i32 lane to a narrower integer";
  let description = [{
    ```
    %out = vector.srs %acc, 7 : vector<32xi32> to vector<32xi8>
    ```
    Lane i is acc[i] / 2^shift rounded to nearest, ties to even, then
    clamped to the narrower type's signed range (docs/semantics.md): the
    AIE's shift-round-saturate with its round-to-even mode.
  }];
  let arguments = (ins Loom_IntVector:$input, I64Attr:$shift);
  let results = (outs Loom_IntVector:$result);
  let assemblyFormat = [{
    $input `,` $shift attr-dict `:` custom<LoomType>(type($input)) `to` custom<LoomType>(type($result))
  }];
  let hasVerifier = 1;
}

def Vector_ExtractOp : Vector_Op<"extract", [Pure]> {
  let summary = "Extract one lane";
  let description = "`%r = vector.extract %v[0] : vector<16xbf16> -> bf16`";
  let arguments = (ins AnyVectorOfNonZeroRank:$input, DenseI64ArrayAttr:$position);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $input `` $position attr-dict `:` custom<LoomType>(type($input)) `->` custom<LoomType>(type($result))
  }];
  let hasVerifier = 1;
}
