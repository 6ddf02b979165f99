//===- Cfg.cpp - cfg dialect: branches ------------------------------------===//

#include "loom/Dialects.h"

using namespace mlir;
using namespace loom;
using namespace loom::cfg;

#include "CfgDialect.cpp.inc"
#define GET_OP_CLASSES
#include "CfgOps.cpp.inc"

void CfgDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "CfgOps.cpp.inc"
      >();
  addInlinerInterface(this);
}

/// `^bb` or `^bb(%a: T, %b: T)`.
static ParseResult parseDestination(OpAsmParser &parser, Block *&dest,
                                    SmallVectorImpl<Value> &operands) {
  if (parser.parseSuccessor(dest))
    return failure();
  if (failed(parser.parseOptionalLParen()))
    return success();
  SmallVector<UnresolvedOperand> names;
  SmallVector<Type> types;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseCommaSeparatedList([&]() -> ParseResult {
        if (parser.parseOperand(names.emplace_back()) || parser.parseColon() ||
            parseLoomType(parser, types.emplace_back()))
          return failure();
        return success();
      }) ||
      parser.parseRParen())
    return failure();
  return parser.resolveOperands(names, types, loc, operands);
}

static void printDestination(OpAsmPrinter &p, Block *dest, ValueRange operands) {
  p.printSuccessor(dest);
  if (operands.empty())
    return;
  p << '(';
  llvm::interleaveComma(operands, p, [&](Value value) {
    p.printOperand(value);
    p << ": ";
    printLoomType(p, nullptr, value.getType());
  });
  p << ')';
}

ParseResult BrOp::parse(OpAsmParser &parser, OperationState &result) {
  Block *dest;
  if (parseDestination(parser, dest, result.operands) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  result.addSuccessors(dest);
  return success();
}

void BrOp::print(OpAsmPrinter &p) {
  p << ' ';
  printDestination(p, getDest(), getDestOperands());
  p.printOptionalAttrDict((*this)->getAttrs());
}

LogicalResult BrOp::verify() {
  return verifyNoDependentTypes(*this, getDestOperands().getTypes(), "pass to a block");
}

LogicalResult CondBrOp::verify() {
  if (failed(verifyNoDependentTypes(*this, getTrueOperands().getTypes(), "pass to a block")))
    return failure();
  return verifyNoDependentTypes(*this, getFalseOperands().getTypes(), "pass to a block");
}

SuccessorOperands BrOp::getSuccessorOperands(unsigned) {
  return SuccessorOperands(getDestOperandsMutable());
}

Block *BrOp::getSuccessorForOperands(ArrayRef<Attribute>) { return getDest(); }

ParseResult CondBrOp::parse(OpAsmParser &parser, OperationState &result) {
  UnresolvedOperand condition;
  Block *trueDest, *falseDest;
  SmallVector<Value> trueOperands, falseOperands;
  if (parser.parseOperand(condition) ||
      parser.resolveOperand(condition, parser.getBuilder().getI1Type(), result.operands) ||
      parser.parseComma() || parseDestination(parser, trueDest, trueOperands) ||
      parser.parseComma() || parseDestination(parser, falseDest, falseOperands) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  result.addOperands(trueOperands);
  result.addOperands(falseOperands);
  result.addSuccessors({trueDest, falseDest});
  result.addAttribute(getOperandSegmentSizesAttrName(result.name),
                      parser.getBuilder().getDenseI32ArrayAttr(
                          {1, static_cast<int32_t>(trueOperands.size()),
                           static_cast<int32_t>(falseOperands.size())}));
  return success();
}

void CondBrOp::print(OpAsmPrinter &p) {
  p << ' ' << getCondition() << ", ";
  printDestination(p, getTrueDest(), getTrueOperands());
  p << ", ";
  printDestination(p, getFalseDest(), getFalseOperands());
  p.printOptionalAttrDict((*this)->getAttrs(), {getOperandSegmentSizesAttrName()});
}

SuccessorOperands CondBrOp::getSuccessorOperands(unsigned index) {
  return SuccessorOperands(index == 0 ? getTrueOperandsMutable() : getFalseOperandsMutable());
}

Block *CondBrOp::getSuccessorForOperands(ArrayRef<Attribute> operands) {
  if (auto condition = llvm::dyn_cast_or_null<IntegerAttr>(operands.front()))
    return condition.getValue().isOne() ? getTrueDest() : getFalseDest();
  return nullptr;
}
