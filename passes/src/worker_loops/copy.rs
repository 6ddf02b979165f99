//! Copying ops and blocks under a value map: what unrolling and jamming
//! build their copies of a loop's body from.

use super::counted::same_block;
use loom_dialects::ir::*;
use loom_dialects::names::cfg;
use mlir_sys::{MlirBlock, MlirLocation, MlirOperation, MlirValue};
use std::collections::HashMap;

/// Values of the original mapped to the values of a copy; a value not in
/// the map is its own copy (defined outside what is copied).
#[derive(Default, Clone)]
pub(crate) struct ValueMap {
    values: HashMap<usize, MlirValue>,
}

impl ValueMap {
    pub(crate) fn set(&mut self, of: MlirValue, to: MlirValue) {
        self.values.insert(of.ptr as usize, to);
    }

    pub(crate) fn get(&self, of: MlirValue) -> MlirValue {
        self.values.get(&(of.ptr as usize)).copied().unwrap_or(of)
    }

    pub(crate) fn all(&self, of: &[MlirValue]) -> Vec<MlirValue> {
        of.iter().map(|&v| self.get(v)).collect()
    }
}

/// A detached copy of `op` whose operands are mapped by `map` and whose
/// successors by `blocks` (pairs of original and copy); its results are
/// added to `map`. `op` has no regions.
pub(crate) fn copy_op(
    op: MlirOperation,
    map: &mut ValueMap,
    blocks: &[(MlirBlock, MlirBlock)],
) -> MlirOperation {
    let copy = clone_op(op);
    for (i, v) in operands(op).into_iter().enumerate() {
        let mapped = map.get(v);
        if !same_value(mapped, v) {
            set_operand(copy, i, mapped);
        }
    }
    for (i, s) in successors(op).into_iter().enumerate() {
        if let Some(&(_, to)) = blocks.iter().find(|(from, _)| same_block(*from, s)) {
            set_successor(copy, i, to);
        }
    }
    for (r, c) in results(op).into_iter().zip(results(copy)) {
        map.set(r, c);
    }
    copy
}

/// New blocks after `after`, one per block of `originals` with its
/// argument types, their arguments mapped in `map`; pairs of original and
/// copy, in order. The copies are empty.
pub(crate) fn copy_blocks(
    originals: &[MlirBlock],
    after: MlirBlock,
    map: &mut ValueMap,
) -> Vec<(MlirBlock, MlirBlock)> {
    let mut pairs = Vec::new();
    let mut last = after;
    for &block in originals {
        let args = arguments(block);
        let types: Vec<_> = args.iter().map(|&a| value_type(a)).collect();
        let locations: Vec<_> = args.iter().map(|&a| value_location(a)).collect();
        let copy = insert_block_after(last, &types, &locations);
        for (a, c) in args.into_iter().zip(arguments(copy)) {
            map.set(a, c);
        }
        pairs.push((block, copy));
        last = copy;
    }
    pairs
}

/// A detached `cfg.br` to `target` passing `values`.
pub(crate) fn branch_to(
    location: MlirLocation,
    target: MlirBlock,
    values: Vec<MlirValue>,
) -> MlirOperation {
    let mut spec = OpSpec::new(cfg::BR, location);
    spec.operands = values;
    spec.successors = vec![target];
    spec.build()
}

/// Erase `blocks` and their ops. Only their own ops use their values, and
/// only their own terminators branch to them; ops go last first so that
/// no op outlives a use of its results.
pub(crate) fn erase_blocks(blocks: &[MlirBlock]) {
    let ops: Vec<MlirOperation> = blocks.iter().flat_map(|&b| ops_of(b)).collect();
    for op in ops.into_iter().rev() {
        erase(op);
    }
    for &b in blocks {
        erase_block(b);
    }
}
