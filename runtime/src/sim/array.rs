//! The functional model of the AIE2P array that the array simulator drives:
//! per-tile register files, locks, DMA engines (start queues, buffer
//! descriptor chains, task-complete tokens) and circuit-switched stream
//! routes. Cores are not modelled here: a core model (`super::core`) runs
//! worker code and takes and hands on lock credits through
//! [`Array::try_acquire`] and [`Array::release`].
//!
//! This file is the façade (the tiles' state, TXN ops, tokens, stepping
//! the engines); its parts are `registers` (register writes and reads,
//! DDR_PATCH), `locks` (credits), `dma` (channels, tasks, descriptors),
//! `switch` (routes and streams) and `timing` (the clocks' figures).
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

mod dma;
mod locks;
mod registers;
mod switch;
#[cfg(test)]
mod testing;
mod timing;

use super::error::SimError;
use super::memory::Memory;
use dma::{ChannelId, DmaChannel};
use locks::Credits;
use loom_targets::xdna::regs::{Direction, TileKind};
use loom_targets::xdna::txn::TxnOp;
use loom_targets::{DeviceProfile, Tile};
use std::collections::{BTreeMap, HashMap, VecDeque};
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
    s2mm: Vec<DmaChannel>,
    mm2s: Vec<DmaChannel>,
    core_enabled: bool,
}

impl TileState {
    fn register(&self, offset: u32) -> u32 {
        self.registers.get(&offset).copied().unwrap_or(0)
    }

    fn channels(&self, direction: Direction) -> &[DmaChannel] {
        match direction {
            Direction::S2mm => &self.s2mm,
            Direction::Mm2s => &self.mm2s,
        }
    }

    fn channel_mut(&mut self, direction: Direction, channel: u32) -> Option<&mut DmaChannel> {
        match direction {
            Direction::S2mm => self.s2mm.get_mut(channel as usize),
            Direction::Mm2s => self.mm2s.get_mut(channel as usize),
        }
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
                    let channels = |n: u32| (0..n).map(|_| DmaChannel::default()).collect();
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
            TxnOp::Sync { .. } | TxnOp::LoadPdi { .. } => 0,
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
            TxnOp::LoadPdi { id, .. } => Err(SimError::new(format!(
                "LOADPDI of .pdi.{id}: partition resets are not modelled yet"
            ))
            .op(index)),
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

    fn state(&self, tile: Tile) -> Option<&TileState> {
        self.tiles.get(&tile)
    }
}
