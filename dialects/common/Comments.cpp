//===- Comments.cpp - keep source comments through loom-format -------------===//
//
// MLIR's lexer drops comments. After parsing, each `//` comment is attached
// to an op: a full-line comment to the next op that starts after it, an
// end-of-line comment to the op that starts on its line, comments after the
// last op to the module. They are kept in the op's location (a FusedLoc
// whose metadata is {loom.before = [...], loom.after = "..."}), so they
// survive bytecode and generic MLIR. At print time the printer reports where
// each op landed (AsmState's location map) and the comments go back there,
// indented like the op.
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

static constexpr llvm::StringLiteral kBefore = "loom.before", kAfter = "loom.after";

static DictionaryAttr commentMetadata(Location loc) {
  auto fused = llvm::dyn_cast<FusedLoc>(loc);
  if (!fused)
    return nullptr;
  auto dict = llvm::dyn_cast_if_present<DictionaryAttr>(fused.getMetadata());
  if (!dict || (!dict.get(kBefore) && !dict.get(kAfter)))
    return nullptr;
  return dict;
}

Location withoutComments(Location loc) {
  if (commentMetadata(loc))
    return llvm::cast<FusedLoc>(loc).getLocations().front();
  return loc;
}

OpComments commentsOf(Location loc) {
  OpComments comments;
  DictionaryAttr dict = commentMetadata(loc);
  if (!dict)
    return comments;
  if (auto before = dict.getAs<ArrayAttr>(kBefore))
    for (Attribute text : before)
      comments.before.push_back(llvm::cast<StringAttr>(text).str());
  if (auto after = dict.getAs<StringAttr>(kAfter))
    comments.after = after.str();
  return comments;
}

static void store(Operation *op, const OpComments &comments) {
  MLIRContext *ctx = op->getContext();
  Builder builder(ctx);
  SmallVector<NamedAttribute> entries;
  if (!comments.before.empty()) {
    SmallVector<Attribute> texts;
    for (const std::string &text : comments.before)
      texts.push_back(builder.getStringAttr(text));
    entries.push_back(builder.getNamedAttr(kBefore, builder.getArrayAttr(texts)));
  }
  if (!comments.after.empty())
    entries.push_back(builder.getNamedAttr(kAfter, builder.getStringAttr(comments.after)));
  if (entries.empty())
    return;
  op->setLoc(FusedLoc::get(ctx, {withoutComments(op->getLoc())},
                           builder.getDictionaryAttr(entries)));
}

void attachComments(ModuleOp module, StringRef source) {
  // Ops by the line they start on, in source order.
  std::map<unsigned, Operation *> starts;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == module.getOperation())
      return;
    if (auto line = lineOf(op->getLoc()))
      starts.emplace(*line, op);
  });
  std::map<Operation *, OpComments> found;
  SmallVector<StringRef> lines;
  source.split(lines, '\n');
  for (auto [index, line] : llvm::enumerate(lines)) {
    unsigned number = index + 1;
    std::optional<size_t> column = commentColumn(line);
    if (!column)
      continue;
    std::string text = line.drop_front(*column).rtrim().str();
    bool fullLine = line.take_front(*column).trim().empty();
    auto here = starts.find(number);
    if (!fullLine && here != starts.end()) {
      found[here->second].after = text;
      continue;
    }
    // A full-line comment, or one after a closing brace or a block label:
    // it goes above the next op (the module holds the ones after the last).
    auto next = starts.upper_bound(number);
    OpComments &group = found[next == starts.end() ? module.getOperation() : next->second];
    // A blank line in front of a comment group separates it; keep that.
    if (fullLine && index > 0 && lines[index - 1].trim().empty())
      group.before.push_back("");
    group.before.push_back(text);
    // ... and a blank line after it, between the comments and the op.
    if (fullLine && index + 1 < lines.size() && lines[index + 1].trim().empty() &&
        next != starts.end())
      group.before.push_back("");
  }
  for (auto &[op, comments] : found)
    store(op, comments);
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

std::string layoutText(ModuleOp module, StringRef printed, const AsmState::LocationMap &where,
                       const llvm::DenseSet<Operation *> &blankBefore) {
  // Line (1-based) of the printed text -> what to put above / after it.
  std::map<unsigned, std::vector<std::string>> above;
  std::map<unsigned, std::string> after;
  std::set<unsigned> blank;
  for (Operation *op : blankBefore)
    if (auto it = where.find(op); it != where.end())
      blank.insert(it->second.first);
  for (auto &[op, position] : where) {
    OpComments comments = commentsOf(op->getLoc());
    auto &lineAbove = above[position.first];
    lineAbove.insert(lineAbove.end(), comments.before.begin(), comments.before.end());
    if (!comments.after.empty())
      after[position.first] = comments.after;
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
      for (const std::string &text : it->second) {
        if (text.empty()) {
          // Keep a separating blank line, unless one is already there or the
          // comment opens a region.
          StringRef sofar(out);
          if (!sofar.empty() && !sofar.ends_with("\n\n") && !sofar.rtrim().ends_with("{"))
            out += '\n';
          continue;
        }
        out += (indent + text + "\n").str();
      }
    }
    out += line.str();
    if (auto it = after.find(number); it != after.end())
      out += " " + it->second;
    if (index + 1 < lines.size())
      out += '\n';
  }
  for (const std::string &text : commentsOf(module->getLoc()).before)
    if (!text.empty() || !StringRef(out).ends_with("\n\n"))
      out += text + "\n";
  return out;
}

} // namespace loom
