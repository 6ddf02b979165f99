//! Machine IR: a machine function is blocks of instructions over virtual
//! registers of the register classes; each instruction names its opcode
//! record of the instruction tables and may carry a source location. A
//! block ends in a terminator (control transfers are terminators, so the
//! layout decides jumps, fall-throughs and delay slots). Values flowing
//! along edges are block parameters (SSA, as regalloc2 takes it).

use crate::class::{Part, RegClass};
use crate::location::SourceLocation;
use loom_aie2p_isa::Opcode;
use std::fmt;

/// A virtual register of a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VReg {
    pub(crate) index: u32,
    pub(crate) class: RegClass,
}

impl VReg {
    pub fn class(self) -> RegClass {
        self.class
    }
    pub fn index(self) -> u32 {
        self.index
    }
}

impl fmt::Display for VReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}:{}", self.index, self.class)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub(crate) u32);

impl BlockId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for BlockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bb{}", self.0)
    }
}

/// One operand of a machine instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MachineOperand {
    VReg(VReg),
    /// A part of a virtual register (`wl` of an x, `cml` or `bmhh` of a
    /// dm), read only: writing a part would define a register in pieces.
    Part(VReg, Part),
    /// An output that defines the whole virtual register by writing only
    /// this part of it (`vmov bmll, x`, a `vlda` of a bm quarter): the
    /// allocator gives the value a whole register, whose other bits are
    /// unspecified, so only this part is to be read back. A vector<16xf32>
    /// is a quarter of a dm accumulator this way.
    PartDef(VReg, Part),
    /// An output that writes this part of the register holding the second
    /// virtual register and defines the first as that whole register: the
    /// other bits are the second's. A dm accumulator loaded from memory is
    /// four such writes of its quarters (llvm-aie's REG_SEQUENCE of four
    /// `bm` loads); the allocator puts both in one register.
    PartInto(VReg, VReg, Part),
    /// A physical register outside the allocated classes (`sp`, `lc`,
    /// control registers), by its assembly name.
    Phys(String),
    Imm(i64),
}

impl fmt::Display for MachineOperand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MachineOperand::VReg(v) => v.fmt(f),
            MachineOperand::Part(v, p) => write!(f, "{v}.{p}"),
            MachineOperand::PartDef(v, p) => write!(f, "{v}.{p}!"),
            MachineOperand::PartInto(v, from, p) => write!(f, "{v}.{p}!<-{from}"),
            MachineOperand::Phys(r) => f.write_str(r),
            MachineOperand::Imm(i) => write!(f, "#{i}"),
        }
    }
}

/// An instruction: its opcode record and a value for each of its machine
/// operands (by the opcode's operand names: the fields, and tied outputs
/// such as a post-modify's `ptr_out`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineInst {
    pub opcode: &'static Opcode,
    pub operands: Vec<(String, MachineOperand)>,
    pub location: Option<SourceLocation>,
    /// Records the scheduler may issue instead of `opcode`: the same
    /// machine operands and operand timing in another slot (a `vlda`'s
    /// `vldb` form), so it binds the one whose slot is free. Empty when
    /// `opcode` is fixed.
    pub alternatives: Vec<&'static Opcode>,
}

impl MachineInst {
    /// Whether operand `name` is written.
    pub(crate) fn is_output(&self, name: &str) -> bool {
        self.opcode.operand(name).is_some_and(|o| o.output)
    }

    /// The virtual registers it reads: its inputs, the parts it reads, and
    /// the register a `PartInto` writes a part of (its other bits carry
    /// over).
    pub fn reads(&self) -> impl Iterator<Item = VReg> + '_ {
        self.operands
            .iter()
            .filter_map(|(name, value)| match (self.is_output(name), value) {
                (false, MachineOperand::VReg(v) | MachineOperand::Part(v, _))
                | (true, MachineOperand::PartInto(_, v, _)) => Some(*v),
                _ => None,
            })
    }

    /// The virtual registers it defines.
    pub fn defines(&self) -> impl Iterator<Item = VReg> + '_ {
        self.operands
            .iter()
            .filter_map(|(name, value)| match (self.is_output(name), value) {
                (true, MachineOperand::VReg(v))
                | (true, MachineOperand::PartDef(v, _))
                | (true, MachineOperand::PartInto(v, _, _)) => Some(*v),
                _ => None,
            })
    }
}

/// How a block ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Terminator {
    Jump {
        target: BlockId,
        args: Vec<VReg>,
    },
    /// To `taken` when the scalar `condition` is not zero, else to
    /// `otherwise` (`jnz` or `jz`, as the layout suits).
    Branch {
        condition: VReg,
        taken: BlockId,
        taken_args: Vec<VReg>,
        otherwise: BlockId,
        otherwise_args: Vec<VReg>,
    },
    /// The worker's end: `done`.
    Done,
}

impl Terminator {
    /// The virtual registers it reads: the branch condition and the
    /// arguments along its edges.
    pub fn reads(&self) -> Vec<VReg> {
        let mut out = Vec::new();
        if let Terminator::Branch { condition, .. } = self {
            out.push(*condition);
        }
        for (_, args) in self.successors() {
            out.extend_from_slice(args);
        }
        out
    }

    /// The successors with the arguments each edge passes.
    pub fn successors(&self) -> Vec<(BlockId, &[VReg])> {
        match self {
            Terminator::Jump { target, args } => vec![(*target, args.as_slice())],
            Terminator::Branch {
                taken,
                taken_args,
                otherwise,
                otherwise_args,
                ..
            } => vec![
                (*taken, taken_args.as_slice()),
                (*otherwise, otherwise_args.as_slice()),
            ],
            Terminator::Done => vec![],
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub params: Vec<VReg>,
    pub insts: Vec<MachineInst>,
    pub terminator: Terminator,
    pub terminator_location: Option<SourceLocation>,
}

/// A machine function; its entry is block 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineFunction {
    pub name: String,
    pub blocks: Vec<Block>,
    /// The class of each virtual register, by index.
    pub vregs: Vec<RegClass>,
}

impl MachineFunction {
    /// How many times each virtual register is read, by index: operands,
    /// branch conditions and edge arguments.
    pub fn use_counts(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.vregs.len()];
        for block in &self.blocks {
            let reads = block.insts.iter().flat_map(MachineInst::reads);
            for v in reads.chain(block.terminator.reads()) {
                counts[v.index as usize] += 1;
            }
        }
        counts
    }
}

impl fmt::Display for MachineFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "function {}:", self.name)?;
        for (b, block) in self.blocks.iter().enumerate() {
            let params: Vec<String> = block.params.iter().map(|p| p.to_string()).collect();
            writeln!(f, "bb{b}({}):", params.join(", "))?;
            for inst in &block.insts {
                let ops: Vec<String> = inst
                    .operands
                    .iter()
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect();
                let mut name = inst.opcode.name.clone();
                for a in &inst.alternatives {
                    name.push('|');
                    name.push_str(&a.name);
                }
                writeln!(f, "  {name} {}", ops.join(", "))?;
            }
            let list = |args: &[VReg]| {
                args.iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            match &block.terminator {
                Terminator::Jump { target, args } => {
                    writeln!(f, "  jump {target}({})", list(args))?
                }
                Terminator::Branch {
                    condition,
                    taken,
                    taken_args,
                    otherwise,
                    otherwise_args,
                } => writeln!(
                    f,
                    "  branch {condition} ? {taken}({}) : {otherwise}({})",
                    list(taken_args),
                    list(otherwise_args)
                )?,
                Terminator::Done => writeln!(f, "  done")?,
            }
        }
        Ok(())
    }
}
