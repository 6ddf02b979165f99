//===- Pipeline.cpp - pipeline dialect: syntax and verifiers --------------===//

#include "loom/Dialects.h"
#include "loom/Signature.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace loom;
using namespace loom::pipeline;

#include "PipelineDialect.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "PipelineTypes.cpp.inc"
#define GET_OP_CLASSES
#include "PipelineOps.cpp.inc"

void PipelineDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "PipelineTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "PipelineOps.cpp.inc"
      >();
  addInlinerInterface(this);
}

//===-- pipeline.def ------------------------------------------------------===//
// pipeline.def<kernel> [public|private] [retain] [target(@t)] @name(spec) run(args) {..}

ParseResult DefOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &builder = parser.getBuilder();
  StringAttr kind;
  if (parser.parseLess() || parseKeyword(parser, kind) || parser.parseGreater())
    return failure();
  result.addAttribute(getKindAttrName(result.name), kind);
  if (parseVisibility(parser, result.attributes))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("retain")))
    result.addAttribute(getRetainAttrName(result.name), builder.getUnitAttr());
  if (parseOptionalTarget(parser, result.attributes))
    return failure();
  StringAttr name;
  if (parser.parseSymbolName(name, SymbolTable::getSymbolAttrName(), result.attributes))
    return failure();

  Signature signature;
  if (parseSignatureArguments(parser, signature) || parser.parseKeyword("run"))
    return failure();
  unsigned specialization = signature.arguments.size();
  if (parseSignatureArguments(parser, signature) || resolveSignature(parser, signature))
    return failure();
  result.addAttribute(getNumSpecializationArgsAttrName(result.name),
                      builder.getI64IntegerAttr(specialization));
  result.addAttribute(getFunctionTypeAttrName(result.name),
                      TypeAttr::get(signature.functionType(builder)));
  result.addAttribute(getArgDimsAttrName(result.name),
                      builder.getDenseI64ArrayAttr(signature.argDims));
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, signature.arguments))
    return failure();
  if (body->empty())
    body->emplaceBlock();
  return success();
}

void DefOp::print(OpAsmPrinter &p) {
  p << '<' << getKind() << '>';
  printVisibility(p, getSymVisibility());
  if (getRetain())
    p << " retain";
  if (auto target = getTargetAttr())
    p << " target(" << target << ')';
  p << ' ';
  p.printSymbolName(getSymName());
  Block &entry = getBody().front();
  unsigned specialization = getNumSpecializationArgs();
  printSignatureArguments(p, entry.getArguments().take_front(specialization), getArgDims());
  p << " run";
  printSignatureArguments(p, entry.getArguments().drop_front(specialization), getArgDims());
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(),
      {getSymNameAttrName(), getSymVisibilityAttrName(), getKindAttrName(), getRetainAttrName(),
       getTargetAttrName(), getFunctionTypeAttrName(), getNumSpecializationArgsAttrName(),
       getArgDimsAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false, /*printBlockTerminators=*/true);
}

LogicalResult DefOp::verify() {
  if (getSymName().empty())
    return emitOpError("needs a symbol name");
  if (getKind() != "kernel")
    return emitOpError("kind must be `kernel`, got `") << getKind() << "`";
  FunctionType type = getFunctionType();
  if (!type.getResults().empty())
    return emitOpError("a pipeline returns nothing; results travel through buffers");
  if (getNumSpecializationArgs() < 0 ||
      static_cast<uint64_t>(getNumSpecializationArgs()) > type.getNumInputs())
    return emitOpError("num_specialization_args out of range");
  if (getBody().empty())
    return emitOpError("needs a construction region");
  return verifySignature(*this, type, getBody().front(), getArgDims());
}

//===-- pipeline.memory ---------------------------------------------------===//

LogicalResult MemoryOp::verify() {
  if (getSpace() != "workgroup")
    return emitOpError("only the `workgroup` pool can be selected, got `") << getSpace() << "`";
  if (getCoordinates().size() != 2)
    return emitOpError("expects [column, row] coordinates, got ")
           << getCoordinates().size() << " values";
  for (int64_t c : getCoordinates())
    if (c < 0)
      return emitOpError("coordinates must be non-negative, got ") << c;
  return success();
}

//===-- pipeline.strand ---------------------------------------------------===//

LogicalResult InstanceOp::verify() {
  // A strand's body, or a function a strand runs (an outlined body).
  if (!getOperation()->getParentOfType<StrandOp>() &&
      !getOperation()->getParentOfType<func::DefOp>())
    return emitOpError("gives a strand instance's coordinates, so it must be inside a "
                       "pipeline.strand or a function");
  return success();
}

LogicalResult StrandOp::verify() {
  size_t rank = getOrigins().size();
  if (getCounts().size() != rank || getStrides().size() != rank)
    return emitOpError("workers(origins, counts, strides) must have equal lengths, got ")
           << rank << ", " << getCounts().size() << ", " << getStrides().size();
  if (rank != 2)
    return emitOpError("workers selects [column, row] coordinates; got rank ") << rank;
  for (int64_t origin : getOrigins())
    if (origin < 0)
      return emitOpError("worker origins must be non-negative, got ") << origin;
  for (int64_t count : getCounts())
    if (count < 1)
      return emitOpError("worker counts must be at least 1, got ") << count;
  for (int64_t stride : getStrides())
    if (stride < 1)
      return emitOpError("worker strides must be at least 1, got ") << stride;
  return success();
}

LogicalResult DefOp::verifyRegions() { return verifyOwnership(getBody()); }

LogicalResult DefOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyTargetSymbol(*this, getTargetAttr(), symbols);
}
