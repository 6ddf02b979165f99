//! Unrolling: a counted loop of one body block, at least 8 turns and at
//! most 48 ops, runs 2 or 4 copies of its body per turn (a divisor of its
//! trip count), so a turn's test and its two control transfers run once per
//! copies, and the code generator's scheduler can issue a copy's loads
//! while the copy before still multiplies. Copy k starts from the values
//! copy k - 1 would have passed back to the header, so every copy computes
//! the same values in the same order as the turn it stands for: the results
//! are bit for bit the loop's. No test stands between the copies: the trip
//! count is a multiple of them. An `index.assume` of the counter stays true
//! in every copy, since its facts hold for every value the counter takes.

use super::copy::{copy_op, ValueMap};
use super::counted::CountedLoop;
use loom_dialects::ir::*;

/// Bodies of more ops than this run once per turn: the copies would cost
/// program memory for little gain.
const LARGEST_BODY: usize = 48;

/// Loops of fewer turns run once per turn: the few transfers saved do not
/// pay for the larger program the control code writes at every invocation.
const FEWEST_TRIPS: i64 = 8;

/// How many copies of its body `lp` runs per turn, if it is unrolled.
fn copies(lp: &CountedLoop) -> Option<i64> {
    let [body] = lp.body[..] else {
        return None;
    };
    if ops_of(body).len() > LARGEST_BODY || lp.trips < FEWEST_TRIPS {
        return None;
    }
    [4, 2].into_iter().find(|&u| lp.trips % u == 0)
}

/// Unroll `lp` when the rule above takes it; whether it did.
pub(crate) fn unroll(lp: &CountedLoop) -> bool {
    let Some(copies) = copies(lp) else {
        return false;
    };
    let back = lp.back_edge();
    let ops = ops_of(lp.latch);
    let body = &ops[..ops.len() - 1];
    let header = arguments(lp.header);
    let mut passed = operands(back);
    for _ in 1..copies {
        let mut map = ValueMap::default();
        for (&a, &v) in header.iter().zip(&passed) {
            map.set(a, v);
        }
        for &op in body {
            insert_before(back, copy_op(op, &mut map, &[]));
        }
        passed = map.all(&operands(back));
    }
    for (i, v) in passed.into_iter().enumerate() {
        set_operand(back, i, v);
    }
    true
}
