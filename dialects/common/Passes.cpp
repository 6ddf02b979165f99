//===- Passes.cpp - Rust passes in MLIR's pass registry, pipeline runs ----===//
//
// LLVM 22's C API cannot put an external pass into MLIR's registry, and its
// external passes take no options. A RustPass is an MLIR pass whose
// argument, description and body come from Rust (the `loom-passes` crate):
// registered by name, it appears in textual pipelines next to MLIR's own
// passes, and its `{key=value}` options reach the Rust side as text.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialects.h"

#include "mlir-c/IR.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"

#include <deque>

using namespace mlir;

/// The Rust body of a pass: returns false after reporting a failure.
typedef bool (*LoomPassRun)(MlirOperation op, MlirStringRef options, void *userData);

namespace {
/// Set when a Rust pass refused after reporting its own errors, so that the
/// failure needs no further line (as mlir-opt adds none to a pass's errors).
thread_local bool rustPassReported = false;

struct RustPassInfo {
  std::string argument, description;
  bool changesIR;
  LoomPassRun run;
  void *userData;
  char typeIdAnchor; // its address is the pass's TypeID
};

class RustPass : public Pass {
public:
  explicit RustPass(const RustPassInfo *info)
      : Pass(TypeID::getFromOpaquePointer(&info->typeIdAnchor)), info(info) {}
  RustPass(const RustPass &other) : Pass(other), info(other.info), options(other.options) {}

  StringRef getName() const override { return info->argument; }
  StringRef getArgument() const override { return info->argument; }
  StringRef getDescription() const override { return info->description; }
  LogicalResult initializeOptions(StringRef text,
                                  function_ref<LogicalResult(const Twine &)>) override {
    options = text.str();
    return success();
  }
  void runOnOperation() override {
    if (!info->run(wrap(getOperation()), wrap(StringRef(options)), info->userData)) {
      rustPassReported = true;
      signalPassFailure();
    }
    // An analysis leaves the module as it was: MLIR then keeps its analyses
    // and does not verify the module again.
    if (!info->changesIR)
      markAllAnalysesPreserved();
  }
  std::unique_ptr<Pass> clonePass() const override { return std::make_unique<RustPass>(*this); }
  bool canScheduleOn(RegisteredOperationName name) const override {
    return name.getStringRef() == ModuleOp::getOperationName();
  }

private:
  const RustPassInfo *info;
  std::string options;
};

/// Prints the module as Loom text after each selected pass.
class LoomIRPrinter : public PassInstrumentation {
public:
  LoomIRPrinter(std::string afterPass, bool all, bool onlyOnChange, MlirStringCallback callback,
                void *userData)
      : afterPass(std::move(afterPass)), all(all), onlyOnChange(onlyOnChange),
        callback(callback), userData(userData) {}

  void runBeforePass(Pass *pass, Operation *op) override {
    if (onlyOnChange && selected(pass))
      before.insert_or_assign(pass, OperationFingerPrint(op));
  }
  void runAfterPass(Pass *pass, Operation *op) override {
    if (!selected(pass))
      return;
    if (onlyOnChange) {
      auto it = before.find(pass);
      if (it != before.end() && it->second == OperationFingerPrint(op))
        return;
    }
    auto module = llvm::dyn_cast<ModuleOp>(op);
    if (!module)
      return;
    std::string text = ("// -----// IR Dump After " + pass->getName() + " (" +
                        pass->getArgument() + ") //----- //\n")
                           .str();
    llvm::raw_string_ostream os(text);
    loom::printLoomText(module, os);
    os.flush();
    callback(wrap(StringRef(text)), userData);
  }

private:
  bool selected(Pass *pass) const { return all || pass->getArgument() == afterPass; }
  std::string afterPass;
  bool all, onlyOnChange;
  MlirStringCallback callback;
  void *userData;
  llvm::DenseMap<Pass *, OperationFingerPrint> before;
};

std::deque<RustPassInfo> &rustPasses() {
  static std::deque<RustPassInfo> passes; // stable addresses
  return passes;
}
} // namespace

extern "C" {

/// Register a Rust pass under `argument`. Idempotent per argument.
void loomRegisterPass(MlirStringRef argument, MlirStringRef description, bool changesIR,
                      LoomPassRun run, void *userData) {
  if (PassInfo::lookup(unwrap(argument)))
    return;
  RustPassInfo &info = rustPasses().emplace_back();
  info.argument = unwrap(argument).str();
  info.description = unwrap(description).str();
  info.changesIR = changesIR;
  info.run = run;
  info.userData = userData;
  const RustPassInfo *stable = &info;
  registerPass([stable]() -> std::unique_ptr<Pass> { return std::make_unique<RustPass>(stable); });
}

/// MLIR's generic transformations: canonicalize, cse, symbol-dce, inline, ...
void loomRegisterUpstreamPasses() {
  static bool done = false;
  if (!done)
    registerTransformsPasses();
  done = true;
}

bool loomIsPassRegistered(MlirStringRef argument) {
  return PassInfo::lookup(unwrap(argument)) != nullptr;
}

/// `loom-opt --list-passes`: every registered pass with its description.
void loomListPasses() { printRegisteredPasses(); }

struct LoomPipelineOptions {
  bool verifyEach;
  bool printAfterAll;
  bool printAfterOnlyOnChange;
  bool timing;
  MlirStringRef printAfterPass; // empty: none
  MlirStringCallback print;     // IR dumps and timing reports
  void *printUserData;
};

namespace {
/// Names the pass behind a failure: MLIR's verifier reports what is invalid
/// but not which pass made it so, and an upstream pass may fail silently. A
/// Rust pass's refusal is its own report: the module it leaves half
/// rewritten is not the user's concern.
class FailedPassNamer : public PassInstrumentation {
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    if (rustPassReported) {
      rustPassReported = false;
      return;
    }
    bool invalid = false;
    {
      // Verify silently: the verifier's own errors have been reported.
      ScopedDiagnosticHandler quiet(op->getContext(), [](Diagnostic &) { return success(); });
      invalid = failed(verify(op));
    }
    InFlightDiagnostic error = emitError(op->getLoc());
    if (invalid)
      error << "pass '" << pass->getArgument() << "' produced invalid IR (errors above)";
    else
      error << "pass '" << pass->getArgument() << "' failed";
  }
};
} // namespace

/// Parse `pipeline` (e.g. `builtin.module(canonicalize,cse)`) and run it on
/// `module`. Failures are reported through the context's diagnostics,
/// followed by the name of the pass that failed or produced invalid IR.
MlirLogicalResult loomRunPipeline(MlirModule module, MlirStringRef pipeline,
                                  const LoomPipelineOptions *options) {
  ModuleOp op = unwrap(module);
  PassManager pm(op->getName());
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  FailureOr<OpPassManager> parsed = parsePassPipeline(unwrap(pipeline), errorStream);
  if (failed(parsed)) {
    errorStream.flush();
    emitError(UnknownLoc::get(op.getContext())) << "invalid pass pipeline: " << errors;
    return wrap(failure());
  }
  if (parsed->getOpAnchorName() != ModuleOp::getOperationName()) {
    emitError(UnknownLoc::get(op.getContext()))
        << "a pass pipeline runs on builtin.module: write `builtin.module(...)`, got `"
        << parsed->getOpAnchorName() << "`";
    return wrap(failure());
  }
  static_cast<OpPassManager &>(pm) = *parsed;
  pm.enableVerifier(options->verifyEach);
  pm.addInstrumentation(std::make_unique<FailedPassNamer>());
  if (options->printAfterAll || options->printAfterPass.length)
    pm.addInstrumentation(std::make_unique<LoomIRPrinter>(
        unwrap(options->printAfterPass).str(), options->printAfterAll,
        options->printAfterOnlyOnChange, options->print, options->printUserData));
  std::string timing;
  llvm::raw_string_ostream timingStream(timing);
  DefaultTimingManager timer;
  timer.setEnabled(options->timing);
  timer.setOutput(createOutputStrategy(DefaultTimingManager::OutputFormat::Text, timingStream));
  TimingScope root = timer.getRootScope();
  if (options->timing)
    pm.enableTiming(root);
  LogicalResult result = pm.run(op);
  root.stop();
  if (options->timing) {
    timer.print();
    timingStream.flush();
    options->print(wrap(StringRef(timing)), options->printUserData);
  }
  return wrap(result);
}

} // extern "C"
