//! Forwarding strands: a strand that only moves records from one channel to
//! another (acquire, copy into a reserved slot, publish, release; mlir-aie's
//! object FIFO `forward()`/link) runs as DMA, without a core, wherever the
//! two channels' storage lies: the first channel's tile sends each record
//! from an MM2S channel whose buffer descriptors take a published record and
//! free its slot, a stream route carries it, and the second channel's tile
//! receives it on an S2MM channel whose descriptors take a free slot and
//! publish the record. Both sides go round their channel's slots from
//! slot 0 (`ring::ring_tasks`), as the strands on the other sides do with
//! their slot cursors.
//!
//! Each side of a forwarded channel belongs to the forwarding strand alone,
//! so the DMA engines' runs are the authored strand's runs with each
//! release taken as soon as its record is sent (docs/semantics.md,
//! "Authored and realized schedules").

use super::access::{descriptor_steps, Access, Addressing};
use super::evaluate::{call_constant, evaluate, evaluated, Whose};
use super::joins::Joins;
use super::placement::view_access;
use super::realization::{argument_index, refuse, tile_kind, Forward, Held, Plan, Refusal};
use super::ring::chain_descriptors;
use super::schedule::take_descriptors;
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;
use std::collections::{BTreeMap, BTreeSet};

/// Whether `function` only forwards records: channel actions, copies,
/// groups and waits, with control flow and index arithmetic (which the
/// lowering evaluates), and at least one copy.
pub(super) fn forwards_only(function: MlirOperation) -> bool {
    let ops = walk(function).into_iter().skip(1).collect::<Vec<_>>();
    let copies = ops
        .iter()
        .any(|&op| op_name(op) == names::kernel::ASYNC_COPY);
    copies
        && ops.iter().all(|&op| {
            let name = op_name(op);
            evaluated(&name)
                || matches!(
                    name.as_str(),
                    names::channel::ACQUIRE
                        | names::channel::RESERVE
                        | names::channel::PUBLISH
                        | names::channel::RELEASE
                        | names::kernel::ASYNC_COPY
                        | names::kernel::ASYNC_GROUP
                        | names::kernel::ASYNC_WAIT
                        | names::view::REINTERPRET
                        | names::view::PART
                )
        })
}

/// A copy of the forwarding strand: the admissions of the record it reads
/// and of the slot it fills, and the part of that slot as (index, parts)
/// (None: the whole slot).
#[derive(Clone, Copy)]
struct ForwardCopy {
    op: MlirOperation,
    from: usize,
    to: usize,
    part: Option<(i64, i64)>,
}

/// One admission of the forwarding strand: its obligation and payload, the
/// channel, whether it reserves, and the copies that fill it (one) or drain
/// it (one per channel it is broadcast to). A loop admits with the same
/// values each pass: the latest admission with a value is the one it names.
struct Admission {
    obligation: MlirValue,
    payload: MlirValue,
    channel: usize,
    reserve: bool,
    copies: Vec<usize>,
}

impl Plan<'_> {
    /// Plans `function` (a strand that `forwards_only`) as DMA forwards: one
    /// per pair of channels it copies between, with the records of the pair
    /// in order.
    pub(super) fn plan_forward(
        &mut self,
        function: MlirOperation,
        args: &[MlirValue],
    ) -> Result<(), Refusal> {
        let params = arguments(body(function));
        let resolve = |value: MlirValue| call_constant(value, &params, args);
        let whose = Whose {
            strand: "the forwarding strand",
            work: "the forwarding strand's DMA realization",
            transfers: "its DMA transfers",
        };
        let sequence = evaluate(function, resolve, &whose)?;
        let mut admissions: Vec<Admission> = Vec::new();
        // Copies: (op, acquired admission, reserved admission, the part of
        // the slot it fills as (index, parts); None: the whole slot).
        let mut copies: Vec<ForwardCopy> = Vec::new();
        // Each copy's layouts of the record it reads and the slot it fills
        // (a `view.reinterpret` of the payload; None: the payload itself).
        let mut layouts: Vec<(Option<Access>, Option<Access>)> = Vec::new();
        // Reinterpreted payloads: (view, the view it reinterprets, layout).
        let mut views: Vec<(MlirValue, MlirValue, Access)> = Vec::new();
        // Parts of payloads: (view, the view it is a part of, index, parts).
        let mut parts: Vec<(MlirValue, MlirValue, i64, i64)> = Vec::new();
        let mut done: BTreeSet<usize> = BTreeSet::new();
        let mut joins = Joins::new("a forwarding strand");
        // Per forwarded channel, its reserved admissions not published yet.
        let mut unpublished: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for step in sequence {
            let op = step.op;
            let name = op_name(op);
            match name.as_str() {
                names::channel::RESERVE | names::channel::ACQUIRE => {
                    let argument = argument_index(operands(op)[0], &params);
                    let Some(channel) = argument.and_then(|i| self.channel_of(args[i])) else {
                        return refuse(
                            op,
                            "the channel must be one of the pipeline's channels".into(),
                        );
                    };
                    let reserve = name == names::channel::RESERVE;
                    let r = results(op);
                    if reserve {
                        unpublished
                            .entry(channel)
                            .or_default()
                            .push(admissions.len());
                    }
                    admissions.push(Admission {
                        obligation: r[0],
                        payload: r[1],
                        channel,
                        reserve,
                        copies: Vec::new(),
                    });
                }
                names::view::REINTERPRET => {
                    let view = results(op)[0];
                    let layout = view_access(op, view, &resolve)?;
                    views.retain(|w| !same_value(w.0, view));
                    views.push((view, operands(op)[0], layout));
                }
                names::view::PART => {
                    let view = results(op)[0];
                    let Some(index) = step.operands[1] else {
                        return refuse(op, "a forwarding strand's DMA fills the part its descriptors address; the part's index must be known when the pipeline is compiled".into());
                    };
                    let count = view_type_shape(value_type(operands(op)[0]))
                        .and_then(|(shape, _)| shape.first().copied().flatten())
                        .map_or(1, |n| n as i64);
                    if !(0..count).contains(&index) {
                        return refuse(
                            op,
                            format!("view.part {index} is outside the {count} parts of the view"),
                        );
                    }
                    parts.retain(|p| !same_value(p.0, view));
                    parts.push((view, operands(op)[0], index, count));
                }
                names::kernel::ASYNC_COPY => {
                    let through = |v: MlirValue| {
                        views
                            .iter()
                            .find(|w| same_value(w.0, v))
                            .map_or((v, None), |w| (w.1, Some(w.2.clone())))
                    };
                    let part_of = |v: MlirValue| parts.iter().find(|p| same_value(p.0, v));
                    if part_of(operands(op)[0]).is_some() {
                        return refuse(op, "a copy from a part of a record (a distribute) is not realized: a forwarding strand moves whole records, or fills the parts of a reserved slot from several channels (a join)".into());
                    }
                    let (source, source_layout) = through(operands(op)[0]);
                    let (target, target_layout, part) = match part_of(operands(op)[1]) {
                        Some(&(_, whole, index, count)) => (whole, None, Some((index, count))),
                        None => {
                            let (target, layout) = through(operands(op)[1]);
                            (target, layout, None)
                        }
                    };
                    let all = [source, target];
                    let payload = |v: MlirValue, reserve: bool| {
                        admissions
                            .iter()
                            .rposition(|a| same_value(a.payload, v) && a.reserve == reserve)
                    };
                    let (Some(from), Some(to)) = (payload(all[0], false), payload(all[1], true))
                    else {
                        return refuse(op, "a strand that forwards records copies a whole acquired record into a whole reserved slot (it runs as DMA, without a core); this copy has another endpoint".into());
                    };
                    let into = admissions[to].channel;
                    let twice = admissions[from]
                        .copies
                        .iter()
                        .any(|&c| admissions[copies[c].to].channel == into);
                    if twice || (part.is_none() && !admissions[to].copies.is_empty()) {
                        return refuse(op, format!("a second copy of one record into %{}: a forwarding strand moves each record to a channel with one copy (its buffer descriptors carry the record's lock credits)", self.channel_name(into)));
                    }
                    let filled = |c: &usize| copies[*c].part.map(|p| p.0);
                    if let Some((index, _)) = part {
                        if admissions[to]
                            .copies
                            .iter()
                            .any(|c| filled(c).is_none_or(|p| p == index))
                        {
                            return refuse(op, format!("a second copy into part {index} of a slot of %{}: a join fills each part with one copy (the part's DMA channel carries its lock credits)", self.channel_name(into)));
                        }
                    }
                    for a in [from, to] {
                        admissions[a].copies.push(copies.len());
                    }
                    let (source, target) = (
                        &self.channels[admissions[from].channel],
                        &self.channels[admissions[to].channel],
                    );
                    let target_bytes = target.slot_bytes / part.map_or(1, |p| p.1);
                    if source.slot_bytes != target_bytes {
                        let what = if part.is_some() {
                            "parts of slots"
                        } else {
                            "slots"
                        };
                        return refuse(op, format!(
                            "a forwarding strand copies whole records into whole {what}: %{}'s slots hold {} bytes and %{}'s {what} {target_bytes}",
                            self.channel_name(admissions[from].channel), source.slot_bytes,
                            self.channel_name(admissions[to].channel)
                        ));
                    }
                    if source.slot_bytes % 4 != 0 {
                        return refuse(op, format!("DMA transfers move multiples of 4 bytes; the records of %{} are {} bytes", self.channel_name(admissions[from].channel), source.slot_bytes));
                    }
                    for layout in [&source_layout, &target_layout].into_iter().flatten() {
                        let bytes =
                            layout.dims.iter().map(|d| d.count).product::<i64>() * layout.element;
                        if bytes != source.slot_bytes {
                            return refuse(op, format!("a forwarding strand copies whole slots: this view of a slot moves {bytes} of its {} bytes", source.slot_bytes));
                        }
                    }
                    joins.copy(op, copies.len())?;
                    copies.push(ForwardCopy { op, from, to, part });
                    layouts.push((source_layout, target_layout));
                }
                names::kernel::ASYNC_GROUP => joins.group(op)?,
                names::kernel::ASYNC_WAIT => done.extend(joins.wait(op)?),
                names::channel::PUBLISH | names::channel::RELEASE => {
                    let obligation = operands(op)[0];
                    let Some(a) = admissions
                        .iter()
                        .rposition(|a| same_value(a.obligation, obligation))
                    else {
                        return refuse(
                            op,
                            "the obligation must come from this strand's reserve or acquire".into(),
                        );
                    };
                    let admission = &admissions[a];
                    let channel = self.channel_name(admission.channel);
                    let action = name.trim_start_matches("channel.");
                    let copied = !admission.copies.is_empty()
                        && admission.copies.iter().all(|c| done.contains(c));
                    if !copied {
                        return refuse(op, format!("a forwarding strand hands a record of %{channel} on when its DMA transfer completes; this {action} has no waited copy of the record before it"));
                    }
                    if let Some((_, count)) = copies[admission.copies[0]]
                        .part
                        .filter(|_| admission.reserve)
                    {
                        let have = admission.copies.len() as i64;
                        if have != count {
                            return refuse(op, format!("this publish hands on a slot of %{channel} with {have} of its {count} parts copied; a join publishes a slot when a copy has filled each part"));
                        }
                    }
                    if admission.reserve {
                        let waiting = unpublished.entry(admission.channel).or_default();
                        if waiting.first() != Some(&a) {
                            return refuse(op, format!("the strand publishes records of %{channel} in another order than it reserved them; its DMA publishes each record when its copy lands, in the order reserved"));
                        }
                        waiting.remove(0);
                    }
                }
                // Control flow and index arithmetic: `evaluate` ran them.
                _ => {}
            }
        }
        joins.all_grouped()?;
        if let Some(a) = admissions.iter().find(|a| a.copies.is_empty()) {
            let side = if a.reserve { "reserves" } else { "acquires" };
            return refuse(owner_op(a.obligation), format!("a forwarding strand runs as DMA, which moves every record it admits with a copy; this {side} a record of %{} that no copy moves", self.channel_name(a.channel)));
        }
        self.add_forwards(&copies, &layouts, &admissions)
    }

    /// One forward per pair of channels, its records in copy order, which
    /// must be the order of the admissions on each side (the DMA goes round
    /// the slots in that order). Forwards from one channel to several are a
    /// broadcast: one MM2S ring whose stream the switches send to each.
    fn add_forwards(
        &mut self,
        copies: &[ForwardCopy],
        layouts: &[(Option<Access>, Option<Access>)],
        admissions: &[Admission],
    ) -> Result<(), Refusal> {
        // Per (source, destination, part): the copies between them.
        let mut pairs: BTreeMap<(usize, usize, Option<i64>), Vec<usize>> = BTreeMap::new();
        for (c, copy) in copies.iter().enumerate() {
            let key = (
                admissions[copy.from].channel,
                admissions[copy.to].channel,
                copy.part.map(|p| p.0),
            );
            pairs.entry(key).or_default().push(c);
        }
        // A channel, or a part of a joined channel's slots, is filled from
        // one other: merging streams needs packet switching, which the
        // realization does not build.
        let mut filled_from: BTreeMap<(usize, Option<i64>), usize> = BTreeMap::new();
        for (&(from, to, part), records) in &pairs {
            // Another stream into the same part, or into the whole slots
            // where this one fills a part (or the reverse).
            let other = filled_from
                .iter()
                .find(|(k, _)| k.0 == to && (k.1 == part || k.1.is_none() || part.is_none()));
            if let Some((_, &other)) = other {
                return refuse(copies[records[0]].op, format!(
                    "the strand fills %{} from both %{} and %{}; a forwarding DMA channel receives one stream (merging streams is not realized; a join fills each part of the slots from one channel)",
                    self.channel_name(to), self.channel_name(other), self.channel_name(from)
                ));
            }
            filled_from.insert((to, part), from);
            // A broadcast sends every record of its source to each channel.
            let acquired = admissions
                .iter()
                .filter(|a| a.channel == from && !a.reserve)
                .count();
            if records.len() != acquired {
                return refuse(copies[records[0]].op, format!(
                    "the strand copies {} of the {acquired} records it acquires from %{} into %{}; its DMA sends every record of %{} to each channel it forwards them to",
                    records.len(), self.channel_name(from), self.channel_name(to), self.channel_name(from)
                ));
            }
            for reserve in [false, true] {
                let channel = if reserve { to } else { from };
                let order: Vec<usize> = admissions
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| a.channel == channel && a.reserve == reserve)
                    .map(|(i, _)| i)
                    .collect();
                for (k, &c) in records.iter().enumerate() {
                    let ForwardCopy { op, from, to, .. } = copies[c];
                    if order.get(k) != Some(if reserve { &to } else { &from }) {
                        return refuse(op, format!(
                            "this copy moves the strand's records of %{} out of the order it {} them; its DMA goes round the slots in that order",
                            self.channel_name(channel), if reserve { "reserved" } else { "acquired" }
                        ));
                    }
                }
            }
            // One chain of descriptors moves every record: one layout.
            let first = &layouts[records[0]];
            if let Some(&c) = records.iter().find(|&&c| &layouts[c] != first) {
                return refuse(copies[c].op, format!(
                    "this copy reads %{}'s record or fills %{}'s slot through another layout than the first copy between them; one chain of descriptors moves every record",
                    self.channel_name(from), self.channel_name(to)
                ));
            }
            let at = copies[records[0]].op;
            let mm2s_addressing = self.slot_addressing(at, from, &first.0)?;
            let s2mm_addressing = self.slot_addressing(at, to, &first.1)?;
            // A broadcast's destinations share one MM2S ring.
            if let Some(other) = self.forwards.iter().find(|f| f.from == from) {
                if other.mm2s_addressing != mm2s_addressing {
                    return refuse(at, format!(
                        "the strand reads %{}'s records through two layouts for two channels; its DMA sends one stream of them to every channel",
                        self.channel_name(from)
                    ));
                }
            }
            let n = records.len() as i64;
            self.forwards.push(Forward {
                copy: at,
                strand: self.forwarding.len() - 1,
                from,
                to,
                part,
                records: n,
                mm2s: 0,
                s2mm: 0,
                mm2s_bd: 0,
                s2mm_bd: 0,
                mm2s_addressing,
                s2mm_addressing,
            });
        }
        self.join_channels(copies, admissions);
        Ok(())
    }

    /// Marks each channel whose slots the forwards fill in parts as joined,
    /// a lane per part (each publish has checked that every part of its
    /// slot was filled).
    fn join_channels(&mut self, copies: &[ForwardCopy], admissions: &[Admission]) {
        for copy in copies {
            if let Some((_, count)) = copy.part {
                let target = &mut self.channels[admissions[copy.to].channel];
                target.lanes = count;
                target.joined = true;
            }
        }
    }

    /// Gives each forward its DMA channels (the lowest free on each tile;
    /// within one tile, MM2S k streams only to S2MM k) and its buffer
    /// descriptors, which it holds for the whole invocation.
    pub(super) fn hold_forward_dma(&mut self) -> Result<Held, Refusal> {
        let mut held = Held::default();
        // A broadcast's forwards share their source's MM2S ring.
        let mut sources: BTreeMap<usize, (i64, i64)> = BTreeMap::new();
        for f in &mut self.forwards {
            let (from, to) = (&self.channels[f.from], &self.channels[f.to]);
            let free = |held: &Held, tile, s2mm, c| !held.channels.contains(&(tile, s2mm, c));
            let shared = sources.get(&f.from).copied();
            let mm2s = shared.map_or_else(
                || {
                    (0..)
                        .find(|&c| {
                            free(&held, from.tile, false, c)
                                && (from.tile != to.tile || free(&held, to.tile, true, c))
                        })
                        .expect("channel numbers are unbounded")
                },
                |(mm2s, _)| mm2s,
            );
            let s2mm = if from.tile == to.tile {
                mm2s
            } else {
                (0..)
                    .find(|&c| free(&held, to.tile, true, c))
                    .expect("channel numbers are unbounded")
            };
            held.channels.insert((from.tile, false, mm2s));
            held.channels.insert((to.tile, true, s2mm));
            let mut take = |tile, channel, count| {
                take_descriptors(self.profile, &mut held.descriptors, tile, channel, count).map_err(
                    |message| Refusal {
                        at: location(f.copy),
                        message,
                    },
                )
            };
            // A joined channel's lanes are read one descriptor each, which
            // the slot's layout through a reinterpret does not split into.
            if from.joined && f.mm2s_addressing.is_some() {
                return refuse(f.copy, format!("this copy reads %{}'s joined slots through a view.reinterpret; a joined channel is read in its parts' order, one descriptor per part", value_name(from.value)));
            }
            let mm2s_count = chain_descriptors(f.records, from, f.mm2s_lanes(from), self.profile);
            let s2mm_count = chain_descriptors(f.records, to, f.s2mm_lanes(to), self.profile);
            f.mm2s_bd = match shared {
                Some((_, bd)) => bd,
                None => take(from.tile, mm2s, mm2s_count)?,
            };
            f.s2mm_bd = take(to.tile, s2mm, s2mm_count)?;
            (f.mm2s, f.s2mm) = (mm2s, s2mm);
            sources.insert(f.from, (mm2s, f.mm2s_bd));
        }
        Ok(held)
    }

    /// The descriptors' addressing of `channel`'s slot through `layout` (a
    /// copy `op` makes), or why its tile's descriptors cannot take it.
    fn slot_addressing(
        &self,
        op: MlirOperation,
        channel: usize,
        layout: &Option<Access>,
    ) -> Result<Option<Addressing>, Refusal> {
        let Some(layout) = layout else {
            return Ok(None);
        };
        let tile = self.channels[channel].tile;
        let kind = tile_kind(self.profile, tile).map_err(|message| Refusal {
            at: location(op),
            message,
        })?;
        let addressing = layout
            .words()
            .and_then(|words| descriptor_steps(&words, self.profile, kind, false));
        addressing.or_else(|why| {
            refuse(op, format!(
                "the DMA of tile {tile} ({} tile) cannot address %{}'s slot as this view lays it out: {why}",
                kind.name(),
                self.channel_name(channel)
            ))
        })
    }

    pub(super) fn channel_name(&self, channel: usize) -> String {
        value_name(self.channels[channel].value)
    }
}
