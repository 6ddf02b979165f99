//===- Buffer.td - the buffer dialect -------------------------------------===//
//
// Untyped byte storage (`buffer`), byte offsets (`offset`), allocation in a
// memory pool, and typed views over bytes.
//
//===----------------------------------------------------------------------===//

include "common/LoomBase.td"

def Buffer_Dialect : Dialect {
  let name = "buffer";
  let cppNamespace = "::loom::buffer";
  let summary = "Byte storage, byte offsets and views over them";
  let useDefaultTypePrinterParser = 1;
}

class Buffer_Type<string name, string typeMnemonic> : TypeDef<Buffer_Dialect, name> {
  let mnemonic = typeMnemonic;
}

def Buffer_BufferType : Buffer_Type<"Buffer", "buffer"> {
  let summary = "An untyped allocation or caller-supplied binding, in bytes";
}

def Buffer_OffsetType : Buffer_Type<"Offset", "offset"> {
  let summary = "A byte offset or byte count inside a buffer";
}

class Buffer_Op<string mnemonic, list<Trait> traits = []>
    : Loom_Op<Buffer_Dialect, mnemonic, traits>;

def Buffer_AssumeAlignmentOp : Buffer_Op<"assume.alignment", [Pure]> {
  let summary = "Caller contract: the buffers' base addresses are aligned";
  let description = [{
    Returns its operands unchanged, with the promise that each base address is
    a multiple of `minimum_alignment` bytes (a power of two).

    ```
    %input, %weights = buffer.assume.alignment %a, %b {minimum_alignment = 64} : buffer, buffer
    ```
  }];
  let arguments = (ins Variadic<Loom_BufferType>:$buffers, I64Attr:$minimum_alignment);
  let results = (outs Variadic<Loom_BufferType>:$results);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Buffer_AssumeNoAliasOp : Buffer_Op<"assume.noalias", [Pure]> {
  let summary = "Caller contract: the buffers do not overlap";
  let description = [{
    Returns its operands unchanged, with the promise that no two of them share
    a byte. Distinct buffer arguments alone do not establish disjointness;
    this is how an author states it (the walkthrough's DMA read-ahead needs it).

    ```
    %input, %output = buffer.assume.noalias %a, %b : buffer, buffer
    ```
  }];
  let arguments = (ins Variadic<Loom_BufferType>:$buffers);
  let results = (outs Variadic<Loom_BufferType>:$results);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Buffer_AllocaOp : Buffer_Op<"alloca"> {
  let summary = "A distinct allocation root in a memory pool or private memory";
  let description = [{
    Allocates `size` bytes aligned to `alignment` in memory space `space`
    (`workgroup` needs the pool that supplies the memory, `private` needs
    none). The allocation lives until the enclosing invocation completes.

    ```
    %storage = buffer.alloca<workgroup> pool(%tile_memory) align(64) %bytes : buffer
    %scratch = buffer.alloca<private> align(64) %scratch_bytes : buffer
    ```
  }];
  let arguments = (ins StrAttr:$space, Optional<Loom_PoolType>:$pool,
                       I64Attr:$alignment, Loom_OffsetType:$size);
  let results = (outs Loom_BufferType:$result);
  let assemblyFormat = [{
    `<` custom<Keyword>($space) `>` (`pool` `(` $pool^ `)`)?
    `align` `(` $alignment `)` $size attr-dict `:` custom<LoomType>(type($result))
  }];
  let hasVerifier = 1;
}

def Buffer_ViewOp : Buffer_Op<"view", [Pure, Loom_DependentTypeOpInterface]> {
  let summary = "A typed view of a buffer's bytes starting at a byte offset";
  let description = [{
    ```
    %slots = buffer.view %storage[%origin] : buffer -> view<2x[%input_size]xbf16>
    ```
    The view's dynamic dimensions are named by SSA values in the result type.
  }];
  let arguments = (ins Loom_BufferType:$source, Loom_OffsetType:$offset,
                       Variadic<Index>:$type_dims);
  let results = (outs Loom_ViewType:$result);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = loomNaming # [{
    ::llvm::SmallVector<::mlir::Value> getTypedValues() { return {getSource(), getResult()}; }
  }];
}
