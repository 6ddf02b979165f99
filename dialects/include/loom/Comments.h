//===- Comments.h - source comments kept beside a parsed module -*- C++ -*-===//

#ifndef LOOM_COMMENTS_H
#define LOOM_COMMENTS_H

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"

#include <map>
#include <string>
#include <vector>

namespace loom {

/// The comments attached to an op (or, for the module, the ones after the
/// last op). They live in the op's location, so bytecode and generic MLIR
/// keep them.
struct OpComments {
  std::vector<std::string> before; // "" marks a separating blank line
  std::string after;               // an end-of-line comment on the op's line
  std::string label;               // on the label line of the block it starts
  /// Per region of the op: the comments after its last op, before its `}`.
  std::vector<std::vector<std::string>> regionEnds;
  std::string close; // after the `}` that ends the op's last region
};

/// Attach the `//` comments of `source` to the ops of `module` parsed from it.
void attachComments(mlir::ModuleOp module, llvm::StringRef source);
/// The comments stored in `loc`, and the location without them.
OpComments commentsOf(mlir::Location loc);
mlir::Location withoutComments(mlir::Location loc);

/// The final layout of printed Loom text: predecessor notes dropped from
/// block labels, a blank line above each op of `blankBefore`, and the ops'
/// comments put back, using where the printer placed each op.
std::string layoutText(mlir::ModuleOp module, llvm::StringRef printed,
                       const mlir::AsmState::LocationMap &where,
                       const llvm::DenseSet<mlir::Operation *> &blankBefore);

} // namespace loom

#endif
