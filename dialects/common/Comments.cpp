//===- Comments.cpp - keep source comments through loom-format -------------===//
//
// MLIR's lexer drops comments. At parse time each `//` comment is attached to
// an op: a full-line comment to the next op that starts after it, an
// end-of-line comment to the op that starts on its line. At print time the
// printer reports where each op landed (AsmState's location map) and the
// comments are put back there, indented like the op. Comments after the last
// op stay at the end of the file.
//
//===----------------------------------------------------------------------===//

#include "loom/Comments.h"
#include "loom/Dialects.h"

#include "mlir/IR/AsmState.h"

#include <set>

using namespace mlir;

namespace loom {

/// The column where a `//` comment starts on `line`, outside string literals.
static std::optional<size_t> commentColumn(StringRef line) {
  bool inString = false;
  for (size_t i = 0; i + 1 < line.size(); ++i) {
    char c = line[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '/' && line[i + 1] == '/') {
      return i;
    }
  }
  return std::nullopt;
}

static std::optional<unsigned> lineOf(Location loc) {
  if (auto name = llvm::dyn_cast<NameLoc>(loc))
    return lineOf(name.getChildLoc());
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc)) {
    for (Location part : fused.getLocations())
      if (auto line = lineOf(part))
        return line;
    return std::nullopt;
  }
  if (auto file = llvm::dyn_cast<FileLineColLoc>(loc))
    return file.getLine();
  return std::nullopt;
}

Comments collectComments(ModuleOp module, StringRef source) {
  Comments comments;
  // Ops by the line they start on, in source order.
  std::map<unsigned, Operation *> starts;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == module.getOperation())
      return;
    if (auto line = lineOf(op->getLoc()))
      starts.emplace(*line, op);
  });
  SmallVector<StringRef> lines;
  source.split(lines, '\n');
  for (auto [index, line] : llvm::enumerate(lines)) {
    unsigned number = index + 1;
    std::optional<size_t> column = commentColumn(line);
    if (!column)
      continue;
    std::string text = line.drop_front(*column).rtrim().str();
    if (line.take_front(*column).trim().empty()) {
      auto next = starts.upper_bound(number);
      if (next == starts.end())
        comments.trailing.push_back(text);
      else
        comments.before[next->second].push_back(text);
    } else if (auto here = starts.find(number); here != starts.end()) {
      comments.endOfLine[here->second] = text;
    } else {
      // A comment after a closing brace or a block label: keep it above the
      // next op rather than drop it.
      auto next = starts.upper_bound(number);
      if (next == starts.end())
        comments.trailing.push_back(text);
      else
        comments.before[next->second].push_back(text);
    }
  }
  return comments;
}

/// MLIR annotates block labels with their predecessors (`^bb1:  // pred:
/// ^bb0`); Loom text does not.
static StringRef withoutPredecessors(StringRef line) {
  StringRef body = line.ltrim();
  if (!body.starts_with("^"))
    return line;
  size_t at = line.find(":  // ");
  if (at == StringRef::npos)
    return line;
  StringRef note = line.drop_front(at + 6);
  if (note.starts_with("pred: ") || note.contains(" preds: ") || note.starts_with("no predecessors"))
    return line.take_front(at + 1);
  return line;
}

std::string layoutText(StringRef printed, const Comments *comments,
                       const AsmState::LocationMap &where,
                       const llvm::DenseSet<Operation *> &blankBefore) {
  // Line (1-based) of the printed text -> what to put above / after it.
  std::map<unsigned, std::vector<std::string>> above;
  std::map<unsigned, std::string> after;
  std::set<unsigned> blank;
  for (Operation *op : blankBefore)
    if (auto it = where.find(op); it != where.end())
      blank.insert(it->second.first);
  if (comments) {
    for (auto &[op, texts] : comments->before)
      if (auto it = where.find(op); it != where.end())
        for (const std::string &text : texts)
          above[it->second.first].push_back(text);
    for (auto &[op, text] : comments->endOfLine)
      if (auto it = where.find(op); it != where.end())
        after[it->second.first] = text;
  }

  std::string out;
  SmallVector<StringRef> lines;
  printed.split(lines, '\n');
  for (auto [index, raw] : llvm::enumerate(lines)) {
    unsigned number = index + 1;
    StringRef line = withoutPredecessors(raw);
    if (blank.count(number))
      out += '\n';
    if (auto it = above.find(number); it != above.end()) {
      StringRef indent = line.take_front(line.size() - line.ltrim().size());
      for (const std::string &text : it->second)
        out += (indent + text + "\n").str();
    }
    out += line.str();
    if (auto it = after.find(number); it != after.end())
      out += " " + it->second;
    if (index + 1 < lines.size())
      out += '\n';
  }
  if (comments)
    for (const std::string &text : comments->trailing)
      out += text + "\n";
  return out;
}

} // namespace loom
