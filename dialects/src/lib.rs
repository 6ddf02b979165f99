//! The Loom dialects, defined in ODS TableGen under this crate and compiled
//! to C++ by `build.rs`, registered into an MLIR context through melior.

pub mod ffi;
pub mod ops;

use melior::dialect::DialectRegistry;

/// Insert every Loom dialect into `registry`.
pub fn register(registry: &DialectRegistry) {
    // SAFETY: the registry handle is valid for the duration of the call.
    unsafe { ffi::loomRegisterDialects(registry.to_raw()) }
}
