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

struct Comments {
  std::map<mlir::Operation *, std::vector<std::string>> before;
  std::map<mlir::Operation *, std::string> endOfLine;
  std::vector<std::string> trailing;
};

/// Attach the `//` comments of `source` to the ops of `module` parsed from it.
Comments collectComments(mlir::ModuleOp module, llvm::StringRef source);
/// The final layout of printed Loom text: predecessor notes dropped from
/// block labels, a blank line above each op of `blankBefore`, and the
/// `comments` (if any) put back, using where the printer placed each op.
std::string layoutText(llvm::StringRef printed, const Comments *comments,
                       const mlir::AsmState::LocationMap &where,
                       const llvm::DenseSet<mlir::Operation *> &blankBefore);

} // namespace loom

#endif
