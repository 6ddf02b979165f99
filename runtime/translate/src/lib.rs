//! Reads a verified Loom module, at any compile stage, into the reference
//! interpreter's program (`loom_runtime::interp::program`): every function,
//! pipeline body and strand body as a flat graph of blocks over numbered
//! registers. Structured control flow is turned into blocks here, so the
//! executor only knows branches. This is the one place the runtime's
//! programs meet MLIR; loom-runtime itself does not link it.

#![deny(unsafe_code)]

mod body;
mod control;
mod ffi;
mod ops;
mod types;

use body::Body;
use loom_diagnostic::Diagnostic;
use loom_dialects::ir::*;
use loom_dialects::names;
use loom_runtime::interp::program::{ConfigFacts, FuncId, Function, Index, Pipeline, Program, Reg};
use mlir_sys::{MlirOperation, MlirValue};
use std::collections::HashMap;

/// Why a module cannot be turned into a program: located at the op.
type Result<T> = std::result::Result<T, Diagnostic>;

struct Translator {
    program: Program,
    functions: HashMap<String, FuncId>,
}

impl Translator {
    fn error<T>(&self, op: MlirOperation, message: String) -> Result<T> {
        Err(Diagnostic::error(location_text(location(op)), message))
    }

    fn reg(&self, body: &Body, op: MlirOperation, value: MlirValue) -> Result<Reg> {
        match body.regs.get(&(value.ptr as usize)) {
            Some(&reg) => Ok(reg),
            None => self.error(op, "uses a value the interpreter has not defined".into()),
        }
    }

    fn regs(&self, body: &Body, op: MlirOperation, values: &[MlirValue]) -> Result<Vec<Reg>> {
        values.iter().map(|&v| self.reg(body, op, v)).collect()
    }

    /// The operands of `op` without its trailing `type_dims`.
    fn typed_operands(&self, op: MlirOperation) -> Vec<MlirValue> {
        let all = operands(op);
        let dims = attribute(op, "operandSegmentSizes")
            .map(|a| ffi::last_dense_i32(a) as usize)
            .unwrap_or(0);
        all[..all.len() - dims].to_vec()
    }

    fn indices(&self, body: &Body, op: MlirOperation, dynamic: &[MlirValue]) -> Result<Vec<Index>> {
        let positions = attribute(op, "static_indices")
            .map(dense_i64_values)
            .unwrap_or_default();
        let mut next = dynamic.iter();
        positions
            .into_iter()
            .map(|p| {
                if p == i64::MIN {
                    let value = next.next().copied();
                    match value {
                        Some(v) => self.reg(body, op, v).map(Index::Reg),
                        None => self.error(op, "has fewer index operands than positions".into()),
                    }
                } else {
                    Ok(Index::Const(p))
                }
            })
            .collect()
    }
}

/// Translate every function and pipeline of `module`.
pub fn translate(module: MlirOperation) -> Result<Program> {
    let mut t = Translator {
        program: Program::default(),
        functions: HashMap::new(),
    };
    // Functions first get their ids, so calls resolve in any order.
    let mut defined = Vec::new();
    for op in top_level_ops(module) {
        let kind = op_name(op);
        if kind == names::config::DEF {
            let facts = ConfigFacts {
                range: attribute(op, "range")
                    .map(dense_i64_values)
                    .map(|r| (r[0], r[1])),
                multiple_of: int_attribute(op, "multiple_of"),
            };
            t.program
                .configs
                .insert(symbol_name(op).unwrap_or_default(), facts);
            continue;
        }
        if kind != names::func::DEF && kind != names::pipeline::DEF {
            continue;
        }
        let Some(entry) = first_block(op, 0) else {
            continue;
        };
        let name = symbol_name(op).unwrap_or_default();
        let id = t.program.functions.len();
        t.program.functions.push(Function {
            name: name.clone(),
            ..Function::default()
        });
        if kind == names::func::DEF {
            t.functions.insert(name, id);
        } else {
            let args = arguments(entry);
            let run_args = args.iter().map(|&a| value_name(a)).collect();
            let arg_types = args
                .iter()
                .map(|&a| {
                    let ty = type_text(value_type(a));
                    if ty == "!buffer.buffer" {
                        "buffer".to_string()
                    } else {
                        ty
                    }
                })
                .collect();
            t.program.pipelines.insert(
                name,
                Pipeline {
                    body: id,
                    run_args,
                    arg_types,
                },
            );
        }
        defined.push((op, id));
    }
    for (op, id) in defined {
        t.function(op, id)?;
    }
    Ok(t.program)
}
