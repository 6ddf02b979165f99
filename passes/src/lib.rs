//! Loom's passes. Each pass lives in its own module, named after its flag,
//! and declares itself with `inventory::submit!`; `register_all` puts every
//! declared pass into MLIR's pass registry, so `loom-opt --NAME` and textual
//! pipelines (`builtin.module(loom-specialize-config{...},canonicalize)`)
//! find it next to MLIR's own passes.

pub mod diagnostics;
pub mod ffi;
pub mod options;

mod aie2p_lower_pipeline;
mod loom_canonicalize;
mod loom_cse;
mod loom_inline;
mod loom_resolve_target;
mod loom_select_root;
mod loom_specialize_config;
mod loom_structured_to_cfg;
mod outline_pipeline_strands;

pub use loom_resolve_target::parse_target;
pub use outline_pipeline_strands::is_outlined;

use mlir_sys::{MlirOperation, MlirStringRef};
use std::ffi::c_void;

/// A pass as Loom declares it.
pub struct PassInfo {
    /// The flag: `loom-opt --ARGUMENT`, and its name in textual pipelines.
    pub argument: &'static str,
    /// One line for `--list-passes`.
    pub description: &'static str,
    /// Whether the pass reads `{key=value}` options; one that does not
    /// refuses any.
    pub takes_options: bool,
    /// The pass body, run on the module. It reports failures as MLIR
    /// diagnostics before returning `Err`.
    pub run: fn(module: MlirOperation, options: &str) -> Result<(), ()>,
}

inventory::collect!(PassInfo);

unsafe extern "C" fn run_pass(
    op: MlirOperation,
    options: MlirStringRef,
    data: *mut c_void,
) -> bool {
    // SAFETY: `data` is the `&'static PassInfo` registered below; MLIR hands
    // over a live operation and `length` bytes of option text.
    unsafe {
        let info = &*(data as *const PassInfo);
        let bytes = std::slice::from_raw_parts(options.data as *const u8, options.length);
        let options = String::from_utf8_lossy(bytes);
        if !info.takes_options && !options.trim().is_empty() {
            diagnostics::error(
                mlir_sys::mlirOperationGetLocation(op),
                &format!("{}: takes no options, got `{options}`", info.argument),
            );
            return false;
        }
        (info.run)(op, &options).is_ok()
    }
}

fn string_ref(text: &str) -> MlirStringRef {
    MlirStringRef {
        data: text.as_ptr() as *const _,
        length: text.len(),
    }
}

/// Register every Loom pass, and MLIR's generic transformations
/// (canonicalize, cse, symbol-dce, inline, ...), in MLIR's pass registry.
/// Once per process: MLIR's registry is not thread-safe, and registering a
/// pass twice from racing threads aborts (seen in parallel unit tests).
pub fn register_all() {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    // SAFETY: registration copies the strings; the PassInfo is 'static.
    REGISTERED.call_once(|| unsafe {
        ffi::loomRegisterUpstreamPasses();
        for info in inventory::iter::<PassInfo> {
            ffi::loomRegisterPass(
                string_ref(info.argument),
                string_ref(info.description),
                Some(run_pass),
                info as *const PassInfo as *mut c_void,
            );
        }
    });
}

/// Whether `argument` names a registered pass (Loom's or MLIR's).
pub fn is_registered(argument: &str) -> bool {
    // SAFETY: a plain registry lookup.
    unsafe { ffi::loomIsPassRegistered(string_ref(argument)) }
}
