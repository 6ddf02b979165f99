//! Whether a block runs repeatedly: it lies on a cycle of the control-flow
//! graph (a loop), so an endpoint admitted there is admitted once per pass.

use loom_dialects::ir::*;
use mlir_sys::*;

pub(super) fn in_cycle(block: MlirBlock) -> bool {
    let successors = |b: MlirBlock| terminator(b).map(successors).unwrap_or_default();
    let mut seen: Vec<*mut std::ffi::c_void> = Vec::new();
    let mut stack = successors(block);
    while let Some(b) = stack.pop() {
        if b.ptr == block.ptr {
            return true;
        }
        if !seen.contains(&b.ptr) {
            seen.push(b.ptr);
            stack.extend(successors(b));
        }
    }
    false
}
