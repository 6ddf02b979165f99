//===- Channel.td - the channel dialect -----------------------------------===//
//
// Owned channels: storage slots bound into a protocol, write and read
// obligations that carry the ownership of one record.
//
//===----------------------------------------------------------------------===//

include "common/LoomBase.td"

def Channel_Dialect : Dialect {
  let name = "channel";
  let cppNamespace = "::loom::channel";
  let summary = "Channels of records with owned write and read obligations";
  let useDefaultTypePrinterParser = 1;
}

def Channel_TileType : TypeDef<Channel_Dialect, "Tile"> {
  let mnemonic = "tile";
  let summary = "The shape of one channel record held in tile memory";
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    unsigned getNumDynamicDims() const;
  }];
}

class Channel_RecordType<string name, string typeMnemonic, string what>
    : TypeDef<Channel_Dialect, name> {
  let mnemonic = typeMnemonic;
  let summary = what;
  let parameters = (ins "::loom::channel::TileType":$record);
  let assemblyFormat = "`<` qualified($record) `>`";
}

def Channel_ChannelType : Channel_RecordType<"Channel", "channel",
    "A channel identity carrying records of the given shape">;
def Channel_WriteType : Channel_RecordType<"Write", "write",
    "The owned obligation to publish one reserved record">;
def Channel_ReadType : Channel_RecordType<"Read", "read",
    "The owned obligation to release one acquired record">;

class Channel_Op<string mnemonic, list<Trait> traits = []>
    : Loom_Op<Channel_Dialect, mnemonic, !listconcat(traits, [Loom_DependentTypeOpInterface])>;

def Channel_BindOp : Channel_Op<"bind"> {
  let summary = "Bind storage slots into a fresh channel";
  let description = [{
    ```
    %inputs = channel.bind<fifo> %input_slots, %double_buffer : view<2x[%n]xbf16>, index -> channel<tile<[%n]xbf16>>
    ```
    The leading view dimension is the number of slots; the remaining shape is
    the record. Binding creates a fresh protocol identity: equal addresses do
    not imply equal channels.
  }];
  let arguments = (ins StrAttr:$discipline, Loom_ViewType:$slots, Index:$capacity,
                       Variadic<Index>:$type_dims);
  let results = (outs Loom_ChannelType:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = loomNaming # [{
    ::llvm::SmallVector<::mlir::Value> getTypedValues() { return {getSlots(), getCapacity(), getResult()}; }
  }];
}

class Channel_AdmitOp<string mnemonic, string what>
    : Channel_Op<mnemonic> {
  let summary = what;
  let arguments = (ins Loom_ChannelType:$channel, Variadic<Index>:$type_dims);
  let results = (outs AnyType:$obligation, Loom_ViewType:$payload);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = loomNaming # [{
    ::llvm::SmallVector<::mlir::Value> getTypedValues() { return {getChannel(), getObligation(), getPayload()}; }
  }];
}

def Channel_ReserveOp : Channel_AdmitOp<"reserve",
    "Wait for a free slot and own it for writing"> {
  let description = [{
    ```
    %write, %destination = channel.reserve %inputs : channel<tile<[%n]xbf16>> -> (write<tile<[%n]xbf16>>, view<[%n]xbf16>)
    ```
    Blocks while no slot is free. The write obligation must be published
    exactly once on every path; the payload view is borrowed from it and
    must not be used after the publish.
  }];
}

def Channel_AcquireOp : Channel_AdmitOp<"acquire",
    "Wait for a published record and own it for reading"> {
  let description = [{
    ```
    %read, %values = channel.acquire %inputs : channel<tile<[%n]xbf16>> -> (read<tile<[%n]xbf16>>, view<[%n]xbf16>)
    ```
    Blocks while no record is published. The read obligation must be
    released exactly once on every path; the payload view must not be used
    after the release.
  }];
}

class Channel_ConsumeOp<string mnemonic, Type obligationType, string what>
    : Channel_Op<mnemonic> {
  let summary = what;
  let arguments = (ins obligationType:$obligation, Variadic<Index>:$type_dims);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = loomNaming # [{
    ::llvm::SmallVector<::mlir::Value> getTypedValues() { return {getObligation()}; }
  }];
}

def Channel_PublishOp : Channel_ConsumeOp<"publish", Loom_WriteType,
    "Make a reserved record readable; consumes the write obligation"> {
  let description = [{
    ```
    channel.publish %write : write<tile<[%n]xbf16>>
    ```
  }];
}

def Channel_ReleaseOp : Channel_ConsumeOp<"release", Loom_ReadType,
    "Recycle an acquired record's slot; consumes the read obligation"> {
  let description = [{
    ```
    channel.release %read : read<tile<[%n]xbf16>>
    ```
  }];
}
