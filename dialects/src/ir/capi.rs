//! The C interface implemented in `common/Api.cpp`, and the dialect
//! handles it exports.

use melior::dialect::DialectHandle;
use mlir_sys::{
    MlirContext, MlirDialectHandle, MlirLocation, MlirLogicalResult, MlirModule, MlirOperation,
    MlirStringCallback, MlirStringRef, MlirValue,
};
use std::ffi::c_void;

#[allow(non_snake_case)]
extern "C" {
    pub fn mlirGetDialectHandle__loom_buffer__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__loom_pipeline__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__loom_view__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__loom_channel__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__loom_kernel__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__loom_aie2p__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__loom_func__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__loom_scf__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__loom_cfg__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__loom_index__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__loom_scalar__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__loom_vector__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__loom_config__() -> MlirDialectHandle;
    pub fn loomSessionCreate(context: MlirContext) -> *mut c_void;
    pub fn loomSessionDestroy(session: *mut c_void);
    pub fn loomSessionTakeDiagnostics(
        session: *mut c_void,
        callback: MlirStringCallback,
        user_data: *mut c_void,
    );
    pub fn loomSessionParse(
        session: *mut c_void,
        context: MlirContext,
        contents: MlirStringRef,
        display: MlirStringRef,
        name: MlirStringRef,
        loom_names: bool,
    ) -> MlirModule;
    pub fn loomVerify(op: MlirOperation) -> MlirLogicalResult;
    pub fn loomPrintText(module: MlirModule, callback: MlirStringCallback, user_data: *mut c_void);
    pub fn loomPrintGeneric(
        module: MlirModule,
        callback: MlirStringCallback,
        user_data: *mut c_void,
    );
    pub fn loomValueName(value: MlirValue) -> MlirStringRef;
    pub fn loomValueDims(value: MlirValue, dims: *mut MlirValue, capacity: isize) -> isize;
    pub fn loomOperationIsPure(op: MlirOperation) -> bool;
    pub fn loomEmitErrorWithNotes(
        location: MlirLocation,
        message: MlirStringRef,
        count: isize,
        note_locations: *const MlirLocation,
        notes: *const MlirStringRef,
    );
}

/// The handles of every Loom dialect, in dependency-free order.
pub fn handles() -> [DialectHandle; 13] {
    // SAFETY: each function returns a static registration-hooks table.
    unsafe {
        [
            DialectHandle::from_raw(mlirGetDialectHandle__loom_buffer__()),
            DialectHandle::from_raw(mlirGetDialectHandle__loom_pipeline__()),
            DialectHandle::from_raw(mlirGetDialectHandle__loom_view__()),
            DialectHandle::from_raw(mlirGetDialectHandle__loom_channel__()),
            DialectHandle::from_raw(mlirGetDialectHandle__loom_kernel__()),
            DialectHandle::from_raw(mlirGetDialectHandle__loom_aie2p__()),
            DialectHandle::from_raw(mlirGetDialectHandle__loom_func__()),
            DialectHandle::from_raw(mlirGetDialectHandle__loom_scf__()),
            DialectHandle::from_raw(mlirGetDialectHandle__loom_cfg__()),
            DialectHandle::from_raw(mlirGetDialectHandle__loom_index__()),
            DialectHandle::from_raw(mlirGetDialectHandle__loom_scalar__()),
            DialectHandle::from_raw(mlirGetDialectHandle__loom_vector__()),
            DialectHandle::from_raw(mlirGetDialectHandle__loom_config__()),
        ]
    }
}
