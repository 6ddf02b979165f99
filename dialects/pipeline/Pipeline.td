//===- Pipeline.td - the pipeline dialect ---------------------------------===//
//
// Resident pipelines: a public definition with its invocation ABI, the memory
// pools it selects and the independently progressing strands it declares.
//
//===----------------------------------------------------------------------===//

include "common/LoomBase.td"

def Pipeline_Dialect : Dialect {
  let name = "pipeline";
  let cppNamespace = "::loom::pipeline";
  let summary = "Resident pipelines: definitions, memory pools and strands";
  let useDefaultTypePrinterParser = 1;
}

def Pipeline_PoolType : TypeDef<Pipeline_Dialect, "Pool"> {
  let mnemonic = "pool";
  let summary = "A memory pool selected by pipeline.memory";
}

class Pipeline_Op<string mnemonic, list<Trait> traits = []>
    : Loom_Op<Pipeline_Dialect, mnemonic, traits>;

def Pipeline_DefOp : Pipeline_Op<"def", [IsolatedFromAbove, Symbol,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    NoTerminator, SingleBlock, RegionKindInterface]> {
  let summary = "A pipeline definition: specialization arguments, invocation ABI, construction region";
  let description = [{
    ```
    pipeline.def<kernel> public retain target(@npu) @name() run(%in: buffer, %out: buffer) {
      ...storage, channels and pipeline.strand ops...
    }
    ```
    `<kernel>` is the kind of artifact the definition must become (one
    directly loadable artifact). The leading parentheses hold specialization
    arguments; `run(...)` the values supplied for each invocation. Both are
    arguments of the construction region, specialization arguments first.
    `retain` keeps the definition even when nothing references it;
    `target(@sym)` names the target context the pipeline is built for.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, OptionalAttr<StrAttr>:$sym_visibility,
                       StrAttr:$kind, UnitAttr:$retain,
                       OptionalAttr<FlatSymbolRefAttr>:$target,
                       TypeAttrOf<FunctionType>:$function_type,
                       I64Attr:$num_specialization_args,
                       DenseI64ArrayAttr:$arg_dims);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = loomNaming # [{
    static ::mlir::RegionKind getRegionKind(unsigned) { return ::mlir::RegionKind::SSACFG; }
  }];
}

def Pipeline_MemoryOp : Pipeline_Op<"memory", [Pure]> {
  let summary = "Select the invocation's memory pool of a tile";
  let description = [{
    ```
    %tile_memory = pipeline.memory<workgroup>[0, 3] : pool
    ```
    Names the `workgroup` pool of the tile at column 0, row 3. It allocates
    nothing and introduces no synchronization.
  }];
  let arguments = (ins StrAttr:$space, DenseI64ArrayAttr:$coordinates);
  let results = (outs Loom_PoolType:$result);
  let assemblyFormat = [{
    `<` custom<Keyword>($space) `>` `` $coordinates attr-dict `:` custom<LoomType>(type($result))
  }];
  let hasVerifier = 1;
}

def Pipeline_InstanceOp : Pipeline_Op<"instance", [Pure]> {
  let summary = "The running instance's coordinates within its strand's worker selection";
  let description = [{
    ```
    %column, %row = pipeline.instance : index, index
    ```
    In a strand entered once per selected worker, instance (i, j) runs on
    worker (origin0 + i * stride0, origin1 + j * stride1): the op gives i
    and j, from 0 to the counts less one. Inside a `pipeline.strand` or a
    function (one a strand runs: its outlined body); never in the
    construction region. `loom-expand-instances` replaces it with each
    instance's constants.
  }];
  let results = (outs Index:$column, Index:$row);
  let assemblyFormat = "attr-dict `:` type($column) `,` type($row)";
  let hasVerifier = 1;
}

def Pipeline_StrandOp : Pipeline_Op<"strand", [NoTerminator,
    HasParent<"::loom::pipeline::DefOp">]> {
  let summary = "An independently progressing body, entered once per selected worker";
  let description = [{
    ```
    pipeline.strand workers([0, 2], [1, 1], [1, 1]) {
      ...
    }
    ```
    The three lists are the origins, counts and strides of the worker
    selection: coordinate i of a dimension maps to origin + i * stride. The
    strand captures values of the construction region lexically.

    The authored body is one block without a terminator. Once its structured
    control flow is lowered it is a `cfg` graph whose blocks all end in a
    terminator, leaving through `func.return`.
  }];
  let arguments = (ins DenseI64ArrayAttr:$origins, DenseI64ArrayAttr:$counts,
                       DenseI64ArrayAttr:$strides);
  let regions = (region AnyRegion:$body);
  let assemblyFormat = [{
    `workers` `(` $origins `,` $counts `,` $strides `)` attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
}
