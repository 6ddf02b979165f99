//===- Index.cpp - index dialect: arithmetic, folding, facts --------------===//

#include "loom/Dialects.h"

using namespace mlir;
using namespace loom;
using namespace loom::index;

#include "IndexDialect.cpp.inc"
#define GET_OP_CLASSES
#include "IndexOps.cpp.inc"

void IndexDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "IndexOps.cpp.inc"
      >();
  addInlinerInterface(this);
}

Operation *IndexDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                             Location loc) {
  auto integer = llvm::dyn_cast<IntegerAttr>(value);
  if (!integer || !(type.isIndex() || type.isInteger(1) || llvm::isa<buffer::OffsetType>(type)))
    return nullptr;
  // An i1 folds to an APInt of width 1, whose signed value for true is -1.
  int64_t v = integer.getType().isInteger(1) ? static_cast<int64_t>(integer.getValue().getZExtValue())
                                             : integer.getInt();
  return builder.create<ConstantOp>(loc, type, builder.getI64IntegerAttr(v));
}

//===-- index.constant ----------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

LogicalResult ConstantOp::verify() {
  int64_t value = getValueAttr().getInt();
  if (getType().isInteger(1) && value != 0 && value != 1)
    return emitOpError("an i1 constant must be 0 or 1, got ") << value;
  return success();
}

//===-- arithmetic --------------------------------------------------------===//

static std::optional<int64_t> constantOf(Attribute attr) {
  if (auto integer = llvm::dyn_cast_if_present<IntegerAttr>(attr))
    return integer.getValue().getSExtValue();
  return std::nullopt;
}

/// Folds `lhs op rhs` when both are constant; `identity` (if any) makes the
/// op return its left operand when the right one equals it.
template <typename Adaptor>
static OpFoldResult foldBinary(Operation *op, Adaptor adaptor,
                               llvm::function_ref<uint64_t(uint64_t, uint64_t)> compute,
                               std::optional<int64_t> identity = std::nullopt) {
  std::optional<int64_t> lhs = constantOf(adaptor.getLhs());
  std::optional<int64_t> rhs = constantOf(adaptor.getRhs());
  Builder builder(op->getContext());
  if (lhs && rhs)
    return builder.getI64IntegerAttr(static_cast<int64_t>(compute(*lhs, *rhs)));
  if (identity && rhs && *rhs == *identity)
    return op->getOperand(0);
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor, [](uint64_t a, uint64_t b) { return a + b; }, 0);
}
OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor, [](uint64_t a, uint64_t b) { return a - b; }, 0);
}
OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor, [](uint64_t a, uint64_t b) { return a * b; }, 1);
}
OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldBinary(*this, adaptor, [](uint64_t a, uint64_t b) { return std::min(a, b); });
}
OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldBinary(*this, adaptor, [](uint64_t a, uint64_t b) { return std::max(a, b); });
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto value = constantOf(adaptor.getInput()))
    return Builder(getContext()).getI64IntegerAttr(*value);
  return {};
}

//===-- index.cmp ---------------------------------------------------------===//

static constexpr llvm::StringLiteral kPredicates[] = {"eq",  "ne",  "slt", "sle", "sgt",
                                                      "sge", "ult", "ule", "ugt", "uge"};

LogicalResult CmpOp::verify() {
  if (!llvm::is_contained(kPredicates, getPredicate()))
    return emitOpError("unknown predicate `")
           << getPredicate() << "`; expected eq, ne, slt, sle, sgt, sge, ult, ule, ugt or uge";
  return success();
}

OpFoldResult CmpOp::fold(FoldAdaptor adaptor) {
  std::optional<int64_t> lhs = constantOf(adaptor.getLhs());
  std::optional<int64_t> rhs = constantOf(adaptor.getRhs());
  if (!lhs || !rhs)
    return {};
  uint64_t ul = *lhs, ur = *rhs;
  StringRef p = getPredicate();
  bool value = p == "eq"    ? *lhs == *rhs
               : p == "ne"  ? *lhs != *rhs
               : p == "slt" ? *lhs < *rhs
               : p == "sle" ? *lhs <= *rhs
               : p == "sgt" ? *lhs > *rhs
               : p == "sge" ? *lhs >= *rhs
               : p == "ult" ? ul < ur
               : p == "ule" ? ul <= ur
               : p == "ugt" ? ul > ur
                            : ul >= ur;
  return Builder(getContext()).getIntegerAttr(Builder(getContext()).getI1Type(), value);
}

//===-- index.assume ------------------------------------------------------===//

ParseResult AssumeOp::parse(OpAsmParser &parser, OperationState &result) {
  UnresolvedOperand input;
  Facts facts;
  Type type;
  if (parser.parseOperand(input))
    return failure();
  std::optional<UnresolvedOperand> subject = input;
  if (parseFacts(parser, facts, &subject) || parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColon() || parseLoomType(parser, type) ||
      parser.resolveOperand(input, type, result.operands))
    return failure();
  addFactAttributes(result, facts, getRangeAttrName(result.name),
                    getMultipleOfAttrName(result.name));
  result.addTypes(type);
  return success();
}


void AssumeOp::print(OpAsmPrinter &p) {
  p << ' ' << getInput() << ' ';
  printFacts(p, factsOf(getRange(), divisor()), getInput());
  p.printOptionalAttrDict((*this)->getAttrs(), {getRangeAttrName(), getMultipleOfAttrName()});
  p << " : ";
  printLoomType(p, *this, getType());
}

LogicalResult AssumeOp::verify() {
  if (auto range = getRange(); range && range->size() != 2)
    return emitOpError("range holds [low, high], got ") << range->size() << " values";
  return verifyFacts(*this, factsOf(getRange(), divisor()));
}
