//===- Access.h - syntax of loads and stores through views ------*- C++ -*-===//
//
// view.load/store and vector.load/store share one syntax:
//   %x = OP %view[%i, 0] : view<..> -> T
//   OP %x, %view[%i, 0] : T, view<..>
// Positions mix values and constants; the view type may name dimensions.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ACCESS_H
#define LOOM_ACCESS_H

#include "loom/ShapedTypes.h"
#include "loom/Support.h"

namespace loom {

/// The constant positions and the operand group sizes of a parsed access.
template <typename Op>
void addPositions(mlir::OperationState &result, llvm::ArrayRef<int64_t> positions,
                  llvm::ArrayRef<int32_t> segments) {
  mlir::Builder builder(result.getContext());
  result.addAttribute(Op::getStaticIndicesAttrName(result.name),
                      builder.getDenseI64ArrayAttr(positions));
  result.addAttribute(Op::getOperandSegmentSizesAttrName(result.name),
                      builder.getDenseI32ArrayAttr(segments));
}

template <typename Op>
mlir::ParseResult parseLoad(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  UnresolvedOperand view;
  llvm::SmallVector<UnresolvedOperand> indices;
  llvm::SmallVector<int64_t> positions;
  mlir::Type viewType, resultType;
  TypeListParser types(parser);
  mlir::Builder &builder = parser.getBuilder();
  if (parseAccess(parser, view, indices, positions) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      types.parse(viewType) || parser.parseArrow() || types.parse(resultType) ||
      parser.resolveOperand(view, viewType, result.operands) ||
      parser.resolveOperands(indices, builder.getIndexType(), result.operands) ||
      types.resolve(result.operands))
    return mlir::failure();
  addPositions<Op>(result, positions, {1, static_cast<int32_t>(indices.size()),
                                        static_cast<int32_t>(types.size())});
  result.addTypes(resultType);
  return mlir::success();
}

template <typename Op>
mlir::ParseResult parseStore(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  UnresolvedOperand value, view;
  llvm::SmallVector<UnresolvedOperand> indices;
  llvm::SmallVector<int64_t> positions;
  mlir::Type valueType, viewType;
  TypeListParser types(parser);
  mlir::Builder &builder = parser.getBuilder();
  if (parser.parseOperand(value) || parser.parseComma() ||
      parseAccess(parser, view, indices, positions) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      types.parse(valueType) || parser.parseComma() || types.parse(viewType) ||
      parser.resolveOperand(value, valueType, result.operands) ||
      parser.resolveOperand(view, viewType, result.operands) ||
      parser.resolveOperands(indices, builder.getIndexType(), result.operands) ||
      types.resolve(result.operands))
    return mlir::failure();
  addPositions<Op>(result, positions, {1, 1, static_cast<int32_t>(indices.size()),
                                        static_cast<int32_t>(types.size())});
  return mlir::success();
}

/// `%view[%i, 0] {attrs} : ` — the part loads and stores print alike.
template <typename Op>
void printAccess(Op op, OpAsmPrinter &p) {
  p << op.getView();
  printIndexList(p, op.getIndices(), op.getStaticIndices());
  p.printOptionalAttrDict(op->getAttrs(), {op.getStaticIndicesAttrName(),
                                           op.getOperandSegmentSizesAttrName()});
  p << " : ";
}

template <typename Op>
void printLoad(Op op, OpAsmPrinter &p) {
  p << ' ';
  printAccess(op, p);
  mlir::ValueRange dims = op.getTypeDims();
  printLoomTypeWithDims(p, op.getView().getType(), dims);
  p << " -> ";
  printLoomTypeWithDims(p, op.getResult().getType(), dims);
}

template <typename Op>
void printStore(Op op, OpAsmPrinter &p) {
  p << ' ' << op.getValue() << ", ";
  printAccess(op, p);
  mlir::ValueRange dims = op.getTypeDims();
  printLoomTypeWithDims(p, op.getValue().getType(), dims);
  p << ", ";
  printLoomTypeWithDims(p, op.getView().getType(), dims);
}

} // namespace loom

#endif
