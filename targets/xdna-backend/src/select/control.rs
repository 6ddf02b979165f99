//! Control flow: `cfg.br` and `cfg.cond_br` with their block arguments
//! become the machine layer's terminators (the layout picks `j`, `jnz`,
//! `jz` or a fall-through), an edge into a loop that carries pointers
//! passes them too (select/loops.rs); `func.return` is the worker's `done`.

use super::{fail, Selector};
use loom_aie2p_codegen::{Terminator, VReg};
use loom_diagnostic::Diagnostic;
use loom_dialects::ir::*;
use loom_dialects::names::{cfg, func};
use mlir_sys::{MlirOperation, MlirValue};

fn registers(
    s: &mut Selector,
    op: MlirOperation,
    values: &[MlirValue],
) -> Result<Vec<VReg>, Diagnostic> {
    let mut out = Vec::new();
    for &v in values {
        out.extend(s.registers(op, v)?);
    }
    Ok(out)
}

fn end(s: &mut Selector, op: MlirOperation, terminator: Terminator) -> Result<(), Diagnostic> {
    let (b, block, at) = s.builder();
    let r = b.terminate(block, terminator, at);
    s.built(op, r)
}

pub(crate) fn select(s: &mut Selector, op: MlirOperation, name: &str) -> Result<bool, Diagnostic> {
    match name {
        cfg::BR => {
            let values = operands(op);
            let mut args = registers(s, op, &values)?;
            let to = successors(op)[0];
            args.extend(s.carried_args(op, to, &values)?);
            let target = s.target(to);
            end(s, op, Terminator::Jump { target, args })?;
        }
        cfg::COND_BR => {
            let ins = operands(op);
            let Some(sizes) = attribute(op, "operandSegmentSizes") else {
                return Err(fail(
                    op,
                    "internal compiler error: `cfg.cond_br` has no operand segments",
                ));
            };
            let taken_count = dense_i32_element(sizes, 1) as usize;
            let condition = s.scalar(op, ins[0])?;
            let targets = successors(op);
            let (taken_values, otherwise_values) = ins[1..].split_at(taken_count);
            let mut taken_args = registers(s, op, taken_values)?;
            taken_args.extend(s.carried_args(op, targets[0], taken_values)?);
            let mut otherwise_args = registers(s, op, otherwise_values)?;
            otherwise_args.extend(s.carried_args(op, targets[1], otherwise_values)?);
            let (taken, otherwise) = (s.target(targets[0]), s.target(targets[1]));
            end(
                s,
                op,
                Terminator::Branch {
                    condition,
                    taken,
                    taken_args,
                    otherwise,
                    otherwise_args,
                },
            )?;
        }
        func::RETURN => {
            if !operands(op).is_empty() {
                return Err(fail(op, "a worker returns no values"));
            }
            end(s, op, Terminator::Done)?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}
