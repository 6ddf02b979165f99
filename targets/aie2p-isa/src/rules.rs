//! The rules a core image must keep to run on silicon that the tables do
//! not say: what a third party's runs on a Strix Halo NPU showed
//! (xdna-hardware-facts.md §9: HUSRCF/hipscope pm-npu, src/isa/rules.rs and
//! docs/npu/report.md; not AMD documentation). Each is checked over the
//! bundles in address order, as a straight line of issue.

use crate::asm::print_bundle;
use crate::bundle::{decode, Bundle};
use crate::error::IsaError;
use crate::instruction::Value;
use crate::tables::OperandKind;
use std::fmt;

/// Bundles after a control transfer that issue before it takes effect
/// (llvm-aie AIEBaseInstrInfo NumDelaySlots).
pub const DELAY_SLOTS: usize = 5;
/// Issue bundles from one lock request to the next.
pub const LOCK_REQUEST_DISTANCE: usize = 4;
/// Jump targets start a 16-byte line (or follow only NOP bundles in it).
pub const JUMP_ALIGNMENT: u64 = 16;
/// The zero-overhead loop's registers: writing them ran the body once.
const LOOP_REGISTERS: [&str; 3] = ["ls", "le", "lc"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    JumpTargetAlignment,
    NoHardwareLoop,
    LockRequestDistance,
    DelaySlots,
    JumpIntoDelaySlots,
}

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::JumpTargetAlignment => "jump targets start a 16-byte line",
            Rule::NoHardwareLoop => "no zero-overhead loop registers",
            Rule::LockRequestDistance => "lock requests at least 4 bundles apart",
            Rule::DelaySlots => {
                "5 delay slots after a control transfer, without control transfer, done or lock request"
            }
            Rule::JumpIntoDelaySlots => "no jump target inside delay slots",
        }
    }
}

/// A broken rule: which, where, and the bundle's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: Rule,
    pub address: u64,
    pub bundle: String,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:#x}: `{}` breaks \"{}\": {}",
            self.address,
            self.bundle,
            self.rule.name(),
            self.detail
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckError {
    /// The bytes are not bundles.
    Decode(IsaError),
    Rule(Violation),
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Decode(e) => e.fmt(f),
            CheckError::Rule(v) => v.fmt(f),
        }
    }
}

impl std::error::Error for CheckError {}

fn transfers(bundle: &Bundle) -> bool {
    bundle.instructions.iter().any(|i| i.opcode.has_delay_slot)
}

fn requests_lock(bundle: &Bundle) -> bool {
    bundle
        .instructions
        .iter()
        .any(|i| i.opcode.mnemonic.starts_with("acq") || i.opcode.mnemonic.starts_with("rel"))
}

fn is_done(bundle: &Bundle) -> bool {
    bundle
        .instructions
        .iter()
        .any(|i| i.opcode.mnemonic == "done")
}

fn only_nops(bundle: &Bundle) -> bool {
    bundle
        .instructions
        .iter()
        .all(|i| i.opcode.mnemonic.starts_with("nop"))
}

/// Direct targets of the bundle's control transfer (program-memory byte
/// addresses); register targets are not known here.
fn targets(bundle: &Bundle) -> Vec<u64> {
    let mut out = Vec::new();
    for i in bundle
        .instructions
        .iter()
        .filter(|i| i.opcode.has_delay_slot)
    {
        for operand in &i.opcode.operands {
            let address = operand.kind == OperandKind::Immediate
                && crate::tables::isa()
                    .immediate(&operand.class)
                    .is_some_and(|imm| imm.kind == "address");
            if let (true, Some(Value::Immediate(v))) = (address, i.value(&operand.name)) {
                out.push(v as u64);
            }
        }
    }
    out
}

fn loop_register_written(bundle: &Bundle) -> Option<String> {
    bundle.instructions.iter().find_map(|i| {
        i.opcode
            .operands
            .iter()
            .filter(|o| o.output)
            .find_map(|o| match i.value(&o.name) {
                Some(Value::Register(r)) if LOOP_REGISTERS.contains(&r.as_str()) => Some(r),
                _ => None,
            })
    })
}

/// Check the image at program-memory address `base`.
pub fn check(image: &[u8], base: u64) -> Result<(), CheckError> {
    let bundles = decode(image).map_err(CheckError::Decode)?;
    let at: Vec<u64> = bundles
        .iter()
        .map(|(offset, _)| base + *offset as u64)
        .collect();
    let violation = |n: usize, rule: Rule, detail: String| {
        CheckError::Rule(Violation {
            rule,
            address: at[n],
            bundle: print_bundle(&bundles[n].1),
            detail,
        })
    };
    // Delay slots: the 5 bundles after each transfer.
    let mut in_delay = vec![false; bundles.len()];
    let mut last_lock: Option<usize> = None;
    for (n, (_, bundle)) in bundles.iter().enumerate() {
        if let Some(register) = loop_register_written(bundle) {
            return Err(violation(
                n,
                Rule::NoHardwareLoop,
                format!(
                    "writes {register}; silicon ran such loops' bodies once (use a jnz back edge)"
                ),
            ));
        }
        if requests_lock(bundle) {
            if let Some(previous) = last_lock.filter(|&p| n - p < LOCK_REQUEST_DISTANCE) {
                return Err(violation(
                    n,
                    Rule::LockRequestDistance,
                    format!(
                        "{} bundles after the lock request at {:#x}",
                        n - previous,
                        at[previous]
                    ),
                ));
            }
            last_lock = Some(n);
        }
        if transfers(bundle) {
            if in_delay[n] {
                return Err(violation(
                    n,
                    Rule::DelaySlots,
                    "a control transfer in another's delay slots".into(),
                ));
            }
            if n + DELAY_SLOTS >= bundles.len() {
                return Err(violation(
                    n,
                    Rule::DelaySlots,
                    format!("the image ends {} bundles after it", bundles.len() - n - 1),
                ));
            }
            for slot in n + 1..=n + DELAY_SLOTS {
                in_delay[slot] = true;
                let what = if transfers(&bundles[slot].1) {
                    "a control transfer"
                } else if is_done(&bundles[slot].1) {
                    "done"
                } else if requests_lock(&bundles[slot].1) {
                    "a lock request"
                } else {
                    continue;
                };
                return Err(violation(
                    slot,
                    Rule::DelaySlots,
                    format!("{what} in the delay slots of the transfer at {:#x}", at[n]),
                ));
            }
        }
    }
    // Jump targets: aligned, and not inside delay slots.
    for (n, (_, bundle)) in bundles.iter().enumerate() {
        for target in targets(bundle) {
            let inside = at.first().is_some_and(|&first| target >= first)
                && target < base + image.len() as u64;
            let Some(t) = at.iter().position(|&a| a == target) else {
                if inside {
                    return Err(violation(
                        n,
                        Rule::JumpTargetAlignment,
                        format!("its target {target:#x} is inside a bundle"),
                    ));
                }
                continue;
            };
            if in_delay[t] {
                return Err(violation(
                    n,
                    Rule::JumpIntoDelaySlots,
                    format!("its target {target:#x} is in another transfer's delay slots"),
                ));
            }
            let line = target - target % JUMP_ALIGNMENT;
            let padded = (0..t)
                .filter(|&b| at[b] >= line)
                .all(|b| only_nops(&bundles[b].1));
            if target % JUMP_ALIGNMENT != 0 && !padded {
                return Err(violation(
                    n,
                    Rule::JumpTargetAlignment,
                    format!("its target {target:#x} is not 16-byte aligned and follows code in its line"),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{encode, parse_bundle};

    fn image(lines: &[&str]) -> Vec<u8> {
        lines
            .iter()
            .flat_map(|l| encode(parse_bundle(l).unwrap()).unwrap())
            .collect()
    }

    fn broken(lines: &[&str]) -> Rule {
        match check(&image(lines), 0) {
            Err(CheckError::Rule(v)) => v.rule,
            other => panic!("expected a violation, got {other:?}"),
        }
    }

    const NOPS: [&str; 5] = ["nop", "nop", "nop", "nop", "nop"];

    #[test]
    fn a_clean_image_passes() {
        let mut lines = vec!["acq #1, r31", "nop", "nop", "nop", "rel #1, r31", "j #0"];
        lines.extend(NOPS);
        assert_eq!(check(&image(&lines), 0), Ok(()));
    }

    #[test]
    fn each_rule_names_itself() {
        assert_eq!(
            broken(&["acq #1, r31", "nop", "rel #1, r31"]),
            Rule::LockRequestDistance
        );
        assert_eq!(broken(&["j #0", "nop", "nop"]), Rule::DelaySlots);
        assert_eq!(
            broken(&["j #0", "nop", "done", "nop", "nop", "nop"]),
            Rule::DelaySlots
        );
        assert_eq!(
            broken(&["j #0", "acq #1, r31", "nop", "nop", "nop", "nop"]),
            Rule::DelaySlots
        );
        let mut unaligned = vec!["acq #1, r31", "done", "j #4"];
        unaligned.extend(NOPS);
        assert_eq!(broken(&unaligned), Rule::JumpTargetAlignment);
        let mut inside = vec!["j #2"];
        inside.extend(NOPS);
        assert_eq!(broken(&inside), Rule::JumpTargetAlignment);
        // Only NOP bundles before it in its line: fine.
        let mut padded = vec!["nop", "done", "j #2"];
        padded.extend(NOPS);
        assert_eq!(check(&image(&padded), 0), Ok(()));
        let mut into = vec!["j #6"];
        into.extend(NOPS);
        assert_eq!(broken(&into), Rule::JumpIntoDelaySlots);
        assert_eq!(broken(&["movxm ls, #64"]), Rule::NoHardwareLoop);
    }

    #[test]
    fn a_violation_says_rule_address_and_bundle() {
        let text = check(&image(&["acq #1, r31", "nop", "rel #1, r31"]), 0x100)
            .unwrap_err()
            .to_string();
        assert_eq!(
            text,
            "0x106: `rel\t#1, r31` breaks \"lock requests at least 4 bundles apart\": 2 bundles after the lock request at 0x100"
        );
    }
}
