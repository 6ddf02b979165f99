//===- Inliner.cpp - MLIR's inliner on Loom ops ----------------------------===//
//
// Every Loom dialect registers this interface, so MLIR's own `inline` pass can
// inline calls to `func.def inline` functions, as `loom-inline` does: every
// Loom op may be moved into a caller, and `func.return` becomes the values of
// the call (or a branch to the code after it).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialects.h"

#include "mlir/Transforms/InliningUtils.h"

using namespace mlir;

namespace loom {
namespace {
struct LoomInliner : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;

  bool isLegalToInline(Operation *call, Operation *callable, bool) const final {
    auto def = llvm::dyn_cast<func::DefOp>(callable);
    return def && def.getInlineHint();
  }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final { return true; }
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final { return true; }

  void handleTerminator(Operation *op, ValueRange replaced) const final {
    auto ret = llvm::dyn_cast<func::ReturnOp>(op);
    if (!ret)
      return;
    for (auto [old, value] : llvm::zip(replaced, ret.getValues()))
      old.replaceAllUsesWith(value);
  }

  void handleTerminator(Operation *op, Block *newDest) const final {
    auto ret = llvm::dyn_cast<func::ReturnOp>(op);
    if (!ret)
      return;
    OpBuilder builder(op);
    builder.create<cfg::BrOp>(op->getLoc(), ret.getValues(), newDest);
    op->erase();
  }
};
} // namespace

void addInlinerInterface(Dialect *dialect) { dialect->addInterfaces<LoomInliner>(); }
} // namespace loom
