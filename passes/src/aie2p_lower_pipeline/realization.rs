//! The realization's vocabulary: what the plan decides and the rewrite
//! builds from. A channel's slots and locks in one tile, the command
//! stream's transfers and commands, the workers, the storage placed in each
//! tile's data memory, and the refusal that names what the profile cannot
//! hold.

use super::access::{Access, Addressing, Dim};
use loom_dialects::ir::*;
use loom_dialects::names;
use loom_targets::xdna::regs::TileKind;
use loom_targets::{DeviceProfile, Tile};
use mlir_sys::*;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

/// Bytes the lowering reserves in a worker's tile for its stack (the size
/// mlir-aie's cores default to).
pub const WORKER_STACK_BYTES: i64 = 1024;
pub(super) const STACK_ALIGNMENT: i64 = 16;
/// A slot cursor: one index.
pub(super) const CURSOR_BYTES: i64 = 8;

/// A refusal: where, and why (the resource, the tile, what was needed and
/// what exists).
pub struct Refusal {
    pub at: MlirLocation,
    pub message: String,
}

pub(super) fn refuse<T>(at: MlirOperation, message: String) -> Result<T, Refusal> {
    Err(Refusal {
        at: location(at),
        message,
    })
}

/// The tile at `[c, r]` of `profile`'s array and its kind, or why there is
/// none.
pub fn tile_at(profile: &DeviceProfile, (c, r): (i64, i64)) -> Result<(Tile, TileKind), String> {
    let tile = u32::try_from(c).ok().zip(u32::try_from(r).ok());
    tile.map(|(c, r)| Tile::new(c, r))
        .and_then(|tile| Some((tile, profile.tile_kind(tile.column, tile.row)?)))
        .ok_or_else(|| outside(profile, c, r))
}

/// The kind of `tile` in `profile`'s array, or why there is none.
pub fn tile_kind(profile: &DeviceProfile, tile: Tile) -> Result<TileKind, String> {
    profile
        .tile_kind(tile.column, tile.row)
        .ok_or_else(|| outside(profile, i64::from(tile.column), i64::from(tile.row)))
}

fn outside(profile: &DeviceProfile, c: i64, r: i64) -> String {
    format!(
        "tile [{c}, {r}] is outside the array of {} columns x {} rows of {}",
        profile.array.columns, profile.array.rows, profile.name
    )
}

/// Storage placed in a tile's data memory.
pub struct Placed {
    /// The op the storage realizes (`buffer.alloca`), for its name.
    pub op: MlirOperation,
    pub tile: Tile,
    pub role: &'static str,
    pub align: i64,
    /// Set when the tile's memory is laid out.
    pub offset: i64,
    pub size: i64,
}

/// A channel: its slots in the storage of one tile, and two locks there per
/// lane: free-slot credits (initially the capacity) and published-record
/// credits. A lane is a part of every slot with its own credits. A striped
/// channel (`lanes.rs`) has two lanes, each moved by its own transfer of
/// the command stream. A joined channel (`forward.rs`) has one lane per
/// part its forwards fill, each by its own DMA channel; whatever reads it
/// moves every lane of a slot, one descriptor each.
pub struct Channel {
    pub bind: MlirOperation,
    pub value: MlirValue,
    pub tile: Tile,
    /// Index into `Plan::placed` of the channel's storage.
    pub storage: usize,
    /// Byte offset of slot 0 inside the storage.
    pub base: i64,
    pub slot_bytes: i64,
    pub capacity: i64,
    /// Lane 0's locks; lane l's are these plus 2 l.
    pub free_lock: i64,
    pub published_lock: i64,
    /// 1, 2 for a striped channel, or its parts for a joined one.
    pub lanes: i64,
    /// Whether forwards fill its lanes one each (a join).
    pub joined: bool,
    /// The command-stream transfers that read each slot of a joined
    /// channel: 1, or 2 when its drain is striped (`lanes.rs`), each taking
    /// half of the lanes.
    pub drains: i64,
}

impl Channel {
    /// Lane `lane`'s (free-slot, published-record) locks.
    pub fn lane_locks(&self, lane: i64) -> (i64, i64) {
        (self.free_lock + 2 * lane, self.published_lock + 2 * lane)
    }

    /// The lanes a DMA chain admitting `lane` moves in each slot: a
    /// joined channel's reader takes whole slots (every lane), or half of
    /// them for each of a striped drain's two transfers; otherwise `lane`
    /// alone. The writers of a joined channel's parts move their own lane
    /// (`Forward::part`).
    pub fn chain_lanes(&self, lane: i64) -> Range<i64> {
        if self.joined {
            let each = self.lanes / self.drains;
            lane * each..(lane + 1) * each
        } else {
            lane..lane + 1
        }
    }

    /// Bytes of a slot each lane moves.
    pub fn lane_bytes(&self) -> i64 {
        self.slot_bytes / self.lanes
    }
}

/// Which way a command-stream transfer moves data.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Caller's buffer -> channel slot (reserve, copy, wait, publish).
    Ingress,
    /// Channel slot -> caller's buffer (acquire, copy, wait, release).
    Egress,
}

/// One DMA transfer of the command stream; `schedule.rs` picks its channels
/// and buffer descriptors. A striped channel's transfer is one per lane.
#[derive(Clone)]
pub struct Transfer {
    pub copy: MlirOperation,
    pub way: Way,
    pub channel: usize,
    /// The tile of the channel's slots.
    pub tile: Tile,
    /// Which `run` argument of the pipeline, and the byte offset in it.
    pub argument: usize,
    pub argument_offset: i64,
    /// One record's caller bytes from `argument_offset` (its view's layout,
    /// or a lane's half of it), and a ring's records outside it:
    /// `access()`.
    pub layout: Access,
    pub outside: Vec<Dim>,
    /// The shim descriptor's addressing of `access()` (None: linear);
    /// `access::address` sets it.
    pub addressing: Option<Addressing>,
    /// Bytes of one record it moves: a channel slot, or a lane's half of one.
    pub bytes: i64,
    /// The channel's lane it moves (0 when unstriped).
    pub lane: i64,
    pub tile_channel: i64,
    pub tile_bd: i64,
    pub shim: Tile,
    pub shim_channel: i64,
    pub shim_bd: i64,
}

impl Transfer {
    /// The caller bytes it moves from `argument_offset`: each record's
    /// layout, then its records'.
    pub fn access(&self) -> Access {
        self.layout.clone().with_records(&self.outside)
    }

    /// Records it moves: more than one for the DMA-engine realization of an
    /// endpoint the stream admits repeatedly (`rings`), whose records are
    /// where `outside` puts them in the caller's buffer and go round the
    /// channel's slots (`ring::ring_tasks`).
    pub fn records(&self) -> i64 {
        self.outside.iter().map(|d| d.count).product()
    }
}

/// A forwarding strand's records from one channel to another (`forward.rs`):
/// DMA between the two channels' tiles for the whole invocation, without a
/// core.
pub struct Forward {
    /// The first record's copy, for locations.
    pub copy: MlirOperation,
    /// Its forwarding strand (index into `Plan::forwarding`).
    pub strand: usize,
    /// The channel whose records it acquires, and the one whose slots it
    /// reserves.
    pub from: usize,
    pub to: usize,
    /// Records it moves: each a slot of `from`, and a slot of `to` or,
    /// for a join, its part of one.
    pub records: i64,
    /// The MM2S channel of `from`'s tile and the S2MM channel of `to`'s.
    pub mm2s: i64,
    pub s2mm: i64,
    /// The first buffer descriptor of each side's chains.
    pub mm2s_bd: i64,
    pub s2mm_bd: i64,
    /// The part of `to`'s slots it fills, for a join (None: whole slots).
    pub part: Option<i64>,
    /// Each side's descriptors' addressing of a slot when the strand copies
    /// through a `view.reinterpret` of it (None: the slot in order).
    pub mm2s_addressing: Option<Addressing>,
    pub s2mm_addressing: Option<Addressing>,
}

impl Forward {
    /// The lanes of `from`'s slots its MM2S moves (`from` is its source).
    pub fn mm2s_lanes(&self, from: &Channel) -> Range<i64> {
        from.chain_lanes(0)
    }

    /// The lanes of `to`'s slots its S2MM fills (`to` is its destination):
    /// its part of a joined channel, else whole slots.
    pub fn s2mm_lanes(&self, to: &Channel) -> Range<i64> {
        self.part.map_or(to.chain_lanes(0), |p| p..p + 1)
    }
}

/// The DMA channels and buffer descriptors the forwards hold for the whole
/// invocation; the command stream's schedule takes others.
#[derive(Default)]
pub struct Held {
    /// (tile, S2MM, channel).
    pub channels: BTreeSet<(Tile, bool, i64)>,
    /// Descriptors taken per (tile, memory-tile half): the next free one.
    pub descriptors: BTreeMap<(Tile, i64), i64>,
}

/// What the command stream does, in order.
pub enum Command {
    Start(usize),
    /// Wait for the transfers' shim channels (a `kernel.async.wait`).
    Wait(MlirOperation, Vec<usize>),
}

/// A compute strand realized as tile code on its core.
pub struct Worker {
    pub strand: MlirOperation,
    pub function: MlirOperation,
    pub tile: Tile,
    /// Call operands, one per function parameter.
    pub arguments: Vec<MlirValue>,
    /// Channel (index into `Plan::channels`) of each channel parameter.
    pub channels: BTreeMap<usize, usize>,
    /// `buffer.alloca<private>` ops of the function -> index into `placed`.
    pub private: Vec<(MlirOperation, usize)>,
    /// Slot cursors (index into `placed`) of the channel endpoints
    /// (channel, reserve side) the worker admits more than once or in a
    /// loop; every other endpoint always takes slot 0.
    pub cursors: BTreeMap<(usize, bool), usize>,
    /// Every channel endpoint (channel, reserve side) the worker admits.
    pub endpoints: BTreeSet<(usize, bool)>,
}

pub struct Plan<'p> {
    pub profile: &'p DeviceProfile,
    pub pipeline: MlirOperation,
    pub placed: Vec<Placed>,
    pub channels: Vec<Channel>,
    pub workers: Vec<Worker>,
    /// The command-stream strand and its function.
    pub command_strand: Option<(MlirOperation, MlirOperation)>,
    /// The functions of strands with nothing to run once specialized.
    pub idle: Vec<MlirOperation>,
    /// The functions of forwarding strands, and their forwards.
    pub forwarding: Vec<MlirOperation>,
    pub forwards: Vec<Forward>,
    pub transfers: Vec<Transfer>,
    pub commands: Vec<Command>,
    /// The pipeline's `run` arguments (construction-region arguments).
    pub run_arguments: Vec<MlirValue>,
}

/// The block argument `value` is, if it is one of `args`.
pub(super) fn argument_index(value: MlirValue, args: &[MlirValue]) -> Option<usize> {
    args.iter().position(|&a| same_value(a, value))
}

/// Look through `buffer.assume.alignment` to a construction-region argument.
pub(super) fn run_argument(value: MlirValue, run: &[MlirValue]) -> Option<usize> {
    if let Some(i) = argument_index(value, run) {
        return Some(i);
    }
    let is_result = is_op_result(value);
    if !is_result {
        return None;
    }
    let def = owner_op(value);
    if op_name(def) != names::buffer::ASSUME_ALIGNMENT {
        return None;
    }
    let position = results(def).iter().position(|&r| same_value(r, value))?;
    argument_index(operands(def)[position], run)
}

/// A DMA channel of a tile: (tile, channel number).
pub type DmaEnd = (Tile, i64);

impl Plan<'_> {
    /// The stream routes, in order: one per command-stream link (transfers
    /// that reuse a link share its circuit), then one per forward; each
    /// with the op it comes from, its MM2S end and its S2MM end.
    pub fn routes(&self) -> Vec<(MlirOperation, DmaEnd, DmaEnd)> {
        let mut routed = BTreeSet::new();
        let mut out = Vec::new();
        for t in &self.transfers {
            let tile = self.channels[t.channel].tile;
            let (from, to) = match t.way {
                Way::Ingress => ((t.shim, t.shim_channel), (tile, t.tile_channel)),
                Way::Egress => ((tile, t.tile_channel), (t.shim, t.shim_channel)),
            };
            if routed.insert((from, to)) {
                out.push((t.copy, from, to));
            }
        }
        for f in &self.forwards {
            let from = (self.channels[f.from].tile, f.mm2s);
            let to = (self.channels[f.to].tile, f.s2mm);
            out.push((f.copy, from, to));
        }
        out
    }
}
