//===- Channel.cpp - channel dialect: record types and channel actions ----===//

#include "loom/Dialects.h"
#include "loom/ShapedTypes.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace loom;
using namespace loom::channel;

#include "ChannelDialect.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "ChannelTypes.cpp.inc"
#define GET_OP_CLASSES
#include "ChannelOps.cpp.inc"

void ChannelDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "ChannelTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "ChannelOps.cpp.inc"
      >();
  addInlinerInterface(this);
}

Type TileType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type element;
  if (failed(parseShapeAndElement(parser, shape, element)))
    return {};
  return TileType::get(parser.getContext(), shape, element);
}

void TileType::print(AsmPrinter &printer) const {
  printShapeAndElement(printer, getShape(), getElementType());
}

unsigned TileType::getNumDynamicDims() const { return countDynamicDims(*this); }

/// A record's payload view: same shape and element type as the record.
static view::ViewType payloadType(TileType record) {
  return view::ViewType::get(record.getContext(), record.getShape(), record.getElementType());
}

//===-- channel.bind ------------------------------------------------------===//

ParseResult BindOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr discipline;
  UnresolvedOperand slots, capacity;
  Type slotsType, capacityType, channelType;
  TypeListParser types(parser);
  if (parser.parseLess() || parseKeyword(parser, discipline) || parser.parseGreater() ||
      parser.parseOperand(slots) || parser.parseComma() || parser.parseOperand(capacity) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      types.parse(slotsType) || parser.parseComma() || types.parse(capacityType) ||
      parser.parseArrow() || types.parse(channelType) ||
      parser.resolveOperand(slots, slotsType, result.operands) ||
      parser.resolveOperand(capacity, capacityType, result.operands) ||
      types.resolve(result.operands))
    return failure();
  result.addAttribute(getDisciplineAttrName(result.name), discipline);
  result.addTypes(channelType);
  return success();
}

void BindOp::print(OpAsmPrinter &p) {
  p << '<' << getDiscipline() << "> " << getSlots() << ", " << getCapacity();
  p.printOptionalAttrDict((*this)->getAttrs(), {getDisciplineAttrName()});
  p << " : ";
  ValueRange dims = getTypeDims();
  printLoomTypeWithDims(p, getSlots().getType(), dims);
  p << ", ";
  printLoomTypeWithDims(p, getCapacity().getType(), dims);
  p << " -> ";
  printLoomTypeWithDims(p, getResult().getType(), dims);
}

LogicalResult BindOp::verify() {
  if (getDiscipline() != "fifo")
    return emitOpError("the only channel discipline is `fifo`, got `") << getDiscipline() << "`";
  auto slots = llvm::cast<view::ViewType>(getSlots().getType());
  TileType record = llvm::cast<ChannelType>(getResult().getType()).getRecord();
  ArrayRef<int64_t> shape = slots.getShape();
  if (!slots.isContiguous())
    return emitOpError("a channel's slots hold contiguous records; the slot view ")
           << slots << " has a strided layout";
  if (shape.empty())
    return emitOpError("slot view needs a leading slot dimension");
  if (ShapedType::isDynamic(shape.front()))
    return emitOpError("the number of slots (leading view dimension) must be a constant");
  if (shape.drop_front() != record.getShape() ||
      slots.getElementType() != record.getElementType())
    return emitOpError("slot view ")
           << slots << " does not hold records of " << record
           << ": after the leading slot dimension, shapes and element types must match";
  ValueRange slotDims = typeDimsOf(*this, 0);
  ValueRange recordDims = typeDimsOf(*this, 2);
  if (failed(verifySameDims(*this, slotDims, recordDims, "record shape differs from slot view")))
    return failure();
  APInt capacity;
  if (matchPattern(getCapacity(), m_ConstantInt(&capacity)) &&
      capacity.getSExtValue() != shape.front())
    return emitOpError("capacity ") << capacity.getSExtValue() << " differs from the "
                                    << shape.front() << " slots of the bound view";
  return success();
}

//===-- channel.reserve / channel.acquire ---------------------------------===//

template <typename Obligation>
static ParseResult parseAdmit(OpAsmParser &parser, OperationState &result) {
  UnresolvedOperand channel;
  Type channelType, obligationType, payload;
  TypeListParser types(parser);
  if (parser.parseOperand(channel) || parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColon() || types.parse(channelType) || parser.parseArrow() ||
      parser.parseLParen() || types.parse(obligationType) || parser.parseComma() ||
      types.parse(payload) || parser.parseRParen() ||
      parser.resolveOperand(channel, channelType, result.operands) ||
      types.resolve(result.operands))
    return failure();
  result.addTypes({obligationType, payload});
  return success();
}

template <typename Op>
static void printAdmit(Op op, OpAsmPrinter &p) {
  p << ' ' << op.getChannel();
  p.printOptionalAttrDict(op->getAttrs());
  p << " : ";
  ValueRange dims = op.getTypeDims();
  printLoomTypeWithDims(p, op.getChannel().getType(), dims);
  p << " -> (";
  printLoomTypeWithDims(p, op.getObligation().getType(), dims);
  p << ", ";
  printLoomTypeWithDims(p, op.getPayload().getType(), dims);
  p << ')';
}

template <typename Obligation, typename Op>
static LogicalResult verifyAdmit(Op op) {
  TileType record = llvm::cast<ChannelType>(op.getChannel().getType()).getRecord();
  auto obligation = llvm::dyn_cast<Obligation>(op.getObligation().getType());
  if (!obligation || obligation.getRecord() != record)
    return op.emitOpError("first result must be ")
           << Obligation::get(op.getContext(), record) << ", got "
           << op.getObligation().getType();
  if (op.getPayload().getType() != payloadType(record))
    return op.emitOpError("payload must be a view of one record (")
           << payloadType(record) << "), got " << op.getPayload().getType();
  ValueRange channelDims = typeDimsOf(op, 0);
  if (failed(verifySameDims(op, channelDims, typeDimsOf(op, 1), "obligation type")) ||
      failed(verifySameDims(op, channelDims, typeDimsOf(op, 2), "payload type")))
    return failure();
  return success();
}

ParseResult ReserveOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseAdmit<WriteType>(parser, result);
}
void ReserveOp::print(OpAsmPrinter &p) { printAdmit(*this, p); }
LogicalResult ReserveOp::verify() { return verifyAdmit<WriteType>(*this); }

ParseResult AcquireOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseAdmit<ReadType>(parser, result);
}
void AcquireOp::print(OpAsmPrinter &p) { printAdmit(*this, p); }
LogicalResult AcquireOp::verify() { return verifyAdmit<ReadType>(*this); }

//===-- channel.publish / channel.release ---------------------------------===//

static ParseResult parseConsume(OpAsmParser &parser, OperationState &result) {
  UnresolvedOperand obligation;
  Type type;
  TypeListParser types(parser);
  if (parser.parseOperand(obligation) || parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColon() || types.parse(type) ||
      parser.resolveOperand(obligation, type, result.operands) ||
      types.resolve(result.operands))
    return failure();
  return success();
}

template <typename Op>
static void printConsume(Op op, OpAsmPrinter &p) {
  p << ' ' << op.getObligation();
  p.printOptionalAttrDict(op->getAttrs());
  p << " : ";
  ValueRange dims = op.getTypeDims();
  printLoomTypeWithDims(p, op.getObligation().getType(), dims);
}

ParseResult PublishOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseConsume(parser, result);
}
void PublishOp::print(OpAsmPrinter &p) { printConsume(*this, p); }

ParseResult ReleaseOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseConsume(parser, result);
}
void ReleaseOp::print(OpAsmPrinter &p) { printConsume(*this, p); }
