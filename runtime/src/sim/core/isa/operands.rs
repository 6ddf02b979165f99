//! An instruction's operands as executing uses them, resolved once at
//! decode: each register operand (and implicit register) to its one-word
//! leaf with the cycle its itinerary reads or writes it at, each immediate
//! to its value.

use super::registers::RegisterFile;
use super::timing::Bypass;
use loom_aie2p_isa::{isa, Instruction, Itinerary, OperandKind, Value};

/// An operand as executing reads or writes it, resolved at decode.
#[derive(Debug, Clone)]
pub(super) enum Resolved {
    /// A one-word register: its leaf, the cycle after issue it is read or
    /// written at, and the bypass that operand names.
    Register {
        leaf: usize,
        cycle: u32,
        bypass: Bypass,
    },
    /// A register of several words (a pair, a vector, an accumulator): its
    /// leaves lowest first, as `Register`.
    Wide {
        leaves: Box<[usize]>,
        words: usize,
        cycle: u32,
        bypass: Bypass,
    },
    Immediate(u32),
    /// Why executing cannot use it (a register the tables do not name, no
    /// cycle in the itinerary).
    Unusable(String),
}

/// The register an operand names: its field's value, or the only member
/// of its class (e.g. `r27` of `sel.nez`).
fn register_of(instruction: &Instruction, operand: &str) -> Result<String, String> {
    match instruction.value(operand) {
        Some(Value::Register(name)) => Ok(name),
        Some(Value::Immediate(v)) => Err(format!("operand `{operand}` is the immediate {v}")),
        None => {
            let class = instruction
                .opcode
                .operand(operand)
                .map_or("", |o| o.class.as_str());
            match isa().class(class) {
                [only] => isa()
                    .register(only)
                    .map(|r| r.asm.clone())
                    .ok_or_else(|| format!("class {class} names no register")),
                _ => Err(format!("operand `{operand}` has no value")),
            }
        }
    }
}

fn register_operand(
    register: Result<String, String>,
    name: &str,
    itinerary: &'static Itinerary,
) -> Resolved {
    let resolved = register.and_then(|r| {
        let leaves = RegisterFile::leaves(&r).ok_or_else(|| format!("no register is named {r}"))?;
        let cycle = itinerary.cycle(name).ok_or_else(|| {
            format!(
                "its itinerary {} gives no cycle for operand `{name}`",
                itinerary.name
            )
        })?;
        let bypass = itinerary.bypass(name);
        Ok(match leaves {
            [leaf] if RegisterFile::is_word(*leaf) => Resolved::Register {
                leaf: *leaf,
                cycle,
                bypass,
            },
            _ => Resolved::Wide {
                leaves: leaves.into(),
                words: leaves.iter().map(|&l| RegisterFile::words(l)).sum(),
                cycle,
                bypass,
            },
        })
    });
    resolved.unwrap_or_else(Resolved::Unusable)
}

/// Every operand and implicit register of `instruction`, by name.
pub(super) fn resolve(
    instruction: &Instruction,
    itinerary: Option<&'static Itinerary>,
) -> Vec<(String, Resolved)> {
    let Some(itinerary) = itinerary else {
        return Vec::new(); // refused before it executes
    };
    let opcode = instruction.opcode;
    let explicit = opcode.operands.iter().map(|op| {
        let resolved = if op.kind == OperandKind::Immediate {
            match instruction.value(&op.name) {
                Some(Value::Immediate(v)) => Resolved::Immediate(v as u32),
                _ => Resolved::Unusable(format!("immediate `{}` has no value", op.name)),
            }
        } else {
            register_operand(register_of(instruction, &op.name), &op.name, itinerary)
        };
        (op.name.clone(), resolved)
    });
    let implicit = opcode
        .implicit_defs
        .iter()
        .chain(&opcode.implicit_uses)
        .map(|record| {
            let resolved = register_operand(Ok(record.clone()), record, itinerary);
            (record.clone(), resolved)
        });
    explicit.chain(implicit).collect()
}
