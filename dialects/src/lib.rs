//! The Loom dialects, defined in ODS TableGen under this crate and compiled
//! to C++ by `build.rs`, registered into an MLIR context through melior
//! dialect handles.

#![deny(unsafe_code)]

pub mod instance;
// The one audited FFI module: safe helpers over MLIR's and Loom's C API.
#[allow(unsafe_code)]
pub mod ir;
pub mod names;
pub mod ops;

pub use ir::capi as ffi;

use melior::dialect::DialectRegistry;

pub use ir::capi::handles;

/// Insert every Loom dialect into `registry`.
pub fn register(registry: &DialectRegistry) {
    for handle in handles() {
        handle.insert_dialect(registry);
    }
}
