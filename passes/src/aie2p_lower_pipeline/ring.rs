//! The DMA-engine realization of a channel endpoint the command stream
//! admits more than once (the walkthrough's bounded ingress loops): "the DMA
//! engine itself can reserve a free channel slot, copy the next record, and
//! publish it".
//!
//! The stream's records of one endpoint become one transfer: the shim moves
//! them as one run of the caller's buffer, and the tile goes round the
//! channel's slots with a chain of one buffer descriptor per slot (each
//! taking and handing on one lock credit, as a single transfer's does) that
//! its task runs records / slots times. A worker admitting the other side
//! goes round the slots in the same order from slot 0 (its slot cursor).
//!
//! The run starts where the first record's copy starts and is waited for
//! where the program waits for the last record: the records in between
//! move as the slots' credits allow, ahead of the program's order, so the
//! realization is refused when that order could be seen: records that are
//! not consecutive in the caller's buffer, an endpoint a worker also admits,
//! or a run over caller bytes another transfer touches (one of them
//! writing). Any record count goes (`ring_tasks`): a chain round the slots
//! run in tasks of at most the profile's runs each, then the rest with a
//! shorter chain, the chain going round the slots more than once when that
//! keeps the tasks within the channel's start queue.

use super::access::{record_dims, Dim};
use super::realization::{refuse, Channel, Command, Refusal, Transfer, Way};
use super::schedule::conflict;
use loom_dialects::ir::value_name;
use loom_targets::DeviceProfile;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

/// `transfers` and `program` (the command stream in program order) with
/// each endpoint's records merged into one transfer. `shared`: the
/// endpoints (channel, reserve side) workers admit.
pub(super) fn rings(
    channels: &[Channel],
    transfers: Vec<Transfer>,
    program: Vec<Command>,
    shared: &BTreeSet<(usize, bool)>,
) -> Result<(Vec<Transfer>, Vec<Command>), Refusal> {
    let mut endpoints: BTreeMap<(usize, bool), Vec<usize>> = BTreeMap::new();
    for (t, x) in transfers.iter().enumerate() {
        endpoints
            .entry((x.channel, x.way == Way::Ingress))
            .or_default()
            .push(t);
    }
    // Where each transfer starts and is waited for in the program.
    let mut started = vec![usize::MAX; transfers.len()];
    let mut waited = vec![usize::MAX; transfers.len()];
    for (at, command) in program.iter().enumerate() {
        match command {
            Command::Start(t) => started[*t] = at,
            Command::Wait(_, members) => {
                for &m in members {
                    waited[m] = waited[m].min(at);
                }
            }
        }
    }
    // A transfer at an endpoint a worker admits too keeps its place after
    // the program's earlier waits (schedule.rs); a ring around it would start
    // later records before those waits.
    for records in endpoints.values().filter(|r| r.len() > 1) {
        let (first, last) = (records[0], records[records.len() - 1]);
        let own = (transfers[first].channel, transfers[first].way);
        let around = (0..transfers.len()).find(|&s| {
            let x = &transfers[s];
            (x.channel, x.way) != own
                && shared.contains(&(x.channel, x.way == Way::Ingress))
                && started[first] < started[s]
                && started[s] < waited[last]
        });
        if let Some(s) = around {
            let ring = &transfers[first];
            return refuse(transfers[s].copy, format!(
                "this transfer's endpoint is admitted by a worker too, and it comes between records of %{}, which the DMA-engine realization would move ahead of the waits that order this admission",
                value_name(channels[ring.channel].value)
            ));
        }
    }
    // Old transfer -> the merged transfer it belongs to, and whether it is
    // its run's first record (where the run starts) and last (where it is
    // waited for).
    let mut merged: Vec<(usize, bool, bool)> = vec![(0, true, true); transfers.len()];
    let mut kept: Vec<usize> = Vec::new();
    // The record dimensions of each kept transfer.
    let mut outside: Vec<Vec<Dim>> = Vec::new();
    for t in 0..transfers.len() {
        let x = &transfers[t];
        let records = &endpoints[&(x.channel, x.way == Way::Ingress)];
        if records[0] != t {
            continue;
        }
        let n = records.len();
        outside.push(if n > 1 {
            check(channels, &transfers, records, shared)?
        } else {
            Vec::new()
        });
        for (k, &r) in records.iter().enumerate() {
            merged[r] = (kept.len(), k == 0, k + 1 == n);
        }
        kept.push(t);
    }
    let mut out: Vec<Transfer> = Vec::with_capacity(kept.len());
    for (t, mut x) in transfers.into_iter().enumerate() {
        // `kept` is in increasing order.
        if let Ok(i) = kept.binary_search(&t) {
            x.outside = outside[i].clone();
            out.push(x);
        }
    }
    for (i, x) in out.iter().enumerate() {
        for y in &out[i + 1..] {
            if x.records() == 1 && y.records() == 1 {
                continue;
            }
            let (ring, other) = if x.records() > 1 { (x, y) } else { (y, x) };
            if conflict(x, y) {
                return refuse(ring.copy, format!(
                    "the DMA-engine realization moves %{}'s {} records ahead of the program's order, and the transfer of %{} touches the same bytes of the caller's buffer",
                    value_name(channels[ring.channel].value), ring.records(), value_name(channels[other.channel].value)
                ));
            }
        }
    }
    let program = program
        .into_iter()
        .filter_map(|command| match command {
            Command::Start(t) => {
                let (to, first, _) = merged[t];
                first.then_some(Command::Start(to))
            }
            Command::Wait(op, members) => {
                let members: Vec<usize> = members
                    .into_iter()
                    .filter_map(|m| {
                        let (to, _, last) = merged[m];
                        last.then_some(to)
                    })
                    .collect();
                (!members.is_empty()).then_some(Command::Wait(op, members))
            }
        })
        .collect();
    Ok((out, program))
}

/// The record dimensions of an endpoint's `records` (transfer indices, in
/// program order), or the refusal of records one ring cannot move.
fn check(
    channels: &[Channel],
    transfers: &[Transfer],
    records: &[usize],
    shared: &BTreeSet<(usize, bool)>,
) -> Result<Vec<Dim>, Refusal> {
    let first = &transfers[records[0]];
    let channel = &channels[first.channel];
    let name = value_name(channel.value);
    let ingress = first.way == Way::Ingress;
    let side = if ingress { "reserve" } else { "acquire" };
    let n = records.len() as i64;
    let second = &transfers[records[1]];
    if shared.contains(&(first.channel, ingress)) {
        return refuse(second.copy, format!(
            "the command stream admits %{name}'s {side} side {n} times and a worker admits it too; the DMA-engine realization of repeated admissions needs the endpoint to itself"
        ));
    }
    for (k, &r) in records.iter().enumerate() {
        let x = &transfers[r];
        if x.argument != first.argument || x.layout != first.layout {
            return refuse(x.copy, format!(
                "record {k} of %{name} is in another buffer or another layout than record 0; the DMA-engine realization moves a channel's records with one descriptor on one of the caller's buffers"
            ));
        }
    }
    let offsets: Vec<i64> = records
        .iter()
        .map(|&r| transfers[r].argument_offset - first.argument_offset)
        .collect();
    record_dims(&offsets).ok_or(()).or_else(|()| {
        let shown: Vec<String> = offsets.iter().take(8).map(|o| o.to_string()).collect();
        let more = if offsets.len() > 8 { ", ..." } else { "" };
        refuse(second.copy, format!(
            "the records of %{name} are at bytes {}{more} from record 0; the DMA-engine realization moves a channel's records with one descriptor, whose dimensions reach records in nested runs at constant, forward steps",
            shown.join(", ")
        ))
    })
}

/// The most runs of its chain one DMA task makes.
fn most_runs(profile: &DeviceProfile) -> i64 {
    i64::from(profile.limits.bd_repeat_count_max)
}

/// One start-queue entry of a transfer's tile side: a chain of buffer
/// descriptors and the runs of it that its task makes.
pub struct TileTask {
    /// The chain's first descriptor, counted from the transfer's `tile_bd`.
    pub first: i64,
    /// Descriptors in the chain, going round the channel's slots from
    /// slot 0: descriptor i is slot i mod capacity.
    pub slots: i64,
    pub runs: i64,
}

/// The tile-side tasks of `records` records through `capacity` slots, in
/// queue order. A ring of records goes round the slots with one chain of
/// descriptors, in tasks of at most the profile's runs each, and moves what
/// is left after the chain's last whole run with a second, shorter chain
/// from slot 0; a single record is one run of one descriptor for slot 0.
/// The chain goes round the slots as few times as keep the tasks within a
/// channel's start queue (more laps, more descriptors, fewer runs): 2,049
/// records through 2 slots are a chain of 4 run 256 times twice, then one
/// descriptor.
pub fn ring_tasks(records: i64, capacity: i64, profile: &DeviceProfile) -> Vec<TileTask> {
    let slots = if records > 1 { capacity } else { 1 };
    let depth = profile.limits.task_queue_depth as usize;
    let most = most_runs(profile);
    // Going round once per record always fits: one run, and no rest.
    let laps = (1..=(records / slots).max(1))
        .find(|&laps| tasks_of(records, slots * laps, most).len() <= depth)
        .unwrap_or(1);
    tasks_of(records, slots * laps, most)
}

/// The tasks of `records` records with a chain of `chain` descriptors.
fn tasks_of(records: i64, chain: i64, most_runs: i64) -> Vec<TileTask> {
    let (mut runs, rest) = (records / chain, records % chain);
    let mut tasks = Vec::new();
    while runs > 0 {
        let these = runs.min(most_runs);
        tasks.push(TileTask {
            first: 0,
            slots: chain,
            runs: these,
        });
        runs -= these;
    }
    if rest > 0 {
        tasks.push(TileTask {
            first: if tasks.is_empty() { 0 } else { chain },
            slots: rest,
            runs: 1,
        });
    }
    tasks
}

impl Transfer {
    /// The tile buffer descriptors its tasks' chains take, consecutive from
    /// `tile_bd`.
    pub fn tile_descriptors(&self, channel: &Channel, profile: &DeviceProfile) -> i64 {
        chain_descriptors(
            self.records(),
            channel,
            channel.chain_lanes(self.lane),
            profile,
        )
    }
}

/// The buffer descriptors of a ring of `records` through `channel`'s slots
/// moving `lanes` of each (one descriptor per slot and lane).
pub fn chain_descriptors(
    records: i64,
    channel: &Channel,
    lanes: Range<i64>,
    profile: &DeviceProfile,
) -> i64 {
    ring_descriptors(records, channel.capacity, profile) * (lanes.end - lanes.start)
}

/// The buffer descriptors the chains of `ring_tasks` take, consecutive from
/// the first.
pub fn ring_descriptors(records: i64, capacity: i64, profile: &DeviceProfile) -> i64 {
    ring_tasks(records, capacity, profile)
        .iter()
        .map(|t| t.first + t.slots)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::ring_tasks;

    /// (first, descriptors, runs) of each task.
    fn tasks(records: i64, capacity: i64) -> Vec<(i64, i64, i64)> {
        ring_tasks(records, capacity, &loom_targets::profiles()[0])
            .iter()
            .map(|t| (t.first, t.slots, t.runs))
            .collect()
    }

    #[test]
    fn whole_and_partial_rounds() {
        assert_eq!(tasks(1, 3), [(0, 1, 1)]);
        assert_eq!(tasks(4, 2), [(0, 2, 2)]);
        assert_eq!(tasks(5, 2), [(0, 2, 2), (2, 1, 1)]);
        assert_eq!(tasks(4, 3), [(0, 3, 1), (3, 1, 1)]);
        assert_eq!(tasks(2, 3), [(0, 2, 1)]);
    }

    #[test]
    fn rounds_beyond_one_task() {
        assert_eq!(tasks(1024, 2), [(0, 2, 256), (0, 2, 256)]);
        assert_eq!(tasks(513, 1), [(0, 1, 256), (0, 1, 256), (0, 1, 1)]);
        assert_eq!(tasks(1025, 2), [(0, 2, 256), (0, 2, 256), (2, 1, 1)]);
    }

    /// More runs than four tasks hold: the chain goes round the slots twice
    /// (or more), the fewest laps that fit the start queue.
    #[test]
    fn longer_chains_keep_the_queue() {
        assert_eq!(
            tasks(2048, 2),
            [(0, 2, 256), (0, 2, 256), (0, 2, 256), (0, 2, 256)]
        );
        assert_eq!(tasks(2049, 2), [(0, 4, 256), (0, 4, 256), (4, 1, 1)]);
        assert_eq!(
            tasks(4096, 1),
            [(0, 4, 256), (0, 4, 256), (0, 4, 256), (0, 4, 256)]
        );
    }
}
