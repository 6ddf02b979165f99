//===- Scf.td - the scf dialect -------------------------------------------===//
//
// Structured control flow: counted loops, conditionals and selection.
//
//===----------------------------------------------------------------------===//

include "common/LoomBase.td"

def Scf_Dialect : Dialect {
  let name = "scf";
  let cppNamespace = "::loom::scf";
  let summary = "Structured control flow with loop-carried values";
}

class Scf_Op<string mnemonic, list<Trait> traits = []>
    : Loom_Op<Scf_Dialect, mnemonic, traits>;

def Scf_ForOp : Scf_Op<"for", [RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<RegionBranchOpInterface, ["getEntrySuccessorOperands"]>,
    SingleBlockImplicitTerminator<"::loom::scf::YieldOp">]> {
  let summary = "A counted loop";
  let description = [{
    ```
    scf.for %record = [%begin to %count step %step] {
      ...
    }
    %gate, %up = scf.for %row = [%c0 to %c2 step %c1] iter_args(%gate_iter = %zero, %up_iter = %zero) -> (f32, f32) {
      ...
      scf.yield %gate_next, %up_next : f32, f32
    }
    ```
    The induction value runs from the lower bound (inclusive) to the upper
    bound (exclusive) by a positive step. Loop-carried values are named in
    `iter_args`, start from the listed initial values, are replaced by the
    operands of the body's `scf.yield` after each iteration, and are the
    loop's results. A body without loop-carried values needs no `scf.yield`.
  }];
  let arguments = (ins Index:$lower_bound, Index:$upper_bound, Index:$step,
                       Variadic<AnyType>:$init_args);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Scf_IfOp : Scf_Op<"if", [RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<RegionBranchOpInterface>,
    SingleBlockImplicitTerminator<"::loom::scf::YieldOp">, NoRegionArguments]> {
  let summary = "A conditional";
  let description = [{
    ```
    scf.if %has_next {
      ...
    }
    %v = scf.if %c -> (f32) {
      scf.yield %a : f32
    } else {
      scf.yield %b : f32
    }
    ```
    With results, both branches must be present and yield them.
  }];
  let arguments = (ins I1:$condition);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$then_region, MaxSizedRegion<1>:$else_region);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Scf_YieldOp : Scf_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["::loom::scf::ForOp", "::loom::scf::IfOp"]>]> {
  let summary = "Yield loop-carried values or conditional results";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = [{
    attr-dict ($values^ `:` custom<LoomTypes>(type($values)))?
  }];
  let builders = [OpBuilder<(ins), [{ }]>];
}

def Scf_PickOp : Scf_Op<"pick", [Pure]> {
  let summary = "Choose one of several values by an index";
  let description = [{
    ```
    %mine = scf.pick %core [%in_0, %in_1, %in_2, %in_3] : channel<tile<64x64xi8>>
    ```
    The result is the choice at position `%index` (0-based); every choice
    has the result's type. An index outside the choices is a run-time error.
    A known index folds to its choice, so an SPMD instance's coordinate
    picks its own channel, buffer or view once `loom-expand-instances` makes
    it a constant.
  }];
  let arguments = (ins Index:$index, Variadic<AnyType>:$choices);
  let results = (outs AnyType:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Scf_SelectOp : Scf_Op<"select", [Pure, AllTypesMatch<["true_value", "false_value", "result"]>]> {
  let summary = "Choose one of two values";
  let description = [{
    ```
    %gate_next = scf.select %is_gate, %sum, %gate_iter : f32
    ```
  }];
  let arguments = (ins I1:$condition, AnyType:$true_value, AnyType:$false_value);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:` custom<LoomType>(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}
