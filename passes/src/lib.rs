//! Loom's passes. Each pass lives in its own module, named after its flag,
//! and declares itself with `inventory::submit!`; `register_all` puts every
//! declared pass into MLIR's pass registry, so `loom-opt --NAME` and textual
//! pipelines (`builtin.module(loom-specialize-config{...},canonicalize)`)
//! find it next to MLIR's own passes.

#![deny(unsafe_code)]

pub mod diagnostics;
// The one audited FFI module: the pass registry's C interface.
#[allow(unsafe_code)]
pub mod ffi;
pub mod options;

mod aie2p_lower_pipeline;
mod index_semantics;
mod loom_canonicalize;
pub mod loom_check_progress;
mod loom_cse;
mod loom_expand_instances;
mod loom_inline;
mod loom_resolve_target;
mod loom_select_root;
mod loom_specialize_config;
mod loom_structured_to_cfg;
mod outline_pipeline_strands;
mod worker_loops;

pub use loom_resolve_target::parse_target;
pub use outline_pipeline_strands::is_outlined;

use mlir_sys::MlirOperation;

/// A pass as Loom declares it.
pub struct PassInfo {
    /// The flag: `loom-opt --ARGUMENT`, and its name in textual pipelines.
    pub argument: &'static str,
    /// One line for `--list-passes`.
    pub description: &'static str,
    /// Whether the pass reads `{key=value}` options; one that does not
    /// refuses any.
    pub takes_options: bool,
    /// Whether the pass may change the module. One that only analyses it
    /// (`loom-check-progress`) tells MLIR so, which skips verifying the
    /// module again after it.
    pub changes_ir: bool,
    /// The pass body, run on the module. It reports failures as MLIR
    /// diagnostics before returning `Err`.
    pub run: fn(module: MlirOperation, options: &str) -> Result<(), ()>,
}

inventory::collect!(PassInfo);

/// Register every Loom pass, and MLIR's generic transformations
/// (canonicalize, cse, symbol-dce, inline, ...), in MLIR's pass registry.
/// Once per process: MLIR's registry is not thread-safe, and registering a
/// pass twice from racing threads aborts (seen in parallel unit tests).
pub fn register_all() {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| {
        ffi::register_upstream_passes();
        for info in inventory::iter::<PassInfo> {
            ffi::register_pass(info);
        }
    });
}

/// Whether `argument` names a registered pass (Loom's or MLIR's).
pub fn is_registered(argument: &str) -> bool {
    ffi::is_registered(argument)
}
