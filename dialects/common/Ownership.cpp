//===- Ownership.cpp - channel ownership rules -----------------------------===//
//
// A forward analysis over a function or pipeline body. Each `write<..>` of a
// channel.reserve and `read<..>` of a channel.acquire is an obligation:
//  - it is consumed exactly once on every path (channel.publish for writes,
//    channel.release for reads, or passing it to a func.call, which moves it);
//  - its payload view is not used once it is consumed, nor is any value that
//    may alias it: a copy made with scf.select (or any op that makes a view
//    from views), a block argument or loop-carried value it is passed to, a
//    result it is yielded to, or a call's result the callee returns it as;
//  - a copy into a write's payload has completed (grouped, then waited for)
//    before the publish, and a copy out of a read's payload before the
//    release;
//  - it is consumed in the region that owns it: not inside a loop body or a
//    strand that may run zero or several times, and in both branches of an
//    scf.if or neither; it never travels through block arguments, yields or
//    loop-carried values.
// Structured regions are analysed as single-block scopes; multi-block (cfg)
// regions with a fixpoint over their blocks.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialects.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "mlir/IR/RegionGraphTraits.h"

#include <queue>

using namespace mlir;

namespace loom {
namespace {

enum class Held { Owned, Consumed };
struct ObligationState {
  Held held = Held::Owned;
  Operation *consumer = nullptr;
  bool operator==(const ObligationState &o) const { return held == o.held; }
};

enum class Progress { Pending = 0, Grouped = 1, Complete = 2 };
struct CopyState {
  Progress progress = Progress::Pending;
  unsigned group = 0;
  bool operator==(const CopyState &o) const { return progress == o.progress && group == o.group; }
};

struct State {
  llvm::MapVector<Value, ObligationState> obligations;
  llvm::MapVector<Value, CopyState> copies; // token -> progress
  llvm::DenseMap<Value, unsigned> groups;   // group -> commit sequence
  unsigned nextGroup = 1;

  bool operator==(const State &o) const {
    auto sameMap = [](const auto &a, const auto &b) {
      if (a.size() != b.size())
        return false;
      for (auto &[key, value] : a) {
        auto it = b.find(key);
        if (it == b.end() || !(it->second == value))
          return false;
      }
      return true;
    };
    return sameMap(obligations, o.obligations) && sameMap(copies, o.copies) &&
           sameMap(groups, o.groups);
  }
};

bool isObligation(Type type) { return llvm::isa<channel::ReadType, channel::WriteType>(type); }

std::string describe(Value value) {
  StringRef name = storedName(value);
  std::string kind = llvm::isa<channel::WriteType>(value.getType()) ? "write obligation"
                     : llvm::isa<channel::ReadType>(value.getType()) ? "read obligation"
                                                                      : "value";
  if (name.empty())
    return "the " + kind;
  return "the " + kind + " %" + name.str();
}

StringRef consumeVerb(Value obligation) {
  return llvm::isa<channel::WriteType>(obligation.getType()) ? "published" : "released";
}

/// The values a payload view may be a copy of: the obligations whose
/// payloads can flow into it.
using Owners = llvm::SmallSetVector<Value, 2>;
using AliasMap = llvm::DenseMap<Value, Owners>;

/// For each result of a function, the arguments it may return.
using ReturnSummary = SmallVector<SmallVector<unsigned>>;

/// Flow-insensitive may-alias sets of views in a body: seeded with each
/// reserve/acquire payload (owned by its obligation) and with `seeds`, then
/// widened until nothing changes along every way a view moves: ops that make
/// a view from views (scf.select), loop inits and yields into iter args and
/// results, scf.if yields into results, branch operands into block
/// arguments, and call arguments into the results their callee returns.
class Aliases {
public:
  explicit Aliases(Operation *symbolScope) : scope(symbolScope) {}
  void propagate(Region &body, AliasMap &sets);

private:
  const ReturnSummary &summary(func::DefOp callee);
  Operation *scope;
  llvm::DenseMap<Operation *, ReturnSummary> summaries;
  llvm::DenseSet<Operation *> inProgress;
};

bool isView(Value value) { return llvm::isa<view::ViewType>(value.getType()); }

bool add(AliasMap &sets, Value to, const Owners &from) {
  if (from.empty() || !isView(to))
    return false;
  Owners &into = sets[to];
  bool changed = false;
  for (Value owner : from)
    changed |= into.insert(owner);
  return changed;
}

void Aliases::propagate(Region &body, AliasMap &sets) {
  body.walk([&](Operation *op) {
    if (auto reserve = llvm::dyn_cast<channel::ReserveOp>(op))
      sets[reserve.getPayload()].insert(reserve.getObligation());
    else if (auto acquire = llvm::dyn_cast<channel::AcquireOp>(op))
      sets[acquire.getPayload()].insert(acquire.getObligation());
  });
  bool changed = true;
  auto flow = [&](Value to, Value from) {
    auto it = sets.find(from);
    if (it != sets.end()) {
      Owners owners = it->second; // `sets` may grow below
      changed |= add(sets, to, owners);
    }
  };
  while (changed) {
    changed = false;
    body.walk([&](Operation *op) {
      if (llvm::isa<channel::ReserveOp, channel::AcquireOp>(op))
        return;
      if (auto loop = llvm::dyn_cast<scf::ForOp>(op)) {
        Block &entry = loop.getRegion().front();
        for (auto [i, init] : llvm::enumerate(op->getOperands().drop_front(3))) {
          if (i + 1 < entry.getNumArguments())
            flow(entry.getArgument(i + 1), init);
          if (i < op->getNumResults())
            flow(op->getResult(i), init);
        }
        return;
      }
      if (auto yield = llvm::dyn_cast<scf::YieldOp>(op)) {
        Operation *parent = op->getParentOp();
        for (auto [i, value] : llvm::enumerate(op->getOperands())) {
          if (i < parent->getNumResults())
            flow(parent->getResult(i), value);
          if (llvm::isa<scf::ForOp>(parent)) {
            Block &entry = parent->getRegion(0).front();
            if (i + 1 < entry.getNumArguments())
              flow(entry.getArgument(i + 1), value);
          }
        }
        return;
      }
      if (auto branch = llvm::dyn_cast<BranchOpInterface>(op)) {
        for (unsigned s = 0; s < op->getNumSuccessors(); ++s) {
          OperandRange forwarded = branch.getSuccessorOperands(s).getForwardedOperands();
          Block *target = op->getSuccessor(s);
          for (auto [i, value] : llvm::enumerate(forwarded))
            if (i < target->getNumArguments())
              flow(target->getArgument(i), value);
        }
        return;
      }
      if (auto call = llvm::dyn_cast<func::CallOp>(op)) {
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::DefOp>(op, call.getCalleeAttr());
        OperandRange args = call.getArgs();
        for (unsigned r = 0; r < op->getNumResults(); ++r) {
          // Without a body to look into, a result may be any argument.
          if (!callee || callee.getBody().empty()) {
            for (Value arg : args)
              flow(op->getResult(r), arg);
            continue;
          }
          const ReturnSummary &returned = summary(callee);
          if (r < returned.size())
            for (unsigned a : returned[r])
              if (a < args.size())
                flow(op->getResult(r), args[a]);
        }
        return;
      }
      if (op->getNumRegions() != 0 || op->hasTrait<OpTrait::IsTerminator>())
        return;
      // Any other op that makes a view from views may hand on an alias.
      for (Value result : op->getResults())
        for (Value operand : op->getOperands())
          flow(result, operand);
    });
  }
}

const ReturnSummary &Aliases::summary(func::DefOp callee) {
  Operation *key = callee.getOperation();
  auto found = summaries.find(key);
  if (found != summaries.end())
    return found->second;
  Block &entry = callee.getBody().front();
  unsigned results = callee.getFunctionType().getNumResults();
  ReturnSummary returned(results);
  if (!inProgress.insert(key).second) {
    // Recursion: any result may be any argument.
    for (auto &result : returned)
      for (unsigned a = 0; a < entry.getNumArguments(); ++a)
        result.push_back(a);
    return summaries[key] = returned;
  }
  AliasMap sets;
  for (BlockArgument arg : entry.getArguments())
    if (isView(arg))
      sets[arg].insert(arg);
  propagate(callee.getBody(), sets);
  callee.walk([&](func::ReturnOp ret) {
    for (auto [r, value] : llvm::enumerate(ret.getOperands())) {
      auto it = sets.find(value);
      if (r >= returned.size() || it == sets.end())
        continue;
      for (Value owner : it->second)
        if (auto arg = llvm::dyn_cast<BlockArgument>(owner);
            arg && arg.getOwner() == &entry && !llvm::is_contained(returned[r], arg.getArgNumber()))
          returned[r].push_back(arg.getArgNumber());
    }
  });
  inProgress.erase(key);
  return summaries[key] = returned;
}

class Checker {
public:
  LogicalResult function(Region &body);

private:
  LogicalResult region(Region &region, State &state, Operation *scope);
  LogicalResult block(Block &block, State &state);
  LogicalResult op(Operation *op, State &state);
  LogicalResult nested(Operation *op, State &state);
  LogicalResult useOperands(Operation *op, State &state);
  void consume(Operation *op, Value obligation, State &state);
  LogicalResult copiesComplete(Operation *op, Value obligation, State &state);
  LogicalResult leaks(const State &state, const State &outer, Operation *at, StringRef where);
  LogicalResult join(State &into, const State &from, Block *at, bool &changed);
  InFlightDiagnostic noteDefinition(InFlightDiagnostic diag, Value obligation);

  AliasMap payloadOwners; // view -> the obligations whose payload it may be
  llvm::DenseMap<Value, kernel::AsyncCopyOp> copyOf;
};

InFlightDiagnostic Checker::noteDefinition(InFlightDiagnostic diag, Value obligation) {
  if (Operation *def = obligation.getDefiningOp())
    diag.attachNote(def->getLoc()) << "the obligation was created here";
  else
    diag.attachNote(obligation.getLoc()) << "the obligation arrives as this argument";
  return diag;
}

/// Whether `view` is the payload result of the op that created `obligation`.
bool isPayloadOf(Value view, Value obligation) {
  Operation *def = obligation.getDefiningOp();
  return def && llvm::isa<channel::ReserveOp, channel::AcquireOp>(def) &&
         def->getResult(1) == view;
}

LogicalResult Checker::useOperands(Operation *op, State &state) {
  for (Value operand : op->getOperands()) {
    SmallVector<Value, 2> candidates;
    bool payload = false;
    if (isObligation(operand.getType())) {
      candidates.push_back(operand);
    } else {
      auto owners = payloadOwners.find(operand);
      if (owners == payloadOwners.end())
        continue;
      candidates.append(owners->second.begin(), owners->second.end());
      payload = true;
    }
    for (Value obligation : candidates) {
      auto it = state.obligations.find(obligation);
      if (it == state.obligations.end() || it->second.held != Held::Consumed)
        continue;
      Operation *consumer = it->second.consumer;
      StringRef verb = llvm::isa<func::CallOp>(consumer) ? "moved into a call"
                                                         : consumeVerb(obligation);
      InFlightDiagnostic diag = op->emitOpError("uses ");
      if (!payload) {
        diag << describe(obligation) << ", which was already " << verb;
      } else if (isPayloadOf(operand, obligation)) {
        diag << "the payload view of " << describe(obligation) << " after its record was "
             << verb;
      } else {
        StringRef name = storedName(operand);
        diag << (name.empty() ? std::string("a view") : "%" + name.str())
             << ", which may alias the payload view of " << describe(obligation)
             << ", after its record was " << verb;
      }
      diag.attachNote(consumer->getLoc()) << "it was " << verb << " here";
      return noteDefinition(std::move(diag), obligation);
    }
  }
  return success();
}

LogicalResult Checker::copiesComplete(Operation *at, Value obligation, State &state) {
  bool write = llvm::isa<channel::WriteType>(obligation.getType());
  for (auto &[token, copy] : state.copies) {
    if (copy.progress == Progress::Complete)
      continue;
    kernel::AsyncCopyOp op = copyOf.lookup(token);
    Value view = write ? op.getDestination() : op.getSource();
    auto owners = payloadOwners.find(view);
    if (owners == payloadOwners.end() || !owners->second.contains(obligation))
      continue;
    InFlightDiagnostic diag =
        at->emitOpError(write ? "publishes " : "releases ")
        << describe(obligation) << " before the copy " << (write ? "into" : "out of")
        << " its record has completed; "
        << (copy.progress == Progress::Pending
                ? "the copy's token is not in any kernel.async.group"
                : "no kernel.async.wait on its group precedes this point");
    diag.attachNote(op.getLoc()) << "the copy starts here";
    return noteDefinition(std::move(diag), obligation);
  }
  return success();
}

void Checker::consume(Operation *op, Value obligation, State &state) {
  ObligationState &entry = state.obligations[obligation];
  entry.held = Held::Consumed;
  entry.consumer = op;
}

LogicalResult Checker::op(Operation *op, State &state) {
  if (failed(useOperands(op, state)))
    return failure();
  if (op->getNumRegions() != 0)
    return nested(op, state);

  if (auto reserve = llvm::dyn_cast<channel::ReserveOp>(op)) {
    state.obligations[reserve.getObligation()] = {};
  } else if (auto acquire = llvm::dyn_cast<channel::AcquireOp>(op)) {
    state.obligations[acquire.getObligation()] = {};
  } else if (auto publish = llvm::dyn_cast<channel::PublishOp>(op)) {
    if (failed(copiesComplete(op, publish.getObligation(), state)))
      return failure();
    consume(op, publish.getObligation(), state);
  } else if (auto release = llvm::dyn_cast<channel::ReleaseOp>(op)) {
    if (failed(copiesComplete(op, release.getObligation(), state)))
      return failure();
    consume(op, release.getObligation(), state);
  } else if (auto call = llvm::dyn_cast<func::CallOp>(op)) {
    // Passing an obligation to a function moves it there.
    for (Value arg : call.getArgs())
      if (isObligation(arg.getType()))
        consume(op, arg, state);
  } else if (auto copy = llvm::dyn_cast<kernel::AsyncCopyOp>(op)) {
    state.copies[copy.getToken()] = {};
    copyOf[copy.getToken()] = copy;
  } else if (auto group = llvm::dyn_cast<kernel::AsyncGroupOp>(op)) {
    unsigned sequence = state.nextGroup++;
    for (Value token : group.getTokens()) {
      CopyState &copy = state.copies[token];
      if (copy.progress == Progress::Pending)
        copy = {Progress::Grouped, sequence};
    }
    state.groups[group.getGroup()] = sequence;
  } else if (auto wait = llvm::dyn_cast<kernel::AsyncWaitOp>(op)) {
    // Waiting for a group completes it and every group committed before it.
    unsigned sequence = state.groups.lookup(wait.getGroup());
    for (auto &entry : state.copies)
      if (entry.second.progress == Progress::Grouped && entry.second.group <= sequence)
        entry.second.progress = Progress::Complete;
  } else if (llvm::isa<func::ReturnOp>(op)) {
    if (failed(leaks(state, State{}, op, "this return")))
      return failure();
  }
  if (op->hasTrait<OpTrait::IsTerminator>()) {
    for (Value operand : op->getOperands())
      if (isObligation(operand.getType()))
        return noteDefinition(op->emitOpError("passes ")
                                  << describe(operand)
                                  << " to another block or region; obligations must be "
                                     "consumed in the region that owns them",
                              operand);
  }
  return success();
}

LogicalResult Checker::leaks(const State &state, const State &outer, Operation *at,
                             StringRef where) {
  for (auto &[obligation, entry] : state.obligations) {
    if (entry.held != Held::Owned || outer.obligations.count(obligation))
      continue;
    InFlightDiagnostic diag = at->emitOpError("reaches ")
                              << where << " while " << describe(obligation) << " is still owned: "
                              << "it must be " << consumeVerb(obligation)
                              << " on every path";
    return noteDefinition(std::move(diag), obligation);
  }
  return success();
}

LogicalResult Checker::nested(Operation *op, State &state) {
  bool repeats = llvm::isa<scf::ForOp, pipeline::StrandOp>(op);
  SmallVector<State> exits;
  SmallVector<llvm::SmallDenseSet<Value>> consumedOuter;
  for (Region &region : op->getRegions()) {
    if (region.empty()) {
      exits.push_back(state);
      consumedOuter.emplace_back();
      continue;
    }
    State inner = state;
    if (failed(this->region(region, inner, op)))
      return failure();
    llvm::SmallDenseSet<Value> consumed;
    for (auto &[obligation, entry] : state.obligations) {
      if (entry.held != Held::Owned || inner.obligations.lookup(obligation).held != Held::Consumed)
        continue;
      if (repeats) {
        InFlightDiagnostic diag =
            inner.obligations.lookup(obligation).consumer->emitOpError()
            << "consumes " << describe(obligation) << " inside " << op->getName()
            << ", whose body may run zero or several times; consume it where it was created";
        return noteDefinition(std::move(diag), obligation);
      }
      consumed.insert(obligation);
    }
    consumedOuter.push_back(std::move(consumed));
    exits.push_back(std::move(inner));
  }
  if (llvm::isa<scf::IfOp>(op)) {
    // An empty else region was recorded above as a path that consumes nothing.
    for (Value obligation : consumedOuter[0])
      if (!consumedOuter[1].contains(obligation))
        return noteDefinition(op->emitOpError("consumes ")
                                  << describe(obligation)
                                  << " in its then branch but not in its else branch",
                              obligation);
    for (Value obligation : consumedOuter[1])
      if (!consumedOuter[0].contains(obligation))
        return noteDefinition(op->emitOpError("consumes ")
                                  << describe(obligation)
                                  << " in its else branch but not in its then branch",
                              obligation);
  }
  // After the op: outer obligations as the branches left them; copies at
  // the least progress any path guarantees (a loop body may not run).
  State after = state;
  for (const State &exit : exits) {
    for (auto &[obligation, entry] : exit.obligations)
      if (after.obligations.count(obligation) && entry.held == Held::Consumed)
        after.obligations[obligation] = entry;
    for (auto &[token, copy] : exit.copies) {
      auto it = after.copies.find(token);
      // A copy started inside the region exists afterwards only if the
      // region ran; then it is as the region left it.
      if (it == after.copies.end())
        after.copies[token] = copy;
      else if (copy.progress < it->second.progress)
        it->second = copy;
    }
    for (auto &[group, sequence] : exit.groups)
      after.groups[group] = std::max(after.groups.lookup(group), sequence);
    after.nextGroup = std::max(after.nextGroup, exit.nextGroup);
  }
  state = std::move(after);
  return success();
}

LogicalResult Checker::block(Block &block, State &state) {
  for (Operation &nestedOp : block)
    if (failed(op(&nestedOp, state)))
      return failure();
  return success();
}

/// Group sequences only order groups against each other. Renumbering them
/// densely keeps that order and keeps a loop's states finite: otherwise each
/// trip round a back edge commits a fresh, larger sequence and the fixpoint
/// never settles.
void renumberGroups(State &state) {
  std::vector<unsigned> used;
  for (auto &entry : state.groups)
    used.push_back(entry.second);
  for (auto &entry : state.copies)
    if (entry.second.progress != Progress::Pending)
      used.push_back(entry.second.group);
  llvm::sort(used);
  used.erase(std::unique(used.begin(), used.end()), used.end());
  auto rank = [&](unsigned sequence) {
    return static_cast<unsigned>(llvm::lower_bound(used, sequence) - used.begin()) + 1;
  };
  for (auto &entry : state.groups)
    entry.second = rank(entry.second);
  for (auto &entry : state.copies)
    if (entry.second.progress != Progress::Pending)
      entry.second.group = rank(entry.second.group);
  state.nextGroup = static_cast<unsigned>(used.size()) + 1;
}

LogicalResult Checker::join(State &into, const State &from, Block *at, bool &changed) {
  State merged = into;
  for (auto &[obligation, entry] : into.obligations) {
    auto other = from.obligations.find(obligation);
    if (other == from.obligations.end())
      continue;
    if (other->second.held != entry.held) {
      Operation *consumer = entry.consumer ? entry.consumer : other->second.consumer;
      InFlightDiagnostic diag = emitError(at->front().getLoc())
                                << describe(obligation) << " is " << consumeVerb(obligation)
                                << " on some paths reaching this block but not on others";
      diag.attachNote(consumer->getLoc()) << "a path " << (consumeVerb(obligation))
                                           << " it here";
      return noteDefinition(std::move(diag), obligation);
    }
  }
  // An obligation only one path knows is out of scope here: it must be done.
  auto outOfScope = [&](const State &a, const State &b) -> LogicalResult {
    for (auto &[obligation, entry] : a.obligations)
      if (!b.obligations.count(obligation) && entry.held == Held::Owned)
        return noteDefinition(emitError(at->front().getLoc())
                                  << "a path reaches this block while " << describe(obligation)
                                  << " is still owned and can no longer be "
                                  << consumeVerb(obligation),
                              obligation);
    return success();
  };
  if (failed(outOfScope(into, from)) || failed(outOfScope(from, into)))
    return failure();
  merged.obligations.remove_if([&](const auto &entry) { return !from.obligations.count(entry.first); });
  for (auto &[token, copy] : from.copies) {
    auto it = merged.copies.find(token);
    if (it == merged.copies.end())
      continue;
    if (copy.progress < it->second.progress)
      it->second = copy;
    else if (copy.progress == it->second.progress)
      it->second.group = std::max(it->second.group, copy.group);
  }
  // A copy started on one path only may be in flight after the join.
  for (auto &[token, copy] : from.copies)
    if (!merged.copies.count(token))
      merged.copies[token] = copy;
  for (auto &[group, sequence] : from.groups)
    merged.groups[group] = std::max(merged.groups.lookup(group), sequence);
  merged.nextGroup = std::max(merged.nextGroup, from.nextGroup);
  renumberGroups(merged);
  changed = !(merged == into);
  into = std::move(merged);
  return success();
}

LogicalResult Checker::region(Region &region, State &state, Operation *scope) {
  State outer = state;
  for (Block &b : region)
    for (BlockArgument arg : b.getArguments())
      if (isObligation(arg.getType())) {
        if (b.isEntryBlock() && llvm::isa<func::DefOp>(scope)) {
          state.obligations[arg] = {};
          continue;
        }
        if (b.isEntryBlock() && llvm::isa<pipeline::DefOp>(scope))
          return emitError(arg.getLoc())
                 << "a pipeline cannot take obligations as arguments; pass channels";
        return emitError(arg.getLoc())
               << "obligations cannot be block arguments or loop-carried values; consume "
                  "them in the region that owns them";
      }
  if (region.hasOneBlock()) {
    if (failed(block(region.front(), state)))
      return failure();
    if (llvm::isa<func::DefOp>(scope))
      return success(); // func.return checks what is still owned
    return leaks(state, outer, scope, "the end of its body");
  }
  // A control-flow graph: iterate block entry states to a fixpoint, taking
  // blocks in reverse post-order so that joins see all forward paths first.
  llvm::DenseMap<Block *, unsigned> order;
  for (Block *b : llvm::ReversePostOrderTraversal<Block *>(&region.front()))
    order[b] = order.size();
  auto later = [&](Block *a, Block *b) { return order.lookup(a) > order.lookup(b); };
  llvm::DenseMap<Block *, State> entry;
  entry[&region.front()] = state;
  std::priority_queue<Block *, std::vector<Block *>, decltype(later)> worklist(later);
  worklist.push(&region.front());
  unsigned budget = 64 * static_cast<unsigned>(region.getBlocks().size()) + 64;
  while (!worklist.empty()) {
    if (budget-- == 0)
      return scope->emitOpError("ownership analysis did not converge");
    Block *current = worklist.top();
    worklist.pop();
    State s = entry[current];
    if (failed(block(*current, s)))
      return failure();
    for (Block *successor : current->getSuccessors()) {
      auto it = entry.find(successor);
      if (it == entry.end()) {
        entry[successor] = s;
        worklist.push(successor);
        continue;
      }
      bool changed = false;
      if (failed(join(it->second, s, successor, changed)))
        return failure();
      if (changed)
        worklist.push(successor);
    }
  }
  return success();
}

LogicalResult Checker::function(Region &body) {
  Aliases(body.getParentOp()).propagate(body, payloadOwners);
  State state;
  return region(body, state, body.getParentOp());
}

} // namespace

LogicalResult verifyOwnership(Region &body) { return Checker().function(body); }

} // namespace loom
