//===- Config.td - the config dialect -------------------------------------===//
//
// Compile-time configuration values: declared with their constraints,
// read where they are used, replaced by config specialization.
//
//===----------------------------------------------------------------------===//

include "common/LoomBase.td"

def Config_Dialect : Dialect {
  let name = "config";
  let cppNamespace = "::loom::config";
  let summary = "Compile-time configuration values and their constraints";
}

class Config_Op<string mnemonic, list<Trait> traits = []>
    : Loom_Op<Config_Dialect, mnemonic, traits>;

def Config_DefOp : Config_Op<"def", [Symbol]> {
  let summary = "Declare a configuration value and its constraints";
  let description = [{
    ```
    config.def @ffn_gate_up.input_size : index [range(512, 4096), multiple_of(32)]
    ```
    `range(lo, hi)` is inclusive; `multiple_of(d)` requires divisibility.
    Config specialization refuses values outside these constraints.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttr:$type,
                       OptionalAttr<DenseI64ArrayAttr>:$range,
                       OptionalAttr<I64Attr>:$multiple_of);
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

def Config_GetOp : Config_Op<"get", [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Read a configuration value";
  let description = [{
    ```
    %input_size = config.get @ffn_gate_up.input_size : index
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$name attr-dict `:` custom<LoomType>(type($result))";
}
