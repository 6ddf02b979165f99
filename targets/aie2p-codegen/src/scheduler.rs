//! List scheduling of one block into bundles. Dependences (registers
//! read after write, written after read or write; memory accesses with a
//! store among them; lock requests and `done` ordering the memory
//! accesses around them) carry latencies from `timing`; a bundle holds one
//! instruction per slot (`lng` takes the alu and mv slots), only slot sets
//! some bundle format holds, and no two instructions whose stages hold a
//! functional unit at the same cycle. Ready instructions go by the longest
//! latency path to the block's end.
//!
//! Effects stay in flight across block boundaries: a block is scheduled
//! against what its predecessors may leave in flight at its first bundle
//! (`InFlight`: writes still to land, reads still to happen, memory
//! accesses, units held, the last lock request), and says what it leaves
//! in flight for its successors; `emit` iterates the blocks to a fixed
//! point. Only `done` waits for everything. In the fallback (`drain`),
//! every block drains instead: its successor's first bundle comes after
//! every effect of the block (`Effects::drain`). A control transfer is
//! placed as early as its 5 delay slots can take the work after it (no
//! lock request among them); empty delay slots and the bundles a latency
//! needs are NOP bundles.

use crate::error::CodegenError;
use crate::join::{join_units, later, nearer_lock};
use crate::location::SourceLocation;
use crate::timing::{self, Effects, Memory, UnitUse};
use loom_aie2p_isa::rules::{DELAY_SLOTS, LOCK_REQUEST_DISTANCE};
use loom_aie2p_isa::{isa, Instruction, Opcode};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::OnceLock;

pub(crate) type Located = (Instruction, Option<SourceLocation>);

/// An instruction to schedule, with the records it may issue as instead
/// of its own (`MachineInst::alternatives`): the scheduler binds one.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub located: Located,
    pub alternatives: Vec<&'static Opcode>,
}

impl Pending {
    /// An instruction of one record.
    pub(crate) fn fixed(located: Located) -> Pending {
        Pending {
            located,
            alternatives: Vec::new(),
        }
    }
}

/// How the block ends.
#[derive(Clone)]
pub(crate) enum End {
    /// Into the next block in the layout.
    Fallthrough,
    /// A jump (taking effect after its delay slots).
    Transfer(Located),
    /// `done`: the last bundle, after everything.
    Done(Located),
}

pub(crate) struct Scheduled {
    pub bundles: Vec<Vec<Located>>,
    /// The bundle holding the transfer.
    pub transfer: Option<usize>,
}

/// What may still be in flight at a block's first bundle, in cycles
/// relative to its issue (the latency checker's state, joined over the
/// ways in).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct InFlight {
    /// Per register, the latest cycle a write to it lands.
    writes: BTreeMap<String, i64>,
    /// Per register, the latest cycle it is read.
    reads: BTreeMap<String, i64>,
    load: Option<i64>,
    store: Option<i64>,
    /// Functional units held per cycle.
    units: BTreeMap<i64, Vec<(String, bool)>>,
    /// The cycle from which memory may be accessed after a lock request.
    fence: Option<i64>,
    /// Bundles since the last lock request, at most the distance (§9).
    since_lock: Option<u32>,
}

fn latest(map: &mut BTreeMap<String, i64>, register: &str, cycle: i64) {
    let e = map.entry(register.to_string()).or_insert(cycle);
    *e = (*e).max(cycle);
}

impl InFlight {
    /// The worst of both (what either way in may leave).
    pub(crate) fn join(&mut self, other: &InFlight) {
        for (r, &c) in &other.writes {
            latest(&mut self.writes, r, c);
        }
        for (r, &c) in &other.reads {
            latest(&mut self.reads, r, c);
        }
        self.load = later(self.load, other.load);
        self.store = later(self.store, other.store);
        join_units(&mut self.units, &other.units);
        self.fence = later(self.fence, other.fence);
        self.since_lock = nearer_lock(self.since_lock, other.since_lock);
    }

    /// Whether a block scheduled against `self` is safe when `other` is
    /// what is in flight: every effect of `other` is in `self`, no later.
    pub(crate) fn covers(&self, other: &InFlight) -> bool {
        let within = |mine: &BTreeMap<String, i64>, theirs: &BTreeMap<String, i64>| {
            theirs
                .iter()
                .all(|(r, c)| mine.get(r).is_some_and(|m| m >= c))
        };
        let no_later = |mine: Option<i64>, theirs: Option<i64>| match (mine, theirs) {
            (_, None) => true,
            (Some(m), Some(t)) => m >= t,
            (None, Some(_)) => false,
        };
        let units = other.units.iter().all(|(c, held)| {
            self.units
                .get(c)
                .is_some_and(|mine| held.iter().all(|h| mine.contains(h)))
        });
        let lock = match (self.since_lock, other.since_lock) {
            (_, None) => true,
            (Some(m), Some(t)) => m <= t,
            (None, Some(_)) => false,
        };
        within(&self.writes, &other.writes)
            && within(&self.reads, &other.reads)
            && no_later(self.load, other.load)
            && no_later(self.store, other.store)
            && no_later(self.fence, other.fence)
            && units
            && lock
    }

    /// The earliest a node with `effects` may issue: the checker's rules
    /// (hazard.rs) against what is in flight.
    fn release(&self, effects: &Effects) -> u32 {
        let mut t: i64 = 0;
        for r in &effects.reads {
            if let Some(&land) = self.writes.get(&r.register) {
                t = t.max(land - i64::from(r.window.early) + 1);
            }
        }
        for w in &effects.writes {
            let early = i64::from(w.window.early);
            if let Some(&land) = self.writes.get(&w.register) {
                t = t.max(land - early + 1);
            }
            if let Some(&read) = self.reads.get(&w.register) {
                t = t.max(read - early);
            }
        }
        if let Some((kind, window)) = effects.memory {
            let early = i64::from(window.early);
            if let Some(s) = self.store {
                t = t.max(s - early + 1);
            }
            if let (Memory::Store, Some(l)) = (kind, self.load) {
                t = t.max(l - early);
            }
            if let Some(f) = self.fence {
                t = t.max(f);
            }
        }
        if effects.barrier {
            // Lock requests and `done` come after the memory accesses.
            let first = i64::from(timing::earliest_cycle());
            if let Some(m) = later(self.load, self.store) {
                t = t.max(m + 1 - first);
            }
        }
        if let (true, Some(since)) = (effects.lock_request, self.since_lock) {
            t = t.max(LOCK_REQUEST_DISTANCE as i64 - i64::from(since));
        }
        t.max(0) as u32
    }

    /// The bundles before everything in flight is done (`done` waits).
    fn horizon(&self) -> u32 {
        let cycles = self
            .writes
            .values()
            .chain(self.reads.values())
            .copied()
            .chain(self.load)
            .chain(self.store)
            .chain(self.units.keys().copied())
            .chain(self.fence);
        cycles.map(|c| c + 1).max().unwrap_or(0).max(0) as u32
    }

    /// What is in flight after a block of `length` bundles entered with
    /// `self`, whose nodes issued at `times`.
    fn after(&self, nodes: &[Node], times: &[u32], chosen: &[usize], length: u32) -> InFlight {
        let l = i64::from(length);
        let mut out = InFlight::default();
        let keep = |c: i64| (c >= 0).then_some(c);
        for (r, &c) in &self.writes {
            if let Some(c) = keep(c - l) {
                out.writes.insert(r.clone(), c);
            }
        }
        for (r, &c) in &self.reads {
            if let Some(c) = keep(c - l) {
                out.reads.insert(r.clone(), c);
            }
        }
        out.load = self.load.and_then(|c| keep(c - l));
        out.store = self.store.and_then(|c| keep(c - l));
        for (c, held) in &self.units {
            if let Some(c) = keep(c - l) {
                out.units.insert(c, held.clone());
            }
        }
        out.fence = self.fence.and_then(|c| keep(c - l));
        out.since_lock = self
            .since_lock
            .map(|s| (s + length).min(LOCK_REQUEST_DISTANCE as u32));
        for ((node, &t), &c) in nodes.iter().zip(times).zip(chosen) {
            let e = &node.effects;
            let t = i64::from(t);
            for w in &e.writes {
                if let Some(c) = keep(t + i64::from(w.window.late) - l) {
                    latest(&mut out.writes, &w.register, c);
                }
            }
            for r in &e.reads {
                if let Some(c) = keep(t + i64::from(r.window.late) - l) {
                    latest(&mut out.reads, &r.register, c);
                }
            }
            if let Some((kind, window)) = e.memory {
                let c = keep(t + i64::from(window.late) - l);
                match kind {
                    Memory::Load => out.load = later(out.load, c),
                    Memory::Store => out.store = later(out.store, c),
                }
            }
            for u in &node.choices[c].units {
                if let Some(c) = keep(t + i64::from(u.cycle) - l) {
                    // Which of the unit's alternatives it took is the
                    // schedule's; all of them count as held (the worst).
                    let held = out.units.entry(c).or_default();
                    for unit in &u.units {
                        let h = (unit.clone(), u.required);
                        if !held.contains(&h) {
                            held.push(h);
                        }
                    }
                    held.sort();
                }
            }
            if e.lock_request {
                let since = (l - t).clamp(0, LOCK_REQUEST_DISTANCE as i64) as u32;
                out.since_lock = Some(out.since_lock.map_or(since, |s| s.min(since)));
            }
            if e.barrier {
                out.fence = later(out.fence, keep(t + i64::from(e.drain()) - l));
            }
        }
        out
    }
}

const SLOTS: [&str; 8] = ["Lda", "Ldb", "Alu", "Mv", "St", "Vec", "Lng", "Nop"];

fn slot_bit(slot: &str) -> u32 {
    SLOTS
        .iter()
        .position(|s| *s == slot)
        .map_or(1 << 31, |i| 1 << i)
}

/// The slots an instruction keeps others from: `lng` is alu + mv.
fn occupancy(slot: &str) -> u32 {
    if slot == "Lng" {
        slot_bit("Lng") | slot_bit("Alu") | slot_bit("Mv")
    } else {
        slot_bit(slot)
    }
}

/// The slot sets of the bundle formats: a set is packable inside one.
fn formats() -> &'static [u32] {
    static MASKS: OnceLock<Vec<u32>> = OnceLock::new();
    MASKS.get_or_init(|| {
        isa()
            .formats
            .iter()
            .map(|f| f.slots.iter().fold(0, |m, s| m | slot_bit(&s.slot)))
            .collect()
    })
}

fn packable(slots: u32) -> bool {
    formats().iter().any(|f| slots & !f == 0)
}

/// Functional units held per absolute cycle.
#[derive(Default, Clone)]
pub(crate) struct Reservations {
    held: BTreeMap<u32, Vec<(String, bool)>>,
}

impl Reservations {
    /// What the block's predecessors leave held.
    fn entered(entry: &InFlight) -> Reservations {
        Reservations {
            held: entry
                .units
                .iter()
                .map(|(&c, h)| (c as u32, h.clone()))
                .collect(),
        }
    }

    /// The unit each of `units`' stages takes issued at `at`, if all are
    /// free (LLVM's rule: a Required stage conflicts with any holder, a
    /// Reserved one with Required holders).
    fn choose(&self, units: &[UnitUse], at: u32) -> Option<Vec<(u32, String, bool)>> {
        let mut taken: Vec<(u32, String, bool)> = Vec::new();
        for u in units {
            let cycle = at + u.cycle;
            let held = self.held.get(&cycle).map_or(&[][..], Vec::as_slice);
            let free = |unit: &String| {
                let holders = held
                    .iter()
                    .map(|(n, r)| (n, *r))
                    .chain(taken.iter().filter(|t| t.0 == cycle).map(|t| (&t.1, t.2)));
                let mut holders = holders.filter(|(n, _)| *n == unit);
                if u.required {
                    holders.next().is_none()
                } else {
                    holders.all(|(_, required)| !required)
                }
            };
            let unit = u.units.iter().find(|unit| free(unit))?;
            taken.push((cycle, unit.clone(), u.required));
        }
        Some(taken)
    }

    fn take(&mut self, taken: Vec<(u32, String, bool)>) {
        for (cycle, unit, required) in taken {
            self.held.entry(cycle).or_default().push((unit, required));
        }
    }
}

/// One record a node may issue as: its slot and the units it holds.
struct Choice {
    opcode: &'static Opcode,
    units: Vec<UnitUse>,
    occupancy: u32,
    slot: u32,
}

impl Choice {
    fn of(opcode: &'static Opcode, effects: &Effects) -> Choice {
        Choice {
            opcode,
            units: effects.units.clone(),
            occupancy: occupancy(&opcode.slot),
            slot: slot_bit(&opcode.slot),
        }
    }
}

struct Node {
    located: Located,
    /// The register, memory and ordering effects, the same for every
    /// choice (the builder refuses alternatives that differ in them).
    effects: Effects,
    /// The instruction's own record first, then its alternatives.
    choices: Vec<Choice>,
    preds: Vec<(usize, u32)>,
    /// The earliest issue against what is in flight at the block's start.
    release: u32,
}

/// Dependences with their latencies (from earlier to later nodes).
fn dependences(nodes: &mut [Node]) {
    let mut last_writer: HashMap<String, usize> = HashMap::new();
    let mut readers: HashMap<String, Vec<usize>> = HashMap::new();
    let mut memory: Vec<usize> = Vec::new();
    let mut barriers: Vec<usize> = Vec::new();
    for j in 0..nodes.len() {
        let mut preds = Vec::new();
        let e = nodes[j].effects.clone();
        for read in &e.reads {
            if let Some(&w) = last_writer.get(&read.register) {
                for write in nodes[w]
                    .effects
                    .writes
                    .iter()
                    .filter(|x| x.register == read.register)
                {
                    preds.push((w, timing::read_after_write(write, read)));
                }
            }
        }
        for write in &e.writes {
            if let Some(&w) = last_writer.get(&write.register) {
                for first in nodes[w]
                    .effects
                    .writes
                    .iter()
                    .filter(|x| x.register == write.register)
                {
                    preds.push((w, timing::write_after_write(first, write)));
                }
            }
            for &r in readers.get(&write.register).into_iter().flatten() {
                if r == j {
                    continue;
                }
                for read in nodes[r]
                    .effects
                    .reads
                    .iter()
                    .filter(|x| x.register == write.register)
                {
                    preds.push((r, timing::write_after_read(read, write)));
                }
            }
        }
        if let Some(access) = e.memory {
            for &i in &memory {
                if let Some(latency) = nodes[i]
                    .effects
                    .memory
                    .and_then(|first| timing::memory_order(first, access))
                {
                    preds.push((i, latency));
                }
            }
            for &b in &barriers {
                preds.push((b, nodes[b].effects.drain()));
            }
        }
        if e.barrier {
            for &i in memory.iter().chain(&barriers) {
                preds.push((i, nodes[i].effects.drain()));
            }
        }
        for read in &e.reads {
            readers.entry(read.register.clone()).or_default().push(j);
        }
        for write in &e.writes {
            last_writer.insert(write.register.clone(), j);
            readers.remove(&write.register);
        }
        if e.memory.is_some() {
            memory.push(j);
        }
        if e.barrier {
            barriers.push(j);
        }
        preds.sort_unstable();
        preds.dedup();
        nodes[j].preds = preds;
    }
}

/// The last cycle node `i` may issue at when the transfer issues at `at`
/// (its effects done by the block's end when the block drains).
fn deadline(node: &Node, at: u32, drain: bool) -> Option<u32> {
    let slots = DELAY_SLOTS as u32;
    let mut last = at + slots;
    if drain {
        last = last.min((at + slots + 1).checked_sub(node.effects.drain())?);
    }
    if node.effects.barrier {
        last = last.min(at.checked_sub(1)?);
    }
    Some(last)
}

struct Problem {
    nodes: Vec<Node>,
    /// The exit node's index when it is a transfer (placed, not scheduled).
    transfer: Option<usize>,
    priority: Vec<u32>,
    entry: InFlight,
    drain: bool,
}

/// Cycles the scheduler tries beyond the longest path before giving up.
const SLACK: u32 = 256;

impl Problem {
    /// Issue cycles of every node and the choice each issues as, the
    /// transfer fixed at `at`; none when the greedy schedule misses a
    /// deadline.
    fn attempt(&self, at: Option<u32>, limit: u32) -> Option<(Vec<u32>, Vec<usize>)> {
        let n = self.nodes.len();
        let mut times: Vec<Option<u32>> = vec![None; n];
        let mut chosen = vec![0usize; n];
        let mut reservations = Reservations::entered(&self.entry);
        let mut occupied: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
        let mut deadlines = vec![u32::MAX; n];
        if let (Some(x), Some(at)) = (self.transfer, at) {
            let node = &self.nodes[x];
            if at < node.release {
                return None;
            }
            let choice = &node.choices[0];
            let taken = reservations.choose(&choice.units, at)?;
            reservations.take(taken);
            occupied.insert(at, (choice.occupancy, choice.slot));
            times[x] = Some(at);
            for (i, d) in deadlines.iter_mut().enumerate() {
                if i != x {
                    *d = deadline(&self.nodes[i], at, self.drain)?;
                }
            }
            for &(p, latency) in &node.preds {
                deadlines[p] = deadlines[p].min(at.checked_sub(latency)?);
            }
            // A node's deadline binds its predecessors too (preds come
            // earlier in program order, so one backward pass is enough).
            for j in (0..n).rev() {
                if j == x || deadlines[j] == u32::MAX {
                    continue;
                }
                for &(p, latency) in &self.nodes[j].preds {
                    if p != x {
                        deadlines[p] = deadlines[p].min(deadlines[j].checked_sub(latency)?);
                    }
                }
            }
        }
        let mut order: Vec<usize> = (0..n).filter(|&i| times[i].is_none()).collect();
        // The nearest deadline first (the work a transfer's placement
        // needs before it), then the longest path: independent work that
        // could go first would otherwise take the bundles the transfer's
        // operands need, and push the transfer past its delay slots' reach.
        order.sort_by_key(|&i| (deadlines[i], std::cmp::Reverse(self.priority[i]), i));
        // Each cycle visits, in that order, only the nodes whose
        // predecessors are all placed (by their rank in `order`): the same
        // visits as a scan of every node, without the scan. A node placed
        // in a cycle can free a later-ranked one in the same cycle (a
        // latency of 0), as the scan would find it.
        let mut rank = vec![usize::MAX; n];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r;
        }
        let mut waiting = vec![0usize; n];
        let mut successors: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, node) in self.nodes.iter().enumerate() {
            for &(p, _) in &node.preds {
                successors[p].push(i);
                if times[p].is_none() {
                    waiting[i] += 1;
                }
            }
        }
        let mut ready: BTreeSet<usize> = order
            .iter()
            .filter(|&&i| waiting[i] == 0)
            .map(|&i| rank[i])
            .collect();
        let mut left = order.len();
        let mut cycle = 0;
        while left > 0 {
            if cycle > limit {
                return None;
            }
            let mut from = 0;
            while let Some(&r) = ready.range(from..).next() {
                from = r + 1;
                let i = order[r];
                if cycle > deadlines[i] {
                    return None;
                }
                let node = &self.nodes[i];
                let ready_now = cycle >= node.release
                    && node
                        .preds
                        .iter()
                        .all(|&(p, latency)| times[p].is_some_and(|t| t + latency <= cycle));
                if !ready_now {
                    continue;
                }
                let (occ, slots) = occupied.get(&cycle).copied().unwrap_or((0, 0));
                // The first choice whose slot and units are free here.
                let fits = node.choices.iter().enumerate().find_map(|(c, choice)| {
                    if occ & choice.occupancy != 0 || !packable(slots | choice.slot) {
                        return None;
                    }
                    reservations
                        .choose(&choice.units, cycle)
                        .map(|taken| (c, taken))
                });
                let Some((c, taken)) = fits else {
                    continue;
                };
                let choice = &node.choices[c];
                reservations.take(taken);
                occupied.insert(cycle, (occ | choice.occupancy, slots | choice.slot));
                times[i] = Some(cycle);
                chosen[i] = c;
                left -= 1;
                ready.remove(&r);
                for &succ in &successors[i] {
                    waiting[succ] -= 1;
                    if waiting[succ] == 0 && times[succ].is_none() {
                        ready.insert(rank[succ]);
                    }
                }
            }
            cycle += 1;
        }
        let times: Option<Vec<u32>> = times.into_iter().collect();
        times.map(|t| (t, chosen))
    }
}

/// Schedule `insts` (in program order) ending with `end`, entered with
/// `entry` in flight; what the block leaves in flight. With `drain` it
/// leaves nothing.
pub(crate) fn schedule(
    insts: Vec<Pending>,
    end: End,
    entry: &InFlight,
    drain: bool,
) -> Result<(Scheduled, InFlight), CodegenError> {
    let mut pending = insts;
    let (transfer, done) = match end {
        End::Fallthrough => (false, false),
        End::Transfer(t) => {
            pending.push(Pending::fixed(t));
            (true, false)
        }
        End::Done(d) => {
            pending.push(Pending::fixed(d));
            (false, true)
        }
    };
    let mut nodes: Vec<Node> = pending
        .into_iter()
        .map(
            |Pending {
                 located,
                 alternatives,
             }| {
                let effects = timing::effects(&located.0).map_err(CodegenError::Untimed)?;
                let mut choices = vec![Choice::of(located.0.opcode, &effects)];
                for &opcode in &alternatives {
                    let inst = Instruction {
                        opcode,
                        operands: located.0.operands.clone(),
                    };
                    let theirs = timing::effects(&inst).map_err(CodegenError::Untimed)?;
                    let same = theirs.reads == effects.reads
                        && theirs.writes == effects.writes
                        && theirs.memory == effects.memory
                        && theirs.barrier == effects.barrier
                        && theirs.lock_request == effects.lock_request;
                    if !same {
                        return Err(CodegenError::Internal(format!(
                            "{} is no alternative to {}: its effects differ",
                            opcode.name, located.0.opcode.name
                        )));
                    }
                    choices.push(Choice::of(opcode, &theirs));
                }
                Ok(Node {
                    release: entry.release(&effects),
                    effects,
                    choices,
                    located,
                    preds: Vec::new(),
                })
            },
        )
        .collect::<Result<_, CodegenError>>()?;
    dependences(&mut nodes);
    let n = nodes.len();
    let exit = (transfer || done).then(|| n - 1);
    if done {
        // `done` comes after every effect of the block.
        let x = n - 1;
        for i in 0..x {
            let drain = nodes[i].effects.drain();
            nodes[x].preds.push((i, drain));
        }
        nodes[x].release = nodes[x].release.max(entry.horizon());
    }
    if transfer {
        // Lock requests may not sit in the delay slots.
        let x = n - 1;
        for i in 0..x {
            if nodes[i].effects.barrier {
                nodes[x].preds.push((i, 1));
            }
        }
    }
    // Priority: the longest latency path to the block's end.
    let mut priority = vec![0u32; n];
    for j in (0..n).rev() {
        priority[j] = priority[j].max(nodes[j].effects.drain());
        for &(p, latency) in &nodes[j].preds {
            priority[p] = priority[p].max(latency + priority[j]);
        }
    }
    // The earliest each node could issue, resources aside.
    let mut asap: Vec<u32> = nodes.iter().map(|n| n.release).collect();
    for j in 0..n {
        for &(p, latency) in &nodes[j].preds {
            asap[j] = asap[j].max(asap[p] + latency);
        }
    }
    let longest = asap
        .iter()
        .zip(&nodes)
        .map(|(a, n)| a + n.effects.drain())
        .max()
        .unwrap_or(0);
    let limit = longest + SLACK + 8 * n as u32;
    let problem = Problem {
        nodes,
        transfer: transfer.then(|| n - 1),
        priority,
        entry: entry.clone(),
        drain,
    };
    let ((times, chosen), transfer_at) = if transfer {
        let x = n - 1;
        let slots = DELAY_SLOTS as u32;
        let lower = (0..x)
            .map(|i| {
                let e = &problem.nodes[i].effects;
                let mut at = asap[i].saturating_sub(slots);
                if drain {
                    at = at.max((asap[i] + e.drain()).saturating_sub(slots + 1));
                }
                if e.barrier {
                    at = at.max(asap[i] + 1);
                }
                at
            })
            .chain([asap[x]])
            .max()
            .unwrap_or(0);
        let found =
            (lower..=limit).find_map(|at| problem.attempt(Some(at), limit).map(|t| (t, at)));
        let (times, at) = found.ok_or_else(|| {
            CodegenError::Internal("no schedule places the block's transfer".into())
        })?;
        (times, Some(at))
    } else {
        let times = problem
            .attempt(None, limit)
            .ok_or_else(|| CodegenError::Internal("the block did not schedule".into()))?;
        (times, None)
    };
    let length = match (transfer_at, exit) {
        (Some(at), _) => at + DELAY_SLOTS as u32 + 1,
        (None, Some(x)) => times[x] + 1,
        (None, None) if drain => times
            .iter()
            .zip(&problem.nodes)
            .map(|(t, n)| t + n.effects.drain())
            .max()
            .unwrap_or(0),
        (None, None) => times.iter().map(|t| t + 1).max().unwrap_or(0),
    };
    let exit = if drain {
        InFlight::default()
    } else {
        problem.entry.after(&problem.nodes, &times, &chosen, length)
    };
    let mut bundles: Vec<Vec<Located>> = vec![Vec::new(); length as usize];
    for ((node, t), c) in problem.nodes.into_iter().zip(times).zip(chosen) {
        let (mut inst, location) = node.located;
        // The record the schedule bound (its operands are the same).
        inst.opcode = node.choices[c].opcode;
        bundles[t as usize].push((inst, location));
    }
    Ok((
        Scheduled {
            bundles,
            transfer: transfer_at.map(|t| t as usize),
        },
        exit,
    ))
}
