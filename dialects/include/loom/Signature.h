//===- Signature.h - arguments whose types name other arguments -*- C++ -*-===//
//
// Shared by func.def and pipeline.def: `(%n: index, %v: view<[%n]xbf16>)`,
// where a dimension names any argument of the same list, in any order.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SIGNATURE_H
#define LOOM_SIGNATURE_H

#include "loom/Support.h"

namespace loom {

struct Signature {
  llvm::SmallVector<mlir::OpAsmParser::Argument> arguments;
  /// Per argument, then per result: the names its type uses as dimensions.
  llvm::SmallVector<llvm::SmallVector<UnresolvedOperand>> argumentDimNames;
  llvm::SmallVector<Type> results;
  llvm::SmallVector<llvm::SmallVector<UnresolvedOperand>> resultDimNames;
  /// Filled by resolveSignature: argument index of each dynamic dimension.
  llvm::SmallVector<int64_t> argDims;

  mlir::FunctionType functionType(mlir::Builder &builder) const;
};

/// `(%a: T, ...)`, appended to the signature's arguments.
ParseResult parseSignatureArguments(OpAsmParser &parser, Signature &signature);
/// An optional `-> T` or `-> (T, ...)`.
ParseResult parseSignatureResults(OpAsmParser &parser, Signature &signature);
/// Map every dimension name to the argument it names.
ParseResult resolveSignature(OpAsmParser &parser, Signature &signature);

void printSignatureArguments(OpAsmPrinter &printer, mlir::Block::BlockArgListType arguments,
                             llvm::ArrayRef<int64_t> argDims);
void printSignatureResults(OpAsmPrinter &printer, mlir::Block &entry, TypeRange results,
                           llvm::ArrayRef<int64_t> argDims);
/// The signature alone (declarations): arg_dims consistent with the types.
mlir::LogicalResult verifySignatureTypes(Operation *op, mlir::FunctionType type,
                                         llvm::ArrayRef<int64_t> argDims);
/// `(%n: index, %v: view<[%n]xf32>) -> (...)` for a declaration, with one
/// name per argument.
void printDeclarationSignature(OpAsmPrinter &printer, mlir::FunctionType type,
                               llvm::ArrayRef<int64_t> argDims,
                               llvm::ArrayRef<std::string> names);
mlir::LogicalResult verifySignature(Operation *op, mlir::FunctionType type, mlir::Block &entry,
                                    llvm::ArrayRef<int64_t> argDims);

/// `public`, `private` (the default, not printed) or `nested`.
ParseResult parseVisibility(OpAsmParser &parser, mlir::NamedAttrList &attributes);
void printVisibility(OpAsmPrinter &printer, std::optional<llvm::StringRef> visibility);
/// `target(@symbol)`, if present, names an aie2p.target.
mlir::LogicalResult verifyTargetSymbol(Operation *op, mlir::FlatSymbolRefAttr target,
                                       mlir::SymbolTableCollection &symbols);
/// An optional `target(@symbol)`.
ParseResult parseOptionalTarget(OpAsmParser &parser, mlir::NamedAttrList &attributes);

} // namespace loom

#endif // LOOM_SIGNATURE_H
