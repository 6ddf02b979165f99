//! The Loom dialects, defined in ODS TableGen under this crate and compiled
//! to C++ by `build.rs`, registered into an MLIR context through melior
//! dialect handles.

pub mod ffi;
pub mod ir;
pub mod ops;

use melior::dialect::{DialectHandle, DialectRegistry};

/// The handles of every Loom dialect, in dependency-free order.
pub fn handles() -> [DialectHandle; 13] {
    // SAFETY: each function returns a static registration-hooks table.
    unsafe {
        [
            DialectHandle::from_raw(ffi::mlirGetDialectHandle__loom_buffer__()),
            DialectHandle::from_raw(ffi::mlirGetDialectHandle__loom_pipeline__()),
            DialectHandle::from_raw(ffi::mlirGetDialectHandle__loom_view__()),
            DialectHandle::from_raw(ffi::mlirGetDialectHandle__loom_channel__()),
            DialectHandle::from_raw(ffi::mlirGetDialectHandle__loom_kernel__()),
            DialectHandle::from_raw(ffi::mlirGetDialectHandle__loom_aie2p__()),
            DialectHandle::from_raw(ffi::mlirGetDialectHandle__loom_func__()),
            DialectHandle::from_raw(ffi::mlirGetDialectHandle__loom_scf__()),
            DialectHandle::from_raw(ffi::mlirGetDialectHandle__loom_cfg__()),
            DialectHandle::from_raw(ffi::mlirGetDialectHandle__loom_index__()),
            DialectHandle::from_raw(ffi::mlirGetDialectHandle__loom_scalar__()),
            DialectHandle::from_raw(ffi::mlirGetDialectHandle__loom_vector__()),
            DialectHandle::from_raw(ffi::mlirGetDialectHandle__loom_config__()),
        ]
    }
}

/// Insert every Loom dialect into `registry`.
pub fn register(registry: &DialectRegistry) {
    for handle in handles() {
        handle.insert_dialect(registry);
    }
}
