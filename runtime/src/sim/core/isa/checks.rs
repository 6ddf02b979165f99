//! What the core refuses at run time, as messages the machine places at
//! the bundle (address, text) and the instruction:
//!
//! - an instruction the model has no semantics for, or without an
//!   itinerary (its result cycles would be a guess);
//! - the hazard checker (`Options::hazards`, on by default): a read of a
//!   register before a write to it lands, two writes of one register
//!   landing in the same cycle, a functional unit held by two
//!   instructions in one cycle (`structural`), and the silicon rules of
//!   xdna-hardware-facts §9 (docs/aie2p-isa.md, "The rule checker"): `done`
//!   or a lock request inside delay slots, a write of ls/le/lc, lock requests fewer than 4
//!   bundles apart, a jump target that neither starts a 16-byte line nor
//!   follows only whole NOP bundles in it;
//! - always: a control transfer inside another's delay slots (what the
//!   hardware does then is not modelled), and a write landing before a read
//!   at a later use cycle of its own or an earlier bundle (the model reads
//!   operands at issue, the hardware at their use cycle).

use super::bundle::Decoded;
use super::registers::{Early, Pending, RegisterFile};
use super::slot::loop_leaves;
use std::rc::Rc;

/// Bundles that must separate two lock requests (§9).
const LOCK_REQUEST_SPACING: u64 = 4;

/// Bytes of the line a jump target should start (§9).
const TARGET_LINE: u32 = 16;

/// `branch`: the transfer whose delay slots the bundle is in (its address,
/// and which delay slot, from 1); `offences` the bundle's
/// (`delay_slot_offences`).
pub fn delay_slots(
    offences: &[Option<String>; 2],
    branch: Option<(u32, u32)>,
    hazards: bool,
) -> Result<(), String> {
    let (Some((from, slot_number)), Some(what)) = (branch, &offences[usize::from(hazards)]) else {
        return Ok(());
    };
    Err(format!(
        "{what} in delay slot {slot_number} of the transfer at {from:#06x}; delay slots hold no \
         control transfer, `done` or lock request (xdna-hardware-facts §9)"
    ))
}

/// `apart`: bundles issued since the previous lock request, if any.
pub fn lock_spacing(apart: Option<u64>, hazards: bool) -> Result<(), String> {
    match apart {
        Some(apart) if hazards && apart < LOCK_REQUEST_SPACING => Err(format!(
            "a lock request {apart} bundle(s) after the previous one; lock requests must be at \
             least {LOCK_REQUEST_SPACING} issue bundles apart (xdna-hardware-facts §9)"
        )),
        _ => Ok(()),
    }
}

#[cold]
pub fn early_read(reader: &str, at: u64, early: &Early, writer: &str) -> String {
    format!(
        "`{reader}` reads {} at cycle {at}, but `{writer}` (bundle at {:#06x}) writes it at cycle \
         {}: the read sees the old value (hazard checker; the write's latency has not passed)",
        early.register, early.write.writer, early.write.at
    )
}

#[cold]
pub fn same_cycle(
    text: &str,
    leaf: usize,
    write: &Pending,
    other_text: &str,
    other: &Pending,
) -> String {
    format!(
        "`{text}` writes {} at cycle {}, the cycle `{other_text}` (bundle at {:#06x}) writes it \
         too (hazard checker: two writes of one register landing in one cycle)",
        RegisterFile::leaf_name(leaf),
        write.at,
        other.writer
    )
}

/// A write of `leaf` (checked with the hazards); `text` gives the writing
/// instruction's text, asked only for the error.
pub fn loop_register(leaf: usize, text: impl FnOnce() -> String) -> Result<(), String> {
    if loop_leaves().contains(&leaf) {
        let name = RegisterFile::leaf_name(leaf);
        return Err(format!(
            "`{}` writes {name}, a zero-overhead loop register; silicon ran such loops' bodies \
             once, so loops are `jnz` back edges (xdna-hardware-facts §9)",
            text()
        ));
    }
    Ok(())
}

/// Two instructions holding one functional unit in one cycle.
#[cold]
pub fn structural(text: &str, unit: &str, at: u64, other: &str, other_at: u32) -> String {
    format!(
        "`{text}` needs functional unit {unit} at cycle {at}, which `{other}` (bundle at \
         {other_at:#06x}) holds then (hazard checker: a structural hazard, from the \
         itineraries' stages)"
    )
}

/// A write of `leaf` that lands before a late read (of its own or an
/// earlier bundle).
#[cold]
pub fn overtaken(
    text: &str,
    leaf: usize,
    write: &Pending,
    reader: &str,
    at: u32,
    read: u64,
) -> String {
    format!(
        "`{text}` writes {} at cycle {}, before `{reader}` (bundle at {at:#06x}) \
         reads it at cycle {read}: the hardware's read would see the new value, which the isa \
         core, reading operands at issue, does not model",
        RegisterFile::leaf_name(leaf),
        write.at
    )
}

/// A taken transfer to `target` is about to take effect; `decode` gives
/// the bundle at an address.
pub fn jump_target(
    target: u32,
    decode: &mut dyn FnMut(u32) -> Result<Rc<Decoded>, String>,
) -> Result<(), String> {
    let mut at = target - target % TARGET_LINE;
    while at < target {
        let decoded = decode(at)?;
        if !decoded.nops_only {
            break;
        }
        at += decoded.size;
    }
    if at == target {
        return Ok(());
    }
    Err(format!(
        "the jump target {target:#06x} neither starts a 16-byte line nor follows only whole NOP \
         bundles in its line (xdna-hardware-facts §9)"
    ))
}
