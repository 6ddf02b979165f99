//! The partition's life: LOADPDI and the firmware's reset, and what the
//! control code must do before a core may run (its bring-up) and before a
//! channel may take tasks. The core control and DMA channel control
//! registers are decoded here.

use super::dma::channel_name;
use super::{Array, Effect, TileState};
use crate::sim::error::SimError;
use loom_targets::xdna::elf::Pdi;
use loom_targets::xdna::pdi::{pdi, CDO_NOP};
use loom_targets::xdna::regs::{Direction, TileKind};
use loom_targets::{DeviceProfile, Tile};

/// Bit 1 of a shim channel's control is Pause_Mem, not a reset (aie-rt
/// xaie2pgbl_params.h NOC_MODULE_DMA_S2MM_0_CTRL_PAUSE_MEM; reginit gives
/// the shim's channels no Reset).
const PAUSE_MEM: u32 = 1 << 1;

/// How far a core tile has come since the partition's reset towards a
/// program the core may run (mlir-aie lib/Targets/AIERT.cpp addAieElf:
/// XAie_CoreDisable, XAie_DmaChannelResetAll reset, XAie_LoadElf,
/// XAie_DmaChannelResetAll unreset).
#[derive(Debug, Default)]
pub(super) struct BringUp {
    /// The control code disabled the core.
    disabled: bool,
    /// Channels put in reset since then.
    reset: Vec<(Direction, u32)>,
    /// Every channel was reset and released again: program memory counts
    /// as written (a Low IR core takes its program from the artifact).
    written: bool,
}

/// Why `bytes` is not a PDI whose configuration is empty: bootgen's layout
/// (`loom_targets::xdna::pdi`) around a CDO of NOPs only.
fn not_empty(bytes: &[u8]) -> Option<String> {
    let Some(commands) = cdo_commands(bytes) else {
        return Some("it is not a PDI in bootgen's layout".into());
    };
    if let Some(command) = commands.iter().find(|&&c| c != CDO_NOP) {
        return Some(format!(
            "its CDO holds command {command:#010x}, not only NOPs"
        ));
    }
    (pdi(&[&commands]) != bytes).then(|| "its bytes are not bootgen's layout".into())
}

/// The commands of a PDI's CDO partition.
fn cdo_commands(bytes: &[u8]) -> Option<Vec<u32>> {
    let word = |i: usize| {
        bytes
            .get(4 * i..4 * i + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    // Word 4 of the image header table (after the 4 SMAP words) locates the
    // partition header, whose words 1 and 8 give the CDO's length and place;
    // the CDO's own header is 5 words (pdi.rs, findings Q7).
    let header = word(4 + 4)? as usize;
    let (length, at) = (word(header + 1)? as usize, word(header + 8)? as usize);
    (at + 5..at + length).map(word).collect()
}

impl Array {
    /// The PDIs the artifact carries, which LOADPDI ops may name.
    pub fn carry_pdis(&mut self, pdis: &[Pdi]) {
        self.pdis = pdis.iter().map(|p| (p.id, p.bytes.clone())).collect();
    }

    pub(super) fn load_pdi(&mut self, op: usize, id: u16, size: u32) -> Result<Effect, SimError> {
        let fail = |message: String| SimError::new(message).op(op);
        let Some(bytes) = self.pdis.get(&id) else {
            let carried: Vec<String> = self.pdis.keys().map(|id| format!(".pdi.{id}")).collect();
            return Err(fail(format!(
                "LOADPDI names .pdi.{id}, which the artifact does not carry (it carries {})",
                if carried.is_empty() {
                    "none".into()
                } else {
                    carried.join(", ")
                }
            )));
        };
        if size as usize != bytes.len() {
            return Err(fail(format!(
                "LOADPDI of .pdi.{id} gives size {size}, but the PDI is {} bytes",
                bytes.len()
            )));
        }
        if let Some(why) = not_empty(bytes) {
            return Err(fail(format!(
                "LOADPDI of .pdi.{id}: the PDI is not empty ({why}); configuration carried in \
                 a PDI is not modelled, only control-code register writes"
            )));
        }
        // The firmware skips a load of the resident PDI (mlir-aie's doc on
        // `@empty`, quoting ert_ipu.c: pdi_address != loaded_pdi_addr).
        if self.resident == Some(id) {
            return Ok(Effect::None);
        }
        self.resident = Some(id);
        Ok(Effect::Reset)
    }

    /// The firmware's reset of the partition on loading a new PDI: cores
    /// stop, channels drop their tasks and streams, locks, registers and
    /// tokens clear; tile memory stays (mlir-aie AIEExpandLoadPdi and its
    /// doc). The model's clocks go on.
    pub fn reset(&mut self) {
        for state in self.tiles.values_mut() {
            state.registers.clear();
            state.locks.fill(0);
            state.lock_times.fill(Default::default());
            for channel in state.s2mm.iter_mut().chain(&mut state.mm2s) {
                channel.queue.clear();
                channel.running = None;
                channel.incoming.clear();
                channel.arrivals.clear();
            }
            state.core_enabled = false;
            state.bring_up = BringUp::default();
        }
        self.tokens.clear();
    }

    /// A write of Core_Control: returns the tile whose core it started.
    pub(super) fn core_control(
        &mut self,
        tile: Tile,
        value: u32,
        fail: impl Fn(String) -> SimError,
    ) -> Result<Option<Tile>, SimError> {
        let enable = self.profile.registers.core_module.enable;
        let Some(state) = self.tiles.get_mut(&tile) else {
            return Err(fail("no such tile in the array".into()));
        };
        if value & !enable.mask() != 0 {
            return Err(fail(format!(
                "core control {value:#x}: only the enable bit is modelled (not reset)"
            )));
        }
        let enable = enable.get(value) == 1;
        match (state.core_enabled, enable) {
            (false, true) if !state.bring_up.written => {
                return Err(fail(format!(
                    "enables core {tile} before its program is written: after the partition's \
                     reset the core must be disabled, its DMA channels reset, its program \
                     written and the channels released first"
                )))
            }
            (true, false) => {
                return Err(fail(format!(
                    "disables core {tile} while it runs, which is not modelled"
                )))
            }
            // A disable starts the bring-up.
            (false, false) => {
                state.bring_up.disabled = true;
                state.bring_up.reset.clear();
            }
            _ => {}
        }
        let started = enable && !state.core_enabled;
        state.core_enabled = enable;
        Ok(started.then_some(tile))
    }

    /// A write of a DMA channel's control register (the merged `value`).
    pub(super) fn channel_control(
        &mut self,
        tile: Tile,
        direction: Direction,
        channel: u32,
        value: u32,
        fail: impl Fn(String) -> SimError,
    ) -> Result<(), SimError> {
        let profile = self.profile;
        let Some(kind) = self.state(tile).map(|s| s.kind) else {
            return Err(fail("no such tile in the array".into()));
        };
        let offset = profile
            .channel_control(kind, direction, channel)
            .map_err(|e| fail(e.to_string()))?;
        let fields = &profile.tile_registers(kind).channel_control;
        let reset = fields.reset.map_or(0, |r| r.mask());
        if reset == 0 && value & PAUSE_MEM != 0 {
            return Err(fail(format!(
                "channel control {value:#x}: a shim channel has no reset bit (bit 1 is \
                 Pause_Mem, which is not modelled)"
            )));
        }
        if value & !(fields.controller_id.mask() | reset) != 0 {
            return Err(fail(format!(
                "channel control {value:#x}: settings such as out-of-order, compression or \
                 FoT mode are not modelled (only Reset and Controller_ID)"
            )));
        }
        let Some(state) = self.tiles.get_mut(&tile) else {
            return Err(fail("no such tile in the array".into()));
        };
        let was = held(profile, state, direction, channel);
        let now = value & reset != 0;
        let c = &state.channels(direction)[channel as usize];
        if now && !was && (c.running.is_some() || !c.queue.is_empty()) {
            return Err(fail(format!(
                "resets {} while it has tasks, which is not modelled",
                channel_name(kind, direction, channel)
            )));
        }
        state.registers.insert(offset, value);
        if kind != TileKind::Core || !state.bring_up.disabled {
            return Ok(());
        }
        if now && !state.bring_up.reset.contains(&(direction, channel)) {
            state.bring_up.reset.push((direction, channel));
        }
        // Program memory is written between the reset of every channel and
        // their release (mlir-aie addAieElf).
        let channels = state.s2mm.len() + state.mm2s.len();
        let any_held = [Direction::S2mm, Direction::Mm2s]
            .iter()
            .any(|&d| (0..state.channels(d).len() as u32).any(|ch| held(profile, state, d, ch)));
        if was && !now && state.bring_up.reset.len() == channels && !any_held {
            state.bring_up.written = true;
        }
        Ok(())
    }

    /// Whether a channel's control register holds it in reset.
    pub(super) fn held_in_reset(&self, tile: Tile, direction: Direction, channel: u32) -> bool {
        self.state(tile)
            .is_some_and(|state| held(self.profile, state, direction, channel))
    }
}

/// Whether the tile's register file holds a channel in reset.
fn held(profile: &DeviceProfile, state: &TileState, direction: Direction, channel: u32) -> bool {
    let reset = profile.tile_registers(state.kind).channel_control.reset;
    let at = profile.channel_control(state.kind, direction, channel);
    match (reset, at) {
        (Some(reset), Ok(at)) => reset.get(state.register(at)) == 1,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::array::testing::*;
    use crate::sim::array::TokenKey;
    use crate::sim::memory::Memory;
    use loom_targets::xdna::pdi::empty;
    use loom_targets::xdna::txn::TxnOp;

    #[test]
    fn configuration_before_the_first_loadpdi_is_an_error() {
        let mut array = unloaded();
        let error = array.apply(0, &lock_init(CORE, 0, 1), &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 0: WRITE before the partition's first LOADPDI: configuration before the \
             partition's LOADPDI is lost when the firmware resets it"
        );
        assert_eq!(array.apply(1, &load_pdi(0), &[]), Ok(Effect::Reset));
        assert_eq!(
            array.apply(2, &lock_init(CORE, 0, 1), &[]),
            Ok(Effect::None)
        );
    }

    #[test]
    fn a_new_pdi_resets_the_partition_and_the_resident_one_does_not() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![9; 64])]);
        let mut array = array();
        let ops = shim_to_core(tile_bd(0x400, 64, Some((0, -1)), Some((1, 1))), 64, 0);
        run(&mut array, &ops, &mut memory).unwrap();
        // A second task waits on lock 0, which the first took.
        array
            .apply(20, &start(CORE, Direction::S2mm, 0, 0, true), &[])
            .unwrap();
        assert_eq!(locks(&array, CORE)[..2], [0, 1]);
        assert!(array.busy());
        assert_eq!(
            array.apply(21, &load_pdi(0), &[]),
            Ok(Effect::None),
            "resident"
        );
        assert!(array.busy());
        assert_eq!(array.apply(22, &load_pdi(1), &[]), Ok(Effect::Reset));
        array.reset();
        assert!(!array.busy());
        assert_eq!(locks(&array, CORE)[..2], [0, 0]);
        let core = TokenKey {
            tile: CORE,
            direction: Direction::S2mm,
            channel: 0,
        };
        assert_eq!(array.take_token(23, &core), Ok(false));
        // The routes are gone; tile memory stays.
        let error = run(&mut array, &ops[2..], &mut memory).unwrap_err();
        assert!(
            error.message.contains("cannot reach the firmware"),
            "{error}"
        );
        assert_eq!(memory.tile(CORE)[0x400], 9);
    }

    #[test]
    fn loadpdi_needs_an_empty_pdi_the_artifact_carries() {
        let mut array = unloaded();
        let error = array.apply(0, &load_pdi(2), &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 0: LOADPDI names .pdi.2, which the artifact does not carry (it carries \
             .pdi.0, .pdi.1)"
        );
        let short = TxnOp::LoadPdi {
            id: 0,
            size: 24,
            address: 0,
        };
        let error = array.apply(1, &short, &[]).unwrap_err();
        assert!(error.message.contains("size 24"), "{error}");
        // A PDI whose CDO writes a register (bootgen's 32-bit WRITE).
        let configured = pdi(&[&[CDO_NOP, 0x0002_0103, 0x0203_2000, 1]]);
        array.carry_pdis(&[Pdi {
            id: 0,
            bytes: configured.clone(),
            loads: vec![],
        }]);
        let load = TxnOp::LoadPdi {
            id: 0,
            size: configured.len() as u32,
            address: 0,
        };
        let error = array.apply(2, &load, &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 2: LOADPDI of .pdi.0: the PDI is not empty (its CDO holds command \
             0x00020103, not only NOPs); configuration carried in a PDI is not modelled, \
             only control-code register writes"
        );
        assert_eq!(
            not_empty(&[0; 8]).as_deref(),
            Some("it is not a PDI in bootgen's layout")
        );
        assert_eq!(not_empty(&empty(1)), None);
    }

    #[test]
    fn a_core_enabled_before_its_program_is_written_is_an_error() {
        let mut array = array();
        let error = array.apply(1, &core_enable(CORE, true), &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 1: tile [0, 3] core.control: enables core [0, 3] before its program is \
             written: after the partition's reset the core must be disabled, its DMA channels \
             reset, its program written and the channels released first"
        );
        // Reset and released without the disable first: no program yet.
        let ops = bring_up(CORE);
        for op in &ops[1..] {
            array.apply(2, op, &[]).unwrap();
        }
        assert!(array.apply(3, &core_enable(CORE, true), &[]).is_err());
        // Disabled, but one channel never reset.
        array.apply(4, &ops[0], &[]).unwrap();
        for op in ops[2..5].iter().chain(&ops[6..8]) {
            array.apply(5, op, &[]).unwrap();
        }
        assert!(array.apply(6, &core_enable(CORE, true), &[]).is_err());
        for (i, op) in ops.iter().enumerate() {
            array.apply(7 + i, op, &[]).unwrap();
        }
        assert_eq!(
            array.apply(16, &core_enable(CORE, true), &[]),
            Ok(Effect::CoreEnabled(CORE))
        );
        assert!(array.apply(17, &core_enable(CORE, false), &[]).is_err());
        // After a reset the program must be written again.
        assert_eq!(array.apply(18, &load_pdi(1), &[]), Ok(Effect::Reset));
        array.reset();
        assert!(array.apply(19, &core_enable(CORE, true), &[]).is_err());
    }

    #[test]
    fn a_start_to_a_channel_held_in_reset_is_an_error() {
        let mut array = array();
        array
            .apply(1, &bd(MEM, 0, &tile_bd(0x80000, 16, None, None)), &[])
            .unwrap();
        array
            .apply(2, &channel_control(MEM, Direction::S2mm, 0, 2, 2), &[])
            .unwrap();
        let error = array
            .apply(3, &start(MEM, Direction::S2mm, 0, 0, false), &[])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 3: tile [0, 1] mem.dma.s2mm[0].start_queue: the channel is held in reset \
             (its control register's Reset bit): the task would be ignored"
        );
        array
            .apply(4, &channel_control(MEM, Direction::S2mm, 0, 0, 2), &[])
            .unwrap();
        array
            .apply(5, &start(MEM, Direction::S2mm, 0, 0, false), &[])
            .unwrap();
        let error = array
            .apply(6, &channel_control(MEM, Direction::S2mm, 0, 2, 2), &[])
            .unwrap_err();
        assert!(error.message.contains("while it has tasks"), "{error}");
    }

    #[test]
    fn channel_control_holds_only_reset_and_the_controller_id() {
        let mut array = array();
        let error = array
            .apply(1, &channel_control(SHIM, Direction::S2mm, 0, 2, 2), &[])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 1: tile [0, 0] shim.dma.s2mm[0].control: channel control 0x102: a shim \
             channel has no reset bit (bit 1 is Pause_Mem, which is not modelled)"
        );
        // Out-of-order (bit 3), and a Controller_ID past 5 bits.
        for value in [1 << 3, 0x20 << 8] {
            let error = array
                .apply(
                    2,
                    &channel_control(CORE, Direction::S2mm, 0, value, value),
                    &[],
                )
                .unwrap_err();
            assert!(error.message.contains("not modelled"), "{error}");
        }
    }
}
