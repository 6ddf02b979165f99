//===- Api.cpp - the C interface the Rust side calls ----------------------===//
//
// Registration of every Loom dialect, and a session that parses Loom text,
// bytecode or generic MLIR with MLIR-style diagnostics (file:line:col with
// the source line and a caret), keeping the sources alive for later
// diagnostics.
//
//===----------------------------------------------------------------------===//

#include "loom/Comments.h"
#include "loom/Dialects.h"

#include "mlir-c/IR.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;

// One C API dialect handle per Loom dialect (`mlirGetDialectHandle__loom_<name>__`;
// the `loom_` keeps them apart from upstream MLIR's handles of the same names).
extern "C" {
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LoomBuffer, loom_buffer, loom::buffer::BufferDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LoomPipeline, loom_pipeline, loom::pipeline::PipelineDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LoomView, loom_view, loom::view::ViewDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LoomChannel, loom_channel, loom::channel::ChannelDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LoomKernel, loom_kernel, loom::kernel::KernelDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LoomAie2p, loom_aie2p, loom::aie2p::Aie2pDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LoomFunc, loom_func, loom::func::FuncDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LoomScf, loom_scf, loom::scf::ScfDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LoomCfg, loom_cfg, loom::cfg::CfgDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LoomIndex, loom_index, loom::index::IndexDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LoomScalar, loom_scalar, loom::scalar::ScalarDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LoomVector, loom_vector, loom::vector::VectorDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LoomConfig, loom_config, loom::config::ConfigDialect)
/// The source name a value carries (empty when it has none), for passes that
/// move a value's name to the value replacing it.
MlirStringRef loomValueName(MlirValue value) { return wrap(loom::storedName(unwrap(value))); }

/// The values holding the dynamic dimensions of `value`'s type, in order.
/// Returns how many there are (writing at most `capacity` of them to `dims`),
/// or -1 when they cannot be traced to values.
intptr_t loomValueDims(MlirValue value, MlirValue *dims, intptr_t capacity) {
  std::optional<llvm::SmallVector<Value>> found = loom::dimsOf(unwrap(value));
  if (!found)
    return -1;
  for (auto [index, dim] : llvm::enumerate(*found))
    if (static_cast<intptr_t>(index) < capacity)
      dims[index] = wrap(dim);
  return static_cast<intptr_t>(found->size());
}

/// Whether an op has no memory effects and can be moved or removed freely
/// (what CSE and dead-code removal may assume).
bool loomOperationIsPure(MlirOperation op) { return mlir::isPure(unwrap(op)); }

/// An error at `location` with `count` notes, each at its own location (the
/// C API emits errors only without notes).
void loomEmitErrorWithNotes(MlirLocation location, MlirStringRef message, intptr_t count,
                            const MlirLocation *noteLocations, const MlirStringRef *notes) {
  InFlightDiagnostic diagnostic = emitError(unwrap(location), unwrap(message));
  for (intptr_t i = 0; i < count; ++i)
    diagnostic.attachNote(unwrap(noteLocations[i])) << unwrap(notes[i]);
}

} // extern "C"

namespace {
struct Session {
  explicit Session(MLIRContext *ctx)
      : diagnostics(), stream(diagnostics), handler(sources, ctx, stream) {}
  llvm::SourceMgr sources;
  std::string diagnostics;
  llvm::raw_string_ostream stream;
  SourceMgrDiagnosticHandler handler;
};
} // namespace

extern "C" {

void *loomSessionCreate(MlirContext ctx) {
  // Diagnostics point at the source line; a dump of the op in generic form
  // after each one would only repeat it less readably.
  unwrap(ctx)->printOpOnDiagnostic(false);
  return new Session(unwrap(ctx));
}

void loomSessionDestroy(void *session) { delete static_cast<Session *>(session); }

/// Everything diagnosed since the last call, as MLIR prints it.
void loomSessionTakeDiagnostics(void *opaque, MlirStringCallback callback, void *userData) {
  auto *session = static_cast<Session *>(opaque);
  session->stream.flush();
  callback(wrap(StringRef(session->diagnostics)), userData);
  session->diagnostics.clear();
}

/// Parse `name`'s contents (text, generic MLIR or bytecode: MLIR detects
/// bytecode by its magic number). With `loomNames`, SSA names are read back
/// from the text. Returns a null module after reporting an error.
/// `display`, when not empty, is the text diagnostics quote: the user's
/// input, of which `contents` is a same-shaped rewrite.
MlirModule loomSessionParse(void *opaque, MlirContext ctx, MlirStringRef contents,
                            MlirStringRef display, MlirStringRef name, bool loomNames) {
  auto *session = static_cast<Session *>(opaque);
  session->sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(unwrap(display.length ? display : contents),
                                           unwrap(name)),
      llvm::SMLoc());
  // Verify only once names and comments are attached, so diagnostics can
  // name values as the source does.
  ParserConfig config(unwrap(ctx), /*verifyAfterParse=*/false);
  // The parser reads the most recently added buffer through a SourceMgr that
  // holds only it, while diagnostics resolve locations through the session's.
  llvm::SourceMgr single;
  single.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(unwrap(contents), unwrap(name)),
                            llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(single, config);
  if (!module)
    return MlirModule{nullptr};
  if (loomNames) {
    loom::attachSourceNames(*module, single);
    loom::attachClauseLocations(*module, single);
    loom::attachComments(*module, unwrap(contents));
  }
  if (failed(verify(*module)))
    return MlirModule{nullptr};
  return wrap(module.release());
}

MlirLogicalResult loomVerify(MlirOperation op) { return wrap(verify(unwrap(op))); }

/// Print a module as Loom text (top-level ops, Loom names, comments).
void loomPrintText(MlirModule module, MlirStringCallback callback, void *userData) {
  std::string text;
  llvm::raw_string_ostream os(text);
  loom::printLoomText(unwrap(module), os);
  os.flush();
  callback(wrap(StringRef(text)), userData);
}

/// Print a module in MLIR's generic form with its locations (where Loom keeps
/// the source names).
void loomPrintGeneric(MlirModule module, MlirStringCallback callback, void *userData) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  flags.printGenericOpForm().enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  unwrap(module)->print(os, flags);
  os.flush();
  callback(wrap(StringRef(text)), userData);
}

} // extern "C"
