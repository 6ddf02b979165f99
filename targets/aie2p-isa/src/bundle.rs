//! Bundles: one instruction per slot of a format, 2 to 16 bytes. The format
//! is told by the bundle's low bits (its size code, then the bits that pick
//! the slot combination); an encoder takes the smallest format whose slots
//! cover the instructions' and fills the other slots with their NOPs, as
//! llvm-aie's bundle formats do (AIEFormats.h).

use crate::bits;
use crate::error::IsaError;
use crate::instruction::Instruction;
use crate::tables::{isa, Format, Opcode};
use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

/// The longest bundle.
const MAX_BYTES: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle {
    pub format: &'static Format,
    /// One per slot of the format, in its order.
    pub instructions: Vec<Instruction>,
}

fn word_of(bytes: &[u8]) -> u128 {
    bytes
        .iter()
        .rev()
        .fold(0u128, |word, &b| word << 8 | u128::from(b))
}

/// The bundle at the start of `bytes` (`offset` is where that is, for
/// errors), and its size.
pub fn decode_one(bytes: &[u8], offset: usize) -> Result<(Bundle, usize), IsaError> {
    let isa = isa();
    let head = word_of(&bytes[..bytes.len().min(MAX_BYTES)]);
    // The size codes are prefix-free: the low bits name one size.
    let mut sizes: Vec<usize> = isa.formats.iter().map(|f| f.size_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for size in sizes {
        let word = head & mask_of(size);
        let mut formats = isa
            .formats_of_size(size)
            .filter(|f| word & f.fixed_mask == f.fixed_value);
        let Some(format) = formats.next() else {
            continue;
        };
        if bytes.len() < size {
            return Err(IsaError::Truncated {
                offset,
                needed: size,
                available: bytes.len(),
            });
        }
        let word = word_of(&bytes[..size]);
        let instructions = format
            .slots
            .iter()
            .map(|s| Instruction::decode(&s.slot, bits::extract(word, &s.bits) as u64))
            .collect::<Result<_, _>>()?;
        return Ok((
            Bundle {
                format,
                instructions,
            },
            size,
        ));
    }
    Err(IsaError::UnknownFormat { offset, word: head })
}

fn mask_of(size: usize) -> u128 {
    if size >= 16 {
        u128::MAX
    } else {
        (1u128 << (8 * size)) - 1
    }
}

/// Every bundle of `bytes`, with its offset.
pub fn decode(bytes: &[u8]) -> Result<Vec<(usize, Bundle)>, IsaError> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let (bundle, size) = decode_one(&bytes[at..], at)?;
        out.push((at, bundle));
        at += size;
    }
    Ok(out)
}

impl Bundle {
    /// The smallest format that holds the instructions' slots, the rest of
    /// its slots given their NOPs.
    pub fn pack(instructions: Vec<Instruction>) -> Result<Bundle, IsaError> {
        let isa = isa();
        let mut slots: Vec<&str> = instructions
            .iter()
            .map(|i| i.opcode.slot.as_str())
            .collect();
        slots.sort_unstable();
        if let Some(twice) = slots.windows(2).find(|w| w[0] == w[1]) {
            return Err(IsaError::SlotTwice {
                slot: twice[0].to_string(),
            });
        }
        let covers = |f: &Format| {
            slots.iter().all(|s| f.slots.iter().any(|fs| fs.slot == *s))
                && f.slots
                    .iter()
                    .all(|fs| slots.contains(&fs.slot.as_str()) || nop_of(&fs.slot).is_some())
        };
        let format = isa
            .formats
            .iter()
            .filter(|f| covers(f))
            .min_by_key(|f| (f.size_bytes, f.slots.len()))
            .ok_or_else(|| IsaError::NoFormat {
                slots: slots.iter().map(|s| s.to_string()).collect(),
            })?;
        let mut given = instructions;
        let ordered = format
            .slots
            .iter()
            .map(
                |fs| match given.iter().position(|i| i.opcode.slot == fs.slot) {
                    Some(at) => given.swap_remove(at),
                    None => nop_of(&fs.slot).expect("covers checked the NOP"),
                },
            )
            .collect();
        Ok(Bundle {
            format,
            instructions: ordered,
        })
    }

    /// The bundle's bytes in its format.
    pub fn encode(&self) -> Result<Vec<u8>, IsaError> {
        let mut word = self.format.fixed_value;
        for (slot, instruction) in self.format.slots.iter().zip(&self.instructions) {
            word = bits::insert(word, &slot.bits, u128::from(instruction.encode()?));
        }
        Ok(word.to_le_bytes()[..self.format.size_bytes].to_vec())
    }
}

/// The NOP of a slot: its instruction without operands named `nop...`.
/// Found once per slot: packing asks for every slot of every format it
/// tries, for every bundle.
fn nop_of(slot: &str) -> Option<Instruction> {
    static NOPS: OnceLock<HashMap<&'static str, &'static Opcode>> = OnceLock::new();
    let nops = NOPS.get_or_init(|| {
        let isa = isa();
        let slots: BTreeSet<&'static str> = isa
            .formats
            .iter()
            .flat_map(|f| f.slots.iter().map(|fs| fs.slot.as_str()))
            .collect();
        slots
            .into_iter()
            .filter_map(|slot| {
                isa.opcodes_of_slot(slot)
                    .find(|o| {
                        o.mnemonic.starts_with("nop")
                            && o.operands.iter().all(|op| op.bits.is_empty())
                    })
                    .map(|opcode| (slot, opcode))
            })
            .collect()
    });
    nops.get(slot).map(|&opcode| Instruction {
        opcode,
        operands: vec![],
    })
}

/// The bytes of the bundle of `instructions` (packed as [`Bundle::pack`]).
pub fn encode(instructions: Vec<Instruction>) -> Result<Vec<u8>, IsaError> {
    Bundle::pack(instructions)?.encode()
}
