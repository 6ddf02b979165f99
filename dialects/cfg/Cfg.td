//===- Cfg.td - the cfg dialect -------------------------------------------===//
//
// Unstructured control flow between blocks.
//
//===----------------------------------------------------------------------===//

include "common/LoomBase.td"

def Cfg_Dialect : Dialect {
  let name = "cfg";
  let cppNamespace = "::loom::cfg";
  let summary = "Branches between blocks";
}

class Cfg_Op<string mnemonic, list<Trait> traits = []>
    : Loom_Op<Cfg_Dialect, mnemonic, traits>;

def Cfg_BrOp : Cfg_Op<"br", [Pure, Terminator,
    DeclareOpInterfaceMethods<BranchOpInterface, ["getSuccessorForOperands"]>]> {
  let summary = "Branch to a block, passing values to its arguments";
  let description = [{
    ```
    cfg.br ^_bb2(%c0: index, %zero: f32)
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$dest_operands);
  let successors = (successor AnySuccessor:$dest);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Cfg_CondBrOp : Cfg_Op<"cond_br", [Pure, Terminator, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<BranchOpInterface, ["getSuccessorForOperands"]>]> {
  let summary = "Branch to one of two blocks";
  let description = [{
    ```
    cfg.cond_br %more, ^_bb3, ^_bb10
    cfg.cond_br %more, ^_bb3(%x: index), ^_bb10
    ```
  }];
  let arguments = (ins I1:$condition, Variadic<AnyType>:$true_operands,
                       Variadic<AnyType>:$false_operands);
  let successors = (successor AnySuccessor:$true_dest, AnySuccessor:$false_dest);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}
