//! Renaming of vector registers after allocation (anti-dependence
//! breaking, as LLVM's post-RA scheduler does it). The allocator takes the
//! first free register, so a block reloads the x register a multiply has
//! just read: the load must wait for that read (write after read), and the
//! scheduler cannot issue it early. Within a block, each value written
//! whole to an x register and read only whole until it dies there moves to
//! the free x register whose last use lies furthest back; the value's
//! reads follow it. Nothing else changes: the register is free over the
//! whole life of the value, and every operand that takes the value takes
//! the new register (each record an instruction may issue as).

use crate::class::RegClass;
use crate::error::CodegenError;
use crate::regalloc::{Allocated, Exit};
use crate::scheduler::Pending;
use crate::timing;
use loom_aie2p_isa::{isa, Value};
use std::collections::BTreeSet;

/// The x registers the allocator may use (the first `limit`, as it keeps
/// them) and each one's leaves.
fn vector_registers(limit: Option<usize>) -> Vec<(&'static str, Vec<String>)> {
    RegClass::Vector
        .registers()
        .into_iter()
        .take(limit.unwrap_or(usize::MAX))
        .map(|r| (r, isa().leaves(r)))
        .collect()
}

/// What an instruction does to each x register (by index).
struct Touch {
    /// Reads any bit of it.
    reads: BTreeSet<usize>,
    /// Writes all of it through an operand naming it.
    writes_whole: BTreeSet<usize>,
    /// Writes some of it otherwise (a part, an implicit write).
    writes_part: BTreeSet<usize>,
    /// Reads it only through operands naming it whole.
    reads_whole_only: BTreeSet<usize>,
}

fn touch(p: &Pending, xs: &[(&'static str, Vec<String>)]) -> Result<Touch, CodegenError> {
    let inst = &p.located.0;
    let effects =
        timing::effects(inst).map_err(|u| CodegenError::Internal(format!("renaming: {u:?}")))?;
    let leaf_hits = |accesses: &[timing::Access]| -> BTreeSet<usize> {
        xs.iter()
            .enumerate()
            .filter(|(_, (_, leaves))| accesses.iter().any(|a| leaves.contains(&a.register)))
            .map(|(i, _)| i)
            .collect()
    };
    let (reads, writes) = (leaf_hits(&effects.reads), leaf_hits(&effects.writes));
    let named = |output: bool| -> BTreeSet<usize> {
        inst.operands
            .iter()
            .filter(|(name, _)| {
                inst.opcode
                    .operand(name)
                    .is_some_and(|o| o.output == output && o.tied_to.is_none())
            })
            .filter_map(|(_, v)| match v {
                Value::Register(r) => xs.iter().position(|(x, _)| x == r),
                Value::Immediate(_) => None,
            })
            .collect()
    };
    let writes_whole = named(true);
    let read_whole = named(false);
    // A read counts as whole-only when no read leaf of the register comes
    // from anything but an operand naming it: compare the leaves read with
    // those the whole operands account for.
    let mut part_read = BTreeSet::new();
    for (i, (x, leaves)) in xs.iter().enumerate() {
        let through_other = inst.operands.iter().any(|(name, v)| {
            let output = inst.opcode.operand(name).is_some_and(|o| o.output);
            matches!(v, Value::Register(r) if r != x && !output
                && isa().leaves(r).iter().any(|l| leaves.contains(l)))
        });
        let implicit = inst.opcode.implicit_uses.iter().any(|record| {
            let asm = isa()
                .register(record)
                .map_or_else(|| record.to_lowercase(), |r| r.asm.clone());
            isa().leaves(&asm).iter().any(|l| leaves.contains(l))
        });
        if through_other || implicit {
            part_read.insert(i);
        }
    }
    let reads_whole_only = reads
        .iter()
        .copied()
        .filter(|i| read_whole.contains(i) && !part_read.contains(i))
        .collect();
    let writes_part = writes.difference(&writes_whole).copied().collect();
    Ok(Touch {
        reads,
        writes_whole,
        writes_part,
        reads_whole_only,
    })
}

/// The x registers live after each instruction of a block, given those
/// live at its end.
fn live_after(touches: &[Touch], live_out: &BTreeSet<usize>) -> Vec<BTreeSet<usize>> {
    let mut live = live_out.clone();
    let mut out = vec![BTreeSet::new(); touches.len()];
    for (i, t) in touches.iter().enumerate().rev() {
        out[i] = live.clone();
        for w in &t.writes_whole {
            live.remove(w);
        }
        live.extend(t.reads.iter().copied());
    }
    out
}

/// The x registers live into each block.
fn live_in(allocated: &Allocated, touches: &[Vec<Touch>], count: usize) -> Vec<BTreeSet<usize>> {
    let n = allocated.blocks.len();
    let mut live_in = vec![BTreeSet::new(); n];
    loop {
        let mut changed = false;
        for b in (0..n).rev() {
            let out = live_out(allocated, b, &live_in, count);
            let live = live_after(&touches[b], &out);
            let mut at_start = out;
            if let Some(first) = touches[b].first() {
                at_start = live[0].clone();
                for w in &first.writes_whole {
                    at_start.remove(w);
                }
                at_start.extend(first.reads.iter().copied());
            }
            if at_start != live_in[b] {
                live_in[b] = at_start;
                changed = true;
            }
        }
        if !changed {
            return live_in;
        }
    }
}

fn live_out(
    allocated: &Allocated,
    b: usize,
    live_in: &[BTreeSet<usize>],
    count: usize,
) -> BTreeSet<usize> {
    let successors: Vec<usize> = match &allocated.blocks[b].exit {
        Exit::Jump(t) => vec![*t],
        Exit::Branch {
            taken, otherwise, ..
        } => vec![*taken, *otherwise],
        Exit::Done => vec![],
    };
    let mut out = BTreeSet::new();
    for s in successors {
        match live_in.get(s) {
            Some(l) => out.extend(l.iter().copied()),
            // Unknown: everything is live.
            None => out.extend(0..count),
        }
    }
    out
}

/// Whether every record `p` may issue as takes `register` in operand `name`.
fn admits(p: &Pending, name: &str, register: &str) -> bool {
    std::iter::once(p.located.0.opcode)
        .chain(p.alternatives.iter().copied())
        .all(|o| {
            o.operand(name)
                .is_some_and(|op| op.admits(&Value::Register(register.to_string())).is_ok())
        })
}

/// Rename within `insts` (a block, its touches, what is live at its end).
fn rename_block(
    insts: &mut [Pending],
    touches: &mut [Touch],
    live_out: &BTreeSet<usize>,
    xs: &[(&'static str, Vec<String>)],
) -> Result<(), CodegenError> {
    let n = insts.len();
    for i in 0..n {
        let Some(&x) = touches[i].writes_whole.iter().next() else {
            continue;
        };
        if touches[i].writes_whole.len() != 1 || touches[i].reads.contains(&x) {
            continue;
        }
        // The value's life: reads until the next write of x.
        let mut uses = Vec::new();
        let mut ends_inside = false;
        let mut whole = true;
        for (j, t) in touches.iter().enumerate().skip(i + 1) {
            if t.reads.contains(&x) {
                if !t.reads_whole_only.contains(&x) {
                    whole = false;
                    break;
                }
                uses.push(j);
            }
            if t.writes_part.contains(&x) {
                whole = false;
                break;
            }
            if t.writes_whole.contains(&x) {
                ends_inside = true;
                break;
            }
        }
        let Some(&last) = uses.last() else {
            continue;
        };
        if !whole || (!ends_inside && live_out.contains(&x)) {
            continue;
        }
        let live = live_after(touches, live_out);
        let last_touch = |r: usize| -> Option<usize> {
            (0..i).rev().find(|&k| {
                touches[k].reads.contains(&r)
                    || touches[k].writes_whole.contains(&r)
                    || touches[k].writes_part.contains(&r)
            })
        };
        let own = last_touch(x);
        let free = |r: usize| {
            r != x
                && !live[i].contains(&r)
                && (i..=last).all(|k| {
                    let t = &touches[k];
                    !t.reads.contains(&r)
                        && !t.writes_whole.contains(&r)
                        && !t.writes_part.contains(&r)
                })
        };
        let fits = |r: usize| {
            let name = xs[r].0;
            let operands_of = |k: usize, output: bool| -> Vec<String> {
                let inst = &insts[k].located.0;
                inst.operands
                    .iter()
                    .filter(|(o, v)| {
                        matches!(v, Value::Register(reg) if reg == xs[x].0)
                            && inst.opcode.operand(o).is_some_and(|op| op.output == output)
                    })
                    .map(|(o, _)| o.clone())
                    .collect()
            };
            operands_of(i, true)
                .iter()
                .all(|o| admits(&insts[i], o, name))
                && uses.iter().all(|&k| {
                    operands_of(k, false)
                        .iter()
                        .all(|o| admits(&insts[k], o, name))
                })
        };
        // The free register last touched furthest back, if further back
        // than x itself.
        let best = (0..xs.len())
            .filter(|&r| free(r) && fits(r))
            .min_by_key(|&r| (last_touch(r).map_or(0, |k| k + 1), r));
        let Some(r) = best else {
            continue;
        };
        if last_touch(r).map_or(0, |k| k + 1) >= own.map_or(0, |k| k + 1) {
            continue;
        }
        let (from, to) = (xs[x].0, xs[r].0);
        let substitute = |p: &mut Pending, output: bool| {
            let inst = &mut p.located.0;
            let opcode = inst.opcode;
            for (o, v) in inst.operands.iter_mut() {
                let is_output = opcode.operand(o).is_some_and(|op| op.output);
                if is_output == output && matches!(v, Value::Register(reg) if reg == from) {
                    *v = Value::Register(to.to_string());
                }
            }
        };
        substitute(&mut insts[i], true);
        for &k in &uses {
            substitute(&mut insts[k], false);
        }
        for &k in std::iter::once(&i).chain(&uses) {
            touches[k] = touch(&insts[k], xs)?;
        }
    }
    Ok(())
}

/// Rename the x registers of every block of `allocated` among the first
/// `limit` (all when `None`, as the allocator's `registers_per_class`).
pub(crate) fn spread_vectors(
    mut allocated: Allocated,
    limit: Option<usize>,
) -> Result<Allocated, CodegenError> {
    let xs = vector_registers(limit);
    let touches: Vec<Vec<Touch>> = allocated
        .blocks
        .iter()
        .map(|b| b.insts.iter().map(|p| touch(p, &xs)).collect())
        .collect::<Result<_, _>>()?;
    let live_in = live_in(&allocated, &touches, xs.len());
    let outs: Vec<BTreeSet<usize>> = (0..allocated.blocks.len())
        .map(|b| live_out(&allocated, b, &live_in, xs.len()))
        .collect();
    for ((block, mut t), out) in allocated.blocks.iter_mut().zip(touches).zip(outs) {
        rename_block(&mut block.insts, &mut t, &out, &xs)?;
    }
    Ok(allocated)
}
