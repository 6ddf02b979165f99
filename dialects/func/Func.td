//===- Func.td - the func dialect -----------------------------------------===//
//
// Ordinary functions whose argument types may name other arguments as
// dimensions, calls to them and returns.
//
//===----------------------------------------------------------------------===//

include "common/LoomBase.td"

def Func_Dialect : Dialect {
  let name = "func";
  let cppNamespace = "::loom::func";
  let summary = "Functions with dependent argument types, calls and returns";
}

class Func_Op<string mnemonic, list<Trait> traits = []>
    : Loom_Op<Func_Dialect, mnemonic, traits>;

def Func_DefOp : Func_Op<"def", [IsolatedFromAbove, FunctionOpInterface,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    AutomaticAllocationScope]> {
  let summary = "A function definition";
  let description = [{
    ```
    func.def inline @fill_input(%input_size: index, %inputs: channel<tile<[%input_size]xbf16>>) {
      ...
      func.return
    }
    func.def inline target(@__loom_target_context_1_0) @__pipeline_strand_0(...) { ... }
    ```
    `inline` asks the inliner to inline every call. `target(@sym)` binds the
    function to a target context. An argument type may name any argument of
    the same function as a dimension, in any order: `arg_dims` lists, for
    each dynamic dimension of the argument types and then of the result
    types, the index of the argument that holds it. Without `public` a
    function is private to its module.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, OptionalAttr<StrAttr>:$sym_visibility,
                       UnitAttr:$inline_hint, OptionalAttr<FlatSymbolRefAttr>:$target,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       DenseI64ArrayAttr:$arg_dims);
  let regions = (region AnyRegion:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = loomNaming # [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() { return getFunctionType().getInputs(); }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() { return getFunctionType().getResults(); }
  }];
}

def Func_CallOp : Func_Op<"call", [CallOpInterface, Loom_DependentTypeOpInterface,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>, AttrSizedOperandSegments]> {
  let summary = "Call a function";
  let description = [{
    ```
    func.call @fill_input(%input_size, %record, %input, %inputs) : (index, index, buffer, channel<tile<[%input_size]xbf16>>)
    %r = func.call @f(%x) : (f32) -> (f32)
    ```
    The verifier instantiates the callee's dependent argument types with the
    actual arguments: a dimension the callee names by argument j must be the
    value passed as argument j.
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyType>:$args,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       Variadic<Index>:$type_dims);
  let results = (outs Variadic<AnyType>:$results);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = loomNaming # [{
    ::llvm::SmallVector<::mlir::Value> getTypedValues();
    ::mlir::CallInterfaceCallable getCallableForCallee() { return getCalleeAttr(); }
    void setCalleeFromCallable(::mlir::CallInterfaceCallable callee) {
      (*this)->setAttr("callee", ::llvm::cast<::mlir::SymbolRefAttr>(callee));
    }
    ::mlir::Operation::operand_range getArgOperands() { return getArgs(); }
    ::mlir::MutableOperandRange getArgOperandsMutable() { return getArgsMutable(); }
  }];
}

def Func_ReturnOp : Func_Op<"return", [Pure,
    ParentOneOf<["::loom::func::DefOp", "::loom::pipeline::StrandOp"]>, ReturnLike, Terminator]> {
  let summary = "Return from a function";
  let description = [{
    ```
    func.return
    func.return %sum : f32
    ```
    Also ends a `pipeline.strand` body once control flow has been lowered to
    `cfg` blocks; a strand returns no values.
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = [{
    attr-dict ($values^ `:` custom<LoomTypes>(type($values)))?
  }];
  let hasVerifier = 1;
}
