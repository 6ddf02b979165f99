//! The functional model of the AIE2P array that the array simulator drives:
//! per-tile register files, locks, DMA engines (start queues, buffer
//! descriptor chains, task-complete tokens) and circuit-switched stream
//! routes. Cores are not modelled here: the simulator runs worker code in the
//! interpreter and takes and hands on lock credits through
//! [`Array::try_acquire`] and [`Array::release`].
//!
//! Every offset, field and count comes from the device profile (see
//! `targets/src/xdna/regs.rs`), so the model follows a profile with another
//! layout. Sources of the behaviour, where the profile does not say it:
//!
//! - Locks hold an unsigned count of at most `limits.lock_value_max`. A buffer
//!   descriptor's acquire value is signed: -N is acquire-greater-equal N (wait
//!   for value >= N, then subtract N), N >= 0 is acquire-equal N (wait for
//!   value == N, value unchanged); a release adds its signed value (mlir-aie
//!   lib/Targets/AIERT.cpp configureLocksInBdBlock; AMD UG1583, AI Engine-ML
//!   intrinsics, Locks: acquire_equal does not modify the lock,
//!   acquire_greater_equal decrements it). A release past the maximum or
//!   below zero is an error here rather than a wrap.
//! - A start (task) queue write pushes a task (start BD, runs, token issue);
//!   a channel runs its tasks in order, each its BD chain (use-next / next BD)
//!   `runs` times, and issues one task-complete token at the end of a task
//!   that asked for one (aie-rt driver/src/dma/xaie_dma.c
//!   XAie_DmaChannelSetStartQueue, XAie_DmaChannelPushBdToQueue). A TCT sync
//!   waits for that token (mlir-aie lib/Targets/AIETargetNPU.cpp, aie-rt
//!   xaie_txn.h). Up to `limits.task_queue_depth` tasks wait behind the
//!   running one; one more is a queue overflow (inferred: the running task has
//!   left the queue).
//! - A buffer descriptor with an iteration dimension moves its address by
//!   stride x index at each use, that is each time a channel loads it: every
//!   run of a task's chain and every pass of a chain through it. The index
//!   starts at the descriptor's current field, goes up by one per use and
//!   returns to 0 when it equals the wrap; the DMA writes it back to the
//!   descriptor's register, so a later task goes on where the last one
//!   stopped (AMD AM025, DMA_BD*_4 of the memory module: Iteration_Stepsize
//!   "offset each execution of this BD", Iteration_Current "incremented
//!   after BD loaded", Iteration_Wrap "wrap when iteration_current is
//!   equal"; aie-rt XAie_DmaSetBdIteration; mlir-aie
//!   lib/Dialect/AIEX/Transforms/AIEDmaToNpu.cpp lowers a fourth dimension of
//!   N steps to iteration wrap N plus a task of N runs, so each run is one
//!   step). Writing the index back at load rather than at the end of the
//!   transfer is inferred from "after BD loaded".
//! - A memory tile channel uses buffer descriptors of its half of the pool:
//!   even channels the lower, odd channels the upper (aie-rt
//!   driver/src/dma/xaie_dma_aieml.c _XAieMl_MemTileDmaCheckBdChValidity,
//!   which Aie2PMemTileDmaMod in xaie2pgbl_reginit.c uses). aie-rt checks the
//!   start BD; checking every BD of the chain is inferred.
//! - Stream switches in circuit mode: a master whose register has the enable
//!   bit passes on the slave its slave-index field names; the slave must be
//!   enabled (aie-rt driver/src/stream_switch/xaie_ss.c). Master North/South/
//!   East/West k feeds the neighbour's slave South/North/West/East k; shim
//!   MM2S channels enter on South ports through the mux and S2MM channels
//!   leave on South ports through the demux, each needing its field set to
//!   DMA (aie-rt driver/src/pl/xaie_plif.c; the profile's `shim_dma`). One
//!   slave may feed several masters (a broadcast): each destination gets the
//!   bytes.
//! - DDR_PATCH adds the argument's address plus the offset to the 48-bit
//!   address held in the shim buffer descriptor's address words (XRT
//!   src/runtime_src/core/common/elf_patcher.cpp patch_shim48, "from NPU
//!   firmware"). XRT and the firmware also add a DDR-to-AIE offset of
//!   0x80000000; the model leaves it out because its DDR addresses are the
//!   simulator's own argument addresses, not host physical ones.
//! - Core_Control bit 0 enables the core (aie-rt xaie2pgbl_params.h
//!   CORE_MODULE_CORE_CONTROL_ENABLE, xaie2pgbl_reginit.c Aie2PCoreCtrlReg).
//!
//! Decisions of the model (not hardware behaviour):
//!
//! - [`Array::apply`] has no access to tile memory: TXN writes into data or
//!   program memory are errors (Loom loads worker images itself, and its
//!   control code writes neither).
//! - MASKPOLL is evaluated at once against the register file and lock values;
//!   a poll that does not hold is an error (no engine changes a register the
//!   model keeps, so waiting would not help).
//! - A TCT sync over more than one tile is an error (Loom syncs one channel of
//!   one tile).
//! - Settings beyond what the model follows (channel control bits, packet
//!   switching, core reset) are errors rather than ignored.
//! - A stream is an unbounded FIFO of bytes per destination S2MM channel: an
//!   MM2S buffer descriptor pushes its bytes at once; an S2MM one waits until
//!   its whole length has arrived. The neighbour tiles' locks and memories
//!   that memory tile DMAs can address are not modelled (an error).

use super::memory::Memory;
use loom_targets::xdna::regs::{
    name_of, BufferDescriptor, Direction, Field, Iteration, Register, StartQueueEntry, TileKind,
};
use loom_targets::xdna::route::{Port, PortKind, PortRange};
use loom_targets::xdna::txn::TxnOp;
use loom_targets::{DeviceProfile, Tile};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt;

/// A channel whose task-complete tokens a TCT sync waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenKey {
    pub tile: Tile,
    pub direction: Direction,
    pub channel: u32,
}

impl fmt::Display for TokenKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tile {} {} channel {}",
            self.tile,
            self.direction.name(),
            self.channel
        )
    }
}

/// What applying one TXN op means for the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    None,
    /// The op set the enable bit of a core that was not running.
    CoreEnabled(Tile),
    /// A TCT sync: the control code waits until `take_token` succeeds.
    Wait(TokenKey),
}

/// What went wrong, where: the TXN op (for DMA errors, the op that queued
/// the task), the tile, and the register or channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimError {
    pub txn_op: Option<usize>,
    pub tile: Option<Tile>,
    pub register: Option<String>,
    pub message: String,
}

impl SimError {
    fn new(message: impl Into<String>) -> SimError {
        SimError {
            txn_op: None,
            tile: None,
            register: None,
            message: message.into(),
        }
    }

    fn op(mut self, index: usize) -> SimError {
        self.txn_op = Some(index);
        self
    }

    fn tile(mut self, tile: Tile) -> SimError {
        self.tile = Some(tile);
        self
    }

    fn register(mut self, name: impl Into<String>) -> SimError {
        self.register = Some(name.into());
        self
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(op) = self.txn_op {
            write!(f, "TXN op {op}: ")?;
        }
        match (self.tile, &self.register) {
            (Some(tile), Some(register)) => write!(f, "tile {} {register}: ", tile)?,
            (Some(tile), None) => write!(f, "tile {}: ", tile)?,
            (None, Some(register)) => write!(f, "{register}: ")?,
            (None, None) => {}
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for SimError {}

/// `core.dma.s2mm[0]`, as the register names put it.
fn channel_name(kind: TileKind, direction: Direction, channel: u32) -> String {
    format!("{}.dma.{}[{channel}]", kind.prefix(), direction.name())
}

fn ones(width: u32) -> u64 {
    1u64.checked_shl(width).map_or(u64::MAX, |bit| bit - 1)
}

fn field_mask(field: Field) -> u32 {
    (ones(field.width) << field.lsb) as u32
}

fn field_of(value: u32, field: Field) -> u32 {
    ((u64::from(value) >> field.lsb) & ones(field.width)) as u32
}

/// The port of a switch side that physical index `physical` is.
fn port_at(ports: &BTreeMap<PortKind, PortRange>, physical: u32) -> Option<Port> {
    ports
        .iter()
        .find(|(_, range)| (range.first..range.first + range.count).contains(&physical))
        .map(|(&kind, range)| Port {
            kind,
            index: physical - range.first,
        })
}

fn physical(ports: &BTreeMap<PortKind, PortRange>, port: Port) -> Option<u32> {
    ports
        .get(&port.kind)
        .filter(|range| port.index < range.count)
        .map(|range| range.first + port.index)
}

/// The tile a master port of `kind` leads to, and the slave kind it enters by.
fn neighbour(tile: Tile, kind: PortKind) -> Option<(Tile, PortKind)> {
    let Tile { column, row } = tile;
    match kind {
        PortKind::North => Some((Tile::new(column, row + 1), PortKind::South)),
        PortKind::South => row
            .checked_sub(1)
            .map(|r| (Tile::new(column, r), PortKind::North)),
        PortKind::East => Some((Tile::new(column + 1, row), PortKind::West)),
        PortKind::West => column
            .checked_sub(1)
            .map(|c| (Tile::new(c, row), PortKind::East)),
        _ => None,
    }
}

// aie-rt xaie2pgbl_params.h: CORE_CONTROL enable is bit 0 (reset, bit 1, is
// not modelled).
const CORE_ENABLE: u32 = 1;

/// How many buffer descriptors one channel may complete in one `step` before
/// the model calls its work endless (e.g. two DMAs handing lock credits to
/// each other forever): work bounded by data or by a core's locks stops far
/// sooner, and the limit keeps `step` from never returning.
/// Bytes of a stream that arrive together: a descriptor's data reaches its
/// destination in chunks of this size, each when its last byte is sent.
const ARRIVAL_CHUNK: usize = 256;
const STEP_BD_LIMIT: u32 = 1 << 16;

/// A task as the start queue holds it.
#[derive(Debug, Clone, Copy)]
struct Task {
    entry: StartQueueEntry,
    /// The TXN op that queued it, for errors.
    txn_op: usize,
    /// The control clock when it was queued (timing model).
    queued_at: u64,
}

/// The task a channel is working on.
#[derive(Debug)]
struct Running {
    task: Task,
    /// Runs of the chain finished so far.
    run: u32,
    bd: u32,
    /// As loaded for this use (the address at its iteration step).
    descriptor: BufferDescriptor,
    /// Whether this descriptor's lock acquire has succeeded (or it has none).
    acquired: bool,
    /// The modelled cycle the descriptor's transfer may start (once its
    /// lock is taken).
    ready: u64,
}

#[derive(Debug, Default)]
struct Channel {
    queue: VecDeque<Task>,
    running: Option<Running>,
    /// S2MM only: bytes routed here and not yet written to memory.
    incoming: VecDeque<u8>,
    /// S2MM only: the bytes of `incoming` in arrival chunks: (bytes, the
    /// modelled cycle the chunk's last byte arrives).
    arrivals: VecDeque<(usize, u64)>,
    /// Buffer descriptors completed in the current `step`.
    completed: u32,
    /// The modelled cycle the channel finishes its last transfer, and the
    /// cycles it spent moving data.
    clock: u64,
    busy: u64,
}

/// When each credit of a lock was released, oldest first: an acquire takes
/// the oldest credits, so a consumer waits for the release that made its
/// record, not for a later one. The lock's value is authoritative; credits
/// it holds beyond the stamps (its initial value, or a value the control
/// code wrote) date from cycle 0.
#[derive(Debug, Clone, Default)]
struct Credits(VecDeque<u64>);

impl Credits {
    /// Takes `n` of the `held` credits: the cycle the last of them was
    /// released at.
    fn take(&mut self, held: u32, n: u32) -> u64 {
        self.fit(held);
        let unstamped = (held as usize).saturating_sub(self.0.len());
        let stamped = (n as usize).saturating_sub(unstamped);
        self.0.drain(..stamped.min(self.0.len())).max().unwrap_or(0)
    }

    /// Adds `n` credits released at `at` to the `held` ones.
    fn give(&mut self, held: u32, n: u32, at: u64) {
        self.fit(held);
        self.0.extend(std::iter::repeat_n(at, n as usize));
    }

    /// Drops stamps the lock no longer holds (a value written lower).
    fn fit(&mut self, held: u32) {
        while self.0.len() > held as usize {
            self.0.pop_front();
        }
    }

    /// The latest release.
    fn last(&self) -> u64 {
        self.0.iter().copied().max().unwrap_or(0)
    }
}

#[derive(Debug)]
struct TileState {
    kind: TileKind,
    /// Tile-relative offset -> value, for every register written (lock
    /// values live in `locks`).
    registers: BTreeMap<u32, u32>,
    locks: Vec<u32>,
    /// Per lock, the modelled cycles its credits were released at, oldest
    /// first (see `Credits`).
    lock_times: Vec<Credits>,
    s2mm: Vec<Channel>,
    mm2s: Vec<Channel>,
    core_enabled: bool,
}

impl TileState {
    fn register(&self, offset: u32) -> u32 {
        self.registers.get(&offset).copied().unwrap_or(0)
    }

    fn channels(&self, direction: Direction) -> &[Channel] {
        match direction {
            Direction::S2mm => &self.s2mm,
            Direction::Mm2s => &self.mm2s,
        }
    }

    fn channel_mut(&mut self, direction: Direction, channel: u32) -> Option<&mut Channel> {
        match direction {
            Direction::S2mm => self.s2mm.get_mut(channel as usize),
            Direction::Mm2s => self.mm2s.get_mut(channel as usize),
        }
    }
}

/// A DMA channel of a tile, and what errors about it should name.
#[derive(Debug, Clone, Copy)]
struct ChannelId {
    tile: Tile,
    kind: TileKind,
    direction: Direction,
    channel: u32,
}

impl ChannelId {
    fn name(&self) -> String {
        channel_name(self.kind, self.direction, self.channel)
    }

    /// An error about buffer descriptor `bd` of a task queued by `txn_op`.
    fn error(&self, txn_op: usize, bd: u32, message: impl Into<String>) -> SimError {
        SimError::new(message)
            .op(txn_op)
            .tile(self.tile)
            .register(format!("{} bd[{bd}]", self.name()))
    }
}

/// The array: registers, locks, DMA engines, streams and tokens.
pub struct Array {
    profile: &'static DeviceProfile,
    tiles: BTreeMap<Tile, TileState>,
    /// Issued and not yet taken task-complete tokens: the modelled cycle
    /// each was issued.
    tokens: HashMap<TokenKey, VecDeque<u64>>,
    /// The command processor's modelled cycle, and the cycles it spent
    /// writing (not waiting).
    control: u64,
    control_busy: u64,
    /// Buffer descriptors the MM2S channels of core and memory tiles
    /// completed: the records the array sent out.
    sent: u64,
}

impl Array {
    /// Every tile of the profile's array with registers and locks at zero,
    /// no route, no core enabled.
    pub fn new(profile: &'static DeviceProfile) -> Array {
        let a = &profile.array;
        let mut tiles = BTreeMap::new();
        for column in a.first_column..a.first_column + a.columns {
            for row in 0..a.rows {
                if let Some(kind) = profile.tile_kind(column, row) {
                    let budget = profile.budget(kind);
                    let channels = |n: u32| (0..n).map(|_| Channel::default()).collect();
                    tiles.insert(
                        Tile::new(column, row),
                        TileState {
                            kind,
                            registers: BTreeMap::new(),
                            locks: vec![0; budget.locks as usize],
                            lock_times: vec![Credits::default(); budget.locks as usize],
                            s2mm: channels(budget.s2mm),
                            mm2s: channels(budget.mm2s),
                            core_enabled: false,
                        },
                    );
                }
            }
        }
        Array {
            profile,
            tiles,
            tokens: HashMap::new(),
            control: 0,
            control_busy: 0,
            sent: 0,
        }
    }

    /// The device profile the array follows.
    pub fn profile(&self) -> &'static DeviceProfile {
        self.profile
    }

    /// Apply TXN op number `index` (for error messages). `arguments[i]` is
    /// the DDR base address of kernel argument i; DDR_PATCH names argument
    /// i as i + 3 (the xclbin flow's numbering, see docs/xdna-target.md).
    pub fn apply(
        &mut self,
        index: usize,
        op: &TxnOp,
        arguments: &[u64],
    ) -> Result<Effect, SimError> {
        // The command processor spends a cycle per register word it writes
        // (a mask write reads first; a patch reads and writes two words).
        let words = match op {
            TxnOp::Write { .. } => 1,
            TxnOp::BlockWrite { words, .. } => words.len() as u64,
            TxnOp::MaskWrite { .. } | TxnOp::MaskPoll { .. } => 2,
            TxnOp::DdrPatch { .. } => 4,
            TxnOp::Sync { .. } => 0,
        };
        let cycles = words * self.profile.timing.control_cycles_per_word;
        self.control += cycles;
        self.control_busy += cycles;
        match op {
            TxnOp::Write { address, value } => {
                let enabled = self.write(index, (*address).into(), *value, u32::MAX)?;
                Ok(enabled.map_or(Effect::None, Effect::CoreEnabled))
            }
            TxnOp::BlockWrite { address, words } => {
                let mut enabled = None;
                for (i, word) in words.iter().enumerate() {
                    let at = u64::from(*address) + 4 * i as u64;
                    if let Some(tile) = self.write(index, at, *word, u32::MAX)? {
                        if let Some(first) = enabled.replace(tile) {
                            return Err(SimError::new(format!(
                                "enables cores {} and {} in one BLOCKWRITE; the driver \
                                 starts one core per op",
                                first, tile
                            ))
                            .op(index));
                        }
                    }
                }
                Ok(enabled.map_or(Effect::None, Effect::CoreEnabled))
            }
            TxnOp::MaskWrite {
                address,
                value,
                mask,
            } => {
                let enabled = self.write(index, (*address).into(), *value, *mask)?;
                Ok(enabled.map_or(Effect::None, Effect::CoreEnabled))
            }
            TxnOp::MaskPoll {
                address,
                value,
                mask,
            } => {
                // aie-rt XAie_MaskPoll: done when (register & mask) == value.
                let (found, name) = self.read(index, (*address).into())?;
                if found & mask == *value {
                    Ok(Effect::None)
                } else {
                    let (column, row, _) = self.profile.split_address((*address).into());
                    Err(SimError::new(format!(
                        "MASKPOLL waits for (value & {mask:#x}) == {value:#x}, but the \
                         register holds {found:#x} and nothing the model runs changes it"
                    ))
                    .op(index)
                    .tile(Tile::new(column as u32, row))
                    .register(name))
                }
            }
            TxnOp::DdrPatch {
                address,
                arg_index,
                arg_offset,
            } => {
                self.ddr_patch(index, *address, *arg_index, *arg_offset, arguments)?;
                Ok(Effect::None)
            }
            TxnOp::Sync {
                column,
                row,
                direction,
                channel,
                column_count,
                row_count,
            } => {
                let tile = Tile::new(u32::from(*column), u32::from(*row));
                let fail = |message: String| SimError::new(message).op(index).tile(tile);
                if (*column_count, *row_count) != (1, 1) {
                    return Err(fail(format!(
                        "a TCT sync over {column_count} columns x {row_count} rows is not \
                         modelled; only one tile"
                    )));
                }
                let Some(state) = self.tiles.get(&tile) else {
                    return Err(fail("SYNC names a tile outside the array".into()));
                };
                let channels = state.channels(*direction).len();
                if usize::from(*channel) >= channels {
                    return Err(fail(format!(
                        "SYNC names {} channel {channel}, but the tile has {channels}",
                        direction.name()
                    )));
                }
                Ok(Effect::Wait(TokenKey {
                    tile,
                    direction: *direction,
                    channel: (*channel).into(),
                }))
            }
        }
    }

    /// Consume one task-complete token of `key` if one was issued; the
    /// command processor, which waited for it, continues from the cycle it
    /// was issued.
    pub fn take_token(&mut self, key: &TokenKey) -> bool {
        match self
            .tokens
            .get_mut(key)
            .and_then(|issued| issued.pop_front())
        {
            Some(at) => {
                self.control = self.control.max(at);
                true
            }
            None => false,
        }
    }

    /// The command processor's modelled cycle (a core it enables starts then).
    pub fn control_clock(&self) -> u64 {
        self.control
    }

    /// The cycles the command processor spent writing registers.
    pub fn control_busy(&self) -> u64 {
        self.control_busy
    }

    /// Records sent out of core and memory tiles so far (one per buffer
    /// descriptor an MM2S channel completed there).
    pub fn records_sent(&self) -> u64 {
        self.sent
    }

    /// The modelled cycle every DMA channel is done, and the channel that
    /// spent the most cycles moving data (its name and those cycles).
    pub fn dma_times(&self) -> (u64, Option<(String, u64)>) {
        let mut end = 0;
        let mut busiest: Option<(String, u64)> = None;
        for (&tile, state) in &self.tiles {
            for direction in [Direction::S2mm, Direction::Mm2s] {
                for (channel, c) in state.channels(direction).iter().enumerate() {
                    end = end.max(c.clock);
                    if c.busy > busiest.as_ref().map_or(0, |b| b.1) {
                        let name = channel_name(state.kind, direction, channel as u32);
                        busiest = Some((format!("tile {} {name}", tile), c.busy));
                    }
                }
            }
        }
        (end, busiest)
    }

    /// Advance every DMA engine as far as it can go now; `Ok(true)` if
    /// anything moved (a task started, a lock was taken, data moved).
    pub fn step(&mut self, memory: &mut dyn Memory) -> Result<bool, SimError> {
        let mut ids = Vec::new();
        for (&tile, state) in &mut self.tiles {
            // MM2S first, so what a pass sends its S2MM channels can take.
            for direction in [Direction::Mm2s, Direction::S2mm] {
                let count = state.channels(direction).len() as u32;
                for channel in 0..count {
                    if let Some(c) = state.channel_mut(direction, channel) {
                        c.completed = 0;
                    }
                    ids.push(ChannelId {
                        tile,
                        kind: state.kind,
                        direction,
                        channel,
                    });
                }
            }
        }
        let mut moved = false;
        loop {
            let mut any = false;
            for id in &ids {
                any |= self.advance(*id, memory)?;
            }
            if !any {
                return Ok(moved);
            }
            moved = true;
        }
    }

    /// Core side: take `at_least` from a lock of `tile` (tile-relative id, as
    /// `aie2p.lock.acquire [c, r] lock N ge V` names it) if its value is at
    /// least that much.
    /// `now` is the core's modelled cycle; on success, the cycle it holds
    /// the credit (after the release of the credit it takes, and the
    /// handoff).
    pub fn try_acquire(
        &mut self,
        tile: Tile,
        lock: u32,
        at_least: u32,
        now: u64,
    ) -> Result<Option<u64>, SimError> {
        let max = self.profile.limits.lock_value_max;
        let handoff = self.profile.timing.lock_handoff_cycles;
        let value = self.core_lock(tile, lock)?;
        if at_least > max {
            return Err(SimError::new(format!(
                "acquire of {at_least} can never succeed: a lock holds at most {max}"
            ))
            .tile(tile)
            .register(format!("lock[{lock}]")));
        }
        if *value < at_least {
            return Ok(None);
        }
        let held = *value;
        *value -= at_least;
        let released = self
            .tiles
            .get_mut(&tile)
            .and_then(|state| state.lock_times.get_mut(lock as usize))
            .map_or(0, |credits| credits.take(held, at_least));
        Ok(Some(now.max(released + handoff)))
    }

    #[cfg(test)]
    fn lock_time(&self, tile: Tile, lock: u32) -> u64 {
        self.tiles
            .get(&tile)
            .and_then(|state| state.lock_times.get(lock as usize))
            .map_or(0, Credits::last)
    }

    /// Core side: add `add` to a lock of `tile`; past `lock_value_max` is an error.
    /// `now` is the core's modelled cycle.
    pub fn release(&mut self, tile: Tile, lock: u32, add: u32, now: u64) -> Result<(), SimError> {
        let held = *self.core_lock(tile, lock)?;
        if let Some(credits) = self
            .tiles
            .get_mut(&tile)
            .and_then(|state| state.lock_times.get_mut(lock as usize))
        {
            credits.give(held, add, now);
        }
        let max = self.profile.limits.lock_value_max;
        let value = self.core_lock(tile, lock)?;
        match value.checked_add(add).filter(|&v| v <= max) {
            Some(new) => {
                *value = new;
                Ok(())
            }
            None => Err(SimError::new(format!(
                "lock overflow: release of {add} on value {value} exceeds the maximum {max}"
            ))
            .tile(tile)
            .register(format!("lock[{lock}]"))),
        }
    }

    /// Why each unfinished DMA task waits: tile, channel, buffer descriptor,
    /// and the lock or stream it waits on.
    pub fn pending(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (&tile, state) in &self.tiles {
            for direction in [Direction::S2mm, Direction::Mm2s] {
                for (channel, c) in state.channels(direction).iter().enumerate() {
                    let name = channel_name(state.kind, direction, channel as u32);
                    if let Some(r) = &c.running {
                        lines.push(format!(
                            "tile {} {name} bd[{}] (task queued by TXN op {}, run {} of {}): {}",
                            tile,
                            r.bd,
                            r.task.txn_op,
                            r.run + 1,
                            r.task.entry.runs,
                            self.waits_for(state, direction, c, r)
                        ));
                    }
                    for task in &c.queue {
                        lines.push(format!(
                            "tile {} {name}: task queued by TXN op {} (start bd[{}]) waits \
                             behind the running task",
                            tile, task.txn_op, task.entry.start_bd
                        ));
                    }
                }
            }
        }
        lines
    }

    /// Bytes that arrived on an S2MM channel's stream and no task has taken.
    pub fn undelivered(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (&tile, state) in &self.tiles {
            for (channel, c) in state.s2mm.iter().enumerate() {
                if !c.incoming.is_empty() {
                    lines.push(format!(
                        "tile {} {}: {} bytes arrived that no task has taken",
                        tile,
                        channel_name(state.kind, Direction::S2mm, channel as u32),
                        c.incoming.len()
                    ));
                }
            }
        }
        lines
    }

    /// Whether any DMA task is still queued or running.
    pub fn busy(&self) -> bool {
        self.tiles.values().any(|state| {
            [Direction::S2mm, Direction::Mm2s].iter().any(|&d| {
                state
                    .channels(d)
                    .iter()
                    .any(|c| c.running.is_some() || !c.queue.is_empty())
            })
        })
    }

    fn waits_for(
        &self,
        state: &TileState,
        direction: Direction,
        channel: &Channel,
        running: &Running,
    ) -> String {
        match running.descriptor.acquire {
            Some((id, value)) if !running.acquired => {
                let regs = self.profile.tile_registers(state.kind);
                let own = id.wrapping_sub(regs.dma_own_lock_id_base);
                let current = state
                    .locks
                    .get(own as usize)
                    .map_or("?".to_string(), |v| v.to_string());
                let test = if value < 0 {
                    format!(">= {}", -value)
                } else {
                    format!("== {value}")
                };
                format!("waits to acquire lock {own} {test} (value {current})")
            }
            _ if direction == Direction::S2mm => format!(
                "waits for {} bytes on its stream ({} arrived)",
                running.descriptor.length,
                channel.incoming.len()
            ),
            _ => "ready to send".into(),
        }
    }

    fn state(&self, tile: Tile) -> Option<&TileState> {
        self.tiles.get(&tile)
    }

    fn core_lock(&mut self, tile: Tile, lock: u32) -> Result<&mut u32, SimError> {
        let Some(state) = self.tiles.get_mut(&tile) else {
            return Err(SimError::new("no such tile in the array").tile(tile));
        };
        let count = state.locks.len();
        state.locks.get_mut(lock as usize).ok_or_else(|| {
            SimError::new(format!(
                "lock {lock} does not exist: the tile has {count} locks"
            ))
            .tile(tile)
        })
    }

    // ---- register writes -------------------------------------------------

    /// Write `value` under `mask` to a full address; returns the tile whose
    /// core this write enabled.
    fn write(
        &mut self,
        op: usize,
        address: u64,
        value: u32,
        mask: u32,
    ) -> Result<Option<Tile>, SimError> {
        let profile = self.profile;
        let (column, row, offset) = profile.split_address(address);
        let Some(name) = name_of(profile, address) else {
            let error = SimError::new(format!(
                "write to {address:#010x}, which names no register or memory the model knows"
            ))
            .op(op);
            return Err(match u32::try_from(column) {
                Ok(column) if profile.tile_kind(column, row).is_some() => error
                    .tile(Tile::new(column, row))
                    .register(format!("offset {offset:#x}")),
                _ => error,
            });
        };
        let tile = Tile::new(name.column, name.row);
        let register = name.to_string();
        let fail = |message: String| {
            SimError::new(message)
                .op(op)
                .tile(tile)
                .register(register.clone())
        };
        if let Register::StartQueue(direction, channel) = name.register {
            // The start queue is a FIFO, not storage: a write pushes a task.
            return self
                .enqueue(op, tile, name.kind, direction, channel, value & mask)
                .map(|()| None);
        }
        let max = profile.limits.lock_value_max;
        let Some(state) = self.tiles.get_mut(&tile) else {
            return Err(fail("no such tile in the array".into()));
        };
        let merged = state.register(offset) & !mask | value & mask;
        match name.register {
            Register::LockValue(id) => {
                let Some(lock) = state.locks.get_mut(id as usize) else {
                    return Err(fail("no such lock".into()));
                };
                let new = *lock & !mask | value & mask;
                if new > max {
                    return Err(fail(format!("lock value {new} is above the maximum {max}")));
                }
                *lock = new;
            }
            Register::BdWord { .. } | Register::ShimMux | Register::ShimDemux => {
                state.registers.insert(offset, merged);
            }
            Register::ChannelControl(..) => {
                if merged != 0 {
                    return Err(fail(format!(
                        "channel control {merged:#x}: settings such as reset, out-of-order \
                         or compression are not modelled (only 0)"
                    )));
                }
                state.registers.insert(offset, merged);
            }
            Register::StreamSwitchMaster(_) => {
                let s = &profile.tile_registers(state.kind).stream_switch;
                let extra =
                    merged & !(field_mask(s.master_enable) | field_mask(s.master_slave_index));
                if extra != 0 {
                    return Err(fail(format!(
                        "master setting {merged:#x} has bits {extra:#x} set: packet \
                         switching and other modes are not modelled, only circuits"
                    )));
                }
                let slave = field_of(merged, s.master_slave_index);
                if field_of(merged, s.master_enable) == 1 && slave >= s.slaves {
                    return Err(fail(format!(
                        "selects slave port {slave}, but the switch has {} slave ports",
                        s.slaves
                    )));
                }
                state.registers.insert(offset, merged);
            }
            Register::StreamSwitchSlave(_) => {
                let s = &profile.tile_registers(state.kind).stream_switch;
                let extra = merged & !field_mask(s.slave_enable);
                if extra != 0 {
                    return Err(fail(format!(
                        "slave setting {merged:#x} has bits {extra:#x} set: packet \
                         switching is not modelled, only circuits"
                    )));
                }
                state.registers.insert(offset, merged);
            }
            Register::CoreControl => {
                if merged & !CORE_ENABLE != 0 {
                    return Err(fail(format!(
                        "core control {merged:#x}: only the enable bit is modelled (not reset)"
                    )));
                }
                let enable = merged & CORE_ENABLE != 0;
                let started = enable && !state.core_enabled;
                state.core_enabled = enable;
                state.registers.insert(offset, merged);
                return Ok(started.then_some(tile));
            }
            Register::CoreStatus => return Err(fail("core status is read-only".into())),
            Register::ProgramMemory(_) | Register::DataMemory(_) => {
                return Err(fail(
                    "the control code writes tile memory, which the array model does not \
                     load (the simulator loads worker images itself)"
                        .into(),
                ))
            }
            Register::StartQueue(..) => {}
        }
        Ok(None)
    }

    /// The value MASKPOLL sees at a full address, and the register's name.
    fn read(&self, op: usize, address: u64) -> Result<(u32, String), SimError> {
        let Some(name) = name_of(self.profile, address) else {
            return Err(SimError::new(format!(
                "MASKPOLL of {address:#010x}, which names no register the model knows"
            ))
            .op(op));
        };
        let tile = Tile::new(name.column, name.row);
        let register = name.to_string();
        let fail = |message: &str| {
            SimError::new(message)
                .op(op)
                .tile(tile)
                .register(register.clone())
        };
        let Some(state) = self.state(tile) else {
            return Err(fail("no such tile in the array"));
        };
        let (_, _, offset) = self.profile.split_address(address);
        let value = match name.register {
            Register::LockValue(id) => state.locks.get(id as usize).copied().unwrap_or(0),
            Register::StartQueue(..) => return Err(fail("a start queue cannot be read")),
            Register::CoreStatus => return Err(fail("core status is not modelled")),
            Register::ProgramMemory(_) | Register::DataMemory(_) => {
                return Err(fail(
                    "the array model does not read tile memory for MASKPOLL",
                ))
            }
            _ => state.register(offset),
        };
        Ok((value, register))
    }

    fn ddr_patch(
        &mut self,
        op: usize,
        address: u32,
        arg_index: u32,
        arg_offset: u64,
        arguments: &[u64],
    ) -> Result<(), SimError> {
        let profile = self.profile;
        let layout = &profile.registers.shim.bd_layout;
        let first_word = layout.address.first().map(|piece| piece.word);
        let name = name_of(profile, address.into());
        let (tile, bd) = match name {
            Some(n) => match n.register {
                Register::BdWord { bd, word }
                    if n.kind == TileKind::Shim && Some(word) == first_word =>
                {
                    (Tile::new(n.column, n.row), bd)
                }
                _ => {
                    return Err(SimError::new(format!(
                        "DDR_PATCH must name the address word of a shim buffer descriptor, \
                         not {n}"
                    ))
                    .op(op)
                    .tile(Tile::new(n.column, n.row)))
                }
            },
            None => {
                return Err(SimError::new(format!(
                    "DDR_PATCH of {address:#010x}, which names no register the model knows"
                ))
                .op(op))
            }
        };
        let register = format!("shim.bd[{bd}]");
        let fail = |message: String| {
            SimError::new(message)
                .op(op)
                .tile(tile)
                .register(register.clone())
        };
        // Kernel argument i is xclbin argument i + 3 (opcode, instruction
        // buffer and its size come first).
        let Some(base) = arg_index
            .checked_sub(3)
            .and_then(|i| arguments.get(i as usize))
        else {
            return Err(fail(format!(
                "DDR_PATCH names argument index {arg_index} (kernel argument {arg_index} - 3), \
                 but the invocation has {} arguments",
                arguments.len()
            )));
        };
        let bd_base = profile
            .bd(TileKind::Shim, bd)
            .map_err(|e| fail(e.to_string()))?;
        let Some(state) = self.tiles.get_mut(&tile) else {
            return Err(fail("no such tile in the array".into()));
        };
        // aiebu requires the patched descriptor to have been written first.
        let offsets: Vec<u32> = layout
            .address
            .iter()
            .map(|piece| bd_base + 4 * piece.word)
            .collect();
        if offsets.iter().any(|o| !state.registers.contains_key(o)) {
            return Err(fail(
                "DDR_PATCH of a buffer descriptor whose address words were never written".into(),
            ));
        }
        let mut units = 0u64;
        let mut shift = 0;
        for (piece, offset) in layout.address.iter().zip(&offsets) {
            let field = Field {
                lsb: piece.lsb,
                width: piece.width,
            };
            units |= u64::from(field_of(state.register(*offset), field)) << shift;
            shift += piece.width;
        }
        let unit = u64::from(layout.address_unit_bytes);
        let patched = (units * unit)
            .checked_add(*base)
            .and_then(|a| a.checked_add(arg_offset));
        let Some(patched) = patched.filter(|a| a % unit == 0 && a / unit <= ones(shift)) else {
            return Err(fail(format!(
                "address {:#x} + argument {:#x} + offset {arg_offset:#x} does not fit the \
                 descriptor's {shift}-bit address in {unit}-byte units",
                units * unit,
                base
            )));
        };
        let mut rest = patched / unit;
        for (piece, offset) in layout.address.iter().zip(&offsets) {
            let field = Field {
                lsb: piece.lsb,
                width: piece.width,
            };
            let bits = (rest & ones(piece.width)) as u32;
            rest >>= piece.width;
            let word = state.register(*offset) & !field_mask(field) | bits << piece.lsb;
            state.registers.insert(*offset, word);
        }
        Ok(())
    }

    // ---- DMA engines -----------------------------------------------------

    fn enqueue(
        &mut self,
        op: usize,
        tile: Tile,
        kind: TileKind,
        direction: Direction,
        channel: u32,
        value: u32,
    ) -> Result<(), SimError> {
        let id = ChannelId {
            tile,
            kind,
            direction,
            channel,
        };
        let fail = |message: String| {
            SimError::new(message)
                .op(op)
                .tile(tile)
                .register(format!("{}.start_queue", id.name()))
        };
        let entry = self
            .profile
            .decode_start_queue(kind, value)
            .map_err(|e| fail(e.to_string()))?;
        let task = Task {
            entry,
            txn_op: op,
            queued_at: self.control,
        };
        let depth = self.profile.limits.task_queue_depth as usize;
        let (idle, waiting) = match self.tiles.get(&tile) {
            Some(state) => match state.channels(direction).get(channel as usize) {
                Some(c) => (c.running.is_none(), c.queue.len()),
                None => return Err(fail("no such channel".into())),
            },
            None => return Err(fail("no such tile in the array".into())),
        };
        // An idle channel takes the task at once; a busy one queues it.
        if idle {
            let running = self.start(id, task)?;
            if let Some(c) = self.channel_mut(id) {
                c.running = Some(running);
            }
            return Ok(());
        }
        if waiting >= depth {
            return Err(fail(format!(
                "task queue overflow: {waiting} tasks already wait behind the running one \
                 (queue depth {depth})"
            )));
        }
        if let Some(c) = self.channel_mut(id) {
            c.queue.push_back(task);
        }
        Ok(())
    }

    fn channel_mut(&mut self, id: ChannelId) -> Option<&mut Channel> {
        self.tiles
            .get_mut(&id.tile)?
            .channel_mut(id.direction, id.channel)
    }

    /// Start a task: load its first buffer descriptor.
    fn start(&mut self, id: ChannelId, task: Task) -> Result<Running, SimError> {
        let bd = task.entry.start_bd;
        let descriptor = self.load_bd(id, bd, task.txn_op)?;
        if id.direction == Direction::Mm2s {
            if let Some(cycle) = self.endless_chain(id, bd) {
                let chain: Vec<String> = cycle.iter().map(|b| format!("bd[{b}]")).collect();
                return Err(id.error(
                    task.txn_op,
                    bd,
                    format!(
                        "the chain repeats {} -> bd[{}] with no lock acquire: it would send \
                         forever",
                        chain.join(" -> "),
                        cycle[0]
                    ),
                ));
            }
        }
        Ok(Running {
            task,
            run: 0,
            bd,
            descriptor,
            acquired: false,
            ready: task.queued_at,
        })
    }

    /// Load buffer descriptor `bd` for one use, as the channel does: its words
    /// as last written, decoded; with an iteration, the address of this use's
    /// step, and the descriptor's index advanced in its register.
    fn load_bd(
        &mut self,
        id: ChannelId,
        bd: u32,
        txn_op: usize,
    ) -> Result<BufferDescriptor, SimError> {
        let profile = self.profile;
        let fail = |message: String| id.error(txn_op, bd, message);
        if id.kind == TileKind::Memory {
            let half = profile.budget(id.kind).bds / 2;
            let even = id.channel.is_multiple_of(2);
            if (bd < half) != even {
                let (low, high) = if even {
                    (0, half - 1)
                } else {
                    (half, 2 * half - 1)
                };
                return Err(fail(format!(
                    "a memory tile's channel {} can use only buffer descriptors {low}..={high}",
                    id.channel
                )));
            }
        }
        let words = self.bd_words(id, bd).map_err(&fail)?;
        let mut descriptor = profile
            .decode_bd(id.kind, &words)
            .map_err(|e| fail(e.to_string()))?;
        if !descriptor.valid {
            return Err(fail(
                "the buffer descriptor is not valid (its valid bit is clear)".into(),
            ));
        }
        let stepped = match descriptor.iteration {
            Some(it) => {
                // Back to 0 when the next index equals the wrap (decoding
                // keeps the index below it).
                let current = if it.current + 1 >= it.wrap {
                    0
                } else {
                    it.current + 1
                };
                let next = BufferDescriptor {
                    iteration: Some(Iteration { current, ..it }),
                    ..descriptor.clone()
                };
                let offset = u64::from(it.stride).saturating_mul(it.current.into());
                descriptor.address = descriptor.address.saturating_add(offset);
                Some(
                    profile
                        .encode_bd(id.kind, &next)
                        .map_err(|e| fail(e.to_string()))?,
                )
            }
            None => None,
        };
        // Tile memory bounds are known now; DDR bounds only when it moves.
        if id.kind != TileKind::Shim {
            self.local(id, &descriptor).map_err(&fail)?;
        }
        if let Some(stepped) = stepped {
            let base = profile.bd(id.kind, bd).map_err(|e| fail(e.to_string()))?;
            let Some(state) = self.tiles.get_mut(&id.tile) else {
                return Err(fail("no such tile in the array".into()));
            };
            // Only the word holding the index changes.
            for ((old, new), word) in words.iter().zip(&stepped).zip(0u32..) {
                if old != new {
                    state.registers.insert(base + 4 * word, *new);
                }
            }
        }
        Ok(descriptor)
    }

    fn bd_words(&self, id: ChannelId, bd: u32) -> Result<Vec<u32>, String> {
        let base = self.profile.bd(id.kind, bd).map_err(|e| e.to_string())?;
        let words = self.profile.tile_registers(id.kind).bd_layout.words;
        let state = self.state(id.tile).ok_or("no such tile in the array")?;
        Ok((0..words).map(|w| state.register(base + 4 * w)).collect())
    }

    /// The BDs of a cycle the chain from `bd` enters when none of them
    /// acquires a lock (nothing would ever stop it).
    fn endless_chain(&self, id: ChannelId, bd: u32) -> Option<Vec<u32>> {
        let mut seen: Vec<(u32, bool)> = Vec::new();
        let mut at = bd;
        loop {
            if let Some(pos) = seen.iter().position(|&(b, _)| b == at) {
                let cycle = &seen[pos..];
                return (!cycle.iter().any(|&(_, acquires)| acquires))
                    .then(|| cycle.iter().map(|&(b, _)| b).collect());
            }
            let words = self.bd_words(id, at).ok()?;
            let descriptor = self.profile.decode_bd(id.kind, &words).ok()?;
            seen.push((at, descriptor.acquire.is_some()));
            at = descriptor.next_bd?;
        }
    }

    /// Run one channel until it blocks or has nothing to do.
    fn advance(&mut self, id: ChannelId, memory: &mut dyn Memory) -> Result<bool, SimError> {
        let mut moved = false;
        loop {
            let Some(channel) = self.channel_mut(id) else {
                return Ok(moved);
            };
            let mut running = match channel.running.take() {
                Some(running) => running,
                None => match channel.queue.pop_front() {
                    Some(task) => {
                        moved = true;
                        self.start(id, task)?
                    }
                    None => return Ok(moved),
                },
            };
            let (op, bd) = (running.task.txn_op, running.bd);
            if !running.acquired {
                let clock = self.channel_mut(id).map_or(0, |c| c.clock);
                running.ready = running.ready.max(clock);
                if let Some((lock, value)) = running.descriptor.acquire {
                    let Some(released) = self
                        .dma_acquire(id, lock, value)
                        .map_err(|m| id.error(op, bd, m))?
                    else {
                        self.put_back(id, running);
                        return Ok(moved);
                    };
                    // The credit's own release, plus the handoff.
                    running.ready = running
                        .ready
                        .max(released + self.profile.timing.lock_handoff_cycles);
                }
                running.acquired = true;
                moved = true;
            }
            let cycles = u64::from(running.descriptor.length)
                .div_ceil(self.profile.timing.dma_bytes_per_cycle.max(1));
            let end = match id.direction {
                Direction::Mm2s => Some(
                    self.send(id, &running.descriptor, memory, running.ready + cycles)
                        .map_err(|m| id.error(op, bd, m))?,
                ),
                Direction::S2mm => self
                    .receive(id, &running.descriptor, memory)
                    .map_err(|m| id.error(op, bd, m))?
                    .map(|arrived| arrived.max(running.ready + cycles)),
            };
            let Some(end) = end else {
                self.put_back(id, running);
                return Ok(moved);
            };
            if let Some(c) = self.channel_mut(id) {
                c.clock = end;
                c.busy += cycles;
            }
            running.ready = end;
            if let Some((lock, value)) = running.descriptor.release {
                self.dma_release(id, lock, value, end)
                    .map_err(|m| id.error(op, bd, m))?;
            }
            moved = true;
            if id.direction == Direction::Mm2s && id.kind != TileKind::Shim {
                self.sent += 1;
            }
            let completed = self.channel_mut(id).map_or(0, |c| {
                c.completed += 1;
                c.completed
            });
            if completed > STEP_BD_LIMIT {
                return Err(id.error(
                    op,
                    bd,
                    format!(
                        "completed {STEP_BD_LIMIT} buffer descriptors without ever waiting: \
                         its chain cycles through locks that never stop it"
                    ),
                ));
            }
            let next = match running.descriptor.next_bd {
                Some(next) => Some(next),
                None if running.run + 1 < running.task.entry.runs => {
                    running.run += 1;
                    Some(running.task.entry.start_bd)
                }
                None => None,
            };
            match next {
                Some(next) => {
                    running.descriptor = self.load_bd(id, next, op)?;
                    running.bd = next;
                    running.acquired = false;
                    self.put_back(id, running);
                }
                None if running.task.entry.token_issue => {
                    let key = TokenKey {
                        tile: id.tile,
                        direction: id.direction,
                        channel: id.channel,
                    };
                    let at = self.channel_mut(id).map_or(0, |c| c.clock);
                    self.tokens.entry(key).or_default().push_back(at);
                }
                None => {}
            }
        }
    }

    fn put_back(&mut self, id: ChannelId, running: Running) {
        if let Some(c) = self.channel_mut(id) {
            c.running = Some(running);
        }
    }

    /// The tile's own lock a buffer descriptor's lock id names.
    fn dma_lock(&mut self, id: ChannelId, lock: u32) -> Result<&mut u32, String> {
        let base = self.profile.tile_registers(id.kind).dma_own_lock_id_base;
        let state = self
            .tiles
            .get_mut(&id.tile)
            .ok_or("no such tile in the array")?;
        let count = state.locks.len() as u32;
        match lock.checked_sub(base).filter(|&own| own < count) {
            Some(own) => state
                .locks
                .get_mut(own as usize)
                .ok_or_else(|| format!("lock id {lock} does not exist")),
            None => Err(format!(
                "lock id {lock} names a neighbouring tile's lock (this tile's own are \
                 {base}..={}); neighbour locks are not modelled",
                base + count - 1
            )),
        }
    }

    /// Takes the descriptor's credit if the lock allows it: the cycle the
    /// credit was released at, or None while the lock does not allow it.
    fn dma_acquire(&mut self, id: ChannelId, lock: u32, value: i32) -> Result<Option<u64>, String> {
        let current = self.dma_lock(id, lock)?;
        let held = *current;
        let need = value.unsigned_abs();
        let taken = if value < 0 {
            if held < need {
                return Ok(None);
            }
            *current -= need;
            need
        } else if held == need {
            // Acquire-equal takes nothing: the credits stay.
            0
        } else {
            return Ok(None);
        };
        let credits = self.dma_credits(id, lock);
        Ok(Some(credits.map_or(0, |c| {
            if taken == 0 {
                c.last()
            } else {
                c.take(held, taken)
            }
        })))
    }

    /// The credit stamps of a buffer descriptor's lock.
    fn dma_credits(&mut self, id: ChannelId, lock: u32) -> Option<&mut Credits> {
        let base = self.profile.tile_registers(id.kind).dma_own_lock_id_base;
        self.tiles
            .get_mut(&id.tile)
            .and_then(|state| state.lock_times.get_mut(lock.wrapping_sub(base) as usize))
    }

    fn dma_release(&mut self, id: ChannelId, lock: u32, value: i32, at: u64) -> Result<(), String> {
        let held = *self.dma_lock(id, lock)?;
        if let (Some(credits), Ok(add)) = (self.dma_credits(id, lock), u32::try_from(value)) {
            credits.give(held, add, at);
        }
        let max = self.profile.limits.lock_value_max;
        let current = self.dma_lock(id, lock)?;
        let new = i64::from(*current) + i64::from(value);
        if new < 0 || new > i64::from(max) {
            return Err(format!(
                "lock {} {}: release of {value:+} on value {current} leaves 0..={max}",
                lock,
                if new < 0 { "underflow" } else { "overflow" }
            ));
        }
        *current = new as u32;
        Ok(())
    }

    /// The range of tile memory a buffer descriptor's address names.
    fn local(
        &self,
        id: ChannelId,
        descriptor: &BufferDescriptor,
    ) -> Result<(usize, usize), String> {
        let regs = self.profile.tile_registers(id.kind);
        let size = self.profile.budget(id.kind).memory;
        let base = regs.dma_own_memory_address.map_or(0, |h| u64::from(h.0));
        let length = u64::from(descriptor.length);
        match descriptor.address.checked_sub(base) {
            Some(at) if at + length <= size => Ok((at as usize, length as usize)),
            _ => Err(format!(
                "{} bytes at {:#x} lie outside the tile's data memory ({base:#x}..{:#x} as its \
                 DMA addresses it; neighbour memories are not modelled)",
                length,
                descriptor.address,
                base + size
            )),
        }
    }

    /// The bytes a buffer descriptor reads or writes.
    fn memory_of<'m>(
        &self,
        id: ChannelId,
        descriptor: &BufferDescriptor,
        memory: &'m mut dyn Memory,
    ) -> Result<&'m mut [u8], String> {
        if id.kind == TileKind::Shim {
            let length = descriptor.length as usize;
            let bytes = memory.ddr(descriptor.address, length)?;
            return bytes.get_mut(..length).ok_or_else(|| {
                format!(
                    "the caller's memory gave fewer than {length} bytes at {:#x}",
                    descriptor.address
                )
            });
        }
        let (at, length) = self.local(id, descriptor)?;
        let bytes = memory.tile(id.tile);
        let have = bytes.len();
        bytes.get_mut(at..at + length).ok_or_else(|| {
            format!("the simulator holds only {have} bytes of the tile's data memory")
        })
    }

    /// Send the descriptor's bytes along the channel's route, the last
    /// leaving at modelled cycle `end`; returns `end`.
    fn send(
        &mut self,
        id: ChannelId,
        descriptor: &BufferDescriptor,
        memory: &mut dyn Memory,
        end: u64,
    ) -> Result<u64, String> {
        let data = self.memory_of(id, descriptor, memory)?.to_vec();
        let latency = self.profile.timing.stream_switch_latency_cycles;
        // The bytes leave at the channel's rate from `start`: each chunk
        // arrives when its last byte has been sent (plus the switches), so
        // the head of a long descriptor is there before its tail.
        let rate = self.profile.timing.dma_bytes_per_cycle.max(1);
        let start = end - (data.len() as u64).div_ceil(rate);
        let chunks: Vec<(usize, u64)> = (0..data.len())
            .step_by(ARRIVAL_CHUNK)
            .map(|at| {
                let bytes = ARRIVAL_CHUNK.min(data.len() - at);
                (bytes, start + ((at + bytes) as u64).div_ceil(rate))
            })
            .collect();
        for (tile, channel) in self.trace(id)? {
            // Every stream switch on the way (one per tile) adds its latency.
            let switches =
                u64::from(id.tile.column.abs_diff(tile.column) + id.tile.row.abs_diff(tile.row))
                    + 1;
            let to = self
                .tiles
                .get_mut(&tile)
                .and_then(|state| state.channel_mut(Direction::S2mm, channel))
                .ok_or_else(|| {
                    format!("the route ends at a channel tile {} does not have", tile)
                })?;
            to.incoming.extend(&data);
            to.arrivals.extend(
                chunks
                    .iter()
                    .map(|&(bytes, sent)| (bytes, sent + switches * latency)),
            );
        }
        Ok(end)
    }

    /// Write the descriptor's length from the channel's stream once it has
    /// arrived: the modelled cycle its last byte arrived; None while it has
    /// not.
    fn receive(
        &mut self,
        id: ChannelId,
        descriptor: &BufferDescriptor,
        memory: &mut dyn Memory,
    ) -> Result<Option<u64>, String> {
        let length = descriptor.length as usize;
        let arrived = self.channel_mut(id).map_or(0, |c| c.incoming.len());
        if arrived < length {
            return Ok(None);
        }
        let mut last = 0;
        if let Some(c) = self.channel_mut(id) {
            let mut taken = 0;
            while taken < length {
                let Some((bytes, at)) = c.arrivals.pop_front() else {
                    break;
                };
                last = last.max(at);
                let take = bytes.min(length - taken);
                taken += take;
                if take < bytes {
                    c.arrivals.push_front((bytes - take, at));
                }
            }
        }
        let target = self.memory_of(id, descriptor, memory)?;
        if let Some(c) = self
            .tiles
            .get_mut(&id.tile)
            .and_then(|state| state.channel_mut(id.direction, id.channel))
        {
            for (byte, value) in target.iter_mut().zip(c.incoming.drain(..length)) {
                *byte = value;
            }
        }
        Ok(Some(last))
    }

    /// The S2MM channels an MM2S channel's data reaches through the
    /// configured circuits.
    fn trace(&self, source: ChannelId) -> Result<Vec<(Tile, u32)>, String> {
        let profile = self.profile;
        let switch = |kind: TileKind| &profile.tile_registers(kind).stream_switch;
        let state = self.state(source.tile).ok_or("no such tile in the array")?;
        let s = switch(state.kind);
        let entry = match &s.shim_dma {
            Some(dma) => {
                let port = dma.mm2s.get(source.channel as usize).ok_or_else(|| {
                    format!(
                        "the shim has no MM2S channel {} in the profile",
                        source.channel
                    )
                })?;
                let selected = field_of(state.register(profile.shim_mux()), port.select);
                if selected != dma.select_dma {
                    return Err(format!(
                        "the shim mux does not pass MM2S{} into the stream switch: its South{} \
                         field holds {selected}, not DMA ({})",
                        source.channel, port.south, dma.select_dma
                    ));
                }
                Port {
                    kind: PortKind::South,
                    index: port.south,
                }
            }
            None => Port {
                kind: PortKind::Dma,
                index: source.channel,
            },
        };
        let first = physical(&s.slave_ports, entry)
            .ok_or_else(|| format!("the switch has no slave {entry} for the channel"))?;
        let mut work = VecDeque::from([(source.tile, first)]);
        let mut seen = BTreeSet::new();
        let mut ends = Vec::new();
        while let Some((tile, slave)) = work.pop_front() {
            let state = self.state(tile).ok_or("the route leaves the array")?;
            let s = switch(state.kind);
            let slave_port = port_at(&s.slave_ports, slave).ok_or_else(|| {
                format!(
                    "tile {} slave port {slave} has no kind in the profile",
                    tile
                )
            })?;
            if !seen.insert((tile, slave)) {
                return Err(format!(
                    "the route loops back to tile {} slave {slave_port}",
                    tile
                ));
            }
            let masters: Vec<u32> = (0..s.masters)
                .filter(|m| {
                    let v = state.register(s.master_base.0 + m * s.stride.0);
                    field_of(v, s.master_enable) == 1 && field_of(v, s.master_slave_index) == slave
                })
                .collect();
            if masters.is_empty() {
                return Err(format!(
                    "tile {} has no master connected to slave {slave_port}: data sent to an \
                     unrouted port",
                    tile
                ));
            }
            let enabled = state.register(s.slave_base.0 + slave * s.stride.0);
            if field_of(enabled, s.slave_enable) != 1 {
                return Err(format!(
                    "tile {} slave {slave_port} is not enabled: data sent to a disabled port",
                    tile
                ));
            }
            for m in masters {
                let master = port_at(&s.master_ports, m).ok_or_else(|| {
                    format!("tile {} master port {m} has no kind in the profile", tile)
                })?;
                if s.same_index.contains(&(slave_port.kind, master.kind))
                    && slave_port.index != master.index
                {
                    return Err(format!(
                        "tile {} joins slave {slave_port} to master {master}, which its switch \
                         joins only at equal indices",
                        tile
                    ));
                }
                match (master.kind, &s.shim_dma) {
                    (PortKind::Dma, _) => ends.push((tile, master.index)),
                    // A shim's South masters leave the array, to its DMA
                    // only through the demux.
                    (PortKind::South, Some(dma)) => {
                        let Some(channel) = dma.s2mm.iter().position(|p| p.south == master.index)
                        else {
                            return Err(format!(
                                "tile {} sends the data out of master {master} to PL or NoC, \
                                 which is not modelled",
                                tile
                            ));
                        };
                        let selected = field_of(
                            state.register(profile.shim_demux()),
                            dma.s2mm[channel].select,
                        );
                        if selected != dma.select_dma {
                            return Err(format!(
                                "the shim demux does not pass master {master} to S2MM{channel}: \
                                 its field holds {selected}, not DMA ({})",
                                dma.select_dma
                            ));
                        }
                        ends.push((tile, channel as u32));
                    }
                    (PortKind::North | PortKind::South | PortKind::East | PortKind::West, _) => {
                        let next = neighbour(tile, master.kind)
                            .and_then(|(t, into)| Some((t, into, self.state(t)?)));
                        let Some((next, into, next_state)) = next else {
                            return Err(format!(
                                "tile {} master {master} leads out of the array",
                                tile
                            ));
                        };
                        let port = Port {
                            kind: into,
                            index: master.index,
                        };
                        let slave = physical(&switch(next_state.kind).slave_ports, port)
                            .ok_or_else(|| {
                                format!(
                                    "tile {} master {master} leads to tile {}, which has no \
                                     slave {port}",
                                    tile, next
                                )
                            })?;
                        work.push_back((next, slave));
                    }
                    _ => {
                        return Err(format!(
                            "tile {} passes the data to master {master}; only DMA and the four \
                             directions are modelled",
                            tile
                        ))
                    }
                }
            }
        }
        Ok(ends)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loom_targets::xdna::route::{route, Endpoint, Used};

    const SHIM: Tile = Tile::new(0, 0);
    const MEM: Tile = Tile::new(0, 1);
    const CORE: Tile = Tile::new(0, 3);
    const ARG0: u64 = 1 << 32;
    const ARG1: u64 = 2 << 32;

    fn strix() -> &'static DeviceProfile {
        loom_targets::profiles()
            .iter()
            .find(|p| p.name == "amd.xdna.strix.17f0_10")
            .unwrap()
    }

    /// Zeroed tile memories made at first use, and caller buffers by base.
    struct TestMemory {
        tiles: BTreeMap<Tile, Vec<u8>>,
        ddr: Vec<(u64, Vec<u8>)>,
    }

    impl TestMemory {
        fn new(ddr: Vec<(u64, Vec<u8>)>) -> TestMemory {
            TestMemory {
                tiles: BTreeMap::new(),
                ddr,
            }
        }
    }

    impl Memory for TestMemory {
        fn tile(&mut self, tile: Tile) -> &mut [u8] {
            let p = strix();
            let size = p
                .tile_kind(tile.column, tile.row)
                .map_or(0, |kind| p.budget(kind).memory);
            self.tiles
                .entry(tile)
                .or_insert_with(|| vec![0; size as usize])
        }

        fn ddr(&mut self, address: u64, len: usize) -> Result<&mut [u8], String> {
            for (base, bytes) in &mut self.ddr {
                if let Some(at) = address.checked_sub(*base) {
                    if let Some(slice) = bytes.get_mut(at as usize..at as usize + len) {
                        return Ok(slice);
                    }
                }
            }
            Err(format!("DDR {address:#x} + {len} is in no buffer"))
        }
    }

    fn kind(tile: Tile) -> TileKind {
        strix().tile_kind(tile.column, tile.row).unwrap()
    }

    fn address(tile: Tile, offset: u32) -> u32 {
        strix().tile_address(tile.column, tile.row, offset) as u32
    }

    fn lock_init(tile: Tile, lock: u32, value: u32) -> TxnOp {
        let offset = strix().lock_value(kind(tile), lock).unwrap();
        TxnOp::Write {
            address: address(tile, offset),
            value,
        }
    }

    /// The switch settings `route` gives, as TXN ops.
    fn settings(from: (Tile, u32), to: (Tile, u32)) -> Vec<(Tile, u32, TxnOp)> {
        let end = |(tile, channel): (Tile, u32)| Endpoint {
            column: tile.column,
            row: tile.row,
            channel,
        };
        route(strix(), end(from), end(to), &mut Used::default())
            .unwrap()
            .into_iter()
            .map(|s| (Tile::new(s.column, s.row), s.offset, s.txn_op(strix())))
            .collect()
    }

    fn route_ops(from: (Tile, u32), to: (Tile, u32)) -> Vec<TxnOp> {
        settings(from, to)
            .into_iter()
            .map(|(_, _, op)| op)
            .collect()
    }

    fn bd(tile: Tile, n: u32, descriptor: &BufferDescriptor) -> TxnOp {
        let p = strix();
        TxnOp::BlockWrite {
            address: address(tile, p.bd(kind(tile), n).unwrap()),
            words: p.encode_bd(kind(tile), descriptor).unwrap(),
        }
    }

    fn start_runs(
        tile: Tile,
        direction: Direction,
        channel: u32,
        bd: u32,
        runs: u32,
        token: bool,
    ) -> TxnOp {
        let p = strix();
        let entry = StartQueueEntry {
            start_bd: bd,
            runs,
            token_issue: token,
        };
        TxnOp::Write {
            address: address(tile, p.start_queue(kind(tile), direction, channel).unwrap()),
            value: p.encode_start_queue(kind(tile), &entry).unwrap(),
        }
    }

    fn start(tile: Tile, direction: Direction, channel: u32, bd: u32, token: bool) -> TxnOp {
        start_runs(tile, direction, channel, bd, 1, token)
    }

    fn sync(tile: Tile, direction: Direction, channel: u8) -> TxnOp {
        TxnOp::Sync {
            column: tile.column as u8,
            row: tile.row as u8,
            direction,
            channel,
            column_count: 1,
            row_count: 1,
        }
    }

    fn tile_bd(
        address: u64,
        length: u32,
        acquire: Option<(u32, i32)>,
        release: Option<(u32, i32)>,
    ) -> BufferDescriptor {
        BufferDescriptor {
            address,
            length,
            next_bd: None,
            valid: true,
            acquire,
            release,
            burst_length: None,
            iteration: None,
        }
    }

    /// A shim descriptor as Loom writes it: address 0, patched later.
    fn shim_bd(length: u32) -> BufferDescriptor {
        BufferDescriptor {
            burst_length: Some(64),
            ..tile_bd(0, length, None, None)
        }
    }

    fn patch(n: u32, argument: u32, offset: u64) -> TxnOp {
        let bd = strix().bd(TileKind::Shim, n).unwrap();
        TxnOp::DdrPatch {
            address: address(SHIM, bd + 4),
            arg_index: argument + 3,
            arg_offset: offset,
        }
    }

    /// Apply the ops in order as a command processor does: at a SYNC, step
    /// the engines until its token arrives. Then let the engines settle.
    fn run(
        array: &mut Array,
        ops: &[TxnOp],
        memory: &mut TestMemory,
    ) -> Result<Vec<Effect>, SimError> {
        let mut effects = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            let effect = array.apply(i, op, &[ARG0, ARG1])?;
            if let Effect::Wait(key) = effect {
                while !array.take_token(&key) {
                    if !array.step(memory)? {
                        return Err(SimError::new(format!("hang: {:?}", array.pending())).op(i));
                    }
                }
            }
            effects.push(effect);
        }
        array.step(memory)?;
        Ok(effects)
    }

    fn locks(array: &Array, tile: Tile) -> &[u32] {
        &array.tiles[&tile].locks
    }

    /// Shim MM2S 0 sends `length` bytes of argument 0 at `offset` to core
    /// S2MM 0, whose BD 0 takes lock 0 and publishes lock 1.
    fn shim_to_core(core_bd: BufferDescriptor, length: u32, offset: u64) -> Vec<TxnOp> {
        let mut ops = vec![lock_init(CORE, 0, 1), lock_init(CORE, 1, 0)];
        ops.extend(route_ops((SHIM, 0), (CORE, 0)));
        ops.extend([
            bd(CORE, 0, &core_bd),
            start(CORE, Direction::S2mm, 0, 0, false),
            bd(SHIM, 0, &shim_bd(length)),
            patch(0, 0, offset),
            start(SHIM, Direction::Mm2s, 0, 0, true),
            sync(SHIM, Direction::Mm2s, 0),
        ]);
        ops
    }

    #[test]
    fn transfers_take_their_bytes_at_the_dma_rate_and_the_route_latency() {
        let data: Vec<u8> = (0..128).collect();
        let mut memory = TestMemory::new(vec![(ARG0, data)]);
        let mut array = Array::new(strix());
        let ops = shim_to_core(tile_bd(0x400, 64, Some((0, -1)), Some((1, 1))), 64, 16);
        run(&mut array, &ops, &mut memory).unwrap();
        let timing = &strix().timing;
        let moving = 64 / timing.dma_bytes_per_cycle;
        let (end, busiest) = array.dma_times();
        // Both channels move 64 bytes: the shim sends from the cycle its task
        // was queued; the core's S2MM ends when the last byte has crossed the
        // four stream switches from row 0 to row 3.
        let (name, busy) = busiest.unwrap();
        assert_eq!(busy, moving, "{name}");
        let sent = array.tiles[&SHIM].mm2s[0].clock;
        assert_eq!(
            array.tiles[&CORE].s2mm[0].clock,
            sent + 4 * timing.stream_switch_latency_cycles
        );
        assert_eq!(end, array.tiles[&CORE].s2mm[0].clock);
        // The published record's lock carries the cycle it was released.
        assert_eq!(array.lock_time(CORE, 1), end);
        // The SYNC, the last op, returned when the shim's token was issued,
        // after the command processor's own writes.
        assert_eq!(array.control_clock(), sent);
        assert!(array.control_busy() < sent);
    }

    #[test]
    fn shim_mm2s_fills_core_memory_and_moves_the_locks() {
        let data: Vec<u8> = (0..128).collect();
        let mut memory = TestMemory::new(vec![(ARG0, data.clone())]);
        let mut array = Array::new(strix());
        let ops = shim_to_core(tile_bd(0x400, 64, Some((0, -1)), Some((1, 1))), 64, 16);
        let effects = run(&mut array, &ops, &mut memory).unwrap();
        assert_eq!(
            effects.last(),
            Some(&Effect::Wait(TokenKey {
                tile: SHIM,
                direction: Direction::Mm2s,
                channel: 0
            }))
        );
        assert_eq!(memory.tile(CORE)[0x400..0x440], data[16..80]);
        assert_eq!(memory.tile(CORE)[0x440], 0, "nothing past the length");
        assert_eq!(
            locks(&array, CORE)[..2],
            [0, 1],
            "free slot taken, record published"
        );
        assert!(!array.busy());
        assert!(array.pending().is_empty());
        assert!(array.undelivered().is_empty());
    }

    #[test]
    fn core_mm2s_writes_the_callers_buffer() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 32]), (ARG1, vec![0; 64])]);
        let data: Vec<u8> = (1..=16).collect();
        memory.tile(CORE)[0x1000..0x1010].copy_from_slice(&data);
        let mut array = Array::new(strix());
        let mut ops = vec![lock_init(CORE, 5, 1), lock_init(CORE, 4, 0)];
        ops.extend(route_ops((CORE, 0), (SHIM, 0)));
        ops.extend([
            bd(CORE, 2, &tile_bd(0x1000, 16, Some((5, -1)), Some((4, 1)))),
            start(CORE, Direction::Mm2s, 0, 2, false),
            bd(SHIM, 2, &shim_bd(16)),
            patch(2, 1, 8),
            start(SHIM, Direction::S2mm, 0, 2, true),
            sync(SHIM, Direction::S2mm, 0),
        ]);
        run(&mut array, &ops, &mut memory).unwrap();
        let out = &memory.ddr[1].1;
        assert_eq!(out[8..24], data[..]);
        assert!(out[..8].iter().chain(&out[24..]).all(|&b| b == 0));
        assert_eq!(locks(&array, CORE)[4..6], [1, 0]);
        assert!(
            memory.ddr[0].1.iter().all(|&b| b == 0),
            "argument 0 untouched"
        );
    }

    #[test]
    fn tokens_come_only_from_tasks_that_ask_and_are_taken_once() {
        let data: Vec<u8> = (0..16).collect();
        let mut memory = TestMemory::new(vec![(ARG0, data.clone())]);
        let mut array = Array::new(strix());
        let mut ops = route_ops((SHIM, 0), (CORE, 0));
        ops.extend([
            // One core task of two runs takes both shim tasks' bytes.
            bd(CORE, 0, &tile_bd(0x100, 8, None, None)),
            start_runs(CORE, Direction::S2mm, 0, 0, 2, false),
            bd(SHIM, 0, &shim_bd(8)),
            patch(0, 0, 0),
            bd(SHIM, 1, &shim_bd(8)),
            patch(1, 0, 8),
            start(SHIM, Direction::Mm2s, 0, 0, false),
            start(SHIM, Direction::Mm2s, 0, 1, true),
        ]);
        for (i, op) in ops.iter().enumerate() {
            assert_eq!(array.apply(i, op, &[ARG0]), Ok(Effect::None), "op {i}");
        }
        let shim = TokenKey {
            tile: SHIM,
            direction: Direction::Mm2s,
            channel: 0,
        };
        let core = TokenKey {
            tile: CORE,
            direction: Direction::S2mm,
            channel: 0,
        };
        assert!(!array.take_token(&shim), "nothing ran yet");
        assert!(array.step(&mut memory).unwrap());
        assert!(array.take_token(&shim));
        assert!(!array.take_token(&shim), "one token for two tasks");
        assert!(!array.take_token(&core), "the core task asked for none");
        assert_eq!(
            memory.tile(CORE)[0x100..0x108],
            data[8..16],
            "second run last"
        );
        assert!(!array.busy());
        assert!(!array.step(&mut memory).unwrap(), "nothing left to move");
    }

    #[test]
    fn a_core_release_unblocks_a_waiting_transfer() {
        let data: Vec<u8> = (100..132).collect();
        let mut memory = TestMemory::new(vec![(ARG0, data.clone())]);
        let mut array = Array::new(strix());
        let mut ops = shim_to_core(tile_bd(0, 32, Some((0, -1)), Some((1, 1))), 32, 0);
        ops[0] = lock_init(CORE, 0, 0); // no free slot yet
        run(&mut array, &ops, &mut memory).unwrap();
        assert!(array.busy());
        assert_eq!(
            array.pending(),
            [
                "tile [0, 3] core.dma.s2mm[0] bd[0] (task queued by TXN op 12, run 1 of 1): \
              waits to acquire lock 0 >= 1 (value 0)"
            ]
        );
        assert!(memory.tile(CORE)[..32].iter().all(|&b| b == 0));
        assert!(!array.step(&mut memory).unwrap(), "still blocked");

        array.release(CORE, 0, 1, 0).unwrap();
        assert!(array.step(&mut memory).unwrap());
        assert_eq!(memory.tile(CORE)[..32], data[..]);
        assert_eq!(locks(&array, CORE)[..2], [0, 1]);
        assert!(!array.busy());
        assert!(
            array.try_acquire(CORE, 1, 1, 0).unwrap().is_some(),
            "the worker takes the record"
        );
        assert_eq!(array.try_acquire(CORE, 1, 1, 0).unwrap(), None);
    }

    #[test]
    fn s2mm_waits_for_its_whole_length() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![7; 64])]);
        let mut array = Array::new(strix());
        let ops = shim_to_core(tile_bd(0, 64, None, None), 32, 0);
        let (last, ops) = ops.split_last().unwrap();
        run(&mut array, ops, &mut memory).unwrap();
        assert!(array.apply(ops.len(), last, &[ARG0]).is_ok());
        assert_eq!(
            array.pending(),
            [
                "tile [0, 3] core.dma.s2mm[0] bd[0] (task queued by TXN op 12, run 1 of 1): \
              waits for 64 bytes on its stream (32 arrived)"
            ]
        );
    }

    #[test]
    fn data_sent_to_an_unrouted_port_is_an_error() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 64])]);
        let mut array = Array::new(strix());
        let s = &strix().registers.core.stream_switch;
        // The route without its master connection in tile [0, 2].
        let mut ops: Vec<TxnOp> = settings((SHIM, 0), (CORE, 0))
            .into_iter()
            .filter(|(tile, offset, _)| !(*tile == Tile::new(0, 2) && *offset < s.slave_base.0))
            .map(|(_, _, op)| op)
            .collect();
        let start_op = ops.len() + 2;
        ops.extend([
            bd(SHIM, 0, &shim_bd(16)),
            patch(0, 0, 0),
            start(SHIM, Direction::Mm2s, 0, 0, true),
            sync(SHIM, Direction::Mm2s, 0),
        ]);
        let error = run(&mut array, &ops, &mut memory).unwrap_err();
        assert_eq!(error.txn_op, Some(start_op));
        assert_eq!(
            error.to_string(),
            format!(
                "TXN op {start_op}: tile [0, 0] shim.dma.mm2s[0] bd[0]: tile [0, 2] has no \
                 master connected to slave South0: data sent to an unrouted port"
            )
        );
    }

    #[test]
    fn shim_dma_needs_its_mux_set() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 64])]);
        let mut array = Array::new(strix());
        let mut ops: Vec<TxnOp> = route_ops((SHIM, 0), (CORE, 0))
            .into_iter()
            .filter(|op| !matches!(op, TxnOp::MaskWrite { .. }))
            .collect();
        ops.extend([
            bd(SHIM, 0, &shim_bd(16)),
            patch(0, 0, 0),
            start(SHIM, Direction::Mm2s, 0, 0, true),
            sync(SHIM, Direction::Mm2s, 0),
        ]);
        let error = run(&mut array, &ops, &mut memory).unwrap_err();
        assert!(
            error
                .message
                .contains("the shim mux does not pass MM2S0 into the stream switch"),
            "{error}"
        );
    }

    #[test]
    fn a_descriptor_outside_tile_memory_is_an_error() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 256])]);
        let mut array = Array::new(strix());
        let ops = shim_to_core(tile_bd(0xFFC0, 128, None, None), 128, 0);
        let error = run(&mut array, &ops, &mut memory).unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 12: tile [0, 3] core.dma.s2mm[0] bd[0]: 128 bytes at 0xffc0 lie outside \
             the tile's data memory (0x0..0x10000 as its DMA addresses it; neighbour memories \
             are not modelled)"
        );
    }

    #[test]
    fn lock_overflow_is_an_error() {
        let mut array = Array::new(strix());
        array.apply(0, &lock_init(CORE, 3, 63), &[]).unwrap();
        let error = array.release(CORE, 3, 1, 0).unwrap_err();
        assert_eq!(
            error.to_string(),
            "tile [0, 3] lock[3]: lock overflow: release of 1 on value 63 exceeds the maximum 63"
        );
        assert_eq!(locks(&array, CORE)[3], 63, "unchanged");
        let error = array.apply(1, &lock_init(CORE, 3, 64), &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 1: tile [0, 3] core.lock[3].value: lock value 64 is above the maximum 63"
        );
        assert!(
            array.try_acquire(CORE, 3, 64, 0).is_err(),
            "can never succeed"
        );
        assert!(array.release(CORE, 16, 1, 0).is_err(), "no lock 16");
    }

    #[test]
    fn a_dma_release_past_the_maximum_is_an_error() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 16])]);
        let mut array = Array::new(strix());
        let mut ops = shim_to_core(tile_bd(0, 16, None, Some((1, 1))), 16, 0);
        ops[1] = lock_init(CORE, 1, 63);
        let error = run(&mut array, &ops, &mut memory).unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 12: tile [0, 3] core.dma.s2mm[0] bd[0]: lock 1 overflow: release of +1 on \
             value 63 leaves 0..=63"
        );
    }

    /// A consumer waits for the release of its own record's credit, not for
    /// the latest release: records a producer ran ahead with are queued.
    #[test]
    fn an_acquire_takes_the_oldest_credit() {
        let mut credits = Credits::default();
        // Two initial credits (value 2, no releases yet), then releases at
        // cycles 10 and 30.
        credits.give(2, 1, 10);
        credits.give(3, 1, 30);
        assert_eq!(credits.take(4, 1), 0);
        assert_eq!(credits.take(3, 1), 0);
        assert_eq!(credits.take(2, 1), 10);
        assert_eq!(credits.last(), 30);
        assert_eq!(credits.take(1, 1), 30);
        // A value written lower drops the oldest stamps.
        credits.give(0, 3, 50);
        assert_eq!(credits.take(1, 1), 50);
        assert_eq!(credits.take(0, 0), 0);
    }

    #[test]
    fn task_queue_overflow_is_an_error() {
        let mut array = Array::new(strix());
        let depth = strix().limits.task_queue_depth as usize;
        // The running task waits on lock 0, which stays 0.
        let mut ops = vec![bd(CORE, 0, &tile_bd(0, 16, Some((0, -1)), None))];
        ops.extend((0..depth + 2).map(|_| start(CORE, Direction::S2mm, 0, 0, false)));
        for (i, op) in ops[..depth + 2].iter().enumerate() {
            array.apply(i, op, &[]).unwrap();
        }
        let error = array.apply(depth + 2, &ops[depth + 2], &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "TXN op {}: tile [0, 3] core.dma.s2mm[0].start_queue: task queue overflow: \
                 {depth} tasks already wait behind the running one (queue depth {depth})",
                depth + 2
            )
        );
        assert_eq!(array.pending().len(), depth + 1);
    }

    #[test]
    fn writes_the_model_cannot_name_are_errors() {
        let mut array = Array::new(strix());
        let write = |offset: u32| TxnOp::Write {
            address: address(CORE, offset),
            value: 1,
        };
        let error = array.apply(4, &write(0x1F024), &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 4: tile [0, 3] offset 0x1f024: write to 0x0031f024, which names no \
             register or memory the model knows"
        );
        let outside = TxnOp::Write {
            address: 0x1001_F000,
            value: 1,
        };
        assert_eq!(array.apply(5, &outside, &[]).unwrap_err().tile, None);
        let error = array.apply(6, &write(0x100), &[]).unwrap_err();
        assert!(error.message.contains("writes tile memory"), "{error}");
    }

    #[test]
    fn core_enable_is_an_effect_once() {
        let mut array = Array::new(strix());
        let enable = TxnOp::Write {
            address: address(CORE, strix().core_control()),
            value: 1,
        };
        assert_eq!(array.apply(0, &enable, &[]), Ok(Effect::CoreEnabled(CORE)));
        assert_eq!(
            array.apply(1, &enable, &[]),
            Ok(Effect::None),
            "already running"
        );
        let reset = TxnOp::Write {
            address: address(CORE, strix().core_control()),
            value: 2,
        };
        assert!(array.apply(2, &reset, &[]).is_err());
    }

    #[test]
    fn memory_tile_channels_use_their_half_of_the_descriptors() {
        let mut array = Array::new(strix());
        let descriptor = tile_bd(0x80000, 16, None, None);
        array.apply(0, &bd(MEM, 0, &descriptor), &[]).unwrap();
        array.apply(1, &bd(MEM, 24, &descriptor), &[]).unwrap();
        let error = array
            .apply(2, &start(MEM, Direction::S2mm, 1, 0, false), &[])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 2: tile [0, 1] mem.dma.s2mm[1] bd[0]: a memory tile's channel 1 can use \
             only buffer descriptors 24..=47"
        );
        assert!(array
            .apply(3, &start(MEM, Direction::S2mm, 1, 24, false), &[])
            .is_ok());
        assert!(array
            .apply(4, &start(MEM, Direction::S2mm, 0, 0, false), &[])
            .is_ok());
    }

    #[test]
    fn a_send_chain_that_never_waits_is_an_error() {
        let mut array = Array::new(strix());
        let looping = BufferDescriptor {
            next_bd: Some(0),
            ..tile_bd(0, 16, None, None)
        };
        array.apply(0, &bd(CORE, 0, &looping), &[]).unwrap();
        let error = array
            .apply(1, &start(CORE, Direction::Mm2s, 0, 0, false), &[])
            .unwrap_err();
        assert!(error.message.contains("would send forever"), "{error}");
    }

    #[test]
    fn ddr_patch_checks_its_argument_and_descriptor() {
        let mut array = Array::new(strix());
        let error = array.apply(0, &patch(0, 0, 0), &[ARG0]).unwrap_err();
        assert!(error.message.contains("never written"), "{error}");
        array.apply(1, &bd(SHIM, 0, &shim_bd(16)), &[ARG0]).unwrap();
        let error = array.apply(2, &patch(0, 1, 0), &[ARG0]).unwrap_err();
        assert!(error.message.contains("has 1 arguments"), "{error}");
        let error = array.apply(3, &patch(0, 0, 2), &[ARG0]).unwrap_err();
        assert!(error.message.contains("does not fit"), "{error}");
        // Two patches add up, as the firmware's add does.
        array.apply(4, &patch(0, 0, 8), &[ARG0]).unwrap();
        array.apply(5, &patch(0, 0, 8), &[ARG0]).unwrap();
        let words = array.bd_words(
            ChannelId {
                tile: SHIM,
                kind: TileKind::Shim,
                direction: Direction::Mm2s,
                channel: 0,
            },
            0,
        );
        let descriptor = strix().decode_bd(TileKind::Shim, &words.unwrap()).unwrap();
        assert_eq!(descriptor.address, 2 * ARG0 + 16);
    }

    fn step(stride: u32, wrap: u32, current: u32) -> Option<Iteration> {
        Some(Iteration {
            stride,
            wrap,
            current,
        })
    }

    /// The iteration index a tile's buffer descriptor `n` holds now.
    fn current(array: &Array, tile: Tile, n: u32) -> u32 {
        let id = ChannelId {
            tile,
            kind: kind(tile),
            direction: Direction::Mm2s,
            channel: 0,
        };
        let words = array.bd_words(id, n).unwrap();
        let descriptor = strix().decode_bd(kind(tile), &words).unwrap();
        descriptor.iteration.unwrap().current
    }

    #[test]
    fn iteration_steps_each_use_wraps_and_carries_over_to_the_next_task() {
        // Three 16-byte chunks in argument 0.
        let data: Vec<u8> = (0..48).collect();
        let chunk = |i: usize| &data[16 * i..16 * (i + 1)];
        let mut memory = TestMemory::new(vec![(ARG0, data.clone())]);
        let mut array = Array::new(strix());
        // Four runs of shim BD 0 (stride 16, wrap 3, from index 1) read chunks
        // 1, 2, 0, 1; the core's chain BD 0 -> BD 1 (each stride 32, wrap 4),
        // run twice, writes them to 0x400, 0x410, 0x420, 0x430.
        let shim = BufferDescriptor {
            iteration: step(16, 3, 1),
            ..shim_bd(16)
        };
        let core = |n: u32| BufferDescriptor {
            next_bd: (n == 0).then_some(1),
            iteration: step(32, 4, 0),
            ..tile_bd(0x400 + 16 * u64::from(n), 16, None, None)
        };
        let mut ops = route_ops((SHIM, 0), (CORE, 0));
        ops.extend([
            bd(CORE, 0, &core(0)),
            bd(CORE, 1, &core(1)),
            start_runs(CORE, Direction::S2mm, 0, 0, 2, false),
            bd(SHIM, 0, &shim),
            patch(0, 0, 0),
            start_runs(SHIM, Direction::Mm2s, 0, 0, 4, true),
            sync(SHIM, Direction::Mm2s, 0),
        ]);
        run(&mut array, &ops, &mut memory).unwrap();
        let expected: Vec<u8> = [1, 2, 0, 1].into_iter().flat_map(chunk).copied().collect();
        assert_eq!(memory.tile(CORE)[0x400..0x440], expected[..]);
        assert_eq!(memory.tile(CORE)[0x440], 0, "nothing past the four steps");
        // The DMA wrote each index back: four uses from 1 leave the shim's at
        // 2, two uses each leave the core's at 2.
        assert_eq!(current(&array, SHIM, 0), 2);
        assert_eq!(current(&array, CORE, 0), 2);
        assert_eq!(current(&array, CORE, 1), 2);

        // A later task goes on from index 2 (chunk 2), then wraps to 0.
        let later = [
            bd(CORE, 2, &tile_bd(0x800, 16, None, None)),
            start(CORE, Direction::S2mm, 0, 2, false),
            start(SHIM, Direction::Mm2s, 0, 0, true),
            sync(SHIM, Direction::Mm2s, 0),
        ];
        run(&mut array, &later, &mut memory).unwrap();
        assert_eq!(memory.tile(CORE)[0x800..0x810], *chunk(2));
        assert_eq!(current(&array, SHIM, 0), 0);
        assert!(!array.busy());
        assert!(array.undelivered().is_empty());
    }

    #[test]
    fn every_iteration_step_must_lie_in_tile_memory() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 32])]);
        let mut array = Array::new(strix());
        // The second step of the core's descriptor starts past its 64 KiB.
        let core = BufferDescriptor {
            iteration: step(16, 2, 0),
            ..tile_bd(0xFFF0, 16, None, None)
        };
        let mut ops = route_ops((SHIM, 0), (CORE, 0));
        let queued = ops.len() + 1;
        ops.extend([
            bd(CORE, 0, &core),
            start_runs(CORE, Direction::S2mm, 0, 0, 2, false),
            bd(SHIM, 0, &shim_bd(32)),
            patch(0, 0, 0),
            start(SHIM, Direction::Mm2s, 0, 0, true),
            sync(SHIM, Direction::Mm2s, 0),
        ]);
        let error = run(&mut array, &ops, &mut memory).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "TXN op {queued}: tile [0, 3] core.dma.s2mm[0] bd[0]: 16 bytes at 0x10000 lie \
                 outside the tile's data memory (0x0..0x10000 as its DMA addresses it; \
                 neighbour memories are not modelled)"
            )
        );
    }

    #[test]
    fn maskpoll_holds_or_fails_at_once() {
        let mut array = Array::new(strix());
        array.apply(0, &lock_init(CORE, 2, 5), &[]).unwrap();
        let poll = |value| TxnOp::MaskPoll {
            address: address(CORE, strix().lock_value(TileKind::Core, 2).unwrap()),
            value,
            mask: 0x3F,
        };
        assert_eq!(array.apply(1, &poll(5), &[]), Ok(Effect::None));
        let error = array.apply(2, &poll(4), &[]).unwrap_err();
        assert!(error
            .to_string()
            .starts_with("TXN op 2: tile [0, 3] core.lock[2].value: MASKPOLL"));
    }
}
