//! `loom-canonicalize`: fold, simplify structured control flow, drop dead
//! code, without moving anything.
//!
//! It runs MLIR's greedy rewrite driver with the ops' folders (index
//! arithmetic, casts, comparisons, vector splats) and the patterns below:
//! - `scf.for` with constant bounds that runs once becomes its body, the
//!   induction value replaced by the lower bound; one that never runs, or
//!   whose body only passes its loop-carried values on, becomes its initial
//!   values;
//! - `scf.if` on a constant condition becomes the branch taken.
//!
//! Unlike MLIR's `canonicalize`, a folded value becomes a constant at the
//! place of the op it replaces and keeps that op's name (`%pair_bytes =
//! index.constant 2048 : offset`); constants are neither hoisted nor merged
//! here (`loom-cse` merges them, within one strand or function). Side-effect
//! free ops whose results are unused are removed.

use crate::diagnostics::error;
use crate::PassInfo;
use loom_dialects::ir::rewrite::{apply_greedily, Pattern, Rewriter};
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;

inventory::submit! {
    PassInfo {
        argument: "loom-canonicalize",
        description: "Fold in place, remove single-trip/empty loops and constant branches, drop dead code",
        takes_options: false,
        changes_ir: true,
        run,
    }
}

/// How many times an `scf.for` with constant bounds runs. The bounds are
/// signed 64-bit values whose difference may not fit in 64 bits (from
/// -2^63 to 2^63 - 1), so the count is computed in 128 bits.
fn trip_count(for_op: MlirOperation) -> Option<i128> {
    let bounds = operands(for_op);
    let (low, high, step) = (
        i128::from(constant_int(bounds[0])?),
        i128::from(constant_int(bounds[1])?),
        i128::from(constant_int(bounds[2])?),
    );
    if step <= 0 {
        return None;
    }
    if high <= low {
        return Some(0);
    }
    Some((high - low - 1) / step + 1)
}

/// Whether the body only yields its loop-carried values back, unchanged.
fn passes_values_on(body: MlirBlock) -> bool {
    let ops = ops_of(body);
    if ops.len() != 1 {
        return false;
    }
    let yielded = operands(ops[0]);
    let carried = &arguments(body)[1..];
    yielded.len() == carried.len() && yielded.iter().zip(carried).all(|(&a, &b)| same_value(a, b))
}

fn simplify_for(op: MlirOperation, rewriter: &Rewriter) -> bool {
    let body = body(op);
    let all = operands(op);
    let inits = &all[3..];
    let trips = trip_count(op);
    if trips == Some(0) || passes_values_on(body) {
        rewriter.replace_op(op, inits);
        return true;
    }
    if trips != Some(1) {
        return false;
    }
    let mut entry = vec![all[0]];
    entry.extend_from_slice(inits);
    replace_with_block(rewriter, op, body, &entry)
}

/// Replace a structured op with the ops of one of its blocks (its
/// arguments bound to `args`), its results with what the block yields.
fn replace_with_block(
    rewriter: &Rewriter,
    op: MlirOperation,
    block: MlirBlock,
    args: &[MlirValue],
) -> bool {
    let Some(yield_op) = terminator(block) else {
        return false;
    };
    // The yield moves with the block.
    rewriter.inline_block_before(block, op, args);
    rewriter.replace_op(op, &operands(yield_op));
    rewriter.erase_op(yield_op);
    true
}

fn simplify_if(op: MlirOperation, rewriter: &Rewriter) -> bool {
    let Some(condition) = constant_int(operands(op)[0]) else {
        return false;
    };
    let Some(block) = first_block(op, if condition != 0 { 0 } else { 1 }) else {
        // No else branch: the op has no results and does nothing.
        rewriter.erase_op(op);
        return true;
    };
    replace_with_block(rewriter, op, block, &[])
}

fn run(module: MlirOperation, _options: &str) -> Result<(), ()> {
    let patterns: [(&str, Pattern); 2] = [
        (names::scf::FOR, simplify_for),
        (names::scf::IF, simplify_if),
    ];
    if !apply_greedily(module, &patterns) {
        error(
            location(module),
            "loom-canonicalize: the rewrites did not converge within MLIR's iteration limit",
        );
        return Err(());
    }
    Ok(())
}
