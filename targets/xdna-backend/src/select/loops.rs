//! Loop-carried pointers (strength reduction). An innermost loop whose
//! accesses address `k * counter + (values from outside the loop) + c`
//! carries that address in a pointer, a parameter of its header: the
//! edge into the loop computes it once, the back edge steps it by `k`
//! times the counter's step (`padda [p], m`), and the body's accesses
//! reach it by an immediate or a step (select/affine.rs). Without it every
//! turn rebuilds each address from the counter, a chain of a multiply, adds
//! and a `mov` before the turn's first load can issue.
//!
//! Selection runs twice when it pays: the first run finds the addresses
//! (`Found`), the second carries them (`select::run`'s `carry`).

use super::affine::Affine;
use super::{block_key, key};
use loom_dialects::ir::*;
use mlir_sys::{MlirBlock, MlirValue};
use std::collections::{BTreeMap, BTreeSet};

/// At most this many pointers per loop: the core has eight, and the
/// accesses' own and the outer loops' need some.
const MOST_CARRIED: usize = 3;

/// A natural loop without a loop inside it: its header and its blocks.
pub(crate) struct Innermost {
    header: MlirBlock,
    blocks: BTreeSet<usize>,
}

/// An address carried through a loop: `constant + sum(k * value)`, one
/// value an argument of the header, the others defined outside the loop.
#[derive(Clone)]
pub(crate) struct Carried {
    pub terms: Vec<(MlirValue, i64)>,
    pub constant: i64,
}

/// The innermost loops of a worker (blocks in reverse post-order, so a
/// back edge goes to a block no later than its source).
pub(crate) fn innermost(order: &[MlirBlock]) -> Vec<Innermost> {
    let position: BTreeMap<usize, usize> = order
        .iter()
        .enumerate()
        .map(|(i, &b)| (block_key(b), i))
        .collect();
    let mut predecessors: BTreeMap<usize, Vec<MlirBlock>> = BTreeMap::new();
    let mut latches: BTreeMap<usize, Vec<MlirBlock>> = BTreeMap::new();
    for &b in order {
        for s in terminator(b).map(successors).unwrap_or_default() {
            predecessors.entry(block_key(s)).or_default().push(b);
            if position.get(&block_key(s)) <= position.get(&block_key(b)) {
                latches.entry(block_key(s)).or_default().push(b);
            }
        }
    }
    let mut loops: Vec<Innermost> = Vec::new();
    for &header in order {
        let Some(ends) = latches.get(&block_key(header)) else {
            continue;
        };
        // The blocks that reach a latch without passing the header.
        let mut blocks = BTreeSet::from([block_key(header)]);
        let mut work: Vec<MlirBlock> = ends.clone();
        while let Some(b) = work.pop() {
            if blocks.insert(block_key(b)) {
                work.extend(predecessors.get(&block_key(b)).into_iter().flatten());
            }
        }
        loops.push(Innermost { header, blocks });
    }
    let headers: Vec<usize> = loops.iter().map(|l| block_key(l.header)).collect();
    loops.retain(|l| {
        headers
            .iter()
            .all(|&h| h == block_key(l.header) || !l.blocks.contains(&h))
    });
    loops
}

fn defining_block(v: MlirValue) -> usize {
    if is_op_result(v) {
        block_key(parent_block(owner_op(v)))
    } else {
        block_key(argument_block(v))
    }
}

impl Innermost {
    pub fn header(&self) -> MlirBlock {
        self.header
    }

    pub fn contains(&self, block: MlirBlock) -> bool {
        self.blocks.contains(&block_key(block))
    }

    /// `terms` (values and coefficients) and `constant` as an address
    /// this loop can carry: one term an argument of the header, every
    /// other one defined outside the loop.
    pub fn carries(&self, terms: &[(MlirValue, i64)], constant: i64) -> Option<Carried> {
        let header_arguments: Vec<usize> = arguments(self.header).into_iter().map(key).collect();
        let counters = terms
            .iter()
            .filter(|(v, _)| header_arguments.contains(&key(*v)))
            .count();
        let outside = terms.iter().all(|(v, _)| {
            header_arguments.contains(&key(*v)) || !self.blocks.contains(&defining_block(*v))
        });
        (counters == 1 && outside).then(|| Carried {
            terms: terms.to_vec(),
            constant,
        })
    }
}

/// What the first run found: the addresses each loop (by its header) can
/// carry, in the order first met, at most `MOST_CARRIED` with distinct
/// terms (an address a constant away from one carried reaches it by an
/// immediate or a step).
#[derive(Default)]
pub(crate) struct Found {
    pub carried: BTreeMap<usize, Vec<Carried>>,
}

impl Found {
    pub fn add(&mut self, header: MlirBlock, carried: Carried) {
        let list = self.carried.entry(block_key(header)).or_default();
        let same = |c: &Carried| {
            c.terms.len() == carried.terms.len()
                && c.terms
                    .iter()
                    .zip(&carried.terms)
                    .all(|(a, b)| key(a.0) == key(b.0) && a.1 == b.1)
        };
        if list.len() < MOST_CARRIED && !list.iter().any(same) {
            list.push(carried);
        }
    }
}

/// `carried`'s form where each header argument is `at(i)` (the value it
/// takes along an edge, or its own parameter) and every other value is
/// `other(v)`.
pub(crate) fn form_at(
    carried: &Carried,
    header: MlirBlock,
    at: impl Fn(usize) -> Option<Affine>,
    other: impl Fn(MlirValue) -> Option<Affine>,
) -> Option<Affine> {
    let header_arguments: Vec<usize> = arguments(header).into_iter().map(key).collect();
    let mut form = Affine::constant(carried.constant);
    for &(v, k) in &carried.terms {
        let term = match header_arguments.iter().position(|&a| a == key(v)) {
            Some(i) => at(i)?,
            None => other(v)?,
        };
        form = form.add_scaled(&term, k)?;
    }
    Some(form)
}
