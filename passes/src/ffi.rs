//! The pass registry and pipeline runner implemented in
//! `dialects/common/Passes.cpp`: their C interface, and the safe calls the
//! crate makes through it (the crate's one audited FFI module).

use crate::{diagnostics, PassInfo};
use loom_dialects::ir::{location, string_ref};
use mlir_sys::{MlirLogicalResult, MlirModule, MlirOperation, MlirStringCallback, MlirStringRef};
use std::ffi::c_void;

pub type PassRun = Option<unsafe extern "C" fn(MlirOperation, MlirStringRef, *mut c_void) -> bool>;

#[repr(C)]
pub struct PipelineOptions {
    pub verify_each: bool,
    pub print_after_all: bool,
    pub print_after_only_on_change: bool,
    pub timing: bool,
    pub print_after_pass: MlirStringRef,
    pub print: MlirStringCallback,
    pub print_user_data: *mut c_void,
}

extern "C" {
    pub fn loomRegisterPass(
        argument: MlirStringRef,
        description: MlirStringRef,
        changes_ir: bool,
        run: PassRun,
        user_data: *mut c_void,
    );
    pub fn loomRegisterUpstreamPasses();
    pub fn loomIsPassRegistered(argument: MlirStringRef) -> bool;
    pub fn loomListPasses();
    pub fn loomRunPipeline(
        module: MlirModule,
        pipeline: MlirStringRef,
        options: *const PipelineOptions,
    ) -> MlirLogicalResult;
}

/// What MLIR's registry calls to run a registered Loom pass.
unsafe extern "C" fn run_pass(
    op: MlirOperation,
    options: MlirStringRef,
    data: *mut c_void,
) -> bool {
    // SAFETY: `data` is the `&'static PassInfo` registered below; MLIR hands
    // over a live operation and `length` bytes of option text.
    let (info, bytes) = unsafe {
        (
            &*(data as *const PassInfo),
            std::slice::from_raw_parts(options.data as *const u8, options.length),
        )
    };
    let options = String::from_utf8_lossy(bytes);
    if !info.takes_options && !options.trim().is_empty() {
        diagnostics::error(
            location(op),
            &format!("{}: takes no options, got `{options}`", info.argument),
        );
        return false;
    }
    (info.run)(op, &options).is_ok()
}

/// Register `info` in MLIR's pass registry (which copies its strings).
pub fn register_pass(info: &'static PassInfo) {
    // SAFETY: the strings are copied; the PassInfo outlives the process's
    // use of the registry.
    unsafe {
        loomRegisterPass(
            string_ref(info.argument),
            string_ref(info.description),
            info.changes_ir,
            Some(run_pass),
            info as *const PassInfo as *mut c_void,
        )
    }
}

/// Register MLIR's generic transformations (canonicalize, cse, ...).
pub fn register_upstream_passes() {
    // SAFETY: plain registration.
    unsafe { loomRegisterUpstreamPasses() }
}

/// Whether `argument` names a registered pass.
pub fn is_registered(argument: &str) -> bool {
    // SAFETY: a plain registry lookup.
    unsafe { loomIsPassRegistered(string_ref(argument)) }
}

/// Print every registered pass with its description (MLIR's listing).
pub fn list_passes() {
    // SAFETY: prints the registry.
    unsafe { loomListPasses() }
}
