//! `loom-select-root{root=NAME}`: keep one public `pipeline.def` and what it
//! needs.
//!
//! The root and every symbol reachable from it through symbol references
//! (calls, targets, configuration names, loaded images), transitively, stay;
//! every other top-level symbol is dropped. `loom-compile --root=@NAME` runs
//! this after inlining, so helpers that were inlined everywhere disappear.

use crate::diagnostics::error;
use crate::{options, PassInfo};
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;
use std::collections::BTreeSet;

inventory::submit! {
    PassInfo {
        argument: "loom-select-root",
        description: "Keep one public pipeline.def (option root=NAME) and the symbols it reaches; drop the rest",
        takes_options: true,
        changes_ir: true,
        run,
    }
}

/// The symbols `op` and the ops nested in it reference.
fn references(op: MlirOperation) -> Vec<String> {
    let mut found = Vec::new();
    for nested in walk(op) {
        found.extend(
            attributes(nested)
                .into_iter()
                .filter_map(|(_, attr)| flat_symbol_ref_value(attr)),
        );
    }
    found
}

fn run(module: MlirOperation, options: &str) -> Result<(), ()> {
    let mut parsed = options::parse(options).map_err(|message| {
        error(location(module), &format!("loom-select-root: {message}"));
    })?;
    let Some(root) = parsed.remove("root") else {
        error(
            location(module),
            "loom-select-root: the option root=NAME is required",
        );
        return Err(());
    };
    if let Some(unknown) = parsed.keys().next() {
        error(
            location(module),
            &format!("loom-select-root: unknown option `{unknown}`; the only option is `root`"),
        );
        return Err(());
    }
    let root = root.trim_start_matches('@').to_string();
    if root.is_empty() {
        error(
            location(module),
            "loom-select-root: the option root=NAME names no pipeline (the name is empty)",
        );
        return Err(());
    }
    let symbols = symbols(module);
    let public_pipelines: Vec<String> = symbols
        .iter()
        .filter(|(_, &op)| {
            op_name(op) == names::pipeline::DEF
                && string_attribute(op, "sym_visibility").as_deref() == Some("public")
        })
        .map(|(name, _)| format!("@{name}"))
        .collect();
    let known = if public_pipelines.is_empty() {
        "the module has none".to_string()
    } else {
        format!("public pipelines: {}", public_pipelines.join(", "))
    };
    match symbols.get(&root) {
        None => {
            error(
                location(module),
                &format!("root @{root} is not defined; {known}"),
            );
            return Err(());
        }
        Some(&op) if !public_pipelines.contains(&format!("@{root}")) => {
            error(
                location(op),
                &format!("root @{root} is not a public pipeline.def; {known}"),
            );
            return Err(());
        }
        Some(_) => {}
    }
    let mut reached = BTreeSet::new();
    let mut pending = vec![root];
    while let Some(name) = pending.pop() {
        let Some(&op) = symbols.get(&name) else {
            continue;
        };
        if reached.insert(name) {
            pending.extend(references(op));
        }
    }
    for (name, op) in symbols {
        if !reached.contains(&name) {
            erase(op);
        }
    }
    Ok(())
}
