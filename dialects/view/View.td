//===- View.td - the view dialect -----------------------------------------===//
//
// Typed, shaped access to bytes: the `view` type and scalar loads/stores.
//
//===----------------------------------------------------------------------===//

include "common/LoomBase.td"

def View_Dialect : Dialect {
  let name = "view";
  let cppNamespace = "::loom::view";
  let summary = "Shaped views of storage and scalar element access";
  let useDefaultTypePrinterParser = 1;
}

def View_ViewType : TypeDef<View_Dialect, "View"> {
  let mnemonic = "view";
  let summary = "A shaped, typed view of storage it does not own";
  let description = [{
    In Loom text a dynamic dimension is written as the SSA value that holds
    it (`view<2x[%input_size]xbf16>`); the type itself records `?` and the
    op that spells the type keeps the value as an operand. Generic form:
    `!view.view<2x?xbf16>`.

    Elements are row-major and contiguous unless the type has a layout:
    `view<4x64xf32, strided<[1, 64]>>` puts element (i, j) at element
    `i * 1 + j * 64` from the view's start (strides in elements, one per
    dimension, static and at least 1), as MLIR's `memref` strided layout
    does. One buffer view is thus a transposed or sub-matrix window on
    storage; copies move elements index by index between any two layouts.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType,
                        OptionalArrayRefParameter<"int64_t">:$strides);
  let builders = [
    TypeBuilder<(ins "::llvm::ArrayRef<int64_t>":$shape, "::mlir::Type":$elementType), [{
      return $_get($_ctxt, shape, elementType, ::llvm::ArrayRef<int64_t>{});
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    unsigned getNumDynamicDims() const;
    /// Contiguous row-major (no layout, or strides that are exactly it).
    bool isContiguous() const;
    /// The same shape and element type, contiguous.
    ViewType withoutLayout() const;
  }];
}

class View_Op<string mnemonic, list<Trait> traits = []>
    : Loom_Op<View_Dialect, mnemonic, traits>;

def View_LoadOp : View_Op<"load", [Loom_DependentTypeOpInterface, AttrSizedOperandSegments]> {
  let summary = "Load one element of a view";
  let description = [{
    ```
    %part = view.load %scratch_view[%lane] : view<16xf32> -> f32
    ```
  }];
  let arguments = (ins Loom_ViewType:$view, Variadic<Index>:$indices,
                       DenseI64ArrayAttr:$static_indices, Variadic<Index>:$type_dims);
  let results = (outs AnyType:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = loomNaming # [{
    ::llvm::SmallVector<::mlir::Value> getTypedValues() { return {getView(), getResult()}; }
  }];
}

def View_StoreOp : View_Op<"store", [Loom_DependentTypeOpInterface, AttrSizedOperandSegments]> {
  let summary = "Store one element into a view";
  let description = [{
    ```
    view.store %result_f32, %output_values[0] : f32, view<1xf32>
    ```
  }];
  let arguments = (ins AnyType:$value, Loom_ViewType:$view, Variadic<Index>:$indices,
                       DenseI64ArrayAttr:$static_indices, Variadic<Index>:$type_dims);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = loomNaming # [{
    ::llvm::SmallVector<::mlir::Value> getTypedValues() { return {getValue(), getView()}; }
  }];
}

def View_ReinterpretOp : View_Op<"reinterpret", [Pure]> {
  let summary = "The same bytes from the same start, with another shape or layout";
  let description = [{
    ```
    %columns = view.reinterpret %record : view<256xf32> -> view<16x16xf32, strided<[1, 16]>>
    ```
    A view of the storage `%source` views, from its first element, with the
    result type's shape and layout: element (i, j) above is element
    `i + 16 j` of `%record`, so copying `%columns` transposes the record. It
    borrows what `%source` borrows (a payload view's obligation). Both types
    are static, `%source` is row-major and contiguous, the element types
    agree, and the result reaches no byte past `%source`'s.
  }];
  let arguments = (ins Loom_ViewType:$source);
  let results = (outs Loom_ViewType:$result);
  let assemblyFormat = [{
    $source attr-dict `:` custom<LoomType>(type($source)) `->` custom<LoomType>(type($result))
  }];
  let hasVerifier = 1;
}

def View_PartOp : View_Op<"part", [Pure]> {
  let summary = "Part i of a view along its leading dimension";
  let description = [{
    ```
    %mine = view.part %column[%row] : view<4x2x2x8x8xi32> -> view<2x2x8x8xi32>
    ```
    The elements of `%source` whose leading index is `%index`, as a view of
    the remaining dimensions: element (j, ...) of `%mine` is element
    (`%index`, j, ...) of `%source`. It borrows what `%source` borrows (a
    payload view's obligation). Both types are static and row-major, the
    result's shape is the source's without its leading dimension, and the
    element types agree; an index outside the leading dimension is an error
    when the op runs (and at compile time when it is a constant). A
    forwarding strand that copies records into parts of one reserved slot
    is a join (docs/xdna-target.md, "Joins").
  }];
  let arguments = (ins Loom_ViewType:$source, Index:$index);
  let results = (outs Loom_ViewType:$result);
  let assemblyFormat = [{
    $source `[` $index `]` attr-dict `:` custom<LoomType>(type($source)) `->` custom<LoomType>(type($result))
  }];
  let hasVerifier = 1;
}
