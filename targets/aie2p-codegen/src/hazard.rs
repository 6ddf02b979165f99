//! The latency checker: over an image's bundles, with its control flow
//! (a transfer's target and fall-through follow its fifth delay slot;
//! `done` ends), it recomputes when each register write, memory access and
//! functional-unit hold happens from the itineraries (`timing`) and finds
//! every read before its write is visible, write landing before an
//! earlier one, write landing before an earlier read, memory access out of
//! program order, unit held twice in a cycle, and lock request closer than
//! 4 bundles to the one before, on any path. The state at a bundle joins
//! its predecessors' (the worst case), so loops are checked to a fixed point.
//!
//! It does not trust the scheduler: it reads only the bytes.

use crate::join::{join_units, later, nearer_lock};
use crate::timing::{self, Effects, Memory, Untimed};
use loom_aie2p_isa::rules::{DELAY_SLOTS, LOCK_REQUEST_DISTANCE};
use loom_aie2p_isa::{decode, isa, print_bundle, Bundle, IsaError, OperandKind, Value};
use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HazardKind {
    ReadBeforeWrite,
    WriteOrder,
    WriteBeforeRead,
    MemoryOrder,
    UnitConflict,
    LockDistance,
}

impl HazardKind {
    pub fn name(self) -> &'static str {
        match self {
            HazardKind::ReadBeforeWrite => "a read before its write is visible",
            HazardKind::WriteOrder => "a write landing before an earlier write",
            HazardKind::WriteBeforeRead => "a write landing before an earlier read",
            HazardKind::MemoryOrder => "memory accesses out of program order",
            HazardKind::UnitConflict => "a functional unit held twice in a cycle",
            HazardKind::LockDistance => "lock requests less than 4 bundles apart",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hazard {
    pub kind: HazardKind,
    pub address: u32,
    pub bundle: String,
    pub detail: String,
}

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:#x}: `{}`: {}: {}",
            self.address,
            self.bundle,
            self.kind.name(),
            self.detail
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckError {
    Decode(IsaError),
    Hazard(Hazard),
    /// An instruction the itineraries do not time.
    Untimed(Untimed),
    /// Control flow the checker cannot follow (a register target).
    Unsupported(String),
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Decode(e) => e.fmt(f),
            CheckError::Hazard(h) => h.fmt(f),
            CheckError::Untimed(u) => u.fmt(f),
            CheckError::Unsupported(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for CheckError {}

/// What is in flight at a bundle's issue, in cycles relative to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct State {
    /// Per register: the latest cycle its last write may land, and the
    /// bypass it forwards through (exact timings only).
    writes: BTreeMap<String, (i64, Option<String>)>,
    /// Per register: the latest cycle a read may happen.
    reads: BTreeMap<String, i64>,
    load: Option<i64>,
    store: Option<i64>,
    units: BTreeMap<i64, Vec<(String, bool)>>,
    /// Bundles since the last lock request (capped at the distance).
    since_lock: Option<u32>,
}

impl State {
    fn join(&mut self, other: &State) {
        for (r, (late, bypass)) in &other.writes {
            match self.writes.get_mut(r) {
                Some((mine, my_bypass)) => {
                    if *late > *mine {
                        *mine = *late;
                        *my_bypass = bypass.clone();
                    } else if *late == *mine && my_bypass != bypass {
                        *my_bypass = None;
                    }
                }
                None => {
                    self.writes.insert(r.clone(), (*late, bypass.clone()));
                }
            }
        }
        for (r, late) in &other.reads {
            let e = self.reads.entry(r.clone()).or_insert(*late);
            *e = (*e).max(*late);
        }
        self.load = later(self.load, other.load);
        self.store = later(self.store, other.store);
        join_units(&mut self.units, &other.units);
        self.since_lock = nearer_lock(self.since_lock, other.since_lock);
    }

    /// The state one bundle later.
    fn advance(&self) -> State {
        State {
            writes: self
                .writes
                .iter()
                .filter(|(_, (l, _))| *l >= 1)
                .map(|(r, (l, b))| (r.clone(), (l - 1, b.clone())))
                .collect(),
            reads: self
                .reads
                .iter()
                .filter(|(_, l)| **l >= 1)
                .map(|(r, l)| (r.clone(), l - 1))
                .collect(),
            load: self.load.filter(|l| *l >= 1).map(|l| l - 1),
            store: self.store.filter(|l| *l >= 1).map(|l| l - 1),
            units: self
                .units
                .iter()
                .filter(|(c, _)| **c >= 1)
                .map(|(c, h)| (c - 1, h.clone()))
                .collect(),
            since_lock: self
                .since_lock
                .map(|s| (s + 1).min(LOCK_REQUEST_DISTANCE as u32)),
        }
    }
}

fn is_nop(bundle: &Bundle, i: usize) -> bool {
    bundle.instructions[i].opcode.mnemonic.starts_with("nop")
}

/// Check one bundle issued in `state`; the state after it.
fn step(state: &State, bundle: &Bundle, at: u32) -> Result<State, CheckError> {
    let hazard = |kind, detail: String| {
        CheckError::Hazard(Hazard {
            kind,
            address: at,
            bundle: print_bundle(bundle),
            detail,
        })
    };
    let effects: Vec<(String, Effects)> = (0..bundle.instructions.len())
        .filter(|&i| !is_nop(bundle, i))
        .map(|i| {
            let inst = &bundle.instructions[i];
            timing::effects(inst)
                .map(|e| (inst.opcode.mnemonic.clone(), e))
                .map_err(CheckError::Untimed)
        })
        .collect::<Result<_, _>>()?;
    let mut next = state.clone();
    // Reads see the state before this bundle's writes.
    for (name, e) in &effects {
        for read in &e.reads {
            if let Some((late, bypass)) = state.writes.get(&read.register) {
                let exact = read.window.early == read.window.late;
                let forwarded = exact && bypass.is_some() && *bypass == read.bypass;
                let sees = i64::from(read.window.early) + i64::from(forwarded);
                if sees <= *late {
                    return Err(hazard(
                        HazardKind::ReadBeforeWrite,
                        format!(
                            "{name} reads {} at cycle {}, its write lands at cycle {late}",
                            read.register, read.window.early
                        ),
                    ));
                }
            }
            let e = next.reads.entry(read.register.clone()).or_insert(i64::MIN);
            *e = (*e).max(i64::from(read.window.late));
        }
        if e.lock_request {
            if let Some(since) = state
                .since_lock
                .filter(|&s| (s as usize) < LOCK_REQUEST_DISTANCE)
            {
                return Err(hazard(
                    HazardKind::LockDistance,
                    format!("{name} is {since} bundles after a lock request"),
                ));
            }
            next.since_lock = Some(0);
        }
        if let Some((kind, window)) = e.memory {
            let (early, late) = (i64::from(window.early), i64::from(window.late));
            let store_clash = state.store.filter(|s| early <= *s);
            let load_clash = state.load.filter(|l| kind == Memory::Store && early < *l);
            if let Some(c) = store_clash.or(load_clash) {
                return Err(hazard(
                    HazardKind::MemoryOrder,
                    format!("{name} accesses memory at cycle {early}, an earlier access at {c}"),
                ));
            }
            match kind {
                Memory::Load => next.load = later(next.load, Some(late)),
                Memory::Store => next.store = later(next.store, Some(late)),
            }
        }
    }
    // Units: against what is in flight and the bundle's other instructions.
    for (name, e) in &effects {
        for u in &e.units {
            let cycle = i64::from(u.cycle);
            let held = next.units.get(&cycle).cloned().unwrap_or_default();
            let free = |unit: &String| {
                let mut holders = held.iter().filter(|(n, _)| n == unit);
                if u.required {
                    holders.next().is_none()
                } else {
                    holders.all(|(_, required)| !required)
                }
            };
            match u.units.iter().find(|unit| free(unit)) {
                Some(unit) => next
                    .units
                    .entry(cycle)
                    .or_default()
                    .push((unit.clone(), u.required)),
                None => {
                    return Err(hazard(
                        HazardKind::UnitConflict,
                        format!(
                            "{name} needs {} at cycle {cycle}, which another holds",
                            u.units.join("|")
                        ),
                    ))
                }
            }
        }
    }
    for (name, e) in &effects {
        for write in &e.writes {
            let early = i64::from(write.window.early);
            if let Some((late, _)) = state.writes.get(&write.register) {
                if early <= *late {
                    return Err(hazard(
                        HazardKind::WriteOrder,
                        format!(
                            "{name} writes {} at cycle {early}, an earlier write lands at {late}",
                            write.register
                        ),
                    ));
                }
            }
            if let Some(read) = next.reads.get(&write.register).filter(|r| early < **r) {
                return Err(hazard(
                    HazardKind::WriteBeforeRead,
                    format!(
                        "{name} writes {} at cycle {early}, an earlier read is at {read}",
                        write.register
                    ),
                ));
            }
        }
    }
    for (_, e) in &effects {
        for write in &e.writes {
            let exact = write.window.early == write.window.late;
            next.writes.insert(
                write.register.clone(),
                (
                    i64::from(write.window.late),
                    write.bypass.clone().filter(|_| exact),
                ),
            );
        }
    }
    Ok(next)
}

/// A transfer's direct target, by program-memory address.
fn target(bundle: &Bundle) -> Option<Result<u32, String>> {
    let inst = bundle
        .instructions
        .iter()
        .find(|i| i.opcode.has_delay_slot)?;
    let address = inst.opcode.operands.iter().find_map(|o| {
        let is_address = o.kind == OperandKind::Immediate
            && isa()
                .immediate(&o.class)
                .is_some_and(|imm| imm.kind == "address");
        match (is_address, inst.value(&o.name)) {
            (true, Some(Value::Immediate(v))) => Some(v as u32),
            _ => None,
        }
    });
    Some(address.ok_or_else(|| format!("`{}` jumps to a register", inst.opcode.mnemonic)))
}

fn conditional(bundle: &Bundle) -> bool {
    bundle.instructions.iter().any(|i| {
        i.opcode.has_delay_slot && matches!(i.opcode.mnemonic.as_str(), "jnz" | "jz" | "jnzd")
    })
}

/// Check the image at program-memory address `base`.
pub fn check(image: &[u8], base: u32) -> Result<(), CheckError> {
    let bundles = decode(image).map_err(CheckError::Decode)?;
    let n = bundles.len();
    let at: Vec<u32> = bundles.iter().map(|(o, _)| base + *o as u32).collect();
    // Successors: the next bundle, or a transfer's ways after its slots.
    let mut succs: Vec<Vec<usize>> = (0..n)
        .map(|i| if i + 1 < n { vec![i + 1] } else { vec![] })
        .collect();
    for (i, (_, bundle)) in bundles.iter().enumerate() {
        if bundle
            .instructions
            .iter()
            .any(|x| x.opcode.mnemonic == "done")
        {
            succs[i].clear();
        }
        if let Some(t) = target(bundle) {
            let t = t.map_err(CheckError::Unsupported)?;
            let last = i + DELAY_SLOTS;
            let to = at.iter().position(|&a| a == t).ok_or_else(|| {
                CheckError::Unsupported(format!("{:#x}: the target {t:#x} starts no bundle", at[i]))
            })?;
            if last >= n {
                return Err(CheckError::Unsupported(format!(
                    "{:#x}: the image ends inside the delay slots",
                    at[i]
                )));
            }
            succs[last] = if conditional(bundle) && last + 1 < n {
                vec![to, last + 1]
            } else {
                vec![to]
            };
        }
    }
    let mut input: Vec<Option<State>> = vec![None; n];
    if n == 0 {
        return Ok(());
    }
    input[0] = Some(State::default());
    let mut work = vec![0usize];
    while let Some(i) = work.pop() {
        let Some(state) = input[i].clone() else {
            continue;
        };
        let out = step(&state, &bundles[i].1, at[i])?.advance();
        for &s in &succs[i] {
            let mut merged = input[s].clone().unwrap_or_default();
            let before = input[s].clone();
            if before.is_none() {
                merged = out.clone();
            } else {
                merged.join(&out);
            }
            if Some(&merged) != before.as_ref() {
                input[s] = Some(merged);
                work.push(s);
            }
        }
    }
    Ok(())
}
