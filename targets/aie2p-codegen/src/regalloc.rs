//! Register allocation with regalloc2 (Cranelift's allocator): the
//! machine function is handed to it as SSA with block parameters, the
//! critical edges split first, and the allocations, moves and spills it
//! returns are written back as AIE2P instructions over physical registers.
//!
//! regalloc2 knows three register classes; AIE2P has five, which share no
//! registers. So it runs twice over the same instructions: the scalars,
//! pointers and modifiers once, the vectors and accumulators once, each
//! run seeing only its classes' operands. Spill slots are 4-byte words
//! (a vector takes 16, an accumulator 64), in one frame below the stack pointer, which
//! the start-up sets (the AIE2P stack grows upward; spills address
//! `[sp, #-offset]`).

use crate::builder::machine_operands;
use crate::class::{Part, RegClass};
use crate::error::CodegenError;
use crate::function::{BlockId, MachineFunction, MachineInst, MachineOperand, Terminator, VReg};
use crate::location::SourceLocation;
use crate::scheduler::Pending;
use loom_aie2p_isa::{isa, Instruction, Opcode, Value};
use regalloc2 as ra;
use std::collections::BTreeMap;

/// How a block of the allocated function ends (blocks by layout index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Exit {
    Jump(usize),
    Branch {
        condition: String,
        taken: usize,
        otherwise: usize,
    },
    Done,
}

#[derive(Debug, Clone)]
pub(crate) struct AllocatedBlock {
    /// The machine function's block, or none for a split edge.
    pub origin: Option<BlockId>,
    pub insts: Vec<Pending>,
    pub exit: Exit,
    pub exit_location: Option<SourceLocation>,
}

#[derive(Debug, Clone)]
pub(crate) struct Allocated {
    pub blocks: Vec<AllocatedBlock>,
    /// Bytes of spill slots below the stack pointer (a multiple of 64).
    pub frame_bytes: u32,
}

/// Bytes per regalloc2 spill slot unit.
const SLOT_BYTES: u32 = 4;
/// The vector classes' spill alignment ([sp, #imm] steps of 64).
const FRAME_ALIGN: u32 = 64;

/// The machine function with its critical edges split, blocks in layout
/// order (each split edge right after its source).
struct Cfg<'f> {
    blocks: Vec<CfgBlock<'f>>,
}

struct CfgBlock<'f> {
    origin: Option<BlockId>,
    params: Vec<VReg>,
    insts: &'f [MachineInst],
    /// Successors with the arguments passed.
    succs: Vec<(usize, Vec<VReg>)>,
    preds: Vec<usize>,
    condition: Option<VReg>,
    exit_location: Option<SourceLocation>,
}

fn split_critical_edges(function: &MachineFunction) -> Cfg<'_> {
    let mut pred_count = vec![0usize; function.blocks.len()];
    for block in &function.blocks {
        for (target, _) in block.terminator.successors() {
            pred_count[target.index()] += 1;
        }
    }
    let critical = |from: &crate::function::Block, to: BlockId| {
        from.terminator.successors().len() > 1 && pred_count[to.index()] > 1
    };
    // Layout indices first: each block, then its split edges.
    let mut index = Vec::new();
    let mut next = 0;
    for block in &function.blocks {
        index.push(next);
        next += 1 + block
            .terminator
            .successors()
            .iter()
            .filter(|(to, _)| critical(block, *to))
            .count();
    }
    let mut blocks: Vec<CfgBlock> = Vec::new();
    for (b, block) in function.blocks.iter().enumerate() {
        let me = blocks.len();
        blocks.push(CfgBlock {
            origin: Some(BlockId(b as u32)),
            params: block.params.clone(),
            insts: &block.insts,
            succs: Vec::new(),
            preds: Vec::new(),
            condition: match &block.terminator {
                Terminator::Branch { condition, .. } => Some(*condition),
                _ => None,
            },
            exit_location: block.terminator_location.clone(),
        });
        for (to, args) in block.terminator.successors() {
            let target = index[to.index()];
            if critical(block, to) {
                let edge = blocks.len();
                blocks.push(CfgBlock {
                    origin: None,
                    params: Vec::new(),
                    insts: &[],
                    succs: vec![(target, args.to_vec())],
                    preds: Vec::new(),
                    condition: None,
                    exit_location: block.terminator_location.clone(),
                });
                blocks[me].succs.push((edge, Vec::new()));
            } else {
                blocks[me].succs.push((target, args.to_vec()));
            }
        }
    }
    let edges: Vec<(usize, usize)> = blocks
        .iter()
        .enumerate()
        .flat_map(|(b, block)| block.succs.iter().map(move |(to, _)| (b, *to)))
        .collect();
    for (from, to) in edges {
        blocks[to].preds.push(from);
    }
    Cfg { blocks }
}

/// Which regalloc2 class a class takes in each of the two runs.
fn run_class(run: usize, class: RegClass) -> Option<ra::RegClass> {
    match (run, class) {
        (0, RegClass::Scalar) | (1, RegClass::Vector) => Some(ra::RegClass::Int),
        (0, RegClass::Pointer) | (1, RegClass::Accumulator) => Some(ra::RegClass::Float),
        (0, RegClass::Modifier) => Some(ra::RegClass::Vector),
        _ => None,
    }
}

fn class_of_run(run: usize, class: ra::RegClass) -> RegClass {
    RegClass::ALL
        .into_iter()
        .find(|c| run_class(run, *c) == Some(class))
        .unwrap_or(RegClass::Scalar)
}

/// One run's view of the function, as regalloc2's `Function`.
struct View {
    ranges: Vec<ra::InstRange>,
    succs: Vec<Vec<ra::Block>>,
    preds: Vec<Vec<ra::Block>>,
    params: Vec<Vec<ra::VReg>>,
    branch_args: Vec<Vec<Vec<ra::VReg>>>,
    operands: Vec<Vec<ra::Operand>>,
    /// Per instruction, the machine operand index of each regalloc2 operand.
    operand_sources: Vec<Vec<usize>>,
    rets: Vec<bool>,
    branches: Vec<bool>,
    num_vregs: usize,
    vector_run: bool,
}

fn ra_vreg(run: usize, v: VReg) -> Option<ra::VReg> {
    run_class(run, v.class).map(|c| ra::VReg::new(v.index as usize, c))
}

/// The input an accumulator output should land on: the first whole
/// accumulator input read only here (it dies here, so sharing its
/// register costs no move). An accumulation chain then stays in one dm
/// register through the loop and its back edge, which regalloc2 does not
/// find by itself: with five dm registers and four chains rotating
/// through a loop it split and spilled one (regalloc2 has no hints, only
/// this reuse constraint).
fn accumulates_into(inst: &MachineInst, sources: &[usize], uses: &[u32]) -> Option<usize> {
    sources.iter().position(|&i| {
        let (name, value) = &inst.operands[i];
        matches!(value, MachineOperand::VReg(v)
            if v.class == RegClass::Accumulator
                && !inst.is_output(name)
                && uses[v.index as usize] == 1)
    })
}

fn view(cfg: &Cfg, function: &MachineFunction, run: usize, uses: &[u32]) -> View {
    let mut v = View {
        ranges: Vec::new(),
        succs: Vec::new(),
        preds: Vec::new(),
        params: Vec::new(),
        branch_args: Vec::new(),
        operands: Vec::new(),
        operand_sources: Vec::new(),
        rets: Vec::new(),
        branches: Vec::new(),
        num_vregs: function.vregs.len(),
        vector_run: run == 1,
    };
    for block in &cfg.blocks {
        let first = v.operands.len();
        for inst in block.insts {
            // This run's operands first, so a tied output can name its
            // input's place whichever comes first in the record.
            let mut sources = Vec::new();
            let mut regs = Vec::new();
            // A part written into a register (PartInto) is two operands:
            // the use of the register it keeps, then its whole definition
            // in the same register.
            let mut kept: Vec<Option<usize>> = Vec::new();
            for (i, (_, value)) in inst.operands.iter().enumerate() {
                let vreg = match value {
                    MachineOperand::VReg(v)
                    | MachineOperand::Part(v, _)
                    | MachineOperand::PartDef(v, _) => v,
                    MachineOperand::PartInto(v, from, _) => {
                        if let (Some(r), Some(f)) = (ra_vreg(run, *v), ra_vreg(run, *from)) {
                            sources.push(i);
                            regs.push(f);
                            kept.push(None);
                            sources.push(i);
                            regs.push(r);
                            kept.push(Some(sources.len() - 2));
                        }
                        continue;
                    }
                    _ => continue,
                };
                if let Some(r) = ra_vreg(run, *vreg) {
                    sources.push(i);
                    regs.push(r);
                    kept.push(None);
                }
            }
            let mut operands = Vec::new();
            for (k, (&i, &r)) in sources.iter().zip(&regs).enumerate() {
                if let MachineOperand::PartInto(..) = inst.operands[i].1 {
                    operands.push(match kept[k] {
                        Some(use_index) => ra::Operand::reg_reuse_def(r, use_index),
                        None => ra::Operand::reg_use(r),
                    });
                    continue;
                }
                let name = &inst.operands[i].0;
                let operand = inst.opcode.operand(name);
                let tied = operand
                    .and_then(|o| o.tied_to.as_deref().filter(|_| o.output))
                    .and_then(|input| {
                        inst.operands
                            .iter()
                            .position(|(n, _)| n == input)
                            .and_then(|mi| sources.iter().position(|&s| s == mi))
                    });
                let accumulated = match inst.operands[i].1 {
                    MachineOperand::VReg(v) if v.class == RegClass::Accumulator => {
                        accumulates_into(inst, &sources, uses)
                    }
                    _ => None,
                };
                operands.push(match (inst.is_output(name), tied.or(accumulated)) {
                    (true, Some(use_index)) => ra::Operand::reg_reuse_def(r, use_index),
                    (true, None) => ra::Operand::reg_def(r),
                    (false, _) => ra::Operand::reg_use(r),
                });
            }
            v.operands.push(operands);
            v.operand_sources.push(sources);
            v.rets.push(false);
            v.branches.push(false);
        }
        // The terminator.
        let condition: Vec<ra::Operand> = block
            .condition
            .and_then(|c| ra_vreg(run, c))
            .map(ra::Operand::reg_use)
            .into_iter()
            .collect();
        v.operand_sources.push(vec![usize::MAX; condition.len()]);
        v.operands.push(condition);
        v.rets.push(block.succs.is_empty());
        v.branches.push(!block.succs.is_empty());
        v.ranges.push(ra::InstRange::new(
            ra::Inst::new(first),
            ra::Inst::new(v.operands.len()),
        ));
        v.succs.push(
            block
                .succs
                .iter()
                .map(|(s, _)| ra::Block::new(*s))
                .collect(),
        );
        v.preds
            .push(block.preds.iter().map(|p| ra::Block::new(*p)).collect());
        v.params.push(
            block
                .params
                .iter()
                .filter_map(|p| ra_vreg(run, *p))
                .collect(),
        );
        v.branch_args.push(
            block
                .succs
                .iter()
                .map(|(_, args)| args.iter().filter_map(|a| ra_vreg(run, *a)).collect())
                .collect(),
        );
    }
    v
}

impl ra::Function for View {
    fn num_insts(&self) -> usize {
        self.operands.len()
    }
    fn num_blocks(&self) -> usize {
        self.ranges.len()
    }
    fn entry_block(&self) -> ra::Block {
        ra::Block::new(0)
    }
    fn block_insns(&self, block: ra::Block) -> ra::InstRange {
        self.ranges[block.index()]
    }
    fn block_succs(&self, block: ra::Block) -> &[ra::Block] {
        &self.succs[block.index()]
    }
    fn block_preds(&self, block: ra::Block) -> &[ra::Block] {
        &self.preds[block.index()]
    }
    fn block_params(&self, block: ra::Block) -> &[ra::VReg] {
        &self.params[block.index()]
    }
    fn is_ret(&self, insn: ra::Inst) -> bool {
        self.rets[insn.index()]
    }
    fn is_branch(&self, insn: ra::Inst) -> bool {
        self.branches[insn.index()]
    }
    fn branch_blockparams(&self, block: ra::Block, _insn: ra::Inst, succ: usize) -> &[ra::VReg] {
        &self.branch_args[block.index()][succ]
    }
    fn inst_operands(&self, insn: ra::Inst) -> &[ra::Operand] {
        &self.operands[insn.index()]
    }
    fn inst_clobbers(&self, _insn: ra::Inst) -> ra::PRegSet {
        ra::PRegSet::empty()
    }
    fn num_vregs(&self) -> usize {
        self.num_vregs
    }
    fn spillslot_size(&self, class: ra::RegClass) -> usize {
        let run = usize::from(self.vector_run);
        (class_of_run(run, class).spill_bytes() / SLOT_BYTES) as usize
    }
}

/// The registers the allocator may use: caller-saved first (a worker
/// calls nothing, so nothing needs saving), callee-saved after;
/// `limit` keeps only the first registers of each class.
fn machine_env(run: usize, limit: Option<usize>) -> ra::MachineEnv {
    let mut preferred = [ra::PRegSet::empty(); 3];
    let mut other = [ra::PRegSet::empty(); 3];
    for class in RegClass::ALL {
        let Some(rc) = run_class(run, class) else {
            continue;
        };
        let names = class.registers();
        let mut order: Vec<usize> = (0..names.len())
            .filter(|&i| !class.callee_saved().contains(&names[i]))
            .collect();
        order.extend((0..names.len()).filter(|&i| class.callee_saved().contains(&names[i])));
        order.truncate(limit.unwrap_or(usize::MAX));
        for i in order {
            let preg = ra::PReg::new(i, rc);
            if class.callee_saved().contains(&names[i]) {
                other[rc as usize].add(preg);
            } else {
                preferred[rc as usize].add(preg);
            }
        }
    }
    ra::MachineEnv {
        preferred_regs_by_class: preferred,
        non_preferred_regs_by_class: other,
        scratch_by_class: [None; 3],
        fixed_stack_slots: vec![],
    }
}

fn describe(error: ra::RegAllocError) -> String {
    match error {
        ra::RegAllocError::SSA(v, inst) => format!(
            "%{} is used where its definition does not reach (instruction {})",
            v.vreg(),
            inst.index()
        ),
        ra::RegAllocError::TooManyLiveRegs => {
            "more values must be in registers at once than the classes hold".into()
        }
        other => format!("{other:?}"),
    }
}

fn opcode(name: &str) -> Result<&'static Opcode, CodegenError> {
    isa()
        .opcodes
        .iter()
        .find(|o| o.name == name)
        .ok_or_else(|| CodegenError::Internal(format!("no opcode record {name}")))
}

/// A move between two allocations: where a value is, where it goes.
#[derive(Debug, Clone, Copy)]
enum Place {
    Register(RegClass, usize),
    /// A spill slot's byte offset from the frame's base.
    Slot(u32),
}

fn place(run: usize, alloc: ra::Allocation, slot_base: u32) -> Result<Place, CodegenError> {
    if let Some(preg) = alloc.as_reg() {
        return Ok(Place::Register(
            class_of_run(run, preg.class()),
            preg.hw_enc(),
        ));
    }
    if let Some(slot) = alloc.as_stack() {
        return Ok(Place::Slot(slot_base + slot.index() as u32 * SLOT_BYTES));
    }
    Err(CodegenError::Internal(
        "regalloc2 gave no allocation".into(),
    ))
}

fn register_name(class: RegClass, index: usize) -> Result<String, CodegenError> {
    class
        .registers()
        .get(index)
        .map(|r| r.to_string())
        .ok_or_else(|| CodegenError::Internal(format!("{class} has no register {index}")))
}

/// The instructions that move `from` to `to` (`frame` bytes below sp):
/// one, but an accumulator goes to and from its slot a quarter at a time
/// (the spill forms take 512-bit `bm` registers).
fn move_instructions(from: Place, to: Place, frame: u32) -> Result<Vec<Instruction>, CodegenError> {
    let offset = |slot: u32| i64::from(slot) - i64::from(frame);
    let quarters = [Part::LowLow, Part::LowHigh, Part::HighLow, Part::HighHigh];
    let part = |register: String, p: Part| {
        p.of(&register)
            .ok_or_else(|| CodegenError::Internal(format!("{register} has no part {p}")))
    };
    let mut moves: Vec<(&str, Vec<(&str, Value)>)> = Vec::new();
    match (from, to) {
        (Place::Register(class, f), Place::Register(_, t)) => {
            let (record, source) = match class {
                RegClass::Vector => ("VMOV_alu_mv_mv_x", "src"),
                RegClass::Accumulator => ("VMOV_D", "acc1"),
                _ => ("MOV_alu_mv_mv_mv_scl", "src"),
            };
            moves.push((
                record,
                vec![
                    ("dst", Value::Register(register_name(class, t)?)),
                    (source, Value::Register(register_name(class, f)?)),
                ],
            ));
        }
        (Place::Register(RegClass::Accumulator, f), Place::Slot(slot)) => {
            let register = register_name(RegClass::Accumulator, f)?;
            for (k, &q) in quarters.iter().enumerate() {
                moves.push((
                    "VST_dmx_sts_bm_spill",
                    vec![
                        ("src", Value::Register(part(register.clone(), q)?)),
                        ("imm", Value::Immediate(offset(slot) + 64 * k as i64)),
                    ],
                ));
            }
        }
        (Place::Slot(slot), Place::Register(RegClass::Accumulator, t)) => {
            let register = register_name(RegClass::Accumulator, t)?;
            for (k, &q) in quarters.iter().enumerate() {
                moves.push((
                    "VLDA_dmx_lda_bm_spill",
                    vec![
                        ("dst", Value::Register(part(register.clone(), q)?)),
                        ("imm", Value::Immediate(offset(slot) + 64 * k as i64)),
                    ],
                ));
            }
        }
        (Place::Register(class, f), Place::Slot(slot)) => {
            let record = match class {
                RegClass::Vector => "VST_dmx_sts_x_spill",
                _ => "ST_dms_sts_spill",
            };
            moves.push((
                record,
                vec![
                    ("src", Value::Register(register_name(class, f)?)),
                    ("imm", Value::Immediate(offset(slot))),
                ],
            ));
        }
        (Place::Slot(slot), Place::Register(class, t)) => {
            let record = match class {
                RegClass::Vector => "VLDA_dmx_lda_x_spill",
                _ => "LDA_dms_lda_spill",
            };
            moves.push((
                record,
                vec![
                    ("dst", Value::Register(register_name(class, t)?)),
                    ("imm", Value::Immediate(offset(slot))),
                ],
            ));
        }
        (Place::Slot(_), Place::Slot(_)) => {
            return Err(CodegenError::Internal(
                "regalloc2 moved a stack slot to a stack slot".into(),
            ))
        }
    }
    moves
        .into_iter()
        .map(|(name, operands)| checked(name, operands))
        .collect()
}

/// Instruction `name` with `operands`, each checked by its field.
fn checked(name: &str, operands: Vec<(&str, Value)>) -> Result<Instruction, CodegenError> {
    let opcode = opcode(name)?;
    for (operand, value) in &operands {
        let field = opcode
            .operand(operand)
            .ok_or_else(|| CodegenError::Internal(format!("{name} has no ${operand}")))?;
        field.admits(value).map_err(|e| match value {
            Value::Immediate(v) => CodegenError::Stack(format!(
                "the spill slot at sp{v:+} is out of reach of {name}: {e}"
            )),
            Value::Register(_) => CodegenError::Encoding(e),
        })?;
    }
    Ok(Instruction {
        opcode,
        operands: operands
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect(),
    })
}

/// Allocate `function`'s registers; `limit` keeps that many registers of
/// each class (to test spilling).
pub(crate) fn allocate(
    function: &MachineFunction,
    limit: Option<usize>,
) -> Result<Allocated, CodegenError> {
    let cfg = split_critical_edges(function);
    let options = ra::RegallocOptions {
        verbose_log: false,
        validate_ssa: true,
        algorithm: ra::Algorithm::Ion,
    };
    let uses = function.use_counts();
    let mut views = Vec::new();
    let mut outputs = Vec::new();
    for run in 0..2 {
        let v = view(&cfg, function, run, &uses);
        let output = ra::run(&v, &machine_env(run, limit), &options)
            .map_err(|e| CodegenError::Allocation(describe(e)))?;
        views.push(v);
        outputs.push(output);
    }
    // The frame: the scalar run's words, then the vector run's 64-byte slots.
    let scalar_bytes = outputs[0].num_spillslots as u32 * SLOT_BYTES;
    let vector_base = scalar_bytes.div_ceil(FRAME_ALIGN) * FRAME_ALIGN;
    let frame_end = vector_base + outputs[1].num_spillslots as u32 * SLOT_BYTES;
    let frame_bytes = frame_end.div_ceil(FRAME_ALIGN) * FRAME_ALIGN;
    let slot_base = [0, vector_base];

    // Moves by program point, the scalar run's first at a tie.
    let mut edits: BTreeMap<ra::ProgPoint, Vec<Instruction>> = BTreeMap::new();
    for (run, output) in outputs.iter().enumerate() {
        for (point, ra::Edit::Move { from, to }) in &output.edits {
            let from = place(run, *from, slot_base[run])?;
            let to = place(run, *to, slot_base[run])?;
            edits
                .entry(*point)
                .or_default()
                .extend(move_instructions(from, to, frame_bytes)?);
        }
    }
    let alloc_of = |inst: usize| -> Result<BTreeMap<usize, String>, CodegenError> {
        let mut out = BTreeMap::new();
        for (run, output) in outputs.iter().enumerate() {
            let allocs = output.inst_allocs(ra::Inst::new(inst));
            for (k, &source) in views[run].operand_sources[inst].iter().enumerate() {
                match place(run, allocs[k], slot_base[run])? {
                    Place::Register(class, index) => {
                        out.insert(source, register_name(class, index)?);
                    }
                    Place::Slot(_) => {
                        return Err(CodegenError::Internal(
                            "a register operand was given a stack slot".into(),
                        ))
                    }
                }
            }
        }
        Ok(out)
    };

    let mut blocks = Vec::new();
    let mut inst = 0;
    for block in &cfg.blocks {
        let mut insts = Vec::new();
        let take =
            |point: ra::ProgPoint, insts: &mut Vec<Pending>, loc: &Option<SourceLocation>| {
                if let Some(moves) = edits.get(&point) {
                    insts.extend(
                        moves
                            .iter()
                            .cloned()
                            .map(|m| Pending::fixed((m, loc.clone()))),
                    );
                }
            };
        for machine in block.insts {
            take(
                ra::ProgPoint::before(ra::Inst::new(inst)),
                &mut insts,
                &machine.location,
            );
            let regs = alloc_of(inst)?;
            insts.push(Pending {
                located: (physical(machine, &regs)?, machine.location.clone()),
                alternatives: machine.alternatives.clone(),
            });
            take(
                ra::ProgPoint::after(ra::Inst::new(inst)),
                &mut insts,
                &machine.location,
            );
            inst += 1;
        }
        take(
            ra::ProgPoint::before(ra::Inst::new(inst)),
            &mut insts,
            &block.exit_location,
        );
        let regs = alloc_of(inst)?;
        inst += 1;
        let exit = match (block.succs.as_slice(), block.condition) {
            ([], _) => Exit::Done,
            ([(to, _)], None) => Exit::Jump(*to),
            ([(taken, _), (otherwise, _)], Some(_)) => Exit::Branch {
                condition: regs.get(&usize::MAX).cloned().ok_or_else(|| {
                    CodegenError::Internal("the branch condition has no register".into())
                })?,
                taken: *taken,
                otherwise: *otherwise,
            },
            _ => {
                return Err(CodegenError::Internal(
                    "a block's successors do not match its terminator".into(),
                ))
            }
        };
        blocks.push(AllocatedBlock {
            origin: block.origin,
            insts,
            exit,
            exit_location: block.exit_location.clone(),
        });
    }
    Ok(Allocated {
        blocks,
        frame_bytes,
    })
}

/// The machine instruction over the registers it was given.
fn physical(
    machine: &MachineInst,
    regs: &BTreeMap<usize, String>,
) -> Result<Instruction, CodegenError> {
    let mut operands = Vec::new();
    let mut given: BTreeMap<&str, String> = BTreeMap::new();
    for (i, (name, value)) in machine.operands.iter().enumerate() {
        let value = match value {
            MachineOperand::VReg(_)
            | MachineOperand::Part(..)
            | MachineOperand::PartDef(..)
            | MachineOperand::PartInto(..) => {
                let register = regs.get(&i).cloned().ok_or_else(|| {
                    CodegenError::Internal(format!(
                        "{} ${name} was not allocated",
                        machine.opcode.name
                    ))
                })?;
                match value {
                    MachineOperand::Part(_, part)
                    | MachineOperand::PartDef(_, part)
                    | MachineOperand::PartInto(_, _, part) => {
                        Value::Register(part.of(&register).ok_or_else(|| {
                            CodegenError::Internal(format!("{register} has no part {part}"))
                        })?)
                    }
                    _ => Value::Register(register),
                }
            }
            MachineOperand::Phys(r) => Value::Register(r.clone()),
            MachineOperand::Imm(v) => Value::Immediate(*v),
        };
        if let Value::Register(r) = &value {
            given.insert(name, r.clone());
        }
        operands.push((name.clone(), value));
    }
    // A tied output has no field: it must have landed on its input.
    for operand in machine_operands(machine.opcode) {
        if let (true, Some(input)) = (operand.output, operand.tied_to.as_deref()) {
            if given.get(operand.name.as_str()) != given.get(input) {
                return Err(CodegenError::Internal(format!(
                    "{} ${} was allocated apart from ${input}",
                    machine.opcode.name, operand.name
                )));
            }
        }
    }
    operands.retain(|(name, _)| {
        machine
            .opcode
            .operand(name)
            .is_some_and(|o| !o.bits.is_empty())
    });
    Ok(Instruction {
        opcode: machine.opcode,
        operands,
    })
}
