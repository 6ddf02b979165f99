//===- Kernel.td - the kernel dialect (kernel.async.*) --------------------===//
//
// Asynchronous copies between views, grouped and waited for explicitly.
//
//===----------------------------------------------------------------------===//

include "common/LoomBase.td"

def Kernel_Dialect : Dialect {
  let name = "kernel";
  let cppNamespace = "::loom::kernel";
  let summary = "Kernel-level asynchronous copies, groups and waits";
  let useDefaultTypePrinterParser = 1;
}

def Kernel_AsyncTokenType : TypeDef<Kernel_Dialect, "AsyncToken"> {
  let mnemonic = "async.token";
  let summary = "Completion of one asynchronous copy";
}

def Kernel_AsyncGroupType : TypeDef<Kernel_Dialect, "AsyncGroup"> {
  let mnemonic = "async.group";
  let summary = "A committed group of asynchronous copies";
}

class Kernel_Op<string mnemonic, list<Trait> traits = []>
    : Loom_Op<Kernel_Dialect, mnemonic, traits>;

def Kernel_AsyncCopyOp : Kernel_Op<"async.copy", [Loom_DependentTypeOpInterface]> {
  let summary = "Start copying one view into another";
  let description = [{
    ```
    %copy = kernel.async.copy %source to %destination {cache_scope = workgroup, cache_temporal = regular, direction = global_to_workgroup} : view<[%n]xbf16> to view<[%n]xbf16> -> kernel.async.token
    ```
    The destination holds the data only after a `kernel.async.wait` on a
    group containing the token has completed. `direction` is
    `global_to_workgroup`, `workgroup_to_global` or `workgroup_to_workgroup`
    (between two tiles' storage, as a strand that forwards records from one
    channel to another copies); `cache_scope` and `cache_temporal` are cache
    hints.
  }];
  let arguments = (ins Loom_ViewType:$source, Loom_ViewType:$destination,
                       StrAttr:$direction, StrAttr:$cache_scope, StrAttr:$cache_temporal,
                       Variadic<Index>:$type_dims);
  let results = (outs Loom_TokenType:$token);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = loomNaming # [{
    ::llvm::SmallVector<::mlir::Value> getTypedValues() { return {getSource(), getDestination(), getToken()}; }
  }];
}

def Kernel_AsyncGroupOp : Kernel_Op<"async.group"> {
  let summary = "Commit outstanding copies as one group";
  let description = [{
    ```
    %pending = kernel.async.group %copy : kernel.async.token -> kernel.async.group
    ```
  }];
  let arguments = (ins Variadic<Loom_TokenType>:$tokens);
  let results = (outs Loom_GroupType:$group);
  let assemblyFormat = [{
    $tokens attr-dict `:` custom<LoomTypes>(type($tokens)) `->` custom<LoomType>(type($group))
  }];
  let hasVerifier = 1;
}

def Kernel_AsyncWaitOp : Kernel_Op<"async.wait"> {
  let summary = "Wait until at most `newer_groups` groups younger than this one are pending";
  let description = [{
    ```
    kernel.async.wait %pending {newer_groups = 0} : kernel.async.group
    ```
    With `newer_groups = 0` the group and everything committed before it
    have completed when the wait returns.
  }];
  let arguments = (ins Loom_GroupType:$group, I64Attr:$newer_groups);
  let assemblyFormat = [{
    $group ` ` `{` `newer_groups` `=` $newer_groups `}` attr-dict `:` custom<LoomType>(type($group))
  }];
  let hasVerifier = 1;
}
