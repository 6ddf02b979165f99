//! Reporting from Rust passes through MLIR's diagnostics, so that errors show
//! the source line like every other Loom diagnostic.

use mlir_sys::MlirLocation;

/// `file:line:col: error: message` at `location`.
pub fn error(location: MlirLocation, message: &str) {
    loom_dialects::ir::emit_error(location, message)
}

/// The same with notes, each at its own location.
pub fn error_with_notes(location: MlirLocation, message: &str, notes: &[(MlirLocation, String)]) {
    loom_dialects::ir::emit_error_with_notes(location, message, notes)
}
