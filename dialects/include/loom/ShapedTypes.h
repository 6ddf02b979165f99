//===- ShapedTypes.h - generic-form syntax of view and tile types -*- C++ -*-===//

#ifndef LOOM_SHAPEDTYPES_H
#define LOOM_SHAPEDTYPES_H

#include "mlir/IR/DialectImplementation.h"

namespace loom {
/// `<2x?xbf16>`: the generic (dialect) form, where dependent dimensions are `?`.
/// With `strides`, a view's optional layout `, strided<[1, 64]>` before `>`.
mlir::LogicalResult parseShapeAndElement(mlir::AsmParser &parser,
                                         llvm::SmallVectorImpl<int64_t> &shape,
                                         mlir::Type &element,
                                         llvm::SmallVectorImpl<int64_t> *strides = nullptr);
void printShapeAndElement(mlir::AsmPrinter &printer, llvm::ArrayRef<int64_t> shape,
                          mlir::Type element, llvm::ArrayRef<int64_t> strides = {});
/// `, strided<[1, 64]>` if the parser is at a comma (nothing otherwise).
mlir::ParseResult parseOptionalStridedLayout(mlir::AsmParser &parser,
                                             llvm::SmallVectorImpl<int64_t> &strides);
/// `, strided<[1, 64]>`, or nothing for no strides.
void printStridedLayout(llvm::raw_ostream &os, llvm::ArrayRef<int64_t> strides);
/// `%view[%i, 0]` followed by attributes: the access part of loads and stores.
mlir::ParseResult parseAccess(mlir::OpAsmParser &parser, mlir::OpAsmParser::UnresolvedOperand &view,
                              llvm::SmallVectorImpl<mlir::OpAsmParser::UnresolvedOperand> &indices,
                              llvm::SmallVectorImpl<int64_t> &positions);
/// Check `positions` (and their dynamic count) against a view of `rank`.
mlir::LogicalResult verifyAccess(mlir::Operation *op, mlir::Type viewType, unsigned dynamicCount,
                                 llvm::ArrayRef<int64_t> positions);
} // namespace loom

#endif
