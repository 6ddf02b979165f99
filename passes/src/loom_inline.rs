//! `loom-inline`: inline every call to a `func.def inline` function.
//!
//! The callee's body replaces the call in place: its arguments become the
//! call's operands (dimension arguments included, so dependent types follow)
//! and the call's results become the values `func.return` returns. Inlined
//! values keep the names they have in the callee. Calls to functions without
//! `inline`, and declarations, stay, and so do calls to functions whose body
//! is a graph of blocks (such as outlined strands): splicing blocks into the
//! caller is not implemented. Calls inside inlined bodies are inlined in
//! turn; a cycle of `inline` functions is an error.
//!
//! Before:
//! ```text
//! func.def inline @twice(%x: index) -> (index) {
//!   %y = index.add %x, %x : index
//!   func.return %y : index
//! }
//!   %r = func.call @twice(%a) : (index) -> (index)
//! ```
//! After: `%y = index.add %a, %a : index`, and `%r`'s uses use `%y`.

use crate::diagnostics::error;
use crate::PassInfo;
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;
use std::collections::{BTreeMap, BTreeSet};

inventory::submit! {
    PassInfo {
        argument: "loom-inline",
        description: "Inline calls to `func.def inline` functions",
        takes_options: false,
        changes_ir: true,
        run,
    }
}

/// The `inline` functions with a single-block body, by name.
fn inline_functions(module: MlirOperation) -> BTreeMap<String, MlirOperation> {
    top_level_ops(module)
        .into_iter()
        .filter(|&op| op_name(op) == names::func::DEF && attribute(op, "inline_hint").is_some())
        .filter(|&op| blocks(region(op, 0)).len() == 1)
        .filter_map(|op| symbol_name(op).map(|name| (name, op)))
        .collect()
}

/// The inline callees each inline function calls.
fn callees_of(function: MlirOperation, inline: &BTreeMap<String, MlirOperation>) -> Vec<String> {
    walk(function)
        .into_iter()
        .filter(|&op| op_name(op) == names::func::CALL)
        .filter_map(|op| symbol_ref(op, "callee"))
        .filter(|callee| inline.contains_key(callee))
        .collect()
}

/// Refuse a cycle among inline functions: inlining it would never end.
fn check_acyclic(inline: &BTreeMap<String, MlirOperation>) -> Result<(), ()> {
    let edges: BTreeMap<&String, Vec<String>> = inline
        .iter()
        .map(|(name, &op)| (name, callees_of(op, inline)))
        .collect();
    let mut done = BTreeSet::new();
    for start in inline.keys() {
        let mut path: Vec<&String> = Vec::new();
        if let Some(cycle) = find_cycle(start, &edges, &mut path, &mut done) {
            // Report at the first function of the cycle: `start` may only
            // lead into it (@a calling @b in a cycle @b -> @c -> @b).
            let first = &cycle[0][1..];
            error(
                location(inline[first]),
                &format!(
                    "loom-inline: `inline` functions call each other in a cycle ({}); mark one of them without `inline`",
                    cycle.join(" -> ")
                ),
            );
            return Err(());
        }
    }
    Ok(())
}

fn find_cycle<'a>(
    node: &'a String,
    edges: &'a BTreeMap<&String, Vec<String>>,
    path: &mut Vec<&'a String>,
    done: &mut BTreeSet<&'a String>,
) -> Option<Vec<String>> {
    if let Some(at) = path.iter().position(|n| *n == node) {
        let mut cycle: Vec<String> = path[at..].iter().map(|n| format!("@{n}")).collect();
        cycle.push(format!("@{node}"));
        return Some(cycle);
    }
    if done.contains(node) {
        return None;
    }
    path.push(node);
    for next in edges.get(node).into_iter().flatten() {
        let (key, _) = edges.get_key_value(next)?;
        if let Some(cycle) = find_cycle(key, edges, path, done) {
            return Some(cycle);
        }
    }
    path.pop();
    done.insert(node);
    None
}

/// Replace `call` with a copy of `callee`'s single-block body.
fn inline_call(call: MlirOperation, callee: MlirOperation) {
    // The clone is owned here until it is erased, after its ops moved out.
    let copy = clone_op(callee);
    let entry = body(copy);
    let actuals = operands(call);
    for (index, formal) in arguments(entry).into_iter().enumerate() {
        replace_all_uses(formal, actuals[index]);
    }
    let mut returned = Vec::new();
    for op in ops_of(entry) {
        if op_name(op) == names::func::RETURN {
            returned = operands(op);
        } else {
            move_before(op, call);
        }
    }
    for (result, value) in results(call).into_iter().zip(returned) {
        replace_all_uses(result, value);
    }
    erase(call);
    erase(copy);
}

fn run(module: MlirOperation, _options: &str) -> Result<(), ()> {
    let inline = inline_functions(module);
    check_acyclic(&inline)?;
    // Inlined bodies may hold further calls: repeat until none is left. The
    // cycle check bounds the number of rounds by the call depth.
    loop {
        let calls: Vec<(MlirOperation, String)> = walk(module)
            .into_iter()
            .filter(|&op| op_name(op) == names::func::CALL)
            .filter_map(|op| symbol_ref(op, "callee").map(|callee| (op, callee)))
            .filter(|(_, callee)| inline.contains_key(callee))
            .collect();
        if calls.is_empty() {
            return Ok(());
        }
        for (call, callee) in calls {
            inline_call(call, inline[&callee]);
        }
    }
}
