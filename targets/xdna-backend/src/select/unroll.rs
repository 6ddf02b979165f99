//! Counted loops whose trip count is known when compiling: the body block
//! is selected several times in a row (2 or 4 copies, a divisor of the trip
//! count), so the scheduler can issue a turn's loads while the turn before
//! still multiplies, and the loop's test and its two control transfers run
//! once per copies instead of once per turn. Each copy computes the same
//! values in the same order as the turn it stands for, so the results are
//! bit for bit the loop's; the test between the copies is left out because
//! it holds (the trip count is a multiple of the copies).
//!
//! The loop is the form `loom-structured-to-cfg` gives an `scf.for`:
//!
//! ```text
//! ^header(%i: index, ...):            // from one other block, %i = C0
//!   %c = index.cmp slt, %i, %n : index // %n = index.constant N
//!   cfg.cond_br %c, ^body, ^exit(...)
//! ^body:                              // no arguments, entered from ^header only
//!   ...                               // %j: %i, or index.assume of it
//!   %next = index.add %j, %step : index  // %step = index.constant K > 0
//!   cfg.br ^header(%next, ...)
//! ```

use loom_dialects::ir::*;
use loom_dialects::names::{cfg, index};
use mlir_sys::{MlirBlock, MlirOperation, MlirValue};

/// Bodies of more ops than this are selected once: the copies would cost
/// program memory for little gain.
const LARGEST_BODY: usize = 48;

/// Loops of fewer turns are selected once: the few transfers saved do not
/// pay for the larger program the control code writes at every invocation.
const FEWEST_TRIPS: i64 = 8;

/// A loop body to select `copies` times, and its header.
pub(crate) struct Unrolled {
    pub(crate) header: MlirBlock,
    pub(crate) copies: usize,
}

/// How `body` (a block of `blocks`, the worker's) is to be selected: as an
/// unrolled loop body, or `None` for once.
pub(crate) fn unrolled(body: MlirBlock, blocks: &[MlirBlock]) -> Option<Unrolled> {
    let ops = ops_of(body);
    if !arguments(body).is_empty() || ops.len() > LARGEST_BODY {
        return None;
    }
    let back = *ops.last()?;
    if op_name(back) != cfg::BR {
        return None;
    }
    let header = *successors(back).first()?;
    let [compare, branch] = ops_of(header)[..] else {
        return None;
    };
    let counter = *arguments(header).first()?;
    let ins = operands(compare);
    if op_name(compare) != index::CMP
        || string_attribute(compare, "predicate").as_deref() != Some("slt")
        || !same_value(ins[0], counter)
        || op_name(branch) != cfg::COND_BR
        || !same_value(operands(branch)[0], results(compare)[0])
        || !successors(branch).first().is_some_and(|&b| is(b, body))
        || operands(branch).len() != 1 + other_arguments(branch)
    {
        return None;
    }
    let bound = constant_int(ins[1])?;
    let step = stepped(operands(back).first().copied()?, counter)?;
    let start = entry_value(header, body, blocks)?;
    // Every branch into the body is the header's.
    let into_body = blocks
        .iter()
        .filter_map(|&b| terminator(b))
        .filter(|&t| successors(t).iter().any(|&b| is(b, body)))
        .count();
    if into_body != 1 || step <= 0 || bound <= start || (bound - start) % step != 0 {
        return None;
    }
    let trips = (bound - start) / step;
    if trips < FEWEST_TRIPS {
        return None;
    }
    let copies = [4, 2].into_iter().find(|&u| trips % u == 0)?;
    Some(Unrolled {
        header,
        copies: copies as usize,
    })
}

fn is(a: MlirBlock, b: MlirBlock) -> bool {
    a.ptr == b.ptr
}

/// The operands of `branch` (a `cfg.cond_br`) for its second successor.
fn other_arguments(branch: MlirOperation) -> usize {
    attribute(branch, "operandSegmentSizes")
        .map_or(usize::MAX, |sizes| dense_i32_element(sizes, 2) as usize)
}

/// K when `next` is `index.add %j, %k` with %j the counter (or an
/// `index.assume` of it) and %k the constant K.
fn stepped(next: MlirValue, counter: MlirValue) -> Option<i64> {
    if !is_op_result(next) {
        return None;
    }
    let add = owner_op(next);
    if op_name(add) != index::ADD {
        return None;
    }
    let [j, k] = operands(add)[..] else {
        return None;
    };
    let j = if is_op_result(j) && op_name(owner_op(j)) == index::ASSUME {
        operands(owner_op(j))[0]
    } else {
        j
    };
    same_value(j, counter).then_some(())?;
    constant_int(k)
}

/// The counter's constant value on the one edge into `header` that is not
/// the back edge from `body`.
fn entry_value(header: MlirBlock, body: MlirBlock, blocks: &[MlirBlock]) -> Option<i64> {
    let mut entries = blocks
        .iter()
        .filter(|&&b| !is(b, body))
        .filter_map(|&b| terminator(b))
        .filter(|&t| successors(t).iter().any(|&b| is(b, header)));
    let entry = entries.next()?;
    if entries.next().is_some() || op_name(entry) != cfg::BR {
        return None;
    }
    constant_int(*operands(entry).first()?)
}
