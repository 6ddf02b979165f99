//! A bundle as the core executes it: decoded once per address, with each
//! non-NOP slot's text, itinerary and semantics looked up.

use super::operands::resolve;
use super::semantics;
use super::slot::{self, Slot};
use super::structural::{self, holds, Merged};
use loom_aie2p_isa::{decode_one, print_bundle, print_instruction};
use std::cell::OnceCell;

/// A decoded bundle: its size and text, its slots other than NOPs.
pub(super) struct Decoded {
    pub(super) size: u32,
    pub(super) text: String,
    pub(super) nops_only: bool,
    /// Whether a slot is the vector slot's (the vector unit issues).
    pub(super) vector: bool,
    /// Whether a slot is a control transfer (has delay slots).
    pub(super) transfers: bool,
    /// For a transfer, the address after its delay slots (a `jl`'s return
    /// address) or why it is unknown, found at its first issue.
    pub(super) after_delay_slots: OnceCell<Result<u32, String>>,
    /// Whether every slot has semantics and an itinerary, or why not
    /// (`slot::modelled`).
    pub(super) modelled: Result<(), String>,
    /// Whether an operand is a zero-overhead loop register, whose writes
    /// the checker refuses (`slot::names_loop_register`).
    pub(super) names_loop_register: bool,
    /// Its slots' functional-unit holds merged per cycle, unless they meet
    /// among themselves or cannot be checked (`structural::merge`).
    pub(super) holds: Option<Vec<Merged>>,
    /// What of it may not be in a delay slot (`slot::delay_slot_offences`).
    pub(super) delay_slot_offences: [Option<String>; 2],
    pub(super) slots: Vec<Slot>,
}

/// The vector unit's slot (llvm-aie's slot name).
const VECTOR_SLOT: &str = "Vec";

/// The bundle at the start of `bytes` (at program address `address`), or
/// why it does not decode.
pub(super) fn decode(bytes: &[u8], address: u32) -> Result<Decoded, String> {
    let (bundle, size) = decode_one(bytes, address as usize).map_err(|e| {
        let shown: Vec<String> = bytes.iter().take(16).map(|b| format!("{b:02x}")).collect();
        format!("cannot decode the bundle (bytes {}): {e}", shown.join(" "))
    })?;
    let slots: Vec<Slot> = bundle
        .instructions
        .iter()
        .filter(|i| !i.opcode.is_slot_nop)
        .map(|i| {
            // The variant its registers choose (ItineraryRegPairs), as
            // the code generator's scheduler times it.
            let itinerary = i.itinerary();
            Slot {
                text: print_instruction(i),
                itinerary,
                semantics: semantics::of(&i.opcode.name),
                operands: resolve(i, itinerary),
                holds: itinerary.map_or(Ok(Vec::new()), holds),
                instruction: i.clone(),
            }
        })
        .collect();
    Ok(Decoded {
        size: size as u32,
        text: print_bundle(&bundle),
        nops_only: slots.is_empty(),
        vector: slots
            .iter()
            .any(|s| s.instruction.opcode.slot == VECTOR_SLOT),
        transfers: slots.iter().any(|s| s.instruction.opcode.has_delay_slot),
        after_delay_slots: OnceCell::new(),
        modelled: slot::modelled(&slots),
        names_loop_register: slot::names_loop_register(&slots),
        delay_slot_offences: slot::delay_slot_offences(&slots),
        holds: structural::merge(slots.iter().map(|s| &s.holds)),
        slots,
    })
}
