//! Reporting from Rust passes through MLIR's diagnostics, so that errors show
//! the source line like every other Loom diagnostic.

use mlir_sys::{mlirEmitError, MlirLocation};
use std::ffi::CString;

/// `file:line:col: error: message` at `location`.
pub fn error(location: MlirLocation, message: &str) {
    let text = CString::new(message.replace('\0', " ")).expect("no NUL after replacement");
    // SAFETY: a live location and a NUL-terminated message.
    unsafe { mlirEmitError(location, text.as_ptr()) }
}
