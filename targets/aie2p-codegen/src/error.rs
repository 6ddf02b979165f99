//! What can be wrong: with a machine function as it is built (the
//! caller's error), and with compiling one (an allocation the function
//! makes impossible, a stack that does not fit, or an internal compiler
//! error: an image that would break a silicon rule or a latency).

use crate::class::RegClass;
use crate::function::BlockId;
use crate::hazard::Hazard;
use crate::timing::Untimed;
use loom_aie2p_isa::rules::Violation;
use loom_aie2p_isa::IsaError;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    UnknownOpcode {
        name: String,
    },
    /// An opcode the machine layer does not emit as an instruction, and why.
    UnsupportedOpcode {
        opcode: String,
        reason: String,
    },
    /// A record that cannot stand in for another (`inst_any`), and why.
    NotAlternative {
        opcode: String,
        alternative: String,
        reason: String,
    },
    OperandCount {
        opcode: String,
        expected: Vec<String>,
        given: usize,
    },
    /// A virtual register of a class the operand does not take in full.
    WrongClass {
        opcode: String,
        operand: String,
        class: RegClass,
    },
    /// The operand's field cannot hold the value (a register of another
    /// class, an immediate out of range or off its steps).
    Operand {
        opcode: String,
        operand: String,
        error: Box<IsaError>,
    },
    /// An immediate where a register is taken, or the reverse.
    WrongKind {
        opcode: String,
        operand: String,
        expected: &'static str,
    },
    /// A physical register of an allocated class: those are the allocator's.
    AllocatableRegister {
        opcode: String,
        operand: String,
        register: String,
    },
    /// A part of a register as an output (parts are read only).
    PartialDefinition {
        opcode: String,
        operand: String,
    },
    /// `MachineOperand::PartDef` given to an input (it only defines).
    PartDefinitionRead {
        opcode: String,
        operand: String,
    },
    /// A register without that part (a scalar has no halves).
    NoSuchPart {
        opcode: String,
        operand: String,
        class: RegClass,
    },
    /// A tied output must be a fresh virtual register of the input's class.
    TiedOutput {
        opcode: String,
        operand: String,
    },
    UnknownBlock(BlockId),
    UnknownVReg(u32),
    Terminated(BlockId),
    Unterminated(BlockId),
    /// The entry block takes no parameters (the start-up passes none).
    EntryParameters,
    /// The entry block is entered once, from the start-up (loops start
    /// at a block of their own).
    JumpToEntry(BlockId),
    ArgumentCount {
        from: BlockId,
        to: BlockId,
        expected: usize,
        given: usize,
    },
    ArgumentClass {
        from: BlockId,
        to: BlockId,
        index: usize,
        expected: RegClass,
        given: RegClass,
    },
    /// A branch condition is a scalar.
    ConditionClass(RegClass),
    /// A virtual register defined twice (machine functions are SSA).
    Redefined(u32),
    /// A virtual register used but never defined.
    Undefined(u32),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::UnknownOpcode { name } => write!(f, "no opcode record `{name}`"),
            BuildError::UnsupportedOpcode { opcode, reason } => {
                write!(f, "{opcode} is not emitted as an instruction: {reason}")
            }
            BuildError::NotAlternative {
                opcode,
                alternative,
                reason,
            } => write!(
                f,
                "{alternative} cannot stand in for {opcode}: {reason}"
            ),
            BuildError::OperandCount {
                opcode,
                expected,
                given,
            } => write!(
                f,
                "{opcode} takes {} operands ({}), {given} given",
                expected.len(),
                expected.join(", ")
            ),
            BuildError::WrongClass {
                opcode,
                operand,
                class,
            } => write!(
                f,
                "{opcode} ${operand} does not take every register of class {class}"
            ),
            BuildError::Operand {
                opcode,
                operand,
                error,
            } => write!(f, "{opcode} ${operand}: {error}"),
            BuildError::WrongKind {
                opcode,
                operand,
                expected,
            } => write!(f, "{opcode} ${operand} takes {expected}"),
            BuildError::AllocatableRegister {
                opcode,
                operand,
                register,
            } => write!(
                f,
                "{opcode} ${operand}: {register} belongs to an allocated class; use a virtual register"
            ),
            BuildError::PartialDefinition { opcode, operand } => write!(
                f,
                "{opcode} ${operand} writes a part of a register; a Part is read only (PartDef defines a register by a part)"
            ),
            BuildError::PartDefinitionRead { opcode, operand } => write!(
                f,
                "{opcode} ${operand} is read; a part definition (PartDef) is an output only"
            ),
            BuildError::NoSuchPart {
                opcode,
                operand,
                class,
            } => write!(f, "{opcode} ${operand}: a {class} register has no such part"),
            BuildError::TiedOutput { opcode, operand } => write!(
                f,
                "{opcode} ${operand} is tied to an input: it takes a virtual register of the input's class"
            ),
            BuildError::UnknownBlock(b) => write!(f, "no block {b}"),
            BuildError::UnknownVReg(v) => write!(f, "no virtual register %{v}"),
            BuildError::Terminated(b) => write!(f, "{b} is already terminated"),
            BuildError::Unterminated(b) => write!(f, "{b} has no terminator"),
            BuildError::EntryParameters => write!(f, "the entry block takes no parameters"),
            BuildError::JumpToEntry(b) => write!(
                f,
                "{b} jumps to the entry block, which only the start-up enters"
            ),
            BuildError::ArgumentCount {
                from,
                to,
                expected,
                given,
            } => write!(
                f,
                "{from} passes {given} arguments to {to}, which takes {expected}"
            ),
            BuildError::ArgumentClass {
                from,
                to,
                index,
                expected,
                given,
            } => write!(
                f,
                "{from} passes a {given} as argument {index} of {to}, which takes a {expected}"
            ),
            BuildError::ConditionClass(c) => {
                write!(f, "a branch condition is an eR scalar, not {c}")
            }
            BuildError::Redefined(v) => write!(f, "%{v} is defined twice"),
            BuildError::Undefined(v) => write!(f, "%{v} is used but never defined"),
        }
    }
}

impl std::error::Error for BuildError {}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodegenError {
    Build(BuildError),
    /// regalloc2 refused the function (e.g. a use its definition does not
    /// dominate), with its reason.
    Allocation(String),
    /// The spill frame does not fit the stack region or the spill
    /// instructions' offsets.
    Stack(String),
    /// An internal compiler error: the image would break a silicon rule.
    Rule(Violation),
    /// An internal compiler error: the image reads a value before it is
    /// visible (or another timing hazard).
    Hazard(Hazard),
    /// An internal compiler error: an instruction or bundle did not encode.
    Encoding(IsaError),
    /// An instruction the itineraries do not time (no itinerary, or an
    /// operand without a cycle): it cannot be scheduled.
    Untimed(Untimed),
    /// An internal compiler error of another kind, with what went wrong.
    Internal(String),
    /// The core ELF could not be written.
    Elf(String),
}

impl fmt::Display for CodegenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodegenError::Build(e) => e.fmt(f),
            CodegenError::Allocation(m) => write!(f, "register allocation failed: {m}"),
            CodegenError::Stack(m) => write!(f, "the stack frame does not fit: {m}"),
            CodegenError::Rule(v) => write!(f, "internal compiler error: {v}"),
            CodegenError::Hazard(h) => write!(f, "internal compiler error: {h}"),
            CodegenError::Encoding(e) => write!(f, "internal compiler error: {e}"),
            CodegenError::Untimed(u) => write!(f, "cannot schedule: {u}"),
            CodegenError::Internal(m) => write!(f, "internal compiler error: {m}"),
            CodegenError::Elf(m) => write!(f, "core ELF: {m}"),
        }
    }
}

impl std::error::Error for CodegenError {}

impl From<BuildError> for CodegenError {
    fn from(e: BuildError) -> Self {
        CodegenError::Build(e)
    }
}
