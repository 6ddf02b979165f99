//! One slot of a decoded bundle, and what its slots decide at decode for
//! the run-time checks (`checks`): whether the model can execute them,
//! what of them may not sit in a delay slot, whether they name a loop
//! register.

use super::operands::Operands;
use super::registers::RegisterFile;
use super::semantics::Semantics;
use super::structural::Hold;
use loom_aie2p_isa::{Instruction, Itinerary};

/// One slot's instruction, decoded with what executing it needs.
pub(super) struct Slot {
    pub(super) instruction: Instruction,
    pub(super) text: String,
    pub(super) itinerary: Option<&'static Itinerary>,
    pub(super) semantics: Option<Semantics>,
    pub(super) operands: Operands,
    /// The functional units its stages hold (or why they cannot be
    /// checked).
    pub(super) holds: Result<Vec<Hold>, String>,
}

/// (Decided at decode: `Decoded::modelled`.)
pub fn modelled(slots: &[Slot]) -> Result<(), String> {
    for slot in slots {
        let opcode = slot.instruction.opcode;
        if slot.semantics.is_none() {
            return Err(format!(
                "`{}` ({}, {} slot) is not modelled by the isa core",
                slot.text, opcode.name, opcode.slot
            ));
        }
        if slot.itinerary.is_none() {
            return Err(format!(
                "`{}` ({}): targets/aie2p-isa/data/schedule.json has no itinerary {} for it, \
                 so the cycles its results land at are unknown",
                slot.text,
                opcode.name,
                opcode.itinerary.as_deref().unwrap_or("(none)")
            ));
        }
    }
    Ok(())
}

/// What of a bundle may not be in a delay slot, per `Options::hazards`
/// (off: a control transfer; on: also `done` and a lock request): the
/// first such slot's description, decided at decode.
pub fn delay_slot_offences(slots: &[Slot]) -> [Option<String>; 2] {
    [false, true].map(|hazards| {
        slots.iter().find_map(|slot| {
            let opcode = slot.instruction.opcode;
            if opcode.has_delay_slot {
                Some(format!("a control transfer (`{}`)", slot.text))
            } else if !hazards {
                None
            } else if opcode.mnemonic == "done" {
                Some("`done`".to_string())
            } else if opcode.mnemonic.starts_with("acq") || opcode.mnemonic.starts_with("rel") {
                Some(format!("a lock request (`{}`)", slot.text))
            } else {
                None
            }
        })
    })
}

/// The zero-overhead loop registers: silicon ran such loops' bodies once
/// (§9), so writing them is refused; loops are `jnz` back edges.
const LOOP_REGISTERS: [&str; 3] = ["ls", "le", "lc"];

/// The loop registers' leaves, found once.
pub(super) fn loop_leaves() -> &'static [usize] {
    static LEAVES: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    LEAVES.get_or_init(|| {
        LOOP_REGISTERS
            .iter()
            .filter_map(|r| RegisterFile::leaves(r)?.first().copied())
            .collect()
    })
}

/// Whether an operand of the bundle is a loop register: decided at decode,
/// so that only such a bundle's writes are checked (`loop_register`).
pub fn names_loop_register(slots: &[Slot]) -> bool {
    let leaves = loop_leaves();
    slots
        .iter()
        .flat_map(|s| s.operands.leaves())
        .any(|leaf| leaves.contains(&leaf))
}
