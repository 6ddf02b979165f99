//===- Comments.cpp - keep source comments through loom-format -------------===//
//
// MLIR's lexer drops comments. After parsing, each `//` comment is attached
// to an op: a full-line comment to the next op of the same region, or, when
// it ends a region, to the op owning that region; an end-of-line comment to
// the op on its line, to the op whose `}` closes on its line, or to the first
// op of the block whose label is on its line; comments after the last
// top-level op to the module. They are kept in the op's location (a FusedLoc
// whose metadata is a dictionary of `loom.*` entries), so they survive
// bytecode and generic MLIR. At print time the printer reports where each op
// landed (AsmState's location map); region ends are found by matching braces
// in the printed text; the comments go back there, indented to fit.
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

static constexpr llvm::StringLiteral kBefore = "loom.before", kAfter = "loom.after",
                                     kLabel = "loom.label", kEnds = "loom.ends",
                                     kClose = "loom.close";

static DictionaryAttr commentMetadata(Location loc) {
  auto fused = llvm::dyn_cast<FusedLoc>(loc);
  if (!fused)
    return nullptr;
  auto dict = llvm::dyn_cast_if_present<DictionaryAttr>(fused.getMetadata());
  if (!dict || llvm::none_of(dict, [](NamedAttribute entry) {
        return entry.getName().strref().starts_with("loom.");
      }))
    return nullptr;
  return dict;
}

Location withoutComments(Location loc) {
  if (commentMetadata(loc))
    return llvm::cast<FusedLoc>(loc).getLocations().front();
  return loc;
}

/// Comments can arrive from generic MLIR or bytecode, where the metadata is
/// any string: only a single line that starts with `//` is a comment, and the
/// empty string a blank line (never two in a row). Anything else is dropped,
/// so metadata can never become code in the printed text.
static bool isComment(StringRef text) {
  return text.starts_with("//") && !text.contains('\n') && !text.contains('\r');
}

static std::string commentIn(Attribute attr) {
  auto text = llvm::dyn_cast_if_present<StringAttr>(attr);
  return text && isComment(text.getValue()) ? text.str() : std::string();
}

static void appendLines(std::vector<std::string> &lines, Attribute attr) {
  auto texts = llvm::dyn_cast_if_present<ArrayAttr>(attr);
  if (!texts)
    return;
  for (Attribute entry : texts) {
    auto text = llvm::dyn_cast<StringAttr>(entry);
    if (!text)
      continue;
    if (text.getValue().empty()) {
      if (lines.empty() || !lines.back().empty())
        lines.push_back("");
    } else if (isComment(text.getValue())) {
      lines.push_back(text.str());
    }
  }
}

OpComments commentsOf(Location loc) {
  OpComments comments;
  DictionaryAttr dict = commentMetadata(loc);
  if (!dict)
    return comments;
  appendLines(comments.before, dict.get(kBefore));
  comments.after = commentIn(dict.get(kAfter));
  comments.label = commentIn(dict.get(kLabel));
  comments.close = commentIn(dict.get(kClose));
  if (auto ends = dict.getAs<ArrayAttr>(kEnds))
    for (Attribute region : ends)
      appendLines(comments.regionEnds.emplace_back(), region);
  return comments;
}

static void store(Operation *op, const OpComments &comments) {
  MLIRContext *ctx = op->getContext();
  Builder builder(ctx);
  SmallVector<NamedAttribute> entries;
  auto strings = [&](const std::vector<std::string> &texts) {
    SmallVector<Attribute> attrs;
    for (const std::string &text : texts)
      attrs.push_back(builder.getStringAttr(text));
    return builder.getArrayAttr(attrs);
  };
  if (!comments.before.empty())
    entries.push_back(builder.getNamedAttr(kBefore, strings(comments.before)));
  if (!comments.after.empty())
    entries.push_back(builder.getNamedAttr(kAfter, builder.getStringAttr(comments.after)));
  if (!comments.label.empty())
    entries.push_back(builder.getNamedAttr(kLabel, builder.getStringAttr(comments.label)));
  if (!comments.close.empty())
    entries.push_back(builder.getNamedAttr(kClose, builder.getStringAttr(comments.close)));
  if (llvm::any_of(comments.regionEnds, [](const auto &texts) { return !texts.empty(); })) {
    SmallVector<Attribute> regions;
    for (const auto &texts : comments.regionEnds)
      regions.push_back(strings(texts));
    entries.push_back(builder.getNamedAttr(kEnds, builder.getArrayAttr(regions)));
  }
  if (entries.empty())
    return;
  op->setLoc(FusedLoc::get(ctx, {withoutComments(op->getLoc())},
                           builder.getDictionaryAttr(entries)));
}

/// The `{`..`}` spans of the first `count` regions written from `at` on:
/// brace groups at the op's own level, skipping `attributes {..}`, strings and
/// comments. Offsets are into `text`; missing spans are left out.
static SmallVector<std::pair<size_t, size_t>> regionSpans(StringRef text, size_t at,
                                                          unsigned count) {
  SmallVector<std::pair<size_t, size_t>> spans;
  unsigned depth = 0;
  size_t open = 0;
  bool attributes = false;
  for (size_t i = at; i < text.size() && spans.size() < count; ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n')
        ++i;
    } else if (c == '{') {
      if (depth++ == 0) {
        open = i;
        attributes = text.take_front(i).rtrim().ends_with("attributes");
      }
    } else if (c == '}' && depth > 0 && --depth == 0 && !attributes) {
      spans.push_back({open, i});
    }
  }
  return spans;
}

static unsigned lineAt(ArrayRef<size_t> lineStarts, size_t offset) {
  return std::upper_bound(lineStarts.begin(), lineStarts.end(), offset) - lineStarts.begin();
}

static SmallVector<size_t> lineStartsOf(StringRef text) {
  SmallVector<size_t> starts{0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      starts.push_back(i + 1);
  return starts;
}

static unsigned nonEmptyRegions(Operation *op) {
  return llvm::count_if(op->getRegions(), [](Region &r) { return !r.empty(); });
}

void attachComments(ModuleOp module, StringRef source) {
  SmallVector<size_t> lineStarts = lineStartsOf(source);
  // Ops by the line they start on, in source order, and the line spans of
  // the regions written in the source.
  std::map<unsigned, Operation *> starts;
  struct Span {
    unsigned open, close;
    Region *region;
  };
  SmallVector<Span> spans;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == module.getOperation())
      return;
    auto line = lineOf(op->getLoc());
    if (!line)
      return;
    starts.emplace(*line, op);
    if (unsigned count = nonEmptyRegions(op); count != 0 && *line <= lineStarts.size()) {
      auto found = regionSpans(source, lineStarts[*line - 1], count);
      unsigned index = 0;
      for (Region &region : op->getRegions()) {
        if (region.empty())
          continue;
        if (index < found.size())
          spans.push_back({lineAt(lineStarts, found[index].first),
                           lineAt(lineStarts, found[index].second), &region});
        ++index;
      }
    }
  });
  // The innermost written region around each line (null: the module body),
  // by one sweep over the properly nested spans in order of their openings.
  llvm::sort(spans, [](const Span &a, const Span &b) {
    return a.open != b.open ? a.open < b.open : a.close > b.close;
  });
  std::vector<Region *> around(lineStarts.size() + 2, nullptr);
  {
    SmallVector<const Span *> open;
    size_t next = 0;
    for (unsigned line = 1; line < around.size(); ++line) {
      while (!open.empty() && open.back()->close <= line)
        open.pop_back();
      while (next < spans.size() && spans[next].open < line) {
        if (spans[next].close > line)
          open.push_back(&spans[next]);
        ++next;
      }
      around[line] = open.empty() ? nullptr : open.back()->region;
    }
  }
  auto regionAround = [&](unsigned line) -> Region * {
    return line < around.size() ? around[line] : nullptr;
  };
  // Regions by the line their `}` is on.
  std::map<unsigned, const Span *> closing;
  for (const Span &span : spans)
    closing.emplace(span.close, &span);
  auto closingOn = [&](unsigned line) -> const Span * {
    auto it = closing.find(line);
    return it == closing.end() ? nullptr : it->second;
  };

  std::map<Operation *, OpComments> found;
  SmallVector<StringRef> lines;
  source.split(lines, '\n');
  for (auto [index, line] : llvm::enumerate(lines)) {
    unsigned number = index + 1;
    std::optional<size_t> column = commentColumn(line);
    if (!column)
      continue;
    std::string text = line.drop_front(*column).rtrim().str();
    StringRef code = line.take_front(*column).trim();
    bool fullLine = code.empty();
    if (!fullLine) {
      if (auto here = starts.find(number); here != starts.end()) {
        found[here->second].after = text;
        continue;
      }
      if (const Span *span = closingOn(number); span && code.starts_with("}")) {
        Operation *owner = span->region->getParentOp();
        Region *last = nullptr;
        for (Region &region : owner->getRegions())
          if (!region.empty())
            last = &region;
        if (span->region == last && code == "}") {
          found[owner].close = text;
          continue;
        }
      }
      if (code.starts_with("^"))
        if (auto next = starts.upper_bound(number); next != starts.end()) {
          found[next->second].label = text;
          continue;
        }
    }
    // Above the next op of the region the comment is written in; at the end
    // of that region when no op follows in it.
    Region *region = regionAround(number);
    auto next = starts.upper_bound(number);
    while (next != starts.end() &&
           (region ? next->second->getParentRegion() != region
                   : next->second->getParentOp() != module.getOperation()))
      ++next;
    std::vector<std::string> *group;
    if (next != starts.end()) {
      group = &found[next->second].before;
    } else if (region) {
      Operation *owner = region->getParentOp();
      auto &ends = found[owner].regionEnds;
      ends.resize(owner->getNumRegions());
      group = &ends[region->getRegionNumber()];
    } else {
      group = &found[module.getOperation()].before;
    }
    // A blank line in front of a comment group separates it; keep that.
    if (fullLine && index > 0 && lines[index - 1].trim().empty())
      group->push_back("");
    group->push_back(text);
    // ... and a blank line after it, between the comments and the op.
    if (fullLine && index + 1 < lines.size() && lines[index + 1].trim().empty() &&
        next != starts.end())
      group->push_back("");
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
  SmallVector<size_t> lineStarts = lineStartsOf(printed);
  SmallVector<StringRef> printedLines;
  printed.split(printedLines, '\n');
  // Comments that go above a closing `}`: indented one level deeper.
  std::map<unsigned, std::vector<std::string>> beforeClose;
  for (auto &[op, position] : where) {
    OpComments comments = commentsOf(op->getLoc());
    auto &lineAbove = above[position.first];
    lineAbove.insert(lineAbove.end(), comments.before.begin(), comments.before.end());
    if (!comments.after.empty())
      after[position.first] = comments.after;
    if (!comments.label.empty() && position.first > 1 &&
        printedLines[position.first - 2].ltrim().starts_with("^"))
      after[position.first - 1] = comments.label;
    if (comments.regionEnds.empty() && comments.close.empty())
      continue;
    auto spans = regionSpans(printed, lineStarts[position.first - 1], nonEmptyRegions(op));
    unsigned index = 0;
    for (Region &region : op->getRegions()) {
      if (region.empty())
        continue;
      if (index >= spans.size())
        break;
      unsigned close = lineAt(lineStarts, spans[index].second);
      if (region.getRegionNumber() < comments.regionEnds.size()) {
        auto &texts = beforeClose[close];
        const auto &ends = comments.regionEnds[region.getRegionNumber()];
        texts.insert(texts.end(), ends.begin(), ends.end());
      }
      if (++index == spans.size() && !comments.close.empty())
        after[close] = comments.close;
    }
  }

  std::string out;
  ArrayRef<StringRef> lines = printedLines;
  for (auto [index, raw] : llvm::enumerate(lines)) {
    unsigned number = index + 1;
    StringRef line = withoutPredecessors(raw);
    if (blank.count(number))
      out += '\n';
    if (auto it = beforeClose.find(number); it != beforeClose.end()) {
      std::string indent = line.take_front(line.size() - line.ltrim().size()).str() + "  ";
      for (const std::string &text : it->second)
        if (text.empty()) {
          if (!StringRef(out).ends_with("\n\n") && !StringRef(out).rtrim().ends_with("{"))
            out += '\n';
        } else {
          out += indent + text + "\n";
        }
    }
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
