//===- Names.cpp - source names of values, and how Loom prints names ------===//
//
// MLIR's parser drops SSA names. Loom keeps them in locations: a result's
// name is a NameLoc around its op's location (for multi-result ops, a
// FusedLoc whose metadata is ["loom.results", name...]), a block argument's
// name is a NameLoc around its own location. Locations survive
// bytecode and generic MLIR, so names do too.
//
// Printing: every value gets an ordinal in module order (op results, then
// the block arguments and ops of its regions). A value prints as its name,
// as `name$ordinal` when a value it can see (or that can see it) has the
// same name, and as `%ordinal` when it has no name. Blocks print as `^_bbN`,
// N being the block's position in its region.
//
//===----------------------------------------------------------------------===//

#include "loom/Comments.h"
#include "loom/Dialects.h"

#include "mlir/IR/AsmState.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace loom {

static constexpr llvm::StringLiteral kResultsTag = "loom.results";
// MLIR's printer prefixes names starting with a digit with `_`; ordinals are
// printed under a marker that no source name starts with, and the marker is
// removed from the final text.
static constexpr llvm::StringLiteral kOrdinalMarker = "__loom_ordinal_";

static bool isIdChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.' || c == '-';
}

/// A source spelling of an SSA name, reduced to what Loom stores: numbered
/// names are unnamed, and a `$N` disambiguator is the printer's, not the name.
static StringRef baseName(StringRef spelling) {
  if (spelling.empty() || llvm::all_of(spelling, llvm::isDigit))
    return "";
  size_t dollar = spelling.rfind('$');
  if (dollar != StringRef::npos && dollar > 0 && dollar + 1 < spelling.size() &&
      llvm::all_of(spelling.drop_front(dollar + 1), llvm::isDigit))
    return spelling.take_front(dollar);
  return spelling;
}

static const char *pointerAt(llvm::SourceMgr &sources, Location loc) {
  auto fileLoc = llvm::dyn_cast<FileLineColLoc>(loc);
  if (!fileLoc)
    return nullptr;
  unsigned id = sources.getMainFileID();
  const llvm::MemoryBuffer *buffer = sources.getMemoryBuffer(id);
  if (fileLoc.getFilename() != buffer->getBufferIdentifier())
    return nullptr;
  SMLoc smloc = sources.FindLocForLineAndColumn(id, fileLoc.getLine(), fileLoc.getColumn());
  return smloc.getPointer();
}

/// The `%a, %b =` list in front of an op name at `opName` (possibly on
/// earlier lines). A group `%p:2` names each of its results `p`.
static SmallVector<StringRef> resultNamesBefore(const char *bufferStart, const char *opName) {
  const char *at = opName;
  auto skipSpace = [&]() {
    while (at > bufferStart && llvm::isSpace(at[-1]))
      --at;
  };
  skipSpace();
  SmallVector<StringRef> reversed;
  if (at == bufferStart || at[-1] != '=')
    return {};
  --at;
  for (;;) {
    skipSpace();
    // An optional `:N` group count, then the name itself.
    const char *end = at;
    while (at > bufferStart && llvm::isDigit(at[-1]))
      --at;
    unsigned repeat = 1;
    if (at > bufferStart && at[-1] == ':' && at != end) {
      StringRef(at, end - at).getAsInteger(10, repeat);
      end = --at;
    } else {
      at = end;
    }
    while (at > bufferStart && isIdChar(at[-1]))
      --at;
    if (at == bufferStart || at[-1] != '%' || at == end)
      return {};
    for (unsigned i = 0; i < repeat; ++i)
      reversed.push_back(StringRef(at, end - at));
    --at;
    skipSpace();
    if (at == bufferStart || at[-1] != ',')
      break;
    --at;
  }
  return SmallVector<StringRef>(llvm::reverse(reversed));
}

static StringRef nameAt(const char *text, const char *end) {
  if (text >= end || *text != '%')
    return "";
  const char *start = ++text;
  while (text < end && isIdChar(*text))
    ++text;
  return StringRef(start, text - start);
}

void attachSourceNames(ModuleOp module, llvm::SourceMgr &sources) {
  MLIRContext *ctx = module.getContext();
  const llvm::MemoryBuffer *buffer = sources.getMemoryBuffer(sources.getMainFileID());
  const char *begin = buffer->getBufferStart(), *end = buffer->getBufferEnd();

  module.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (const char *at = pointerAt(sources, arg.getLoc())) {
            StringRef name = baseName(nameAt(at, end));
            if (!name.empty())
              arg.setLoc(NameLoc::get(StringAttr::get(ctx, name), arg.getLoc()));
          }
    if (op->getNumResults() == 0)
      return;
    const char *at = pointerAt(sources, op->getLoc());
    if (!at)
      return;
    SmallVector<StringRef> names = resultNamesBefore(begin, at);
    if (names.size() != op->getNumResults())
      return;
    Location loc = op->getLoc();
    if (names.size() == 1) {
      StringRef name = baseName(names.front());
      if (!name.empty())
        op->setLoc(NameLoc::get(StringAttr::get(ctx, name), loc));
      return;
    }
    // One name per result in the metadata (locations would be uniqued, and
    // `%p:2` gives two results the same name).
    SmallVector<Attribute> tagged{StringAttr::get(ctx, kResultsTag)};
    for (StringRef name : names)
      tagged.push_back(StringAttr::get(ctx, baseName(name)));
    op->setLoc(FusedLoc::get(ctx, {loc}, ArrayAttr::get(ctx, tagged)));
  });
}

static constexpr llvm::StringLiteral kWorkersTag = "loom.workers";

void attachClauseLocations(ModuleOp module, llvm::SourceMgr &sources) {
  MLIRContext *ctx = module.getContext();
  unsigned id = sources.getMainFileID();
  const llvm::MemoryBuffer *buffer = sources.getMemoryBuffer(id);
  const char *end = buffer->getBufferEnd();
  module.walk([&](pipeline::StrandOp strand) {
    const char *at = pointerAt(sources, strand->getLoc());
    if (!at)
      return;
    // `pipeline.strand`, spaces, then the clause.
    while (at < end && (isIdChar(*at) || *at == '.'))
      ++at;
    while (at < end && llvm::isSpace(*at))
      ++at;
    if (!StringRef(at, end - at).starts_with("workers"))
      return;
    auto [line, column] = sources.getLineAndColumn(SMLoc::getFromPointer(at), id);
    Location clause = FileLineColLoc::get(ctx, buffer->getBufferIdentifier(), line, column);
    strand->setLoc(
        FusedLoc::get(ctx, {strand->getLoc(), clause}, StringAttr::get(ctx, kWorkersTag)));
  });
}

/// MLIR's inliner wraps an inlined op's location as callee-at-caller; the
/// name is the callee's.
static Location calleeLocation(Location loc) {
  while (auto site = llvm::dyn_cast<CallSiteLoc>(loc))
    loc = site.getCallee();
  return loc;
}

StringRef storedName(Value value) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(value)) {
    if (auto name = llvm::dyn_cast<NameLoc>(calleeLocation(arg.getLoc())))
      return name.getName().getValue();
    return "";
  }
  auto result = llvm::cast<OpResult>(value);
  Location loc = calleeLocation(withoutComments(calleeLocation(result.getOwner()->getLoc())));
  if (auto name = llvm::dyn_cast<NameLoc>(loc))
    return result.getOwner()->getNumResults() == 1 ? name.getName().getValue() : "";
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc)) {
    auto tagged = llvm::dyn_cast_if_present<ArrayAttr>(fused.getMetadata());
    if (tagged && tagged.size() == result.getOwner()->getNumResults() + 1) {
      auto tag = llvm::dyn_cast<StringAttr>(tagged[0]);
      auto name = llvm::dyn_cast<StringAttr>(tagged[result.getResultNumber() + 1]);
      if (tag && tag.getValue() == kResultsTag && name)
        return name.getValue();
    }
  }
  return "";
}

namespace {
/// The names chosen for one printing of a module.
struct DisplayNames {
  llvm::DenseMap<Value, std::string> names;
  std::string marker; // printed in front of ordinals, removed afterwards
};
// Set while printLoomText runs; the naming hooks of the ops read it.
thread_local const DisplayNames *activeNames = nullptr;

void collectValues(Operation *op, SmallVectorImpl<Value> &values) {
  for (Value result : op->getResults())
    values.push_back(result);
  for (Region &region : op->getRegions())
    for (Block &block : region) {
      for (BlockArgument arg : block.getArguments())
        values.push_back(arg);
      for (Operation &nested : block)
        collectValues(&nested, values);
    }
}
} // namespace

/// Values defined directly in `region`: its block arguments and the results
/// of the ops of its blocks.
static void definedIn(Region &region, SmallVectorImpl<Value> &values) {
  for (Block &block : region) {
    for (BlockArgument arg : block.getArguments())
      values.push_back(arg);
    for (Operation &op : block)
      for (Value result : op.getResults())
        values.push_back(result);
  }
}

/// Names defined in `region` and every region nested in it, with counts.
static void countSubtree(Region &region, llvm::StringMap<unsigned> &counts) {
  SmallVector<Value> values;
  definedIn(region, values);
  for (Value value : values)
    if (StringRef name = storedName(value); !name.empty())
      ++counts[name];
  for (Block &block : region)
    for (Operation &op : block)
      for (Region &nested : op.getRegions())
        countSubtree(nested, counts);
}

/// Mark the values of `region` (and nested regions) whose name is also used
/// by a value they can see or that can see them: in the same region, an
/// enclosing one, or a nested one. Sibling regions may share names.
static void markConflicts(Region &region, const llvm::StringMap<unsigned> &enclosing,
                          llvm::DenseSet<Value> &conflicting) {
  llvm::StringMap<unsigned> subtree;
  countSubtree(region, subtree);
  SmallVector<Value> values;
  definedIn(region, values);
  llvm::StringMap<unsigned> here;
  for (Value value : values)
    if (StringRef name = storedName(value); !name.empty())
      ++here[name];
  for (Value value : values) {
    StringRef name = storedName(value);
    if (name.empty())
      continue;
    // subtree counts this region and everything below it.
    if (enclosing.count(name) || subtree.lookup(name) > 1)
      conflicting.insert(value);
  }
  llvm::StringMap<unsigned> visible = enclosing;
  for (auto &entry : here)
    visible[entry.getKey()] += entry.getValue();
  for (Block &block : region)
    for (Operation &op : block)
      for (Region &nested : op.getRegions()) {
        // Names of a nested value that an enclosing value also uses.
        markConflicts(nested, visible, conflicting);
      }
}

static DisplayNames computeDisplayNames(ModuleOp module) {
  DisplayNames display;
  SmallVector<StringRef> stored;
  module.walk([&](Operation *op) {
    for (Value result : op->getResults())
      stored.push_back(storedName(result));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          stored.push_back(storedName(arg));
  });
  display.marker = kOrdinalMarker.str();
  while (llvm::any_of(stored, [&](StringRef name) { return name.starts_with(display.marker); }))
    display.marker += "x_";
  llvm::DenseSet<Value> conflicting;
  for (Operation &top : module.getBody()->getOperations())
    for (Region &region : top.getRegions())
      markConflicts(region, {}, conflicting);
  unsigned ordinal = 0;
  for (Operation &top : module.getBody()->getOperations()) {
    SmallVector<Value> values;
    collectValues(&top, values);
    for (Value value : values) {
      StringRef name = storedName(value);
      std::string shown;
      if (name.empty())
        shown = display.marker + std::to_string(ordinal);
      else if (conflicting.contains(value))
        shown = (name + "$" + Twine(ordinal)).str();
      else
        shown = name.str();
      display.names[value] = std::move(shown);
      ++ordinal;
    }
  }
  return display;
}

static void nameValue(Value value, OpAsmSetValueNameFn setName) {
  if (activeNames) {
    auto it = activeNames->names.find(value);
    if (it != activeNames->names.end()) {
      setName(value, it->second);
      return;
    }
  }
  if (StringRef name = storedName(value); !name.empty())
    setName(value, name);
}

void nameResults(Operation *op, OpAsmSetValueNameFn setName) {
  for (Value result : op->getResults())
    nameValue(result, setName);
}

void nameBlockArguments(Region &region, OpAsmSetValueNameFn setName) {
  for (Block &block : region)
    for (BlockArgument arg : block.getArguments())
      nameValue(arg, setName);
}

void nameBlocks(Operation *op, OpAsmSetBlockNameFn setName) {
  for (Region &region : op->getRegions()) {
    unsigned index = 0;
    for (Block &block : region)
      setName(&block, ("_bb" + Twine(index++)).str());
  }
}

void printLoomText(ModuleOp module, llvm::raw_ostream &os) {
  DisplayNames display = computeDisplayNames(module);
  std::string text;
  AsmState::LocationMap where;
  {
    llvm::raw_string_ostream out(text);
    activeNames = &display;
    OpPrintingFlags flags;
    flags.assumeVerified();
    AsmState state(module, flags, &where);
    // Op lines are counted per printed top-level op; shift them to the file.
    llvm::DenseMap<Operation *, unsigned> firstLine;
    unsigned line = 1;
    bool first = true;
    for (Operation &op : module.getBody()->getOperations()) {
      if (!first) {
        out << "\n";
        ++line;
      }
      first = false;
      firstLine[&op] = line;
      std::string piece;
      llvm::raw_string_ostream pieceStream(piece);
      op.print(pieceStream, state);
      out << piece << "\n";
      line += llvm::count(piece, '\n') + 1;
    }
    activeNames = nullptr;
    for (auto &[op, position] : where) {
      Operation *top = op;
      if (!module->isProperAncestor(top))
        continue;
      while (top->getParentOp() != module.getOperation())
        top = top->getParentOp();
      position.first += firstLine[top] - 1;
    }
  }
  // Strands stand apart from the construction code around them.
  llvm::DenseSet<Operation *> blankBefore;
  module.walk([&](pipeline::StrandOp strand) { blankBefore.insert(strand); });
  text = layoutText(module, text, where, blankBefore);
  // Drop the ordinal marker: `%__loom_ordinal_43` prints as `%43`.
  StringRef rest = text;
  std::string marker = "%" + display.marker;
  while (!rest.empty()) {
    size_t at = rest.find(marker);
    os << rest.take_front(at);
    if (at == StringRef::npos)
      break;
    os << '%';
    rest = rest.drop_front(at + marker.size());
  }
}

} // namespace loom
