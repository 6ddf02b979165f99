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
use loom_dialects::ir::*;
use mlir_sys::*;
use std::ffi::c_void;

inventory::submit! {
    PassInfo {
        argument: "loom-canonicalize",
        description: "Fold in place, remove single-trip/empty loops and constant branches, drop dead code",
        takes_options: false,
        run,
    }
}

const SUCCESS: MlirLogicalResult = MlirLogicalResult { value: 1 };
const FAILURE: MlirLogicalResult = MlirLogicalResult { value: 0 };

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

unsafe extern "C" fn simplify_for(
    _: MlirRewritePattern,
    op: MlirOperation,
    rewriter: MlirPatternRewriter,
    _: *mut c_void,
) -> MlirLogicalResult {
    // SAFETY: the driver hands over a live scf.for and its rewriter; every
    // change goes through the rewriter so the driver sees it.
    unsafe {
        let rewriter = mlirPatternRewriterAsBase(rewriter);
        let body = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
        let all = operands(op);
        let inits = &all[3..];
        let trips = trip_count(op);
        if trips == Some(0) || passes_values_on(body) {
            mlirRewriterBaseReplaceOpWithValues(rewriter, op, inits.len() as isize, inits.as_ptr());
            return SUCCESS;
        }
        if trips != Some(1) {
            return FAILURE;
        }
        let mut entry = vec![all[0]];
        entry.extend_from_slice(inits);
        replace_with_block(rewriter, op, body, &entry)
    }
}

/// Replace a structured op with the ops of one of its blocks (its
/// arguments bound to `args`), its results with what the block yields.
unsafe fn replace_with_block(
    rewriter: MlirRewriterBase,
    op: MlirOperation,
    block: MlirBlock,
    args: &[MlirValue],
) -> MlirLogicalResult {
    let Some(yield_op) = terminator(block) else {
        return FAILURE;
    };
    // SAFETY: the caller's rewriter and op; the yield moves with the block.
    unsafe {
        mlirRewriterBaseInlineBlockBefore(rewriter, block, op, args.len() as isize, args.as_ptr());
        let yielded = operands(yield_op);
        mlirRewriterBaseReplaceOpWithValues(rewriter, op, yielded.len() as isize, yielded.as_ptr());
        mlirRewriterBaseEraseOp(rewriter, yield_op);
    }
    SUCCESS
}

unsafe extern "C" fn simplify_if(
    _: MlirRewritePattern,
    op: MlirOperation,
    rewriter: MlirPatternRewriter,
    _: *mut c_void,
) -> MlirLogicalResult {
    // SAFETY: as in `simplify_for`.
    unsafe {
        let Some(condition) = constant_int(operands(op)[0]) else {
            return FAILURE;
        };
        let rewriter = mlirPatternRewriterAsBase(rewriter);
        let taken = mlirOperationGetRegion(op, if condition != 0 { 0 } else { 1 });
        let block = mlirRegionGetFirstBlock(taken);
        if block.ptr.is_null() {
            // No else branch: the op has no results and does nothing.
            mlirRewriterBaseEraseOp(rewriter, op);
            return SUCCESS;
        }
        replace_with_block(rewriter, op, block, &[])
    }
}

type MatchAndRewrite = unsafe extern "C" fn(
    MlirRewritePattern,
    MlirOperation,
    MlirPatternRewriter,
    *mut c_void,
) -> MlirLogicalResult;

fn run(module: MlirOperation, _options: &str) -> Result<(), ()> {
    let patterns: [(&str, MatchAndRewrite); 2] =
        [("scf.for", simplify_for), ("scf.if", simplify_if)];
    // SAFETY: the pattern set, frozen set and config are created, used and
    // destroyed here; the callbacks use no user data.
    unsafe {
        let ctx = context(module);
        let set = mlirRewritePatternSetCreate(ctx);
        for (root, callback) in patterns {
            let callbacks = MlirRewritePatternCallbacks {
                construct: None,
                destruct: None,
                matchAndRewrite: Some(callback),
            };
            let pattern = mlirOpRewritePatternCreate(
                string_ref(root),
                1,
                ctx,
                callbacks,
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut(),
            );
            mlirRewritePatternSetAdd(set, pattern);
        }
        let frozen = mlirFreezeRewritePattern(set);
        let config = mlirGreedyRewriteDriverConfigCreate();
        mlirGreedyRewriteDriverConfigSetUseTopDownTraversal(config, true);
        mlirGreedyRewriteDriverConfigEnableConstantCSE(config, false);
        mlirGreedyRewriteDriverConfigSetRegionSimplificationLevel(
            config,
            MlirGreedySimplifyRegionLevel_MLIR_GREEDY_SIMPLIFY_REGION_LEVEL_DISABLED,
        );
        let converged = mlirApplyPatternsAndFoldGreedilyWithOp(module, frozen, config);
        mlirGreedyRewriteDriverConfigDestroy(config);
        mlirFrozenRewritePatternSetDestroy(frozen);
        if converged.value == 0 {
            error(
                location(module),
                "loom-canonicalize: the rewrites did not converge within MLIR's iteration limit",
            );
            return Err(());
        }
    }
    Ok(())
}
