//===- LoomBase.td - shared ODS pieces of every Loom dialect -------------===//
//
// Every Loom op derives from Loom_Op so that the printer names values and
// blocks the Loom way (source names kept, duplicates as `name$N`, unnamed
// values as `%N`, blocks as `^_bbN`), and so that ops whose type lists name
// SSA values as dimensions share one verifier.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BASE_TD
#define LOOM_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

// An op whose type list names SSA values inside types (`view<[%n]xbf16>`).
// The named values are the op's trailing `type_dims` operands, in the order
// in which the printed type list mentions them.
def Loom_DependentTypeOpInterface : OpInterface<"DependentTypeOpInterface"> {
  let cppNamespace = "::loom";
  let description = [{
    Ops whose printed type list contains dependent dimensions. The values
    returned by `getTypedValues` are the operands and results whose types the
    op's syntax spells out, in printed order; each dynamic dimension of those
    types is named by the next `type_dims` operand. The shared verifier checks
    that a named dimension of an operand type is the same value (or an equal
    constant) as the dimension its definition recorded.
  }];
  let methods = [
    InterfaceMethod<"Operands and results whose types the syntax spells out, in order.",
      "::llvm::SmallVector<::mlir::Value>", "getTypedValues">,
    InterfaceMethod<"The values that name dynamic dimensions, in printed order.",
      "::mlir::OperandRange", "getTypeDims">,
  ];
  let verify = [{ return ::loom::verifyTypeDims($_op); }];
}

class Loom_Op<Dialect dialect, string mnemonic, list<Trait> traits = []>
    : Op<dialect, mnemonic, !listconcat(traits, [OpAsmOpInterface])> {
  code loomNaming = [{
    void getAsmResultNames(::mlir::OpAsmSetValueNameFn fn) {
      ::loom::nameResults(getOperation(), fn);
    }
    void getAsmBlockArgumentNames(::mlir::Region &region,
                                  ::mlir::OpAsmSetValueNameFn fn) {
      ::loom::nameBlockArguments(region, fn);
    }
    void getAsmBlockNames(::mlir::OpAsmSetBlockNameFn fn) {
      ::loom::nameBlocks(getOperation(), fn);
    }
  }];
  let extraClassDeclaration = loomNaming;
}

// Type constraints over the Loom types, usable from any dialect's ops.
def Loom_BufferType : Type<CPred<"::llvm::isa<::loom::buffer::BufferType>($_self)">, "buffer", "::loom::buffer::BufferType">,
    BuildableType<"::loom::buffer::BufferType::get($_builder.getContext())">;
def Loom_OffsetType : Type<CPred<"::llvm::isa<::loom::buffer::OffsetType>($_self)">, "offset", "::loom::buffer::OffsetType">,
    BuildableType<"::loom::buffer::OffsetType::get($_builder.getContext())">;
def Loom_PoolType : Type<CPred<"::llvm::isa<::loom::pipeline::PoolType>($_self)">, "pool", "::loom::pipeline::PoolType">,
    BuildableType<"::loom::pipeline::PoolType::get($_builder.getContext())">;
def Loom_ViewType : Type<CPred<"::llvm::isa<::loom::view::ViewType>($_self)">, "view">;
def Loom_ChannelType : Type<CPred<"::llvm::isa<::loom::channel::ChannelType>($_self)">, "channel">;
def Loom_ReadType : Type<CPred<"::llvm::isa<::loom::channel::ReadType>($_self)">, "read obligation">;
def Loom_WriteType : Type<CPred<"::llvm::isa<::loom::channel::WriteType>($_self)">, "write obligation">;
def Loom_TokenType : Type<CPred<"::llvm::isa<::loom::kernel::AsyncTokenType>($_self)">, "kernel.async.token", "::loom::kernel::AsyncTokenType">,
    BuildableType<"::loom::kernel::AsyncTokenType::get($_builder.getContext())">;
def Loom_GroupType : Type<CPred<"::llvm::isa<::loom::kernel::AsyncGroupType>($_self)">, "kernel.async.group", "::loom::kernel::AsyncGroupType">,
    BuildableType<"::loom::kernel::AsyncGroupType::get($_builder.getContext())">;
def Loom_IndexLike : Type<Or<[Index.predicate, Loom_OffsetType.predicate]>, "index or offset">;
def Loom_FloatScalar : Type<Or<[F32.predicate, BF16.predicate]>, "f32 or bf16">;
def Loom_FloatVector : Type<And<[CPred<"::llvm::isa<::mlir::VectorType>($_self)">,
    CPred<"::llvm::isa<::mlir::FloatType>(::llvm::cast<::mlir::VectorType>($_self).getElementType())">]>,
    "vector of floats">;

def Loom_IntScalar : Type<CPred<"::loom::isLoomInteger($_self)">, "i8, i16 or i32">;
def Loom_IntVector : Type<And<[CPred<"::llvm::isa<::mlir::VectorType>($_self)">,
    CPred<"::loom::isLoomInteger(::llvm::cast<::mlir::VectorType>($_self).getElementType())">]>,
    "vector of i8, i16 or i32">;
def Loom_NumberScalar : Type<Or<[Loom_FloatScalar.predicate, Loom_IntScalar.predicate]>,
    "f32, bf16, i8, i16 or i32">;
def Loom_NumberVector : Type<Or<[Loom_FloatVector.predicate, Loom_IntVector.predicate]>,
    "vector of floats or of i8, i16 or i32">;

// A number constant (a float, or an integer of 8, 16 or 32 bits), stored with
// the element type of the value it builds.
def Loom_NumberAttr : Attr<CPred<"::llvm::isa<::mlir::FloatAttr, ::mlir::IntegerAttr>($_self)">,
                           "float or integer attribute"> {
  let storageType = "::mlir::TypedAttr";
  let returnType = "::mlir::TypedAttr";
  let convertFromStorage = "$_self";
}

#endif // LOOM_BASE_TD
