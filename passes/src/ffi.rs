//! The pass registry and pipeline runner implemented in
//! `dialects/common/Passes.cpp`.

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
