//! The search over schedules. Each strand task is a fixed sequence of
//! channel actions (its control flow does not depend on channel contents,
//! `strands.rs`), so a state of the program is how far each task has come;
//! the channels' slot counts follow from that. The search visits states in
//! order of the number of actions taken (so the first deadlock found has
//! the shortest schedule), hashes them so a state reached by several
//! interleavings is explored once, and reduces the interleavings it tries
//! (partial-order reduction with persistent sets, below): every reachable
//! deadlock is still reached, and nothing else is lost since every run is
//! finite.
//!
//! The reduction: a `publish` or `release` is always enabled and never
//! disables or changes the outcome of another task's action, and neither
//! does a `reserve` (`acquire`) on a channel whose reserve (acquire) side no
//! other live task takes again; such an action alone is a persistent set and
//! runs at once. Only contended reserves and acquires branch.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Reserve,
    Acquire,
    Publish,
    Release,
}

/// A channel's slots: how many are free, published, reserved and acquired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Slots {
    pub free: u32,
    pub published: u32,
    pub reserved: u32,
    pub acquired: u32,
}

impl Slots {
    pub fn enabled(&self, kind: Kind) -> bool {
        match kind {
            Kind::Reserve => self.free > 0,
            Kind::Acquire => self.published > 0,
            Kind::Publish | Kind::Release => true,
        }
    }

    /// Take `kind`, which is enabled. A publish or release consumes an
    /// obligation its task took on the same channel before (the ownership
    /// rules keep obligations in their task), so a slot is held; the counts
    /// saturate rather than trust that.
    pub fn apply(&mut self, kind: Kind) {
        let (from, to) = match kind {
            Kind::Reserve => (&mut self.free, &mut self.reserved),
            Kind::Publish => (&mut self.reserved, &mut self.published),
            Kind::Acquire => (&mut self.published, &mut self.acquired),
            Kind::Release => (&mut self.acquired, &mut self.free),
        };
        *from = from.saturating_sub(1);
        *to += 1;
    }
}

/// What the search decided.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// Every schedule completes; `states` were visited.
    Completes { states: usize },
    /// A schedule (the task of each action, in order) after which every
    /// live task is blocked; no shorter schedule blocks them all.
    Deadlock { schedule: Vec<usize>, states: usize },
    /// More than `limit` states without a decision.
    Bound { limit: usize },
}

/// The tasks' action sequences (kind, channel), the channels' slots when the
/// strands start, and the most states to visit.
pub struct Problem<'a> {
    pub traces: &'a [Vec<(Kind, usize)>],
    pub slots: &'a [Slots],
    pub max_states: usize,
}

/// One visited state: the position in each trace and the slots.
struct Node {
    positions: Box<[u32]>,
    slots: Box<[Slots]>,
    /// The state it was reached from and the task whose action led here
    /// (before the actions that ran at once).
    parent: Option<(u32, u32)>,
}

impl Problem<'_> {
    /// For each task and channel, the last position at which the task
    /// reserves (acquires) it: after that, the task no longer contends for
    /// that side.
    fn last_takes(&self) -> Vec<HashMap<(usize, bool), usize>> {
        self.traces
            .iter()
            .map(|trace| {
                let mut last = HashMap::new();
                for (i, &(kind, channel)) in trace.iter().enumerate() {
                    match kind {
                        Kind::Reserve => last.insert((channel, true), i),
                        Kind::Acquire => last.insert((channel, false), i),
                        _ => None,
                    };
                }
                last
            })
            .collect()
    }

    /// The task's next action runs at once: a publish or release, or an
    /// enabled take of a side no other task takes again.
    fn runs_at_once(
        &self,
        last: &[HashMap<(usize, bool), usize>],
        positions: &[u32],
        slots: &[Slots],
        task: usize,
    ) -> bool {
        let Some(&(kind, channel)) = self.traces[task].get(positions[task] as usize) else {
            return false;
        };
        let side = match kind {
            Kind::Publish | Kind::Release => return true,
            Kind::Reserve => true,
            Kind::Acquire => false,
        };
        slots[channel].enabled(kind)
            && (0..self.traces.len()).all(|other| {
                other == task
                    || last[other]
                        .get(&(channel, side))
                        .is_none_or(|&at| at < positions[other] as usize)
            })
    }

    /// Run every action that runs at once, lowest task first, recording
    /// each task that acted.
    fn settle(
        &self,
        last: &[HashMap<(usize, bool), usize>],
        positions: &mut [u32],
        slots: &mut [Slots],
        acted: &mut Vec<usize>,
    ) {
        while let Some(task) =
            (0..self.traces.len()).find(|&t| self.runs_at_once(last, positions, slots, t))
        {
            self.step(positions, slots, task);
            acted.push(task);
        }
    }

    fn step(&self, positions: &mut [u32], slots: &mut [Slots], task: usize) {
        let (kind, channel) = self.traces[task][positions[task] as usize];
        slots[channel].apply(kind);
        positions[task] += 1;
    }

    pub fn search(&self) -> Found {
        let last = self.last_takes();
        let mut nodes: Vec<Node> = Vec::new();
        let mut seen: HashMap<Box<[u32]>, u32> = HashMap::new();
        let mut queue = BinaryHeap::new();
        let mut positions = vec![0u32; self.traces.len()];
        let mut slots = self.slots.to_vec();
        self.settle(&last, &mut positions, &mut slots, &mut Vec::new());
        let taken = |p: &[u32]| p.iter().map(|&x| u64::from(x)).sum::<u64>();
        queue.push(Reverse((taken(&positions), 0u32)));
        seen.insert(positions.clone().into(), 0);
        nodes.push(Node {
            positions: positions.into(),
            slots: slots.into(),
            parent: None,
        });
        let mut scratch = Vec::new();
        while let Some(Reverse((_, id))) = queue.pop() {
            let node = &nodes[id as usize];
            let live: Vec<usize> = (0..self.traces.len())
                .filter(|&t| (node.positions[t] as usize) < self.traces[t].len())
                .collect();
            let enabled: Vec<usize> = live
                .iter()
                .copied()
                .filter(|&t| {
                    let (kind, channel) = self.traces[t][node.positions[t] as usize];
                    node.slots[channel].enabled(kind)
                })
                .collect();
            if !live.is_empty() && enabled.is_empty() {
                return Found::Deadlock {
                    schedule: self.schedule(&nodes, id),
                    states: nodes.len(),
                };
            }
            for task in enabled {
                let node = &nodes[id as usize];
                let mut positions = node.positions.to_vec();
                let mut slots = node.slots.to_vec();
                self.step(&mut positions, &mut slots, task);
                scratch.clear();
                self.settle(&last, &mut positions, &mut slots, &mut scratch);
                if seen.contains_key(positions.as_slice()) {
                    continue;
                }
                if nodes.len() == self.max_states {
                    return Found::Bound {
                        limit: self.max_states,
                    };
                }
                let next = nodes.len() as u32;
                seen.insert(positions.clone().into(), next);
                queue.push(Reverse((taken(&positions), next)));
                nodes.push(Node {
                    positions: positions.into(),
                    slots: slots.into(),
                    parent: Some((id, task as u32)),
                });
            }
        }
        Found::Completes {
            states: nodes.len(),
        }
    }

    /// The whole schedule to node `id`: the choices along its path, each
    /// followed by the actions that ran at once, replayed from the start.
    fn schedule(&self, nodes: &[Node], id: u32) -> Vec<usize> {
        let mut choices = Vec::new();
        let mut at = id;
        while let Some((parent, task)) = nodes[at as usize].parent {
            choices.push(task as usize);
            at = parent;
        }
        choices.reverse();
        let last = self.last_takes();
        let mut positions = vec![0u32; self.traces.len()];
        let mut slots = self.slots.to_vec();
        let mut schedule = Vec::new();
        self.settle(&last, &mut positions, &mut slots, &mut schedule);
        for task in choices {
            self.step(&mut positions, &mut slots, task);
            schedule.push(task);
            self.settle(&last, &mut positions, &mut slots, &mut schedule);
        }
        schedule
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Kind::*;

    fn slots(capacities: &[u32]) -> Vec<Slots> {
        capacities
            .iter()
            .map(|&c| Slots {
                free: c,
                ..Slots::default()
            })
            .collect()
    }

    /// The transfer strand of the walkthrough with `records` records:
    /// prefetch two inputs, then drain one output before refilling one.
    fn transfer(records: usize, prefetch: usize) -> Vec<(Kind, usize)> {
        let mut trace = Vec::new();
        let fill = |t: &mut Vec<_>| t.extend([(Reserve, 0), (Publish, 0)]);
        for _ in 0..prefetch.min(records) {
            fill(&mut trace);
        }
        for record in 0..records {
            trace.extend([(Acquire, 1), (Release, 1)]);
            if record + prefetch < records {
                fill(&mut trace);
            }
        }
        trace
    }

    fn compute(records: usize) -> Vec<(Kind, usize)> {
        (0..records)
            .flat_map(|_| [(Acquire, 0), (Reserve, 1), (Publish, 1), (Release, 0)])
            .collect()
    }

    #[test]
    fn the_walkthrough_schedule_completes() {
        for records in [0, 1, 4, 64] {
            let traces = [transfer(records, 2), compute(records)];
            let found = Problem {
                traces: &traces,
                slots: &slots(&[2, 2]),
                max_states: 1000,
            }
            .search();
            // One producer and one consumer per side: nothing is contended,
            // so the search is a single run.
            assert_eq!(found, Found::Completes { states: 1 }, "{records} records");
        }
    }

    #[test]
    fn filling_every_input_first_deadlocks_with_the_shortest_schedule() {
        // Four records through two input slots and one output slot, every
        // input filled before any output is drained.
        let mut fill_all = Vec::new();
        for _ in 0..4 {
            fill_all.extend([(Reserve, 0), (Publish, 0)]);
        }
        for _ in 0..4 {
            fill_all.extend([(Acquire, 1), (Release, 1)]);
        }
        let traces = [fill_all, compute(4)];
        let Found::Deadlock { schedule, .. } = Problem {
            traces: &traces,
            slots: &slots(&[2, 1]),
            max_states: 1000,
        }
        .search() else {
            panic!("expected a deadlock");
        };
        // Two fills, the compute task takes record 0 round, the third fill,
        // then the compute task holds record 1 and waits for the output slot.
        assert_eq!(schedule, vec![0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1]);
    }

    #[test]
    fn contended_sides_branch_and_find_the_one_bad_interleaving() {
        // Two one-slot channels taken in opposite orders by tasks 0 and 1,
        // each holding its first slot while it takes the second; tasks 2
        // and 3 drain what they publish. Only the interleaving in which each
        // takes its first slot before the other's second blocks them all.
        let a = vec![(Reserve, 0), (Reserve, 1), (Publish, 1), (Publish, 0)];
        let b = vec![(Reserve, 1), (Reserve, 0), (Publish, 0), (Publish, 1)];
        let drain = |c| vec![(Acquire, c), (Release, c), (Acquire, c), (Release, c)];
        let traces = [a, b, drain(0), drain(1)];
        let found = Problem {
            traces: &traces,
            slots: &slots(&[1, 1]),
            max_states: 1000,
        }
        .search();
        let Found::Deadlock { schedule, .. } = found else {
            panic!("expected a deadlock, got {found:?}");
        };
        assert_eq!(schedule, vec![0, 1]);
        // With the second task taking the slots in the same order, every
        // schedule completes.
        let same = vec![(Reserve, 0), (Reserve, 1), (Publish, 1), (Publish, 0)];
        let traces = [same.clone(), same, drain(0), drain(1)];
        let found = Problem {
            traces: &traces,
            slots: &slots(&[1, 1]),
            max_states: 1000,
        }
        .search();
        assert!(matches!(found, Found::Completes { .. }), "{found:?}");
    }

    #[test]
    fn the_state_bound_is_a_refusal_not_a_proof() {
        // Eight tasks contending for one slot: many interleavings.
        let traces: Vec<Vec<(Kind, usize)>> = (0..8)
            .map(|_| vec![(Reserve, 0), (Publish, 0), (Acquire, 0), (Release, 0)])
            .collect();
        let found = Problem {
            traces: &traces,
            slots: &slots(&[1]),
            max_states: 10,
        }
        .search();
        assert_eq!(found, Found::Bound { limit: 10 });
        let found = Problem {
            traces: &traces,
            slots: &slots(&[1]),
            max_states: 1 << 16,
        }
        .search();
        assert!(matches!(found, Found::Completes { .. }), "{found:?}");
    }
}
