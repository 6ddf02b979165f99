//! `loom-specialize-config`: bind compile-time configuration values.
//!
//! Every `config.get @name` with a value in the pass's `values` option becomes
//! an `index.constant` (keeping the value's name), after the value has been
//! checked against the `config.def @name` constraints; the specialized
//! `config.def` disappears. Names without a `config.def` and values outside
//! the declared range or divisibility are errors.
//!
//! Before (`--loom-specialize-config=values=ffn_gate_up.input_size=512`):
//! ```text
//! config.def @ffn_gate_up.input_size : index [range(512, 4096), multiple_of(32)]
//! ...
//!   %input_size = config.get @ffn_gate_up.input_size : index
//! ```
//! After:
//! ```text
//!   %input_size = index.constant 512 : index
//! ```

use crate::diagnostics::error;
use crate::{options, PassInfo};
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;
use std::collections::BTreeMap;

inventory::submit! {
    PassInfo {
        argument: "loom-specialize-config",
        description: "Replace config.get with the configured constants (option values=NAME=VALUE,...)",
        takes_options: true,
        changes_ir: true,
        run,
    }
}

/// A declared configuration value and its constraints.
struct Declaration {
    op: MlirOperation,
    range: Option<(i64, i64)>,
    multiple_of: Option<i64>,
}

/// `values=a.b=512,c=3` -> {a.b: 512, c: 3}.
fn parse_values(options: &str) -> Result<BTreeMap<String, i64>, String> {
    let mut parsed = options::parse(options)?;
    let values = parsed.remove("values").unwrap_or_default();
    if let Some(unknown) = parsed.keys().next() {
        return Err(format!(
            "unknown option `{unknown}`; the only option is `values`"
        ));
    }
    let mut result = BTreeMap::new();
    for item in values.split(',').filter(|item| !item.is_empty()) {
        let (name, value) = item
            .rsplit_once('=')
            .ok_or_else(|| format!("`{item}` is not NAME=VALUE"))?;
        let value: i64 = value
            .parse()
            .map_err(|_| format!("value `{value}` of `{name}` is not an integer"))?;
        if result
            .insert(name.trim_start_matches('@').to_string(), value)
            .is_some()
        {
            return Err(format!("`{name}` is given twice"));
        }
    }
    Ok(result)
}

fn run(module: MlirOperation, options: &str) -> Result<(), ()> {
    let module_loc = location(module);
    let values = parse_values(options).map_err(|message| {
        error(module_loc, &format!("loom-specialize-config: {message}"));
    })?;
    let all = walk(module);
    let mut declarations = BTreeMap::new();
    for &op in &all {
        if op_name(op) == names::config::DEF {
            let Some(name) = loom_dialects::ir::symbol_name(op) else {
                continue;
            };
            let range = attribute(op, "range")
                .map(dense_i64_values)
                .and_then(|range| Some((*range.first()?, *range.get(1)?)));
            let multiple_of = int_attribute(op, "multiple_of");
            declarations.insert(
                name,
                Declaration {
                    op,
                    range,
                    multiple_of,
                },
            );
        }
    }
    // Check every given value before changing anything.
    for (name, &value) in &values {
        let Some(declaration) = declarations.get(name) else {
            let known: Vec<_> = declarations.keys().map(|k| format!("@{k}")).collect();
            error(
                module_loc,
                &format!(
                    "loom-specialize-config: no config.def declares @{name}; declared: {}",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            );
            return Err(());
        };
        let loc = location(declaration.op);
        if let Some((low, high)) = declaration.range {
            if value < low || value > high {
                error(
                    loc,
                    &format!(
                        "value {value} for @{name} is outside its declared range [{low}, {high}]"
                    ),
                );
                return Err(());
            }
        }
        if let Some(divisor) = declaration.multiple_of {
            if value % divisor != 0 {
                error(
                    loc,
                    &format!("value {value} for @{name} is not a multiple of {divisor}"),
                );
                return Err(());
            }
        }
    }
    for &op in &all {
        if op_name(op) != names::config::GET {
            continue;
        }
        let Some(name) = loom_dialects::ir::symbol_ref(op, "name") else {
            continue;
        };
        let Some(&value) = values.get(&name) else {
            continue;
        };
        let result = results(op)[0];
        let constant = index_constant(location(op), value, value_type(result));
        insert_before(op, constant);
        replace_all_uses(result, results(constant)[0]);
        erase(op);
    }
    for name in values.keys() {
        if let Some(declaration) = declarations.get(name) {
            erase(declaration.op);
        }
    }
    Ok(())
}
