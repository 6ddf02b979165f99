//! The AIE2P core's instruction set as data, in the style of Cranelift's
//! assembler: slots, bundle formats, instructions with their bit layouts,
//! registers and operand encodings are tables (`data/*.json`, derived from
//! llvm-aie's TableGen by `scripts/aie2p-isa/extract.py`, provenance in each
//! file); the functions here are pure: decode bytes into bundles, print them
//! as llvm-objdump does, parse that text, encode instructions and pack a
//! bundle into the smallest format that holds its slots.
//!
//! No MLIR: the code generator, the instruction-level simulator, `loom-mc`
//! and `loom-objdump` all build on this crate.

#![deny(unsafe_code)]

mod asm;
mod bits;
mod bundle;
pub mod elf;
mod error;
#[cfg(test)]
mod golden;
mod instruction;
#[cfg(test)]
mod round_trip;
pub mod rules;
pub mod schedule;
#[cfg(test)]
mod schedule_facts;
mod tables;

pub use asm::{parse_bundle, print_bundle, print_instruction};
pub use bundle::{decode, decode_one, encode, Bundle};
pub use error::IsaError;
pub use instruction::{Instruction, Value};
pub use schedule::Itinerary;
pub use tables::{isa, Format, Isa, Opcode, Operand, OperandKind, Register};
