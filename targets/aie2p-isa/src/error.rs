//! What can be wrong with bytes, text or an instruction to encode.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IsaError {
    /// Fewer bytes than the bundle's size code asks for.
    Truncated {
        offset: usize,
        needed: usize,
        available: usize,
    },
    /// No bundle format has these low bits (or several have).
    UnknownFormat { offset: usize, word: u128 },
    /// A slot's bits match no instruction of the slot.
    UnknownInstruction { slot: String, bits: u64 },
    /// A field holds what its operand class cannot mean.
    BadOperand {
        instruction: String,
        operand: String,
        reason: String,
    },
    /// The text names no instruction.
    UnknownMnemonic { column: usize, mnemonic: String },
    /// No form of the mnemonic reads these operands.
    BadSyntax {
        column: usize,
        mnemonic: String,
        expected: Vec<String>,
    },
    /// An immediate outside what its field holds.
    OutOfRange {
        column: usize,
        operand: String,
        value: i64,
        min: i64,
        max: i64,
        step: i64,
    },
    /// A register of another class than the operand takes.
    WrongRegister {
        column: usize,
        operand: String,
        register: String,
        class: String,
    },
    /// A tied operand (read and written in one field) named with another
    /// register than the operand it is tied to.
    Tied {
        column: usize,
        operand: String,
        tied_to: String,
        register: String,
        expected: String,
    },
    /// Two instructions of one bundle in the same slot.
    SlotTwice { slot: String },
    /// No bundle format has this set of slots.
    NoFormat { slots: Vec<String> },
}

impl fmt::Display for IsaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IsaError::Truncated {
                offset,
                needed,
                available,
            } => write!(
                f,
                "byte {offset}: the bundle's size code asks for {needed} bytes, {available} remain"
            ),
            IsaError::UnknownFormat { offset, word } => write!(
                f,
                "byte {offset}: no bundle format has the low bits of {word:#x}"
            ),
            IsaError::UnknownInstruction { slot, bits } => {
                write!(
                    f,
                    "slot {slot}: bits {bits:#x} are no instruction of the slot"
                )
            }
            IsaError::BadOperand {
                instruction,
                operand,
                reason,
            } => {
                write!(f, "{instruction} operand ${operand}: {reason}")
            }
            IsaError::UnknownMnemonic { mnemonic, .. } => {
                write!(f, "unknown instruction `{mnemonic}`")
            }
            IsaError::BadSyntax {
                mnemonic, expected, ..
            } => write!(
                f,
                "invalid operands for `{mnemonic}`; its forms are: {}",
                expected.join(" | ")
            ),
            IsaError::OutOfRange {
                operand,
                value,
                min,
                max,
                step,
                ..
            } => {
                let step = if *step > 1 {
                    format!(" in steps of {step}")
                } else {
                    String::new()
                };
                write!(
                    f,
                    "immediate {value} of ${operand} is out of range [{min}, {max}]{step}"
                )
            }
            IsaError::Tied {
                operand,
                tied_to,
                register,
                expected,
                ..
            } => write!(
                f,
                "register `{register}` must be `{expected}`: ${operand} is tied to ${tied_to} (one field, read and written)"
            ),
            IsaError::WrongRegister {
                operand,
                register,
                class,
                ..
            } => write!(
                f,
                "register `{register}` is not of class {class}, which ${operand} takes"
            ),
            IsaError::SlotTwice { slot } => {
                write!(f, "two instructions of the bundle take the {slot} slot")
            }
            IsaError::NoFormat { slots } => {
                write!(f, "no bundle format holds the slots {}", slots.join(", "))
            }
        }
    }
}

impl std::error::Error for IsaError {}

impl IsaError {
    /// The column (0-based byte) of the text the error is about, if any.
    pub fn column(&self) -> Option<usize> {
        match self {
            IsaError::UnknownMnemonic { column, .. }
            | IsaError::BadSyntax { column, .. }
            | IsaError::OutOfRange { column, .. }
            | IsaError::WrongRegister { column, .. }
            | IsaError::Tied { column, .. } => Some(*column),
            _ => None,
        }
    }

    /// The same error at `column` (operand errors learn theirs late).
    pub(crate) fn at(mut self, at: usize) -> IsaError {
        match &mut self {
            IsaError::UnknownMnemonic { column, .. }
            | IsaError::BadSyntax { column, .. }
            | IsaError::OutOfRange { column, .. }
            | IsaError::WrongRegister { column, .. }
            | IsaError::Tied { column, .. } => *column = at,
            _ => {}
        }
        self
    }
}
