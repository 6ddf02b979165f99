//===- Buffer.cpp - buffer dialect: syntax and verifiers ------------------===//

#include "loom/Dialects.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace loom;
using namespace loom::buffer;

#include "BufferDialect.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "BufferTypes.cpp.inc"
#define GET_OP_CLASSES
#include "BufferOps.cpp.inc"

void BufferDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "BufferTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "BufferOps.cpp.inc"
      >();
  addInlinerInterface(this);
}

//===-- buffer.assume.alignment -------------------------------------------===//

/// `%a, %b [{minimum_alignment = N}] : buffer, buffer`: operands and the
/// results that stand for them.
static ParseResult parseAssumption(OpAsmParser &parser, OperationState &result,
                                   StringAttr alignmentName) {
  SmallVector<UnresolvedOperand> buffers;
  SmallVector<Type> types;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseOperandList(buffers))
    return failure();
  if (alignmentName) {
    IntegerAttr alignment;
    if (parser.parseLBrace() || parser.parseKeyword(alignmentName.getValue()) ||
        parser.parseEqual() ||
        parser.parseAttribute(alignment, parser.getBuilder().getI64Type()) ||
        parser.parseRBrace())
      return failure();
    result.addAttribute(alignmentName, alignment);
  }
  if (parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parseLoomTypes(parser, types) ||
      parser.resolveOperands(buffers, types, loc, result.operands))
    return failure();
  result.addTypes(types);
  return success();
}

static void printAssumption(OpAsmPrinter &p, Operation *op, std::optional<int64_t> alignment,
                            ArrayRef<StringRef> elided) {
  p << ' ' << op->getOperands();
  if (alignment)
    p << " {minimum_alignment = " << *alignment << '}';
  p.printOptionalAttrDict(op->getAttrs(), elided);
  p << " : ";
  printLoomTypes(p, op, op->getOperandTypes());
}

ParseResult AssumeAlignmentOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseAssumption(parser, result, getMinimumAlignmentAttrName(result.name));
}

void AssumeAlignmentOp::print(OpAsmPrinter &p) {
  printAssumption(p, *this, getMinimumAlignmentAttr().getInt(),
                  {getMinimumAlignmentAttrName()});
}

ParseResult AssumeNoAliasOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseAssumption(parser, result, nullptr);
}

void AssumeNoAliasOp::print(OpAsmPrinter &p) { printAssumption(p, *this, std::nullopt, {}); }

static LogicalResult verifyAlignment(Operation *op, int64_t alignment, StringRef what) {
  if (alignment <= 0 || !llvm::isPowerOf2_64(alignment))
    return op->emitOpError(what) << " must be a positive power of two, got " << alignment;
  return success();
}

LogicalResult AssumeAlignmentOp::verify() {
  if (getBuffers().size() != getResults().size())
    return emitOpError("has ") << getBuffers().size() << " operands but "
                               << getResults().size() << " results";
  if (getBuffers().empty())
    return emitOpError("needs at least one buffer");
  return verifyAlignment(*this, getMinimumAlignmentAttr().getInt(), "minimum_alignment");
}

//===-- buffer.assume.noalias --------------------------------------------===//

LogicalResult AssumeNoAliasOp::verify() {
  if (getBuffers().size() < 2)
    return emitOpError("needs at least two buffers to relate, got ") << getBuffers().size();
  if (getBuffers().size() != getResults().size())
    return emitOpError("has ") << getBuffers().size() << " operands but "
                               << getResults().size() << " results";
  return success();
}

//===-- buffer.alloca -----------------------------------------------------===//

LogicalResult AllocaOp::verify() {
  StringRef space = getSpace();
  if (space == "workgroup" && !getPool())
    return emitOpError("in workgroup memory needs the pool it allocates from: pool(%p)");
  if (space == "private" && getPool())
    return emitOpError("in private memory takes no pool");
  if (space != "workgroup" && space != "private")
    return emitOpError("memory space must be `workgroup` or `private`, got `") << space << "`";
  return verifyAlignment(*this, getAlignmentAttr().getInt(), "alignment");
}

//===-- buffer.view -------------------------------------------------------===//

ParseResult ViewOp::parse(OpAsmParser &parser, OperationState &result) {
  UnresolvedOperand source, offset;
  Type sourceType, resultType;
  TypeListParser types(parser);
  SmallVector<Value> dims;
  if (parser.parseOperand(source) || parser.parseLSquare() || parser.parseOperand(offset) ||
      parser.parseRSquare() || parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColon() || types.parse(sourceType) || parser.parseArrow() ||
      types.parse(resultType) ||
      parser.resolveOperand(source, sourceType, result.operands) ||
      parser.resolveOperand(offset, buffer::OffsetType::get(parser.getContext()),
                            result.operands) ||
      types.resolve(result.operands))
    return failure();
  result.addTypes(resultType);
  return success();
}

void ViewOp::print(OpAsmPrinter &p) {
  p << ' ' << getSource() << '[' << getOffset() << ']';
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : ";
  ValueRange dims = getTypeDims();
  printLoomTypeWithDims(p, getSource().getType(), dims);
  p << " -> ";
  printLoomTypeWithDims(p, getResult().getType(), dims);
}
