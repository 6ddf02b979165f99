//! Flattening: a counted loop of one body block and at most 8 turns, whose
//! turns take at most 128 ops together, runs them in a straight line where
//! it is entered, and what follows the loop joins that block. Copy k
//! starts from the values copy k - 1 would have passed back to the header
//! (the first from the entry's), so every turn computes what it did, in
//! its order: the results are bit for bit the loop's. The loop's test and
//! its two transfers a turn go, the counter is a constant in every copy
//! (its index arithmetic folds when selected), and the code generator's
//! scheduler sees the turns and the code around them as one block: a block
//! of the whole-array GEMM's core becomes the C block's loads, every
//! multiply-accumulate of a chunk, and the stores.

use super::copy::{branch_to, copy_op, erase_blocks, ValueMap};
use super::counted::{same_block, CountedLoop};
use super::drop_dead;
use loom_dialects::ir::*;
use mlir_sys::MlirBlock;

/// Loops of more turns keep their control: the straight line would grow
/// the program for each turn.
const MOST_TRIPS: i64 = 8;

/// All turns together at most this many ops (a copy of the body without
/// its back edge, per turn).
const MOST_OPS: i64 = 128;

/// Flatten `lp` when the rule above takes it (`blocks` are the function's,
/// in layout order); whether it did.
pub(crate) fn flatten(lp: &CountedLoop, blocks: &[MlirBlock]) -> bool {
    let [body] = lp.body[..] else {
        return false;
    };
    let ops = ops_of(body);
    let turn = &ops[..ops.len() - 1];
    if lp.trips > MOST_TRIPS || lp.trips * turn.len() as i64 > MOST_OPS {
        return false;
    }
    let entry = lp.entry();
    let header = arguments(lp.header);
    let mut passed = operands(entry);
    for _ in 0..lp.trips {
        let mut map = ValueMap::default();
        for (&a, &v) in header.iter().zip(&passed) {
            map.set(a, v);
        }
        for &op in turn {
            insert_before(entry, copy_op(op, &mut map, &[]));
        }
        passed = map.all(&operands(lp.back_edge()));
    }
    // Leave to the exit with what the header passes it after the last turn.
    let mut last = ValueMap::default();
    for (&a, &v) in header.iter().zip(&passed) {
        last.set(a, v);
    }
    let exit = lp.exit();
    let leave = branch_to(location(entry), exit, last.all(&lp.exit_operands()));
    insert_before(entry, leave);
    erase(entry);
    for (&a, &v) in header.iter().zip(&passed) {
        replace_all_uses(a, v);
    }
    // The blocks that stay, listed before the loop's are freed.
    let staying: Vec<MlirBlock> = blocks
        .iter()
        .copied()
        .filter(|&b| !same_block(b, body) && !same_block(b, lp.header))
        .collect();
    erase_blocks(&[body, lp.header]);
    join(lp.preheader, exit, &staying);
    // The last copy's step of the counter, which nothing reads.
    drop_dead(&[lp.preheader]);
    true
}

/// Move `exit`'s ops into `into`, whose `cfg.br` is its only way in.
fn join(into: MlirBlock, exit: MlirBlock, blocks: &[MlirBlock]) {
    let ways_in = blocks
        .iter()
        .filter_map(|&b| terminator(b))
        .flat_map(successors)
        .filter(|&s| same_block(s, exit))
        .count();
    let Some(leave) = terminator(into) else {
        return;
    };
    if ways_in != 1 {
        return;
    }
    for (a, v) in arguments(exit).into_iter().zip(operands(leave)) {
        replace_all_uses(a, v);
    }
    for op in ops_of(exit) {
        move_before(op, leave);
    }
    erase(leave);
    erase_block(exit);
}
