//===- ShapedTypes.h - generic-form syntax of view and tile types -*- C++ -*-===//

#ifndef LOOM_SHAPEDTYPES_H
#define LOOM_SHAPEDTYPES_H

#include "mlir/IR/DialectImplementation.h"

namespace loom {
/// `<2x?xbf16>`: the generic (dialect) form, where dependent dimensions are `?`.
mlir::LogicalResult parseShapeAndElement(mlir::AsmParser &parser,
                                         llvm::SmallVectorImpl<int64_t> &shape,
                                         mlir::Type &element);
void printShapeAndElement(mlir::AsmPrinter &printer, llvm::ArrayRef<int64_t> shape,
                          mlir::Type element);
/// `%view[%i, 0]` followed by attributes: the access part of loads and stores.
mlir::ParseResult parseAccess(mlir::OpAsmParser &parser, mlir::OpAsmParser::UnresolvedOperand &view,
                              llvm::SmallVectorImpl<mlir::OpAsmParser::UnresolvedOperand> &indices,
                              llvm::SmallVectorImpl<int64_t> &positions);
/// Check `positions` (and their dynamic count) against a view of `rank`.
mlir::LogicalResult verifyAccess(mlir::Operation *op, mlir::Type viewType, unsigned dynamicCount,
                                 llvm::ArrayRef<int64_t> positions);
} // namespace loom

#endif
