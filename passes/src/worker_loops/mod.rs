//! The loops of a worker function (Low IR in block form), rearranged for
//! the core before its code is selected: unroll-and-jam of short outer
//! loops (`jam`), then flattening of short innermost loops into straight
//! lines (`flatten`), then unrolling of the other innermost loops
//! (`unroll`). Each keeps every value's computation and its order, so the
//! results are bit for bit the source's; what they save is loop control, repeated loads, and, for
//! the code generator, the latency of one accumulator chain at a time.
//! Loops are recognized in the form `loom-structured-to-cfg` gives them
//! (`counted`).

mod copy;
mod counted;
mod flatten;
mod jam;
mod memory;
mod unroll;

use counted::counted_loops;
use loom_dialects::ir::*;
use mlir_sys::{MlirBlock, MlirOperation};

/// Rearrange the loops of `function`, a worker.
pub(crate) fn optimize(function: MlirOperation) {
    let region = region(function, 0);
    while jam::jam_one(&counted_loops(&blocks(region))) {}
    while counted_loops(&blocks(region))
        .iter()
        .any(|lp| flatten::flatten(lp, &blocks(region)))
    {}
    for lp in counted_loops(&blocks(region)) {
        unroll::unroll(&lp);
    }
}

/// Erase the pure ops of `blocks` whose results are unused (what a jam's
/// copies computed for the outer loop's control and nothing needs).
pub(crate) fn drop_dead(blocks: &[MlirBlock]) {
    loop {
        let dead: Vec<MlirOperation> = blocks
            .iter()
            .flat_map(|&b| ops_of(b))
            .filter(|&op| {
                is_pure(op)
                    && regions(op).is_empty()
                    && !results(op).is_empty()
                    && results(op).iter().all(|&r| uses(r).is_empty())
            })
            .collect();
        if dead.is_empty() {
            return;
        }
        for op in dead.into_iter().rev() {
            erase(op);
        }
    }
}
