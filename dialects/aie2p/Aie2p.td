//===- Aie2p.td - the aie2p target dialect --------------------------------===//
//
// Target contexts of the AMD XDNA AIE2P array and its Low target IR: the
// tile code of workers (lock credits, storage placed in tile memory) and the
// configuration instructions (lock initialization, buffer descriptors, DMA
// starts and waits, stream routes, program loading, core enable) that the
// xdna target encodes as TXN control code.
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
    aie2p.target<configuration> @__loom_target_configuration {device_profile = "amd.xdna.strix.17f0_10"}
    ```
    A symbol that pipelines and functions name with `target(@sym)`. It holds
    hardware facts, not a live device. `device_profile` is set once target
    resolution has bound the context to a profile. A `configuration` context
    is the device invocation's command stream (`amd.xdna.aie2p.configuration`):
    functions targeting it hold configuration instructions.
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

// Tile coordinates `[column, row]`, checked by verifyCoordinates.
defvar Aie2p_Tile = DenseI64ArrayAttr;

def Aie2p_TileBufferOp : Aie2p_Op<"tile.buffer"> {
  let summary = "Storage placed at a fixed byte range of a tile's data memory";
  let description = [{
    ```
    %input_storage = aie2p.tile.buffer<channel> [0, 3] offset 0 size 2048 : buffer
    %scratch = aie2p.tile.buffer<private> [0, 3] offset 4160 size 64 : buffer
    ```
    What a placed allocation becomes: `size` bytes at tile-memory address
    `offset`. The role says why the storage exists, so a compile report can be
    rebuilt from the module alone: `channel` (authored channel slots),
    `private` (a worker's private buffer), and what lowering adds: `stack` (a
    worker's stack) and `cursor` (a worker's slot cursor for a channel
    endpoint it admits repeatedly). Not pure: placed storage stays even where
    no op uses it.
  }];
  let arguments = (ins StrAttr:$role, Aie2p_Tile:$tile, I64Attr:$offset, I64Attr:$size);
  let results = (outs Loom_BufferType:$result);
  let assemblyFormat = [{
    `<` custom<Keyword>($role) `>` $tile `offset` $offset `size` $size attr-dict `:` custom<LoomType>(type($result))
  }];
  let hasVerifier = 1;
}

def Aie2p_LockAcquireOp : Aie2p_Op<"lock.acquire"> {
  let summary = "Worker: wait until a lock's value is at least `value`, then subtract it";
  let description = [{
    ```
    aie2p.lock.acquire [0, 3] lock 1 ge 1
    ```
    A channel credit taken by tile code: `reserve` takes a free-slot credit,
    `acquire` a published-record credit.
  }];
  let arguments = (ins Aie2p_Tile:$tile, I64Attr:$lock, I64Attr:$value);
  let assemblyFormat = "$tile `lock` $lock `ge` $value attr-dict";
  let hasVerifier = 1;
}

def Aie2p_LockReleaseOp : Aie2p_Op<"lock.release"> {
  let summary = "Worker: add `value` to a lock";
  let description = [{
    ```
    aie2p.lock.release [0, 3] lock 0 add 1
    ```
    A channel credit handed on by tile code: `publish` adds a published-record
    credit, `release` a free-slot credit.
  }];
  let arguments = (ins Aie2p_Tile:$tile, I64Attr:$lock, I64Attr:$value);
  let assemblyFormat = "$tile `lock` $lock `add` $value attr-dict";
  let hasVerifier = 1;
}

def Aie2p_LockInitOp : Aie2p_Op<"lock.init"> {
  let summary = "Configuration: set a lock's initial value";
  let description = [{
    ```
    aie2p.lock.init [0, 3] lock 0 value 2
    ```
  }];
  let arguments = (ins Aie2p_Tile:$tile, I64Attr:$lock, I64Attr:$value);
  let assemblyFormat = "$tile `lock` $lock `value` $value attr-dict";
  let hasVerifier = 1;
}

def Aie2p_DmaBdOp : Aie2p_Op<"dma.bd"> {
  let summary = "Configuration: a tile DMA buffer descriptor";
  let description = [{
    ```
    aie2p.dma.bd [0, 3] bd 0 offset 0 length 2048 acquire 0 ge 1 release 1 add 1
    ```
    Moves `length` bytes at tile-memory address `offset`. With `acquire` the
    DMA takes that lock credit before it moves data, with `release` it hands
    that credit on after: a channel's reserve and publish (or acquire and
    release) done by the DMA engine. With `next` the channel goes on to that
    descriptor of the same tile once this one is done: a chain, which a
    `aie2p.dma.start ... repeat N` runs N times (for instance a ring over a
    channel's slots, one record per descriptor). With `steps [s0, s1, s2]
    wraps [w0, w1]` the descriptor addresses its 32-bit words in dimensions,
    innermost first: word (i0, i1, i2) at `offset + i0 s0 + i1 s1 + i2 s2`
    bytes, i0 below w0 and i1 below w1 (a memory tile has four steps and
    three wraps).
  }];
  let arguments = (ins Aie2p_Tile:$tile, I64Attr:$bd, I64Attr:$offset, I64Attr:$length,
                       OptionalAttr<I64Attr>:$acquire_lock, OptionalAttr<I64Attr>:$acquire_value,
                       OptionalAttr<I64Attr>:$release_lock, OptionalAttr<I64Attr>:$release_value,
                       OptionalAttr<I64Attr>:$next,
                       OptionalAttr<DenseI64ArrayAttr>:$steps,
                       OptionalAttr<DenseI64ArrayAttr>:$wraps);
  let assemblyFormat = [{
    $tile `bd` $bd `offset` $offset `length` $length
    (`acquire` $acquire_lock^ `ge` $acquire_value)?
    (`release` $release_lock^ `add` $release_value)?
    (`next` $next^)? (`steps` $steps^ `wraps` $wraps)? attr-dict
  }];
  let hasVerifier = 1;
}

def Aie2p_ShimBdOp : Aie2p_Op<"shim.bd"> {
  let summary = "Configuration: a shim DMA buffer descriptor on a caller's buffer";
  let description = [{
    ```
    aie2p.shim.bd [0, 0] bd 0 %weights_arg offset 0 length 2048 : buffer
    ```
    Moves `length` bytes at byte `offset` of a buffer the invocation receives;
    its address is patched in when the caller's buffers are known. `steps`
    and `wraps` address its words in dimensions, as `aie2p.dma.bd`'s do.
    With `iteration S wrap W` each use of the descriptor (a `dma.start ...
    repeat N` runs it N times) starts `S` bytes after the one before, back
    at `offset` after `W` uses: a fourth, outermost dimension.
  }];
  let arguments = (ins Aie2p_Tile:$tile, I64Attr:$bd, Loom_BufferType:$buffer,
                       I64Attr:$offset, I64Attr:$length,
                       OptionalAttr<DenseI64ArrayAttr>:$steps,
                       OptionalAttr<DenseI64ArrayAttr>:$wraps,
                       OptionalAttr<I64Attr>:$iteration_stride,
                       OptionalAttr<I64Attr>:$iteration_wrap);
  let assemblyFormat = [{
    $tile `bd` $bd $buffer `offset` $offset `length` $length
    (`steps` $steps^ `wraps` $wraps)?
    (`iteration` $iteration_stride^ `wrap` $iteration_wrap)? attr-dict `:` custom<LoomType>(type($buffer))
  }];
  let hasVerifier = 1;
}

def Aie2p_DmaStartOp : Aie2p_Op<"dma.start"> {
  let summary = "Configuration: queue a DMA channel task at a buffer descriptor";
  let description = [{
    ```
    aie2p.dma.start [0, 0] mm2s channel 0 bd 0 token
    ```
    `token` asks the channel to issue a task-complete token, which a later
    `aie2p.dma.wait` on the same channel waits for. `repeat N` (default 1)
    runs the descriptor chain from `bd` N times as one task.
  }];
  let arguments = (ins Aie2p_Tile:$tile, StrAttr:$direction, I64Attr:$channel, I64Attr:$bd,
                       OptionalAttr<I64Attr>:$repeat, UnitAttr:$token);
  let assemblyFormat = [{
    $tile custom<Keyword>($direction) `channel` $channel `bd` $bd (`repeat` $repeat^)?
    (`token` $token^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Aie2p_DmaWaitOp : Aie2p_Op<"dma.wait"> {
  let summary = "Configuration: wait for a DMA channel's task-complete token";
  let description = [{
    ```
    aie2p.dma.wait [0, 0] s2mm channel 0
    ```
    An ordered wait of the command stream (a TCT sync).
  }];
  let arguments = (ins Aie2p_Tile:$tile, StrAttr:$direction, I64Attr:$channel);
  let assemblyFormat = "$tile custom<Keyword>($direction) `channel` $channel attr-dict";
  let hasVerifier = 1;
}

def Aie2p_RouteOp : Aie2p_Op<"route"> {
  let summary = "Configuration: a circuit-switched stream route between two DMA channels";
  let description = [{
    ```
    aie2p.route [0, 0] mm2s channel 0 to [0, 3] s2mm channel 0
    ```
    Data a source MM2S channel sends reaches the destination S2MM channel
    through the stream switches on the way.
  }];
  let arguments = (ins Aie2p_Tile:$source, I64Attr:$source_channel,
                       Aie2p_Tile:$destination, I64Attr:$destination_channel);
  let assemblyFormat = [{
    $source `mm2s` `channel` $source_channel `to` $destination `s2mm` `channel` $destination_channel attr-dict
  }];
  let hasVerifier = 1;
}

def Aie2p_CoreEnableOp : Aie2p_Op<"core.enable"> {
  let summary = "Configuration: start a core running its loaded program";
  let description = [{
    ```
    aie2p.core.enable [0, 3]
    ```
  }];
  let arguments = (ins Aie2p_Tile:$tile);
  let assemblyFormat = "$tile attr-dict";
  let hasVerifier = 1;
}
