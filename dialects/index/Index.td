//===- Index.td - the index dialect ---------------------------------------===//
//
// Integer arithmetic on sizes, positions (`index`) and byte offsets (`offset`),
// comparisons, conversions and facts about values.
//
//===----------------------------------------------------------------------===//

include "common/LoomBase.td"

def Index_Dialect : Dialect {
  let name = "index";
  let cppNamespace = "::loom::index";
  let summary = "Index and offset arithmetic, comparison and facts";
  let hasConstantMaterializer = 1;
}

class Index_Op<string mnemonic, list<Trait> traits = []>
    : Loom_Op<Index_Dialect, mnemonic, traits>;

def Index_ConstantOp : Index_Op<"constant", [ConstantLike, Pure]> {
  let summary = "An index, offset or i1 constant";
  let description = [{
    ```
    %origin = index.constant 0 : offset
    %count = index.constant 8 : index
    %true = index.constant 1 : i1
    ```
  }];
  let arguments = (ins I64Attr:$value);
  let results = (outs AnyTypeOf<[Index, Loom_OffsetType, I1]>:$result);
  let assemblyFormat = "$value attr-dict `:` custom<LoomType>(type($result))";
  let hasFolder = 1;
  let hasVerifier = 1;
}

class Index_BinaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Index_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType])> {
  let summary = what;
  let arguments = (ins Loom_IndexLike:$lhs, Loom_IndexLike:$rhs);
  let results = (outs Loom_IndexLike:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` custom<LoomType>(type($result))";
  let hasFolder = 1;
}

def Index_AddOp : Index_BinaryOp<"add", "Addition (wraps at 64 bits)", [Commutative]>;
def Index_SubOp : Index_BinaryOp<"sub", "Subtraction (wraps at 64 bits)">;
def Index_MulOp : Index_BinaryOp<"mul", "Multiplication (wraps at 64 bits)", [Commutative]>;
def Index_MinOp : Index_BinaryOp<"min", "Unsigned minimum", [Commutative]>;
def Index_MaxOp : Index_BinaryOp<"max", "Unsigned maximum", [Commutative]>;

def Index_CastOp : Index_Op<"cast", [Pure]> {
  let summary = "Reinterpret an index as a byte offset or back";
  let description = [{
    ```
    %byte_offset = index.cast %byte_index : index to offset
    ```
  }];
  let arguments = (ins Loom_IndexLike:$input);
  let results = (outs Loom_IndexLike:$result);
  let assemblyFormat = [{
    $input attr-dict `:` custom<LoomType>(type($input)) `to` custom<LoomType>(type($result))
  }];
  let hasFolder = 1;
}

def Index_CmpOp : Index_Op<"cmp", [Pure, SameTypeOperands]> {
  let summary = "Compare two index or offset values";
  let description = [{
    ```
    %has_next = index.cmp ult, %next, %count : index
    ```
    Predicates: `eq`, `ne`, `slt`, `sle`, `sgt`, `sge`, `ult`, `ule`, `ugt`,
    `uge`. The result is an `i1`; the type after the colon is the operands'.
  }];
  let arguments = (ins StrAttr:$predicate, Loom_IndexLike:$lhs, Loom_IndexLike:$rhs);
  let results = (outs I1:$result);
  let assemblyFormat = [{
    custom<Keyword>($predicate) `,` $lhs `,` $rhs attr-dict `:` custom<LoomType>(type($lhs))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Index_AssumeOp : Index_Op<"assume", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Attach facts about a value: an inclusive range and a divisor";
  let description = [{
    ```
    %position = index.assume %i [range(%i, 0, 480), multiple_of(%i, 32)] : index
    ```
    Returns its input. The facts are promises: `range(%v, lo, hi)` means
    lo <= %v <= hi, `multiple_of(%v, d)` means %v is divisible by d. Each fact
    names the input value it describes.
  }];
  let arguments = (ins Loom_IndexLike:$input, OptionalAttr<DenseI64ArrayAttr>:$range,
                       OptionalAttr<I64Attr>:$multiple_of);
  let results = (outs Loom_IndexLike:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = loomNaming # [{
    std::optional<int64_t> divisor() {
      if (auto attr = getMultipleOfAttr())
        return attr.getInt();
      return std::nullopt;
    }
  }];
}
