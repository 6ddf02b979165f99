//===- Aie2p.cpp - aie2p dialect: target contexts and Low target IR --------===//

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
  if (getKind() != "array" && getKind() != "core" && getKind() != "configuration")
    return emitOpError("target context kind must be `array`, `core` or `configuration`, got `")
           << getKind() << "`";
  return success();
}

namespace {
/// `[column, row]`, both non-negative.
LogicalResult verifyTile(Operation *op, ArrayRef<int64_t> tile) {
  if (tile.size() != 2)
    return op->emitOpError("expects [column, row], got ") << tile.size() << " values";
  for (int64_t c : tile)
    if (c < 0)
      return op->emitOpError("coordinates must be non-negative, got ") << c;
  return success();
}

/// Each named field is non-negative.
LogicalResult verifyNonNegative(Operation *op,
                                std::initializer_list<std::pair<StringRef, int64_t>> fields) {
  for (auto [name, value] : fields)
    if (value < 0)
      return op->emitOpError() << name << " must be non-negative, got " << value;
  return success();
}

LogicalResult verifyDirection(Operation *op, StringRef direction) {
  if (direction != "s2mm" && direction != "mm2s")
    return op->emitOpError("DMA direction must be `s2mm` or `mm2s`, got `") << direction << "`";
  return success();
}
} // namespace

LogicalResult ProgramLoadOp::verify() { return verifyTile(*this, getCoordinates()); }

LogicalResult ProgramLoadOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (!symbols.lookupNearestSymbolFrom(*this, getImageAttr()))
    return emitOpError("@") << getImage() << " does not name a symbol (the tile code to load)";
  return success();
}

LogicalResult TileBufferOp::verify() {
  if (failed(verifyTile(*this, getTile())))
    return failure();
  if (getRole() != "channel" && getRole() != "private" && getRole() != "stack" &&
      getRole() != "cursor")
    return emitOpError("storage role must be `channel`, `private`, `stack` or `cursor`, got `")
           << getRole() << "`";
  return verifyNonNegative(*this, {{"offset", getOffset()}, {"size", getSize()}});
}

LogicalResult LockAcquireOp::verify() {
  if (failed(verifyTile(*this, getTile())))
    return failure();
  return verifyNonNegative(*this, {{"lock", getLock()}, {"value", getValue()}});
}

LogicalResult LockReleaseOp::verify() {
  if (failed(verifyTile(*this, getTile())))
    return failure();
  return verifyNonNegative(*this, {{"lock", getLock()}, {"value", getValue()}});
}

LogicalResult LockInitOp::verify() {
  if (failed(verifyTile(*this, getTile())))
    return failure();
  return verifyNonNegative(*this, {{"lock", getLock()}, {"value", getValue()}});
}

/// `steps` and `wraps` of a descriptor: one wrap fewer than steps, all of
/// them positive (the device's counts and field widths are the profile's,
/// checked when the descriptor is encoded).
static LogicalResult verifyDimensions(Operation *op, std::optional<ArrayRef<int64_t>> steps,
                                      std::optional<ArrayRef<int64_t>> wraps) {
  if (steps.has_value() != wraps.has_value())
    return op->emitOpError("dimensions need both their steps and their wraps");
  if (!steps)
    return success();
  if (steps->size() < 2 || wraps->size() + 1 != steps->size())
    return op->emitOpError("dimensions need a wrap for every step but the outermost; got ")
           << steps->size() << " steps and " << wraps->size() << " wraps";
  for (int64_t v : *steps)
    if (v <= 0)
      return op->emitOpError("a dimension step must be positive, got ") << v;
  for (int64_t v : *wraps)
    if (v <= 0)
      return op->emitOpError("a dimension wrap must be positive, got ") << v;
  return success();
}

LogicalResult DmaBdOp::verify() {
  if (failed(verifyTile(*this, getTile())) ||
      failed(verifyDimensions(*this, getSteps(), getWraps())))
    return failure();
  if (getAcquireLock().has_value() != getAcquireValue().has_value() ||
      getReleaseLock().has_value() != getReleaseValue().has_value())
    return emitOpError("a lock credit needs both its lock and its value");
  return verifyNonNegative(*this, {{"bd", getBd()},
                                   {"offset", getOffset()},
                                   {"length", getLength()},
                                   {"acquire lock", getAcquireLock().value_or(0)},
                                   {"acquire value", getAcquireValue().value_or(0)},
                                   {"release lock", getReleaseLock().value_or(0)},
                                   {"release value", getReleaseValue().value_or(0)},
                                   {"next", getNext().value_or(0)}});
}

LogicalResult ShimBdOp::verify() {
  if (failed(verifyTile(*this, getTile())) ||
      failed(verifyDimensions(*this, getSteps(), getWraps())))
    return failure();
  if (getIterationStride().has_value() != getIterationWrap().has_value())
    return emitOpError("an iteration needs both its stride and its wrap");
  if (getIterationStride() && (*getIterationStride() <= 0 || *getIterationWrap() <= 0))
    return emitOpError("an iteration's stride and wrap must be positive, got ")
           << *getIterationStride() << " and " << *getIterationWrap();
  return verifyNonNegative(*this,
                           {{"bd", getBd()}, {"offset", getOffset()}, {"length", getLength()}});
}

LogicalResult DmaStartOp::verify() {
  if (failed(verifyTile(*this, getTile())) || failed(verifyDirection(*this, getDirection())))
    return failure();
  if (getRepeat().value_or(1) < 1)
    return emitOpError("repeat must be at least 1, got ") << *getRepeat();
  return verifyNonNegative(*this, {{"channel", getChannel()}, {"bd", getBd()}});
}

LogicalResult DmaWaitOp::verify() {
  if (failed(verifyTile(*this, getTile())) || failed(verifyDirection(*this, getDirection())))
    return failure();
  return verifyNonNegative(*this, {{"channel", getChannel()}});
}

LogicalResult RouteOp::verify() {
  if (failed(verifyTile(*this, getSource())) || failed(verifyTile(*this, getDestination())))
    return failure();
  return verifyNonNegative(*this, {{"source channel", getSourceChannel()},
                                   {"destination channel", getDestinationChannel()}});
}

LogicalResult CoreEnableOp::verify() { return verifyTile(*this, getTile()); }
