//! Unroll-and-jam: a counted loop of a few turns (at most 4) whose body
//! opens with an innermost counted loop runs that inner loop once for all
//! its turns, each turn's copy of the inner body side by side in one block,
//! and then the rest of each turn's body in turn order. The gated
//! projection's two rows become one pass over K that loads the input once
//! for both rows and keeps two independent accumulator chains.
//!
//! Each turn's inner loop computes the same values in the same order as
//! before, so the results are bit for bit the loop's. It is done when that
//! order is the only thing that changes:
//! - the outer loop's start, bound and step are constants, the inner loop's
//!   too, so every turn's inner loop runs the same iterations;
//! - what the turn computes before its inner loop is pure, and neither it
//!   nor the inner loop uses a value an earlier turn computed (the outer
//!   loop's carried values);
//! - the inner body only reads memory, from placed tile buffers that the
//!   rest of the outer body never writes; the rest does nothing but pure
//!   ops, loads and stores to placed tile buffers, and branches.
//!
//! Copies of one op that compute the same thing from the same operands
//! (the input's load, the counter's step) are made once.

use super::copy::{branch_to, copy_blocks, copy_op, erase_blocks, ValueMap};
use super::counted::{same_block, CountedLoop};
use super::drop_dead;
use super::memory::{access, Access, Range};
use crate::loom_cse::Key;
use loom_dialects::ir::*;
use loom_dialects::names::{cfg, index};
use mlir_sys::{MlirBlock, MlirOperation, MlirValue};
use std::collections::HashMap;

/// Outer loops of more turns are left alone: every turn's accumulators
/// stay live through the jammed loop.
const MOST_TURNS: i64 = 4;

/// The shape unroll-and-jam takes: `outer`'s body is `opening` (its first
/// block, ending in the branch into `inner`), `inner` (one body block),
/// and `rest` (every other block of the body, from `inner`'s exit).
struct Nest<'a> {
    outer: &'a CountedLoop,
    inner: &'a CountedLoop,
    opening: MlirBlock,
    rest: Vec<MlirBlock>,
}

/// Jam the first nest of `loops` that the rules take; whether one was.
pub(crate) fn jam_one(loops: &[CountedLoop]) -> bool {
    for outer in loops {
        if let Some(nest) = nest(outer, loops) {
            if legal(&nest) {
                drop_dead(&jam(&nest));
                return true;
            }
        }
    }
    false
}

fn nest<'a>(outer: &'a CountedLoop, loops: &'a [CountedLoop]) -> Option<Nest<'a>> {
    if outer.trips < 2 || outer.trips > MOST_TURNS || outer.body.len() < 3 {
        return None;
    }
    let opening = outer.body[0];
    let into = terminator(opening)?;
    if op_name(into) != cfg::BR {
        return None;
    }
    let inner = loops
        .iter()
        .find(|l| same_block(l.header, successors(into)[0]) && same_block(l.preheader, opening))?;
    let [inner_body] = inner.body[..] else {
        return None;
    };
    if !outer.contains(inner.header) || !outer.contains(inner.exit()) {
        return None;
    }
    let rest: Vec<MlirBlock> = outer
        .body
        .iter()
        .copied()
        .filter(|&b| {
            !same_block(b, opening) && !same_block(b, inner.header) && !same_block(b, inner_body)
        })
        .collect();
    // The rest starts at the inner loop's exit and nothing in it goes back.
    let back_in = rest.iter().any(|&b| {
        successors(terminator(b).expect("blocks end in terminators"))
            .iter()
            .any(|&s| {
                same_block(s, opening) || same_block(s, inner.header) || same_block(s, inner_body)
            })
    });
    if back_in || rest.first().is_none_or(|&b| !same_block(b, inner.exit())) {
        return None;
    }
    Some(Nest {
        outer,
        inner,
        opening,
        rest,
    })
}

fn legal(nest: &Nest) -> bool {
    let outer_header = arguments(nest.outer.header);
    let carried = &outer_header[1..];
    // Values that differ with an earlier turn's work: the carried values
    // and what is computed from them in the opening and the inner loop.
    let mut tainted: Vec<MlirValue> = carried.to_vec();
    let is_tainted = |t: &[MlirValue], v: MlirValue| t.iter().any(|&x| same_value(x, v));
    let inner_body = nest.inner.body[0];
    let mut opening_ops = ops_of(nest.opening);
    opening_ops.pop();
    for &op in &opening_ops {
        if !is_pure(op) || !regions(op).is_empty() {
            return false;
        }
    }
    let inner_ops = ops_of(inner_body);
    for &op in &inner_ops[..inner_ops.len() - 1] {
        if !regions(op).is_empty() || !matches!(access(op), Access::None | Access::Reads(_)) {
            return false;
        }
    }
    // The inner header's arguments take what enters and what comes back;
    // two rounds cover a value fed back through the other.
    let inner_args = arguments(nest.inner.header);
    for _ in 0..2 {
        for &op in opening_ops.iter().chain(&inner_ops) {
            if operands(op).iter().any(|&v| is_tainted(&tainted, v)) {
                tainted.extend(results(op));
            }
        }
        for edge in [nest.inner.entry(), nest.inner.back_edge()] {
            for (&a, v) in inner_args.iter().zip(operands(edge)) {
                if is_tainted(&tainted, v) {
                    tainted.push(a);
                }
            }
        }
    }
    let uses_tainted = |op: MlirOperation| operands(op).iter().any(|&v| is_tainted(&tainted, v));
    if opening_ops
        .iter()
        .chain(&inner_ops)
        .any(|&op| uses_tainted(op))
        || uses_tainted(nest.inner.entry())
        || uses_tainted(nest.inner.branch())
        || inner_args.iter().any(|&a| is_tainted(&tainted, a))
    {
        return false;
    }
    // Memory: the inner body reads what the rest never writes.
    let reads: Vec<Range> = inner_ops
        .iter()
        .filter_map(|&op| match access(op) {
            Access::Reads(r) => Some(r),
            _ => None,
        })
        .flatten()
        .collect();
    for &b in &nest.rest {
        for op in ops_of(b) {
            if !regions(op).is_empty() {
                return false;
            }
            match access(op) {
                Access::None | Access::Reads(_) => {}
                Access::Writes(written) => {
                    if written.iter().any(|w| reads.iter().any(|r| r.overlaps(w))) {
                        return false;
                    }
                }
                Access::Unknown => return false,
            }
        }
    }
    // The outer header's test has no use but its branch; its arguments'
    // uses after the loop take the last turn's values.
    let compare = ops_of(nest.outer.header)[0];
    results(compare).iter().all(|&c| {
        uses(c)
            .iter()
            .all(|&(user, _)| user.ptr == nest.outer.branch().ptr)
    })
}

/// The latch's copy among one turn's copies of the rest.
fn latch_copy(pairs: &[(MlirBlock, MlirBlock)], outer: &CountedLoop) -> MlirOperation {
    let copy = pairs
        .iter()
        .find(|(original, _)| same_block(*original, outer.latch))
        .expect("the rest holds the latch")
        .1;
    terminator(copy).expect("a latch ends in its branch")
}

/// Rewrite `nest` (checked by `legal`); returns the blocks it made.
fn jam(nest: &Nest) -> Vec<MlirBlock> {
    let outer = nest.outer;
    let inner = nest.inner;
    let entry = outer.entry();
    let ctx = context(entry);
    let turns = outer.trips as usize;
    let outer_counter = arguments(outer.header)[0];
    let carried: Vec<MlirValue> = arguments(outer.header)[1..].to_vec();
    let inits: Vec<MlirValue> = operands(entry)[1..].to_vec();

    // The counter's value in each turn, and after the last, named as the
    // body names the counter.
    let named = ops_of(nest.opening)
        .into_iter()
        .find(|&op| op_name(op) == index::ASSUME && same_value(operands(op)[0], outer_counter))
        .map_or(location(entry), |op| {
            named_location(ctx, &value_name(results(op)[0]))
        });
    let counters: Vec<MlirValue> = (0..=turns)
        .map(|t| {
            let value = outer.start + t as i64 * outer.step;
            let constant = index_constant(named, value, value_type(outer_counter));
            insert_before(entry, constant);
            results(constant)[0]
        })
        .collect();

    // Each turn's opening, ahead of the jammed loop; an assumption about
    // the counter is its turn's constant.
    let mut maps: Vec<ValueMap> = Vec::new();
    let mut opening_ops = ops_of(nest.opening);
    let into_inner = opening_ops.pop().expect("the opening ends in its branch");
    let mut inner_inits: Vec<MlirValue> = Vec::new();
    for &counter in &counters[..turns] {
        let mut map = ValueMap::default();
        map.set(outer_counter, counter);
        for &op in &opening_ops {
            let input = operands(op).first().map(|&v| map.get(v));
            if op_name(op) == index::ASSUME && input.and_then(constant_int).is_some() {
                map.set(results(op)[0], input.expect("an assumption has its input"));
                continue;
            }
            insert_before(entry, copy_op(op, &mut map, &[]));
        }
        let passed = map.all(&operands(into_inner));
        if inner_inits.is_empty() {
            inner_inits.push(passed[0]);
        }
        inner_inits.extend_from_slice(&passed[1..]);
        maps.push(map);
    }

    // The jammed loop's header carries the counter and every turn's values.
    let layout = blocks(block_region(outer.header));
    let at = layout
        .iter()
        .position(|&b| same_block(b, outer.header))
        .expect("the header is in its region");
    let inner_args = arguments(inner.header);
    let per_turn = inner_args.len() - 1;
    let mut types = vec![value_type(inner_args[0])];
    let mut locations = vec![value_location(inner_args[0])];
    for _ in 0..turns {
        types.extend(inner_args[1..].iter().map(|&a| value_type(a)));
        locations.extend(inner_args[1..].iter().map(|&a| value_location(a)));
    }
    let header = insert_block_after(layout[at - 1], &types, &locations);
    let body = insert_block_after(header, &[], &[]);
    let jammed = arguments(header);
    for (t, map) in maps.iter_mut().enumerate() {
        map.set(inner_args[0], jammed[0]);
        for (i, &a) in inner_args[1..].iter().enumerate() {
            map.set(a, jammed[1 + t * per_turn + i]);
        }
    }
    let [compare, branch] = ops_of(inner.header)[..] else {
        unreachable!("a counted loop's header holds its test and its branch")
    };
    append(header, copy_op(compare, &mut maps[0], &[]));
    let test = maps[0].get(results(compare)[0]);
    for map in maps.iter_mut().skip(1) {
        map.set(results(compare)[0], test);
    }

    // The body: every turn's copy of the inner body, then one branch back.
    // Two ops with the same name, mapped operands, attributes and result
    // types compute the same values (pure ops, and loads, since the jammed
    // body writes nothing): the later copy reuses the earlier's.
    let mut made: HashMap<Key, Vec<MlirValue>> = HashMap::new();
    let inner_ops = ops_of(inner.body[0]);
    let (&back, inner_body) = inner_ops.split_last().expect("a body ends in its branch");
    let mut passed_back: Vec<MlirValue> = Vec::new();
    for (t, map) in maps.iter_mut().enumerate() {
        for &op in inner_body {
            let k = Key::of(op, &map.all(&operands(op)));
            if let Some(values) = made.get(&k) {
                for (r, &v) in results(op).iter().zip(values) {
                    map.set(*r, v);
                }
                continue;
            }
            let copy = copy_op(op, map, &[]);
            append(body, copy);
            made.insert(k, results(copy));
        }
        let values = map.all(&operands(back));
        if t == 0 {
            passed_back.push(values[0]);
        }
        passed_back.extend_from_slice(&values[1..]);
    }
    append(body, branch_to(location(back), header, passed_back));

    // Each turn's rest, in turn order, starting from the values the turn
    // before passed back to the outer header.
    let mut after = body;
    let mut rests: Vec<Vec<(MlirBlock, MlirBlock)>> = Vec::new();
    for map in maps.iter_mut() {
        let previous = match rests.last() {
            None => inits.clone(),
            Some(pairs) => operands(latch_copy(pairs, outer))[1..].to_vec(),
        };
        for (&c, v) in carried.iter().zip(previous) {
            map.set(c, v);
        }
        let pairs = copy_blocks(&nest.rest, after, map);
        for &(original, copy) in &pairs {
            for op in ops_of(original) {
                append(copy, copy_op(op, map, &pairs));
            }
        }
        after = pairs.last().expect("the rest has blocks").1;
        rests.push(pairs);
    }
    let finals: Vec<MlirValue> =
        operands(latch_copy(rests.last().expect("two turns or more"), outer))[1..].to_vec();

    // A turn's branch back enters the next turn's rest with the values the
    // inner exit passes; the last turn's leaves to the outer exit.
    let inner_exit = inner.exit_operands();
    for t in 0..turns {
        let old = latch_copy(&rests[t], outer);
        let new = if t + 1 < turns {
            branch_to(
                location(old),
                rests[t + 1][0].1,
                maps[t + 1].all(&inner_exit),
            )
        } else {
            let mut last = ValueMap::default();
            last.set(outer_counter, counters[turns]);
            for (&c, &v) in carried.iter().zip(&finals) {
                last.set(c, v);
            }
            branch_to(
                location(old),
                outer.exit(),
                last.all(&outer.exit_operands()),
            )
        };
        insert_before(old, new);
        erase(old);
    }
    let exit_values = maps[0].all(&inner_exit);
    let mut spec = OpSpec::new(cfg::COND_BR, location(branch));
    spec.attributes = vec![(
        "operandSegmentSizes",
        dense_i32_attr(ctx, &[1, 0, exit_values.len() as i32]),
    )];
    spec.operands = std::iter::once(test).chain(exit_values).collect();
    spec.successors = vec![body, rests[0][0].1];
    append(header, spec.build());

    // Enter the jammed loop; after it, the loop's values are the last turn's.
    insert_before(entry, branch_to(location(entry), header, inner_inits));
    let preheader = outer.preheader;
    erase(entry);
    for (&c, &v) in carried.iter().zip(&finals) {
        replace_all_uses(c, v);
    }
    replace_all_uses(outer_counter, counters[turns]);
    let originals: Vec<MlirBlock> = std::iter::once(outer.header)
        .chain(outer.body.iter().copied())
        .collect();
    erase_blocks(&originals);
    let mut made = vec![preheader, header, body];
    made.extend(rests.iter().flatten().map(|&(_, copy)| copy));
    made
}
