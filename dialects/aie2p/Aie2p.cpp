//===- Aie2p.cpp - aie2p dialect: target contexts -------------------------===//

#include "loom/Dialects.h"

using namespace mlir;
using namespace loom;
using namespace loom::aie2p;

#include "Aie2pDialect.cpp.inc"
#define GET_OP_CLASSES
#include "Aie2pOps.cpp.inc"

void Aie2pDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "Aie2pOps.cpp.inc"
      >();
  addInlinerInterface(this);
}

LogicalResult TargetOp::verify() {
  if (getSymName().empty())
    return emitOpError("needs a symbol name");
  if (getKind() != "array" && getKind() != "core")
    return emitOpError("target context kind must be `array` or `core`, got `")
           << getKind() << "`";
  return success();
}

LogicalResult ProgramLoadOp::verify() {
  if (getCoordinates().size() != 2)
    return emitOpError("expects [column, row], got ") << getCoordinates().size() << " values";
  for (int64_t c : getCoordinates())
    if (c < 0)
      return emitOpError("coordinates must be non-negative, got ") << c;
  return success();
}

LogicalResult ProgramLoadOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (!symbols.lookupNearestSymbolFrom(*this, getImageAttr()))
    return emitOpError("@") << getImage() << " does not name a symbol (the tile code to load)";
  return success();
}
