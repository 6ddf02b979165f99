//! Dead code: an instruction that only defines virtual registers nothing
//! reads, and has no other effect, is removed before allocation. Selection
//! leaves such instructions where an address takes a register it already
//! computed plus an immediate (docs/code-generator.md, "Addresses"): the
//! index arithmetic the address no longer needs.

use crate::function::{MachineFunction, MachineInst, MachineOperand};
use crate::timing::memory_kind;
use loom_aie2p_isa::Opcode;
use std::collections::BTreeSet;

/// Whether removing `opcode` when its outputs are unread changes nothing
/// else: no memory access, lock request, control transfer or `done`, and
/// no implicit write that an instruction of the function reads (`add`
/// writes `srCarry`, which only a carry-reading instruction would see).
fn effect_free(opcode: &Opcode, implicitly_read: &BTreeSet<&str>) -> bool {
    let m = opcode.mnemonic.as_str();
    memory_kind(m).is_none()
        && !opcode.has_delay_slot
        && !m.starts_with("acq")
        && !m.starts_with("rel")
        && m != "done"
        && opcode
            .implicit_defs
            .iter()
            .all(|d| !implicitly_read.contains(d.as_str()))
}

fn removable(inst: &MachineInst, implicitly_read: &BTreeSet<&str>) -> bool {
    // A physical register (`sp`, a control register) is an effect of its own.
    let physical = inst
        .operands
        .iter()
        .any(|(_, v)| matches!(v, MachineOperand::Phys(_)));
    !physical
        && inst.defines().next().is_some()
        && std::iter::once(inst.opcode)
            .chain(inst.alternatives.iter().copied())
            .all(|o| effect_free(o, implicitly_read))
}

/// `function` without its dead instructions.
pub fn remove_dead_code(function: &MachineFunction) -> MachineFunction {
    let mut out = function.clone();
    let implicitly_read: BTreeSet<&str> = function
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .flat_map(|i| &i.opcode.implicit_uses)
        .map(String::as_str)
        .collect();
    let mut uses = function.use_counts();
    // Backwards within a block, so a chain of dead values goes in one
    // sweep; again while a sweep removed something (a value read only in
    // a later block).
    loop {
        let mut removed = false;
        for block in &mut out.blocks {
            let mut keep = vec![true; block.insts.len()];
            for (i, inst) in block.insts.iter().enumerate().rev() {
                if removable(inst, &implicitly_read)
                    && inst.defines().all(|v| uses[v.index() as usize] == 0)
                {
                    for v in inst.reads() {
                        uses[v.index() as usize] -= 1;
                    }
                    keep[i] = false;
                    removed = true;
                }
            }
            let mut k = keep.into_iter();
            block.insts.retain(|_| k.next().unwrap_or(true));
        }
        if !removed {
            return out;
        }
    }
}
