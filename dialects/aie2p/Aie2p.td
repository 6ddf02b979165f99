//===- Aie2p.td - the aie2p target dialect --------------------------------===//
//
// Target contexts of the AMD XDNA AIE2P array and the first configuration
// instruction. The xdna target adds the rest of the Low target IR (locks,
// buffer descriptors, routes) here.
//
//===----------------------------------------------------------------------===//

include "common/LoomBase.td"

def Aie2p_Dialect : Dialect {
  let name = "aie2p";
  let cppNamespace = "::loom::aie2p";
  let summary = "The AMD XDNA AIE2P target";
}

class Aie2p_Op<string mnemonic, list<Trait> traits = []>
    : Loom_Op<Aie2p_Dialect, mnemonic, traits>;

def Aie2p_TargetOp : Aie2p_Op<"target", [Symbol]> {
  let summary = "A target context: the whole array, or one core";
  let description = [{
    ```
    aie2p.target<array> @npu
    aie2p.target<core> @__loom_target_context_1_0 {device_profile = "amd.xdna.strix_halo.17f0_11"}
    ```
    A symbol that pipelines and functions name with `target(@sym)`. It holds
    hardware facts, not a live device. `device_profile` is set once target
    resolution has bound the context to a profile.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$kind,
                       OptionalAttr<StrAttr>:$device_profile);
  let assemblyFormat = [{
    `<` custom<Keyword>($kind) `>` $sym_name attr-dict
  }];
  let hasVerifier = 1;
}

def Aie2p_ProgramLoadOp : Aie2p_Op<"program.load", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Configuration: load a tile image into a core";
  let description = [{
    ```
    aie2p.program.load [0, 3] @__pipeline_strand_0
    ```
    An AIE2P configuration instruction (inside a function targeting
    `amd.xdna.aie2p.configuration`): selects the column and row of a core and
    the tile-code symbol whose image it loads. It is not a generic pipeline
    operation or a host callback.
  }];
  let arguments = (ins DenseI64ArrayAttr:$coordinates, FlatSymbolRefAttr:$image);
  let assemblyFormat = "$coordinates $image attr-dict";
  let hasVerifier = 1;
}
