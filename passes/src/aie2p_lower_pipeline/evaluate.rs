//! The compile-time evaluation of the command stream: its control flow is
//! run when it is compiled (loops over records unrolled, branches on record
//! numbers taken), so the stream becomes a fixed sequence of operations with
//! the integer values of their operands.

use super::realization::{argument_index, refuse, Refusal};
use crate::index_semantics::{binary, compare};
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;

/// The function's ops in execution order, when its blocks form one
/// unconditional chain from the entry (the command-stream rule).
/// One operation of the command stream as it runs: the operation and the
/// integer values of its operands at that point.
pub(super) struct Step {
    pub op: MlirOperation,
    pub operands: Vec<Option<i64>>,
}

/// Whether `evaluate` runs the op named `name` itself: control flow and
/// index arithmetic, which leave nothing for the realization to do.
pub(super) fn evaluated(name: &str) -> bool {
    matches!(
        name,
        names::cfg::BR
            | names::cfg::COND_BR
            | names::func::RETURN
            | names::index::CONSTANT
            | names::index::ADD
            | names::index::SUB
            | names::index::MUL
            | names::index::MIN
            | names::index::MAX
            | names::index::CMP
            | names::index::ASSUME
            | names::index::CAST
    )
}

/// `value` of a strand's function as its call gives it: a constant, or a
/// parameter (`params`) the call passes a constant to (`args`).
pub(super) fn call_constant(
    value: MlirValue,
    params: &[MlirValue],
    args: &[MlirValue],
) -> Option<i64> {
    constant_int(value)
        .or_else(|| argument_index(value, params).and_then(|i| constant_int(args[i])))
}

/// Who is evaluated, for the refusals: the strand, what runs it and its
/// transfers ("the transfer strand", "the command stream", "the command
/// stream's transfers").
pub(super) struct Whose {
    pub strand: &'static str,
    pub work: &'static str,
    pub transfers: &'static str,
}

/// The most operations a command stream runs once its loops are unrolled.
const STREAM_STEPS: usize = 1 << 16;

/// The command stream's operations in the order they run: its control flow
/// is evaluated when it is compiled (loops over records, the branches that
/// depend on record numbers), which needs every branch condition to be
/// known then. `known` gives the values of the strand's parameters.
pub(super) fn evaluate(
    function: MlirOperation,
    known: impl Fn(MlirValue) -> Option<i64>,
    whose: &Whose,
) -> Result<Vec<Step>, Refusal> {
    let key = |v: MlirValue| v.ptr as usize;
    let mut env: std::collections::HashMap<usize, i64> = std::collections::HashMap::new();
    let region = region(function, 0);
    let mut block = blocks(region).first().copied();
    let mut steps = Vec::new();
    while let Some(b) = block.take() {
        for op in ops_of(b) {
            if steps.len() == STREAM_STEPS {
                return refuse(
                    op,
                    format!(
                        "{} runs more than {STREAM_STEPS} operations once its loops are unrolled",
                        whose.work
                    ),
                );
            }
            let value = |v: MlirValue| {
                constant_int(v)
                    .or_else(|| env.get(&key(v)).copied())
                    .or_else(|| known(v))
            };
            let all = operands(op);
            let values: Vec<Option<i64>> = all.iter().map(|&v| value(v)).collect();
            let name = op_name(op);
            let int = |i: usize| values.get(i).copied().flatten();
            let computed = match name.as_str() {
                names::index::ASSUME | names::index::CAST => int(0),
                arithmetic if binary(arithmetic).is_some() => {
                    let f = binary(arithmetic).expect("checked in the guard");
                    int(0).zip(int(1)).map(|(a, b)| f(a, b))
                }
                names::index::CMP => {
                    let predicate = string_attribute(op, "predicate").unwrap_or_default();
                    int(0)
                        .zip(int(1))
                        .and_then(|(a, b)| compare(&predicate, a, b))
                        .map(i64::from)
                }
                _ => None,
            };
            // A result a loop computed before is stale until recomputed.
            for r in results(op) {
                env.remove(&key(r));
            }
            if let (Some(v), Some(&r)) = (computed, results(op).first()) {
                env.insert(key(r), v);
            }
            let next = match name.as_str() {
                names::cfg::BR => Some((0, values.clone())),
                names::cfg::COND_BR => {
                    let Some(condition) = int(0) else {
                        return refuse(op, format!("{} branches on a value that is not known when it is compiled; {} must be fixed then", whose.strand, whose.transfers));
                    };
                    let sizes =
                        attribute(op, "operandSegmentSizes").expect("cond_br has operand segments");
                    let taken = dense_i32_element(sizes, 1) as usize;
                    Some(if condition != 0 {
                        (0, values[1..1 + taken].to_vec())
                    } else {
                        (1, values[1 + taken..].to_vec())
                    })
                }
                "cfg.switch" => {
                    return refuse(
                        op,
                        format!(
                            "{} that switches: {} runs a sequence fixed when it is compiled",
                            whose.strand, whose.work
                        ),
                    );
                }
                _ => None,
            };
            steps.push(Step {
                op,
                operands: values,
            });
            if let Some((successor, arguments)) = next {
                let dest = successors(op)[successor];
                for (parameter, argument) in loom_dialects::ir::arguments(dest)
                    .into_iter()
                    .zip(arguments)
                {
                    match argument {
                        Some(v) => env.insert(key(parameter), v),
                        None => env.remove(&key(parameter)),
                    };
                }
                block = Some(dest);
                break;
            }
        }
    }
    Ok(steps)
}
