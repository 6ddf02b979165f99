//! The functional model of the AIE2P array that the array simulator drives:
//! the partition's PDI loads and resets, per-tile register files, locks,
//! core bring-up, DMA engines (start queues, buffer descriptor chains,
//! task-complete tokens and their packet routes) and circuit-switched
//! stream routes. Cores are not modelled here: a core model (`super::core`) runs
//! worker code and takes and hands on lock credits through
//! [`Array::try_acquire`] and [`Array::release`].
//!
//! This file is the façade (the tiles' state, TXN ops, tokens, stepping
//! the engines); its parts are `registers` (register writes and reads,
//! DDR_PATCH), `partition` (LOADPDI, the reset, core and channel control),
//! `locks` (credits), `dma` (channels, tasks, descriptors), `switch`
//! (circuit routes and streams), `packet` (the tokens' packet routes) and
//! `timing` (the clocks' figures).
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
//! - LOADPDI of a PDI other than the resident one resets the partition:
//!   cores stop, DMA channels drop their tasks, locks, registers (buffer
//!   descriptors, switches, channel and core control) and pending tokens
//!   clear; tile memory stays. A LOADPDI of the resident PDI does nothing
//!   (mlir-aie lib/Dialect/AIEX/Transforms/AIEExpandLoadPdi.cpp and its
//!   doc on `@empty`, quoting the firmware's ert_ipu.c: `pdi_address !=
//!   loaded_pdi_addr -> IPU_IPC_REINIT_PARTITION`;
//!   docs/research/configuration-path/findings.md Q6). PDIs are named by id
//!   (`.pdi.<id>`, aiebu get_pdi_name); the loader gives each its own
//!   buffer, so distinct ids are distinct addresses.
//! - Core_Control bit 0 enables the core (aie-rt xaie2pgbl_params.h
//!   CORE_MODULE_CORE_CONTROL_ENABLE, xaie2pgbl_reginit.c Aie2PCoreCtrlReg).
//!   After a reset a core may be enabled only once its bring-up has run:
//!   the core disabled, each of its DMA channels put in reset and released
//!   again, program memory written in between (mlir-aie
//!   lib/Targets/AIERT.cpp addAieElf: XAie_CoreDisable,
//!   XAie_DmaChannelResetAll, XAie_LoadElf, XAie_DmaChannelResetAll).
//! - DMA channel control: Reset (bit 1, core and memory tiles only; a shim
//!   channel's bit 1 is Pause_Mem) holds the channel, so a start-queue write
//!   to it is lost (an error here); Controller_ID (bits 12:8 as the profile
//!   gives them) is the packet ID of the channel's tokens (aie-rt
//!   xaie2pgbl_params.h *_DMA_*_CTRL fields; xaie_dma.c
//!   XAie_DmaChannelReset; findings Q2, Q8).
//! - A task-complete token is a packet that the issuing tile's TileControl
//!   port sends with the channel's Controller_ID; the firmware receives it
//!   only on a shim's master South 0 (mlir-aie
//!   AIEGenerateColumnControlOverlay.cpp, "Only using SHIM dest SOUTH 0 for
//!   TCT"; test/npu-xrt/core_dmas/dma_configure_task_token). Packet mode,
//!   as the profile's fields give it (aie-rt xaie_ss.c
//!   _XAie_StrmPktSwMstrPortConfig, _XAie_StrmSlaveSlotConfig): a slave
//!   with enable and packet enable passes a packet to the first of its
//!   enabled slots whose ID equals the packet's on the slot mask's bits; the
//!   slot names an arbiter and an msel; every master with enable, packet
//!   enable, that arbiter and the msel's bit in its msel-enable mask takes
//!   it, and one that drops the header hands on no packet. A token follows
//!   every such branch switch by switch; one that reaches no shim South 0
//!   is lost, and a SYNC that waits for it never returns. Matching under
//!   the mask is inferred from the fields' names (aie-rt's ID and Mask,
//!   mlir-aie's `aie.rule(mask, id, amsel)`).
//! - A switch joins the (slave kind, master kind) pairs the profile lists
//!   in `same_index` only at equal indices; aie-rt refuses such a circuit
//!   when it is set (driver/src/stream_switch/xaie_ss_aieml.c PortVerify,
//!   e.g. _XAieMl_MemTile_StrmSwCheckPortValidity for a memory tile's
//!   South/North lanes), and so does the model, at the master's write.
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
//! - Any op before the first LOADPDI is an error: the firmware's reset at
//!   that load would undo it.
//! - A LOADPDI must name a PDI the artifact carries, with its size, and the
//!   PDI must be empty (bootgen's layout around a CDO of NOPs only): the
//!   model follows configuration as control-code writes, not as PDI
//!   content.
//! - Before a reset the driver lets the engines and cores go as far as
//!   they can; DMA tasks, cores or stream bytes the reset would cut off
//!   are an error, as at the end of the control code.
//! - A SYNC fails at once when its token, not yet issued, has no route to
//!   the firmware as the switches and the channel's Controller_ID stand
//!   then; a token is routed again when it is issued.
//! - Settings beyond what the model follows are errors rather than
//!   ignored: core reset, channel control bits other than Reset and
//!   Controller_ID (and Reset on a shim channel), resetting a channel that
//!   has tasks, disabling a running core, packet-switched data streams
//!   (packet mode carries only tokens here), bits outside the packet
//!   fields.
//! - A stream is an unbounded FIFO of bytes per destination S2MM channel: an
//!   MM2S buffer descriptor pushes its bytes at once; an S2MM one waits until
//!   its whole length has arrived. The neighbour tiles' locks and memories
//!   that memory tile DMAs can address are not modelled (an error).

mod dma;
mod locks;
mod packet;
mod partition;
mod registers;
mod switch;
#[cfg(test)]
pub(crate) mod testing;
mod timing;

use super::error::SimError;
use super::memory::Memory;
use super::trace::{Arg, Kind, Slice, Trace, Track};
use dma::{ChannelId, DmaChannel};
use locks::Credits;
use loom_targets::xdna::regs::{Direction, TileKind};
use loom_targets::xdna::txn::TxnOp;
use loom_targets::{DeviceProfile, Tile};
use partition::BringUp;
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
    /// A LOADPDI of a PDI other than the resident one: the firmware resets
    /// the partition. The driver lets the engines and cores go as far as
    /// they can, then calls [`Array::reset`].
    Reset,
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
    /// Core tiles: the control code's progress towards a runnable program.
    bring_up: BringUp,
    /// Core tiles: the program memory as the control code wrote it (empty
    /// until a write), which the instruction-level core executes.
    program_memory: Vec<u8>,
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
    /// each was issued, or why it cannot reach the firmware.
    tokens: HashMap<TokenKey, VecDeque<Result<u64, String>>>,
    /// The artifact's PDIs by id, and the one the firmware loaded last.
    pdis: BTreeMap<u16, Vec<u8>>,
    resident: Option<u16>,
    /// The command processor's modelled cycle, and the cycles it spent
    /// writing (not waiting).
    control: u64,
    control_busy: u64,
    /// Buffer descriptors the MM2S channels of core and memory tiles
    /// completed: the records the array sent out.
    sent: u64,
    /// The slices of a traced run (`record`); None, and untouched, otherwise.
    recorder: Option<Box<Trace>>,
}

impl Array {
    /// Every tile of the profile's array with registers and locks at zero,
    /// no route, no core enabled, and no PDI loaded yet.
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
                            bring_up: BringUp::default(),
                            program_memory: Vec::new(),
                        },
                    );
                }
            }
        }
        Array {
            profile,
            tiles,
            tokens: HashMap::new(),
            pdis: BTreeMap::new(),
            resident: None,
            control: 0,
            control_busy: 0,
            sent: 0,
            recorder: None,
        }
    }

    /// Record the slices of the transfers, lock waits and control code
    /// from now on, for a trace.
    pub fn record(&mut self) {
        let profile = self.profile.name.as_str();
        self.recorder
            .get_or_insert_with(|| Box::new(Trace::new(profile)));
    }

    /// What was recorded (None unless `record` was called), leaving the
    /// array unrecorded.
    pub fn take_trace(&mut self) -> Option<Trace> {
        self.recorder.take().map(|trace| *trace)
    }

    /// Add `slice()` to the trace, if one is being recorded.
    fn note(&mut self, slice: impl FnOnce() -> (Slice, String)) {
        if let Some(trace) = &mut self.recorder {
            let (slice, track) = slice();
            trace.slice(slice, || track);
        }
    }

    /// The device profile the array follows.
    pub fn profile(&self) -> &'static DeviceProfile {
        self.profile
    }

    /// Apply TXN op number `index` (for error messages). `arguments[i]` is
    /// the DDR base address of kernel argument i, as DDR_PATCH names it.
    pub fn apply(
        &mut self,
        index: usize,
        op: &TxnOp,
        arguments: &[u64],
    ) -> Result<Effect, SimError> {
        // The firmware's reset at the first LOADPDI would undo it.
        if self.resident.is_none() && !matches!(op, TxnOp::LoadPdi { .. }) {
            return Err(SimError::new(format!(
                "{} before the partition's first LOADPDI: configuration before the \
                 partition's LOADPDI is lost when the firmware resets it",
                mnemonic(op)
            ))
            .op(index));
        }
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
        if cycles > 0 {
            let begin = self.control;
            self.note(|| {
                let slice = Slice {
                    track: Track::Control,
                    kind: Kind::Control,
                    name: mnemonic(op).into(),
                    begin,
                    end: begin + cycles,
                    args: vec![("TXN op", Arg::Int(index as u64))],
                };
                (slice, "command processor (TXN)".into())
            });
        }
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
            TxnOp::LoadPdi { id, size, .. } => self.load_pdi(index, *id, *size),
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
                let key = TokenKey {
                    tile,
                    direction: *direction,
                    channel: (*channel).into(),
                };
                // A token not issued yet must have a way to the firmware as
                // the switches stand now, or the SYNC can never return.
                let route = match self.tokens.get(&key).and_then(|issued| issued.front()) {
                    Some(Ok(_)) => Ok(()),
                    Some(Err(why)) => Err(why.clone()),
                    None => self.token_route(key),
                };
                route.map_err(|why| self.lost(index, key, &why))?;
                Ok(Effect::Wait(key))
            }
        }
    }

    /// Consume one task-complete token of `key` if one was issued; the
    /// command processor, which waited for it at TXN op `index`, continues
    /// from the cycle it was issued. A token that was lost on its way is an
    /// error.
    pub fn take_token(&mut self, index: usize, key: &TokenKey) -> Result<bool, SimError> {
        match self
            .tokens
            .get_mut(key)
            .and_then(|issued| issued.pop_front())
        {
            Some(Ok(at)) => {
                let begin = self.control;
                if at > begin && self.recorder.is_some() {
                    let kind = self.state(key.tile).map_or(TileKind::Core, |s| s.kind);
                    self.note(|| {
                        let channel = dma::channel_name(kind, key.direction, key.channel);
                        let slice = Slice {
                            track: Track::Control,
                            kind: Kind::TokenWait,
                            name: format!("SYNC: tile {} {channel}", key.tile),
                            begin,
                            end: at,
                            args: vec![("TXN op", Arg::Int(index as u64))],
                        };
                        (slice, "command processor (TXN)".into())
                    });
                }
                self.control = self.control.max(at);
                Ok(true)
            }
            Some(Err(why)) => Err(self.lost(index, *key, &why)),
            None => Ok(false),
        }
    }

    fn lost(&self, index: usize, key: TokenKey, why: &str) -> SimError {
        let kind = self.state(key.tile).map_or(TileKind::Core, |s| s.kind);
        SimError::new(format!(
            "SYNC waits for the channel's task-complete token, which cannot reach the \
             firmware: {why}"
        ))
        .op(index)
        .tile(key.tile)
        .register(dma::channel_name(kind, key.direction, key.channel))
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

    /// The program memory of the core at `tile` as the control code wrote
    /// it, or `None` if it wrote none.
    pub fn program_memory(&self, tile: Tile) -> Option<&[u8]> {
        self.state(tile)
            .map(|state| state.program_memory.as_slice())
            .filter(|memory| !memory.is_empty())
    }
}

/// The op's name in errors, as the disassembly writes it.
fn mnemonic(op: &TxnOp) -> &'static str {
    match op {
        TxnOp::Write { .. } => "WRITE",
        TxnOp::BlockWrite { .. } => "BLOCKWRITE",
        TxnOp::MaskWrite { .. } => "MASKWRITE",
        TxnOp::MaskPoll { .. } => "MASKPOLL",
        TxnOp::DdrPatch { .. } => "DDR_PATCH",
        TxnOp::LoadPdi { .. } => "LOADPDI",
        TxnOp::Sync { .. } => "SYNC",
    }
}
