//! Building a machine function, checking each instruction against its
//! opcode record as it is added: the operand count, each register's class
//! and each immediate's range are checked by the instruction set's own
//! encoder rules, so a bad instruction is a typed error here, never a
//! panic or a wrong encoding later.

use crate::class::{Part, RegClass};
use crate::error::BuildError;
use crate::function::{
    Block, BlockId, MachineFunction, MachineInst, MachineOperand, Terminator, VReg,
};
use crate::location::SourceLocation;
use loom_aie2p_isa::{isa, Opcode, Operand, OperandKind, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The operands a machine instruction gives values for: those with a
/// field, and tied outputs (a post-modify's `ptr_out`).
pub(crate) fn machine_operands(opcode: &Opcode) -> Vec<&Operand> {
    opcode
        .operands
        .iter()
        .filter(|o| !o.bits.is_empty() || (o.output && o.tied_to.is_some()))
        .collect()
}

/// Why the machine layer does not take `opcode` as an instruction.
fn unsupported(opcode: &Opcode) -> Option<String> {
    if opcode.has_delay_slot {
        return Some("control transfers are terminators (Terminator::Jump, Branch)".into());
    }
    if opcode.mnemonic == "done" {
        return Some("the worker's end is Terminator::Done".into());
    }
    if opcode.mnemonic.starts_with("nop") {
        return Some("the scheduler places NOPs".into());
    }
    if isa().itinerary(opcode).is_none() {
        return Some("it has no itinerary, so it cannot be scheduled".into());
    }
    if let Some(o) = opcode
        .operands
        .iter()
        .find(|o| o.bits.is_empty() && !(o.output && o.tied_to.is_some()))
    {
        return Some(format!(
            "${} is a fixed or derived register the allocator is not told of",
            o.name
        ));
    }
    let isa = isa();
    let implicit = opcode.implicit_defs.iter().chain(&opcode.implicit_uses);
    for record in implicit {
        let asm = isa
            .register(record)
            .map_or(record.as_str(), |r| r.asm.as_str());
        if RegClass::of_register(asm).is_some() {
            return Some(format!(
                "it implicitly uses {asm}, a register of an allocated class"
            ));
        }
    }
    None
}

/// The opcode record named `name` (an index by name: selection names a
/// record for every instruction it builds).
fn record(name: &str) -> Result<&'static Opcode, BuildError> {
    static BY_NAME: OnceLock<HashMap<&'static str, &'static Opcode>> = OnceLock::new();
    let by_name =
        BY_NAME.get_or_init(|| isa().opcodes.iter().map(|o| (o.name.as_str(), o)).collect());
    by_name
        .get(name)
        .copied()
        .ok_or_else(|| BuildError::UnknownOpcode {
            name: name.to_string(),
        })
}

fn is_load(opcode: &Opcode) -> bool {
    ["lda", "vlda", "vldb"]
        .iter()
        .any(|p| opcode.mnemonic.starts_with(p))
}

/// Why `b` cannot stand in for `a` (none when it can): the scheduler
/// computes dependences once per instruction, so both must read and
/// write the same operands at the same cycles, through the same bypasses,
/// and access memory at the same cycles; only the slot and the units
/// held may differ.
pub(crate) fn differs(a: &Opcode, b: &Opcode) -> Option<String> {
    let shape = |o: &Opcode| -> Vec<(String, bool, Option<String>, bool)> {
        machine_operands(o)
            .into_iter()
            .map(|p| {
                let immediate = p.kind == OperandKind::Immediate;
                (p.name.clone(), p.output, p.tied_to.clone(), immediate)
            })
            .collect()
    };
    if shape(a) != shape(b) {
        return Some("its machine operands differ".into());
    }
    if a.implicit_defs != b.implicit_defs || a.implicit_uses != b.implicit_uses {
        return Some("its implicit registers differ".into());
    }
    let isa = isa();
    let (Some(x), Some(y)) = (isa.itinerary(a), isa.itinerary(b)) else {
        return Some("one of them has no itinerary".into());
    };
    let timing = |i: &loom_aie2p_isa::schedule::Itinerary| {
        let mut cycles: Vec<(String, u32, Option<String>)> = i
            .operand_cycles()
            .map(|(n, c)| (n.to_string(), c, i.bypass(n).map(str::to_string)))
            .collect();
        cycles.sort();
        (cycles, i.memory_cycles.clone())
    };
    if timing(x) != timing(y) {
        return Some("its operands or memory access have other cycles".into());
    }
    None
}

/// Whether `a`'s and `b`'s fields for operand `name` take the same
/// registers.
fn same_registers(a: &Opcode, b: &Opcode, name: &str) -> bool {
    let (Some(x), Some(y)) = (a.field_of(name), b.field_of(name)) else {
        return false;
    };
    if x.kind == OperandKind::Immediate || y.kind == OperandKind::Immediate {
        return x.kind == y.kind && x.class == y.class;
    }
    if x.class == y.class {
        return true;
    }
    isa().registers().all(|(_, r)| {
        let v = Value::Register(r.asm.clone());
        x.admits(&v).is_ok() == y.admits(&v).is_ok()
    })
}

/// The same load in the other load slot (`vldb` for a `vlda` and back):
/// the record there with the swapped mnemonic and the same assembly, whose
/// fields take the same registers and immediates, and that `differs`
/// does not refuse. Found once per record.
fn load_twin(opcode: &Opcode) -> Option<&'static Opcode> {
    static TWINS: OnceLock<HashMap<String, &'static Opcode>> = OnceLock::new();
    let twins = TWINS.get_or_init(|| {
        let isa = isa();
        let mut out = HashMap::new();
        for a in isa.opcodes.iter().filter(|o| o.slot == "Lda") {
            let Some(rest) = a.mnemonic.strip_prefix("vlda") else {
                continue;
            };
            let candidates: Vec<&'static Opcode> = isa
                .opcodes_named(&format!("vldb{rest}"))
                .filter(|b| b.slot == "Ldb" && b.asm_args == a.asm_args)
                .filter(|b| differs(a, b).is_none())
                .filter(|b| {
                    machine_operands(a)
                        .iter()
                        .all(|p| same_registers(a, b, &p.name))
                })
                .collect();
            // Only an unambiguous twin.
            if let [b] = candidates.as_slice() {
                out.insert(a.name.clone(), *b);
                out.insert(b.name.clone(), a);
            }
        }
        out
    });
    twins.get(&opcode.name).copied()
}

struct PendingBlock {
    params: Vec<VReg>,
    insts: Vec<MachineInst>,
    terminator: Option<(Terminator, Option<SourceLocation>)>,
}

pub struct FunctionBuilder {
    name: String,
    blocks: Vec<PendingBlock>,
    vregs: Vec<RegClass>,
    defined: Vec<bool>,
}

impl FunctionBuilder {
    /// Whether the immediate operand `operand` of the opcode record
    /// `opcode` holds `value` (in its range and on its steps): how far an
    /// access may reach from its pointer (`vlda x, [p, #imm]`).
    pub fn admits_immediate(opcode: &str, operand: &str, value: i64) -> bool {
        record(opcode).is_ok_and(|o| {
            o.operand(operand).is_some_and(|field| {
                field.kind == OperandKind::Immediate
                    && field.admits(&Value::Immediate(value)).is_ok()
            })
        })
    }

    /// A function named `name`; its first block is the entry.
    pub fn new(name: impl Into<String>) -> FunctionBuilder {
        FunctionBuilder {
            name: name.into(),
            blocks: Vec::new(),
            vregs: Vec::new(),
            defined: Vec::new(),
        }
    }

    pub fn block(&mut self) -> BlockId {
        self.blocks.push(PendingBlock {
            params: Vec::new(),
            insts: Vec::new(),
            terminator: None,
        });
        BlockId(self.blocks.len() as u32 - 1)
    }

    pub fn vreg(&mut self, class: RegClass) -> VReg {
        self.vregs.push(class);
        self.defined.push(false);
        VReg {
            index: self.vregs.len() as u32 - 1,
            class,
        }
    }

    /// A new parameter of `block` (defined where the block starts).
    pub fn param(&mut self, block: BlockId, class: RegClass) -> Result<VReg, BuildError> {
        if block.0 == 0 {
            return Err(BuildError::EntryParameters);
        }
        self.pending(block)?;
        let v = self.vreg(class);
        self.defined[v.index as usize] = true;
        self.pending(block)?.params.push(v);
        Ok(v)
    }

    fn pending(&mut self, block: BlockId) -> Result<&mut PendingBlock, BuildError> {
        self.blocks
            .get_mut(block.index())
            .ok_or(BuildError::UnknownBlock(block))
    }

    fn known(&self, v: VReg) -> Result<(), BuildError> {
        match self.vregs.get(v.index as usize) {
            Some(&c) if c == v.class => Ok(()),
            _ => Err(BuildError::UnknownVReg(v.index)),
        }
    }

    /// Append an instruction of opcode record `opcode` to `block`, with
    /// values for its machine operands in the record's operand order.
    pub fn inst(
        &mut self,
        block: BlockId,
        opcode: &str,
        operands: &[MachineOperand],
        location: Option<SourceLocation>,
    ) -> Result<(), BuildError> {
        self.inst_any(block, &[opcode], operands, location)
    }

    /// Append an instruction the scheduler may issue as any of `opcodes`
    /// (record names, the first preferred): forms of one operation in
    /// different slots, with the same machine operands and the same
    /// operand and memory timing (`load` finds a load's forms itself).
    /// The scheduler binds the first whose slot and units are free where
    /// it places the instruction; the image holds that record.
    pub fn inst_any(
        &mut self,
        block: BlockId,
        opcodes: &[&str],
        operands: &[MachineOperand],
        location: Option<SourceLocation>,
    ) -> Result<(), BuildError> {
        let mut records: Vec<&'static Opcode> = Vec::new();
        for &name in opcodes {
            let record = record(name)?;
            if !records.iter().any(|r| r.name == record.name) {
                records.push(record);
            }
        }
        let Some((&first, others)) = records.split_first() else {
            return Err(BuildError::UnknownOpcode {
                name: String::new(),
            });
        };
        for other in others {
            if let Some(reason) = differs(first, other) {
                return Err(BuildError::NotAlternative {
                    opcode: first.name.clone(),
                    alternative: other.name.clone(),
                    reason,
                });
            }
        }
        self.add(block, first, others.to_vec(), operands, location)
    }

    /// Append a load that issues in whichever load slot is free: `opcode`
    /// (a `vlda`, `vldb` or `lda` record) and, when the other load slot
    /// has the same load (the `vldb` form of a `vlda`: same operands,
    /// registers and timing), that form too. Which one the image holds is
    /// the scheduler's choice.
    pub fn load(
        &mut self,
        block: BlockId,
        opcode: &str,
        operands: &[MachineOperand],
        location: Option<SourceLocation>,
    ) -> Result<(), BuildError> {
        let first = record(opcode)?;
        if !is_load(first) {
            return Err(BuildError::UnsupportedOpcode {
                opcode: opcode.to_string(),
                reason: "it is not a load (lda, vlda, vldb)".into(),
            });
        }
        let others: Vec<&'static Opcode> = load_twin(first).into_iter().collect();
        self.add(block, first, others, operands, location)
    }

    fn add(
        &mut self,
        block: BlockId,
        record: &'static Opcode,
        alternatives: Vec<&'static Opcode>,
        operands: &[MachineOperand],
        location: Option<SourceLocation>,
    ) -> Result<(), BuildError> {
        let opcode = record.name.as_str();
        for r in std::iter::once(record).chain(alternatives.iter().copied()) {
            if let Some(reason) = unsupported(r) {
                return Err(BuildError::UnsupportedOpcode {
                    opcode: r.name.clone(),
                    reason,
                });
            }
        }
        if self.pending(block)?.terminator.is_some() {
            return Err(BuildError::Terminated(block));
        }
        let wanted = machine_operands(record);
        if wanted.len() != operands.len() {
            return Err(BuildError::OperandCount {
                opcode: opcode.to_string(),
                expected: wanted.iter().map(|o| o.name.clone()).collect(),
                given: operands.len(),
            });
        }
        let mut named = Vec::new();
        for (operand, value) in wanted.iter().zip(operands) {
            self.check(record, operand, value, &wanted, operands)?;
            named.push((operand.name.clone(), value.clone()));
        }
        // Each alternative takes the same values (its fields may differ).
        for alternative in &alternatives {
            let theirs = machine_operands(alternative);
            for (operand, value) in theirs.iter().zip(operands) {
                self.check(alternative, operand, value, &theirs, operands)?;
            }
        }
        // Definitions last: a failed check leaves the function unchanged.
        let mut defined: Vec<u32> = Vec::new();
        for (operand, value) in wanted.iter().zip(operands) {
            if let (
                true,
                MachineOperand::VReg(v)
                | MachineOperand::PartDef(v, _)
                | MachineOperand::PartInto(v, _, _),
            ) = (operand.output, value)
            {
                if self.defined[v.index as usize] || defined.contains(&v.index) {
                    return Err(BuildError::Redefined(v.index));
                }
                defined.push(v.index);
            }
        }
        for v in defined {
            self.defined[v as usize] = true;
        }
        self.pending(block)?.insts.push(MachineInst {
            opcode: record,
            operands: named,
            location,
            alternatives,
        });
        Ok(())
    }

    fn check(
        &self,
        opcode: &Opcode,
        operand: &'static Operand,
        value: &MachineOperand,
        all: &[&Operand],
        values: &[MachineOperand],
    ) -> Result<(), BuildError> {
        let name = || (opcode.name.clone(), operand.name.clone());
        let wrong_kind = |expected| {
            let (opcode, operand) = name();
            BuildError::WrongKind {
                opcode,
                operand,
                expected,
            }
        };
        let field_error = |error| {
            let (opcode, operand) = name();
            BuildError::Operand {
                opcode,
                operand,
                error: Box::new(error),
            }
        };
        if let Some(input) = operand.tied_to.as_deref().filter(|_| operand.output) {
            // The output lands where the input was: same class, fresh vreg.
            let source = all.iter().position(|o| o.name == input).map(|i| &values[i]);
            return match (value, source) {
                (MachineOperand::VReg(out), Some(MachineOperand::VReg(inp)))
                    if out.class == inp.class =>
                {
                    self.known(*out)
                }
                _ => {
                    let (opcode, operand) = name();
                    Err(BuildError::TiedOutput { opcode, operand })
                }
            };
        }
        match (&operand.kind, value) {
            (OperandKind::Immediate, MachineOperand::Imm(i)) => {
                operand.admits(&Value::Immediate(*i)).map_err(field_error)
            }
            (OperandKind::Immediate, _) => Err(wrong_kind("an immediate")),
            (_, MachineOperand::Imm(_)) => Err(wrong_kind("a register")),
            (_, MachineOperand::Phys(register)) => {
                if RegClass::of_register(register).is_some() {
                    let (opcode, operand) = name();
                    return Err(BuildError::AllocatableRegister {
                        opcode,
                        operand,
                        register: register.clone(),
                    });
                }
                operand
                    .admits(&Value::Register(register.clone()))
                    .map_err(field_error)
            }
            (
                _,
                MachineOperand::Part(v, part)
                | MachineOperand::PartDef(v, part)
                | MachineOperand::PartInto(v, _, part),
            ) => {
                self.known(*v)?;
                if let MachineOperand::PartInto(_, from, _) = value {
                    self.known(*from)?;
                    if from.class != v.class {
                        let (opcode, operand) = name();
                        return Err(BuildError::TiedOutput { opcode, operand });
                    }
                }
                let (opcode, operand_name) = name();
                let defines = matches!(
                    value,
                    MachineOperand::PartDef(..) | MachineOperand::PartInto(..)
                );
                if operand.output != defines {
                    return Err(if defines {
                        BuildError::PartDefinitionRead {
                            opcode,
                            operand: operand_name,
                        }
                    } else {
                        BuildError::PartialDefinition {
                            opcode,
                            operand: operand_name,
                        }
                    });
                }
                // Every register of the class has the part, and the field
                // takes every such part.
                if takes_class(operand, v.class, Some(*part)) {
                    Ok(())
                } else {
                    Err(BuildError::NoSuchPart {
                        opcode,
                        operand: operand_name,
                        class: v.class,
                    })
                }
            }
            (_, MachineOperand::VReg(v)) => {
                self.known(*v)?;
                // The allocator may pick any register of the class.
                if takes_class(operand, v.class, None) {
                    Ok(())
                } else {
                    let (opcode, operand) = name();
                    Err(BuildError::WrongClass {
                        opcode,
                        operand,
                        class: v.class,
                    })
                }
            }
        }
    }

    /// End `block` with `terminator`.
    pub fn terminate(
        &mut self,
        block: BlockId,
        terminator: Terminator,
        location: Option<SourceLocation>,
    ) -> Result<(), BuildError> {
        if self.pending(block)?.terminator.is_some() {
            return Err(BuildError::Terminated(block));
        }
        if let Terminator::Branch { condition, .. } = &terminator {
            self.known(*condition)?;
            if condition.class != RegClass::Scalar {
                return Err(BuildError::ConditionClass(condition.class));
            }
        }
        for (target, args) in terminator.successors() {
            let params = &self
                .blocks
                .get(target.index())
                .ok_or(BuildError::UnknownBlock(target))?
                .params;
            if target.0 == 0 {
                return Err(BuildError::JumpToEntry(block));
            }
            if params.len() != args.len() {
                return Err(BuildError::ArgumentCount {
                    from: block,
                    to: target,
                    expected: params.len(),
                    given: args.len(),
                });
            }
            for (index, (p, a)) in params.iter().zip(args).enumerate() {
                self.known(*a)?;
                if p.class != a.class {
                    return Err(BuildError::ArgumentClass {
                        from: block,
                        to: target,
                        index,
                        expected: p.class,
                        given: a.class,
                    });
                }
            }
        }
        self.pending(block)?.terminator = Some((terminator, location));
        Ok(())
    }

    /// The function, once every block is terminated and every used
    /// virtual register defined.
    pub fn finish(self) -> Result<MachineFunction, BuildError> {
        let mut blocks = Vec::new();
        for (b, pending) in self.blocks.into_iter().enumerate() {
            let (terminator, terminator_location) = pending
                .terminator
                .ok_or(BuildError::Unterminated(BlockId(b as u32)))?;
            blocks.push(Block {
                params: pending.params,
                insts: pending.insts,
                terminator,
                terminator_location,
            });
        }
        if blocks.is_empty() {
            return Err(BuildError::UnknownBlock(BlockId(0)));
        }
        let function = MachineFunction {
            name: self.name,
            blocks,
            vregs: self.vregs,
        };
        for v in uses(&function) {
            if !self.defined[v.index as usize] {
                return Err(BuildError::Undefined(v.index));
            }
        }
        Ok(function)
    }
}

/// Whether `operand`'s field takes every register of `class` (or that part
/// of each). Asked for every register operand built, and each answer
/// encodes all the class's registers, so it is kept: a 32-core worker set
/// spent a third of its compile here.
fn takes_class(operand: &'static Operand, class: RegClass, part: Option<Part>) -> bool {
    type Key = (usize, RegClass, Option<Part>);
    thread_local! {
        static TAKEN: RefCell<HashMap<Key, bool>> = RefCell::new(HashMap::new());
    }
    let key = (operand as *const Operand as usize, class, part);
    if let Some(known) = TAKEN.with(|t| t.borrow().get(&key).copied()) {
        return known;
    }
    let taken = class.registers().into_iter().all(|r| match part {
        Some(part) => part
            .of(r)
            .is_some_and(|p| operand.admits(&Value::Register(p)).is_ok()),
        None => operand.admits(&Value::Register(r.to_string())).is_ok(),
    });
    TAKEN.with(|t| t.borrow_mut().insert(key, taken));
    taken
}

/// Every virtual register the function reads.
fn uses(function: &MachineFunction) -> Vec<VReg> {
    let mut out = Vec::new();
    for block in &function.blocks {
        for inst in &block.insts {
            out.extend(inst.reads());
        }
        out.extend(block.terminator.reads());
    }
    out
}
