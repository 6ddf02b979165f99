//! Greedy pattern rewriting through MLIR's driver, with patterns written as
//! safe Rust functions: the driver calls one trampoline, which hands the
//! pattern the matched op and a `Rewriter` (every change goes through it, so
//! the driver sees it).

use super::string_ref;
use mlir_sys::*;
use std::ffi::c_void;

/// The rewriter a pattern changes the IR through.
pub struct Rewriter(MlirRewriterBase);

impl Rewriter {
    /// Replace `op`'s results with `values` and erase it.
    pub fn replace_op(&self, op: MlirOperation, values: &[MlirValue]) {
        // SAFETY: the driver's live rewriter and op, one value per result.
        unsafe {
            mlirRewriterBaseReplaceOpWithValues(self.0, op, values.len() as isize, values.as_ptr())
        }
    }

    /// Move `block`'s ops before `op`, its arguments replaced by `args`.
    pub fn inline_block_before(&self, block: MlirBlock, op: MlirOperation, args: &[MlirValue]) {
        // SAFETY: the driver's live rewriter; one value per block argument.
        unsafe {
            mlirRewriterBaseInlineBlockBefore(self.0, block, op, args.len() as isize, args.as_ptr())
        }
    }

    /// Erase `op`, which has no uses left.
    pub fn erase_op(&self, op: MlirOperation) {
        // SAFETY: the driver's live rewriter and op.
        unsafe { mlirRewriterBaseEraseOp(self.0, op) }
    }
}

/// A pattern: rewrite the matched op and say so, or leave it and say no.
pub type Pattern = fn(MlirOperation, &Rewriter) -> bool;

unsafe extern "C" fn trampoline(
    _: MlirRewritePattern,
    op: MlirOperation,
    rewriter: MlirPatternRewriter,
    pattern: *mut c_void,
) -> MlirLogicalResult {
    // SAFETY: `pattern` is the `Pattern` registered in `apply_greedily`; the
    // driver hands over a live op and its rewriter.
    let (pattern, rewriter) = unsafe {
        (
            std::mem::transmute::<*mut c_void, Pattern>(pattern),
            Rewriter(mlirPatternRewriterAsBase(rewriter)),
        )
    };
    MlirLogicalResult {
        value: i8::from(pattern(op, &rewriter)),
    }
}

/// Apply `patterns` (each rooted at an op name) and the ops' folders to
/// `root` until nothing changes: top-down, without constant CSE or region
/// simplification, so ops stay where they are. Whether it converged within
/// MLIR's iteration limit.
pub fn apply_greedily(root: MlirOperation, patterns: &[(&'static str, Pattern)]) -> bool {
    // SAFETY: the pattern set, frozen set and config are created, used and
    // destroyed here; each pattern's user data is a plain function pointer.
    unsafe {
        let ctx = mlirOperationGetContext(root);
        let set = mlirRewritePatternSetCreate(ctx);
        for &(name, pattern) in patterns {
            let callbacks = MlirRewritePatternCallbacks {
                construct: None,
                destruct: None,
                matchAndRewrite: Some(trampoline),
            };
            let created = mlirOpRewritePatternCreate(
                string_ref(name),
                1,
                ctx,
                callbacks,
                pattern as *mut c_void,
                0,
                std::ptr::null_mut(),
            );
            mlirRewritePatternSetAdd(set, created);
        }
        let frozen = mlirFreezeRewritePattern(set);
        let config = mlirGreedyRewriteDriverConfigCreate();
        mlirGreedyRewriteDriverConfigSetUseTopDownTraversal(config, true);
        mlirGreedyRewriteDriverConfigEnableConstantCSE(config, false);
        mlirGreedyRewriteDriverConfigSetRegionSimplificationLevel(
            config,
            MlirGreedySimplifyRegionLevel_MLIR_GREEDY_SIMPLIFY_REGION_LEVEL_DISABLED,
        );
        let converged = mlirApplyPatternsAndFoldGreedilyWithOp(root, frozen, config);
        mlirGreedyRewriteDriverConfigDestroy(config);
        mlirFrozenRewritePatternSetDestroy(frozen);
        converged.value != 0
    }
}
