//===- Scf.cpp - scf dialect: loops, conditionals, selection --------------===//

#include "loom/Dialects.h"

using namespace mlir;
using namespace loom;
using namespace loom::scf;

#include "ScfDialect.cpp.inc"
#define GET_OP_CLASSES
#include "ScfOps.cpp.inc"

void ScfDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ScfOps.cpp.inc"
      >();
  addInlinerInterface(this);
}

//===-- scf.for -----------------------------------------------------------===//
// scf.for %i = [%lb to %ub step %s] [iter_args(%a = %x, ...) -> (T, ...)] {..}

ParseResult ForOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &builder = parser.getBuilder();
  Type index = builder.getIndexType();
  SmallVector<OpAsmParser::Argument> regionArgs(1);
  UnresolvedOperand lower, upper, step;
  if (parser.parseArgument(regionArgs.front()) || parser.parseEqual() ||
      parser.parseLSquare() || parser.parseOperand(lower) || parser.parseKeyword("to") ||
      parser.parseOperand(upper) || parser.parseKeyword("step") || parser.parseOperand(step) ||
      parser.parseRSquare())
    return failure();
  regionArgs.front().type = index;
  if (parser.resolveOperand(lower, index, result.operands) ||
      parser.resolveOperand(upper, index, result.operands) ||
      parser.resolveOperand(step, index, result.operands))
    return failure();

  SmallVector<UnresolvedOperand> inits;
  if (succeeded(parser.parseOptionalKeyword("iter_args"))) {
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren, [&]() -> ParseResult {
          if (parser.parseArgument(regionArgs.emplace_back()) || parser.parseEqual() ||
              parser.parseOperand(inits.emplace_back()))
            return failure();
          return success();
        }))
      return failure();
    SmallVector<Type> types;
    if (parser.parseArrow() || parser.parseLParen() || parseLoomTypes(parser, types) ||
        parser.parseRParen())
      return failure();
    if (types.size() != inits.size())
      return parser.emitError(loc, "iter_args has ")
             << inits.size() << " values but " << types.size() << " result types";
    for (auto [arg, type] : llvm::zip(llvm::drop_begin(regionArgs), types))
      arg.type = type;
    if (parser.resolveOperands(inits, types, loc, result.operands))
      return failure();
    result.addTypes(types);
  }
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, regionArgs))
    return failure();
  ForOp::ensureTerminator(*body, builder, result.location);
  return success();
}

void ForOp::print(OpAsmPrinter &p) {
  Block &body = getBody().front();
  p << ' ';
  p.printOperand(body.getArgument(0));
  p << " = [" << getLowerBound() << " to " << getUpperBound() << " step " << getStep() << ']';
  if (!getInitArgs().empty()) {
    p << " iter_args(";
    llvm::interleaveComma(llvm::zip(body.getArguments().drop_front(), getInitArgs()), p,
                          [&](auto pair) {
                            p.printOperand(std::get<0>(pair));
                            p << " = ";
                            p.printOperand(std::get<1>(pair));
                          });
    p << ") -> (";
    printLoomTypes(p, *this, getResultTypes());
    p << ')';
  }
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs());
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/!getInitArgs().empty());
}

LogicalResult ForOp::verify() {
  if (failed(verifyNoDependentTypes(*this, getResultTypes(), "carry")))
    return failure();
  Block &body = getBody().front();
  if (body.getNumArguments() != 1 + getInitArgs().size())
    return emitOpError("body takes the induction value and ")
           << getInitArgs().size() << " loop-carried values, got " << body.getNumArguments()
           << " arguments";
  if (!body.getArgument(0).getType().isIndex())
    return emitOpError("induction value must be `index`");
  for (auto [index, pair] : llvm::enumerate(
           llvm::zip(getInitArgs().getTypes(), body.getArguments().drop_front(), getResults()))) {
    auto [init, arg, res] = pair;
    if (init != arg.getType() || init != res.getType())
      return emitOpError("loop-carried value #") << index << " has inconsistent types";
  }
  auto yield = llvm::dyn_cast<YieldOp>(body.empty() ? nullptr : &body.back());
  if (!yield)
    return emitOpError("body must end with scf.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return yield.emitOpError("yields (")
           << yield.getValues().getTypes() << ") but the loop carries (" << getResultTypes()
           << ")";
  APInt step;
  if (matchPattern(getStep(), m_ConstantInt(&step)) && step.getSExtValue() <= 0)
    return emitOpError("step must be positive, got ") << step.getSExtValue();
  return success();
}

//===-- scf.if ------------------------------------------------------------===//

ParseResult IfOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &builder = parser.getBuilder();
  UnresolvedOperand condition;
  if (parser.parseOperand(condition) ||
      parser.resolveOperand(condition, builder.getI1Type(), result.operands))
    return failure();
  if (succeeded(parser.parseOptionalArrow())) {
    SmallVector<Type> types;
    if (parser.parseLParen() || parseLoomTypes(parser, types) || parser.parseRParen())
      return failure();
    result.addTypes(types);
  }
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *thenRegion = result.addRegion();
  Region *elseRegion = result.addRegion();
  if (parser.parseRegion(*thenRegion))
    return failure();
  IfOp::ensureTerminator(*thenRegion, builder, result.location);
  if (succeeded(parser.parseOptionalKeyword("else"))) {
    if (parser.parseRegion(*elseRegion))
      return failure();
    IfOp::ensureTerminator(*elseRegion, builder, result.location);
  }
  return success();
}

void IfOp::print(OpAsmPrinter &p) {
  p << ' ' << getCondition();
  if (!getResults().empty()) {
    p << " -> (";
    printLoomTypes(p, *this, getResultTypes());
    p << ')';
  }
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs());
  bool terminators = !getResults().empty();
  p << ' ';
  p.printRegion(getThenRegion(), false, terminators);
  if (!getElseRegion().empty()) {
    p << " else ";
    p.printRegion(getElseRegion(), false, terminators);
  }
}

LogicalResult IfOp::verify() {
  if (failed(verifyNoDependentTypes(*this, getResultTypes(), "yield")))
    return failure();
  if (getNumResults() != 0 && getElseRegion().empty())
    return emitOpError("with results needs an else branch");
  for (Region *region : {&getThenRegion(), &getElseRegion()}) {
    if (region->empty())
      continue;
    Block &block = region->front();
    auto yield = llvm::dyn_cast<YieldOp>(block.empty() ? nullptr : &block.back());
    if (!yield)
      return emitOpError("branches must end with scf.yield");
    if (yield.getValues().getTypes() != getResultTypes())
      return yield.emitOpError("yields (")
             << yield.getValues().getTypes() << ") but scf.if results are ("
             << getResultTypes() << ")";
  }
  return success();
}

//===-- region-branch interfaces ------------------------------------------===//
// So that MLIR's generic analyses and transformations (dead code, sparse
// dataflow, region simplification) understand Loom's structured control flow.

void ForOp::getSuccessorRegions(RegionBranchPoint, SmallVectorImpl<RegionSuccessor> &regions) {
  // From the parent or the end of an iteration: another iteration, or done.
  regions.push_back(RegionSuccessor(&getBody(), getBody().front().getArguments().drop_front()));
  regions.push_back(RegionSuccessor(getOperation(), getResults()));
}

OperandRange ForOp::getEntrySuccessorOperands(RegionSuccessor) { return getInitArgs(); }

void IfOp::getSuccessorRegions(RegionBranchPoint point, SmallVectorImpl<RegionSuccessor> &regions) {
  if (!point.isParent()) {
    regions.push_back(RegionSuccessor(getOperation(), getResults()));
    return;
  }
  regions.push_back(RegionSuccessor(&getThenRegion()));
  if (getElseRegion().empty())
    regions.push_back(RegionSuccessor(getOperation(), getResults()));
  else
    regions.push_back(RegionSuccessor(&getElseRegion()));
}

LogicalResult SelectOp::verify() {
  return verifyNoDependentTypes(*this, getResult().getType(), "select");
}

/// A known condition picks its operand, so a choice made by a constant (an
/// SPMD instance's coordinate, once expanded) leaves one value.
OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  if (getTrueValue() == getFalseValue())
    return getTrueValue();
  if (auto known = llvm::dyn_cast_or_null<IntegerAttr>(adaptor.getCondition()))
    return known.getValue().isZero() ? getFalseValue() : getTrueValue();
  return {};
}

//===-- scf.pick ----------------------------------------------------------===//
// scf.pick %index [%a, %b, ...] : T

ParseResult PickOp::parse(OpAsmParser &parser, OperationState &result) {
  UnresolvedOperand index;
  SmallVector<UnresolvedOperand> choices;
  Type type;
  if (parser.parseOperand(index) ||
      parser.parseOperandList(choices, OpAsmParser::Delimiter::Square) ||
      parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parseLoomType(parser, type))
    return failure();
  if (parser.resolveOperand(index, parser.getBuilder().getIndexType(), result.operands))
    return failure();
  for (UnresolvedOperand &choice : choices)
    if (parser.resolveOperand(choice, type, result.operands))
      return failure();
  result.addTypes(type);
  return success();
}

void PickOp::print(OpAsmPrinter &p) {
  p << ' ' << getIndex() << " [";
  llvm::interleaveComma(getChoices(), p);
  p << ']';
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : ";
  printLoomType(p, *this, getResult().getType());
}

LogicalResult PickOp::verify() {
  if (getChoices().empty())
    return emitOpError("needs at least one choice");
  for (Value choice : getChoices())
    if (choice.getType() != getResult().getType())
      return emitOpError("choices must have the result's type ")
             << getResult().getType() << ", got " << choice.getType();
  return verifyNoDependentTypes(*this, getResult().getType(), "pick");
}

/// A known index in range picks its choice; one outside is left for the
/// interpreter's run-time error.
OpFoldResult PickOp::fold(FoldAdaptor adaptor) {
  auto known = llvm::dyn_cast_or_null<IntegerAttr>(adaptor.getIndex());
  if (!known)
    return {};
  int64_t at = known.getValue().getSExtValue();
  if (at < 0 || at >= static_cast<int64_t>(getChoices().size()))
    return {};
  return getChoices()[at];
}
