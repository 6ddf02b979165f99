//! Counted loops in the block form `loom-structured-to-cfg` gives an
//! `scf.for`, recognized in a worker function:
//!
//! ```text
//!   cfg.br ^header(%start, ...)          // the one entry, %start constant
//! ^header(%i: index, ...):
//!   %c = index.cmp slt, %i, %n : index   // %n = index.constant N
//!   cfg.cond_br %c, ^body, ^exit(...)
//! ^body:                                 // entered from ^header only
//!   ...                                  // %j: %i, or index.assume of it
//!   %next = index.add %j, %step : index  // %step = index.constant K > 0
//!   cfg.br ^header(%next, ...)           // the one back edge
//! ```
//!
//! The body is the blocks `^body` reaches without passing `^header`: one
//! block for an innermost loop, more when loops nest in it.

use loom_dialects::ir::*;
use loom_dialects::names::{cfg, index};
use mlir_sys::{MlirBlock, MlirOperation, MlirValue};

/// A counted loop whose start, bound and step are constants.
pub(crate) struct CountedLoop {
    /// The block whose `cfg.br` enters the loop.
    pub(crate) preheader: MlirBlock,
    pub(crate) header: MlirBlock,
    /// The body's blocks in layout order, `^body` first.
    pub(crate) body: Vec<MlirBlock>,
    /// The body block holding the back edge.
    pub(crate) latch: MlirBlock,
    pub(crate) start: i64,
    pub(crate) step: i64,
    pub(crate) trips: i64,
}

impl CountedLoop {
    /// The loop whose header is `header`, if it has the form above;
    /// `blocks` are the function's blocks in layout order.
    pub(crate) fn at(header: MlirBlock, blocks: &[MlirBlock]) -> Option<CountedLoop> {
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
            || true_operands(branch) != 0
        {
            return None;
        }
        let entry_block = *successors(branch).first()?;
        let exit = *successors(branch).get(1)?;
        if same_block(entry_block, header) || same_block(exit, header) {
            return None;
        }
        let body = reached(entry_block, header, blocks)?;
        if body.iter().any(|&b| same_block(b, exit)) || !arguments(entry_block).is_empty() {
            return None;
        }
        // One back edge, one entry, and the body entered from the header only.
        let mut latches = Vec::new();
        let mut entries = Vec::new();
        for &b in blocks {
            let Some(t) = terminator(b) else { continue };
            let inside = body.iter().any(|&x| same_block(x, b));
            for s in successors(t) {
                if same_block(s, header) {
                    if inside {
                        latches.push((b, t));
                    } else {
                        entries.push((b, t));
                    }
                } else if !inside
                    && !same_block(b, header)
                    && body.iter().any(|&x| same_block(x, s))
                {
                    return None;
                }
            }
        }
        let ([(latch, back)], [(preheader, entry)]) = (&latches[..], &entries[..]) else {
            return None;
        };
        if op_name(*back) != cfg::BR || op_name(*entry) != cfg::BR {
            return None;
        }
        let bound = constant_int(ins[1])?;
        let step = stepped(*operands(*back).first()?, counter)?;
        let start = constant_int(*operands(*entry).first()?)?;
        if step <= 0 || bound <= start || (bound - start) % step != 0 {
            return None;
        }
        Some(CountedLoop {
            preheader: *preheader,
            header,
            body,
            latch: *latch,
            start,
            step,
            trips: (bound - start) / step,
        })
    }

    /// The header's `cfg.cond_br`.
    pub(crate) fn branch(&self) -> MlirOperation {
        terminator(self.header).expect("a header ends in its branch")
    }

    /// The latch's `cfg.br` back to the header.
    pub(crate) fn back_edge(&self) -> MlirOperation {
        terminator(self.latch).expect("a latch ends in its branch")
    }

    /// The preheader's `cfg.br` into the header.
    pub(crate) fn entry(&self) -> MlirOperation {
        terminator(self.preheader).expect("a preheader ends in its branch")
    }

    /// The block the header leaves to.
    pub(crate) fn exit(&self) -> MlirBlock {
        successors(self.branch())[1]
    }

    /// The exit edge's operands (the header's values the exit receives).
    pub(crate) fn exit_operands(&self) -> Vec<MlirValue> {
        operands(self.branch())[1..].to_vec()
    }

    /// Whether `block` is one of the body's.
    pub(crate) fn contains(&self, block: MlirBlock) -> bool {
        self.body.iter().any(|&b| same_block(b, block))
    }
}

/// Every counted loop of the function whose blocks are `blocks`.
pub(crate) fn counted_loops(blocks: &[MlirBlock]) -> Vec<CountedLoop> {
    blocks
        .iter()
        .filter_map(|&b| CountedLoop::at(b, blocks))
        .collect()
}

pub(crate) fn same_block(a: MlirBlock, b: MlirBlock) -> bool {
    a.ptr == b.ptr
}

/// The operands `branch` (a `cfg.cond_br`) passes its first successor.
fn true_operands(branch: MlirOperation) -> usize {
    attribute(branch, "operandSegmentSizes")
        .map_or(usize::MAX, |sizes| dense_i32_element(sizes, 1) as usize)
}

/// The blocks reachable from `from` without passing `header`, in layout
/// order; `None` when that reaches a block that leaves the function.
fn reached(from: MlirBlock, header: MlirBlock, blocks: &[MlirBlock]) -> Option<Vec<MlirBlock>> {
    let mut seen = vec![from];
    let mut work = vec![from];
    while let Some(b) = work.pop() {
        let t = terminator(b)?;
        let next = successors(t);
        if next.is_empty() {
            return None;
        }
        for s in next {
            if !same_block(s, header) && !seen.iter().any(|&x| same_block(x, s)) {
                seen.push(s);
                work.push(s);
            }
        }
    }
    Some(
        blocks
            .iter()
            .copied()
            .filter(|&b| seen.iter().any(|&x| same_block(x, b)))
            .collect(),
    )
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
