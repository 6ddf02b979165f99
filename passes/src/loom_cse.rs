//! `loom-cse`: merge identical side-effect-free ops, keeping the first.
//!
//! Two ops are identical when they have the same name, operands, attributes
//! and result types. The later one's uses move to the earlier one, which
//! keeps its name. A value is reused only where it dominates: in the same
//! block further down, or in regions nested below it.
//!
//! Unlike MLIR's `cse`, the body of a `pipeline.strand` is a scope of its
//! own: a strand never starts using a value of the construction region it did
//! not already capture, so merging cannot widen what outlining later passes
//! to the strand's function.

use crate::PassInfo;
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;
use std::collections::HashMap;

inventory::submit! {
    PassInfo {
        argument: "loom-cse",
        description: "Merge identical side-effect-free ops within each function and strand",
        takes_options: false,
        changes_ir: true,
        run,
    }
}

/// What makes two ops interchangeable; MLIR uniques attributes and types, so
/// their handles compare by identity.
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct Key {
    name: String,
    operands: Vec<usize>,
    attributes: Vec<(String, usize)>,
    results: Vec<usize>,
}

impl Key {
    /// `op`'s key were its operands `operands` (its own, or their copies).
    pub(crate) fn of(op: MlirOperation, operands: &[MlirValue]) -> Key {
        let mut attributes: Vec<(String, usize)> = attributes(op)
            .into_iter()
            .map(|(name, attr)| (name, attr.ptr as usize))
            .collect();
        attributes.sort();
        Key {
            name: op_name(op),
            operands: operands.iter().map(|v| v.ptr as usize).collect(),
            attributes,
            results: results(op)
                .iter()
                .map(|&v| value_type(v).ptr as usize)
                .collect(),
        }
    }
}

fn key(op: MlirOperation) -> Option<Key> {
    if !regions(op).is_empty() || results(op).is_empty() || !is_pure(op) {
        return None;
    }
    if !successors(op).is_empty() {
        return None;
    }
    Some(Key::of(op, &operands(op)))
}

/// Known ops, innermost scope last.
struct Scopes {
    stack: Vec<HashMap<Key, MlirOperation>>,
}

impl Scopes {
    fn find(&self, key: &Key) -> Option<MlirOperation> {
        self.stack
            .iter()
            .rev()
            .find_map(|scope| scope.get(key).copied())
    }
}

fn is_scope_boundary(op: MlirOperation) -> bool {
    matches!(
        op_name(op).as_str(),
        names::pipeline::STRAND | names::pipeline::DEF | names::func::DEF
    )
}

fn simplify_region(region: MlirRegion, scopes: &mut Scopes) {
    let blocks = blocks(region);
    for block in blocks {
        // In a graph of blocks only the parent's values dominate every block.
        scopes.stack.push(HashMap::new());
        for op in ops_of(block) {
            simplify_op(op, scopes);
        }
        scopes.stack.pop();
    }
}

fn simplify_op(op: MlirOperation, scopes: &mut Scopes) {
    if let Some(key) = key(op) {
        if let Some(earlier) = scopes.find(&key) {
            for (later, first) in results(op).into_iter().zip(results(earlier)) {
                replace_all_uses(later, first);
            }
            erase(op);
        } else {
            scopes
                .stack
                .last_mut()
                .expect("a block scope is open")
                .insert(key, op);
        }
        return;
    }
    for region in regions(op) {
        if is_scope_boundary(op) {
            let mut fresh = Scopes { stack: Vec::new() };
            simplify_region(region, &mut fresh);
        } else {
            simplify_region(region, scopes);
        }
    }
}

fn run(module: MlirOperation, _options: &str) -> Result<(), ()> {
    for region in regions(module) {
        simplify_region(region, &mut Scopes { stack: Vec::new() });
    }
    Ok(())
}
