//===- Kernel.cpp - kernel dialect: asynchronous copies -------------------===//

#include "loom/Dialects.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace loom;
using namespace loom::kernel;

#include "KernelDialect.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "KernelTypes.cpp.inc"
#define GET_OP_CLASSES
#include "KernelOps.cpp.inc"

void KernelDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "KernelTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "KernelOps.cpp.inc"
      >();
  addInlinerInterface(this);
}

//===-- kernel.async.copy -------------------------------------------------===//
// The copy's hints are keywords: {cache_scope = workgroup, ...}.

static constexpr llvm::StringLiteral kCopyKeys[] = {"cache_scope", "cache_temporal", "direction"};

static ArrayRef<StringRef> allowedValues(StringRef key) {
  static const StringRef scopes[] = {"workgroup", "device", "system"};
  static const StringRef temporal[] = {"regular", "nontemporal"};
  static const StringRef directions[] = {"global_to_workgroup", "workgroup_to_global",
                                        "workgroup_to_workgroup"};
  if (key == "cache_scope")
    return scopes;
  if (key == "cache_temporal")
    return temporal;
  return directions;
}

ParseResult AsyncCopyOp::parse(OpAsmParser &parser, OperationState &result) {
  UnresolvedOperand source, destination;
  Type sourceType, destinationType, tokenType;
  TypeListParser types(parser);
  if (parser.parseOperand(source) || parser.parseKeyword("to") ||
      parser.parseOperand(destination))
    return failure();
  SMLoc braceLoc = parser.getCurrentLocation();
  if (parser.parseLBrace() || parser.parseCommaSeparatedList([&]() -> ParseResult {
        SMLoc loc = parser.getCurrentLocation();
        StringRef key, value;
        if (parser.parseKeyword(&key) || parser.parseEqual())
          return failure();
        if (!llvm::is_contained(kCopyKeys, key))
          return parser.emitError(loc, "unknown copy attribute `")
                 << key << "`; expected cache_scope, cache_temporal or direction";
        SMLoc valueLoc = parser.getCurrentLocation();
        if (parser.parseKeyword(&value))
          return failure();
        if (!llvm::is_contained(allowedValues(key), value)) {
          auto diag = parser.emitError(valueLoc, "invalid ") << key << " `" << value
                                                            << "`; expected one of: ";
          llvm::interleaveComma(allowedValues(key), diag);
          return diag;
        }
        if (result.attributes.get(key))
          return parser.emitError(loc, "duplicate copy attribute `") << key << "`";
        result.addAttribute(key, parser.getBuilder().getStringAttr(value));
        return success();
      }) ||
      parser.parseRBrace())
    return failure();
  for (StringRef key : kCopyKeys)
    if (!result.attributes.get(key))
      return parser.emitError(braceLoc, "missing copy attribute `") << key << "`";
  if (parser.parseColon() || types.parse(sourceType) || parser.parseKeyword("to") ||
      types.parse(destinationType) || parser.parseArrow() || types.parse(tokenType) ||
      parser.resolveOperand(source, sourceType, result.operands) ||
      parser.resolveOperand(destination, destinationType, result.operands) ||
      types.resolve(result.operands))
    return failure();
  result.addTypes(tokenType);
  return success();
}

void AsyncCopyOp::print(OpAsmPrinter &p) {
  p << ' ' << getSource() << " to " << getDestination() << " {cache_scope = "
    << getCacheScope() << ", cache_temporal = " << getCacheTemporal()
    << ", direction = " << getDirection() << "} : ";
  ValueRange dims = getTypeDims();
  printLoomTypeWithDims(p, getSource().getType(), dims);
  p << " to ";
  printLoomTypeWithDims(p, getDestination().getType(), dims);
  p << " -> ";
  printLoomTypeWithDims(p, getToken().getType(), dims);
}

LogicalResult AsyncCopyOp::verify() {
  for (StringRef key : kCopyKeys) {
    StringRef value = (*this)->getAttrOfType<StringAttr>(key).getValue();
    if (!llvm::is_contained(allowedValues(key), value))
      return emitOpError("invalid ") << key << " `" << value << "`";
  }
  auto source = llvm::cast<view::ViewType>(getSource().getType());
  auto destination = llvm::cast<view::ViewType>(getDestination().getType());
  // Layouts may differ: the copy moves elements index by index.
  if (source.withoutLayout() != destination.withoutLayout())
    return emitOpError("copies between views of the same shape and element type; got ")
           << source << " and " << destination;
  return verifySameDims(*this, typeDimsOf(*this, 0), typeDimsOf(*this, 1),
                        "source and destination differ");
}

LogicalResult AsyncGroupOp::verify() {
  if (getTokens().empty())
    return emitOpError("needs at least one token");
  return success();
}

LogicalResult AsyncWaitOp::verify() {
  int64_t newer = getNewerGroupsAttr().getInt();
  if (newer < 0)
    return emitOpError("newer_groups must be non-negative, got ") << newer;
  return success();
}
