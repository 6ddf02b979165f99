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

void loomRegisterDialects(MlirDialectRegistry registry) {
  unwrap(registry)->insert<loom::buffer::BufferDialect, loom::pipeline::PipelineDialect,
                           loom::view::ViewDialect, loom::channel::ChannelDialect,
                           loom::kernel::KernelDialect, loom::aie2p::Aie2pDialect,
                           loom::func::FuncDialect, loom::scf::ScfDialect,
                           loom::cfg::CfgDialect, loom::index::IndexDialect,
                           loom::scalar::ScalarDialect, loom::vector::VectorDialect,
                           loom::config::ConfigDialect>();
}

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
