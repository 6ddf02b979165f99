//! The C interface implemented in `common/Api.cpp`.

use mlir_sys::{
    MlirContext, MlirDialectRegistry, MlirLogicalResult, MlirModule, MlirOperation,
    MlirStringCallback, MlirStringRef,
};
use std::ffi::c_void;

extern "C" {
    pub fn loomRegisterDialects(registry: MlirDialectRegistry);
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
}
