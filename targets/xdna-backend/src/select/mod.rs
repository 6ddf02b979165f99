//! Instruction selection: a worker function of the native realization (Low
//! aie2p IR) becomes a machine function of `loom-aie2p-codegen`, which
//! allocates, schedules and emits it. Each op family has its file:
//! `scalar` (index and scalar arithmetic, compares, selects, constants),
//! `control` (`cfg.br`, `cfg.cond_br`, `func.return`), `memory`
//! (`aie2p.tile.buffer`, `buffer.view`, `view.load`, `view.store`),
//! `locks` (`aie2p.lock.acquire`, `aie2p.lock.release`) and `vector`
//! (vectors, and the f32 scalar arithmetic and conversions only the vector
//! unit computes). An op without a pattern is an error at its location
//! naming it, never a fallback.
//!
//! Values are selected lazily where that saves registers: constants and
//! addresses known when compiling stay symbolic (`Val::Const`,
//! `Val::Addr`) and are materialized in the block that uses them.
//!
//! `index` is 64 bits in Loom's semantics; the core computes it in its
//! 32-bit scalar registers. That is exact while every index value fits in
//! 32 bits (a view's element in memory still takes 8 bytes: a store writes
//! the sign-extended value, a load reads the low word). docs/code-generator.md
//! says so.

mod affine;
mod control;
mod locks;
mod loops;
mod memory;
mod scalar;
mod vector;

use affine::Affine;
use loom_aie2p_codegen::{
    BlockId, BuildError, FunctionBuilder, MachineFunction, MachineOperand, RegClass,
    SourceLocation, Terminator, VReg,
};
use loom_diagnostic::Diagnostic;
use loom_dialects::ir::*;
use loom_targets::Tile;
use loops::{Carried, Found, Innermost};
use mlir_sys::{MlirBlock, MlirOperation, MlirValue};
use std::collections::{BTreeMap, BTreeSet};

/// A selected value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Val {
    /// In a register of its class.
    Reg(VReg),
    /// An integer (or a float's bits) known when compiling.
    Const(i64),
    /// A core address: `base` plus a byte offset in a scalar, if any.
    Addr { base: u32, offset: Option<VReg> },
    /// A short f32 vector (`vector<4xf32>`) as one scalar per lane, entry
    /// `i` of `Selector::lanes`: no modelled instruction loads, stores or
    /// fills fewer than 16 f32 lanes of a vector register.
    Lanes(usize),
}

/// What the selection of a worker gives the code generator.
pub(crate) struct Selected {
    pub function: MachineFunction,
    /// The worker's stack, `[base, base + size)` in the core's addresses.
    pub stack: Option<(u32, u32)>,
}

pub(crate) struct Selector {
    b: FunctionBuilder,
    /// The core that runs the worker.
    core: Tile,
    values: BTreeMap<usize, Val>,
    blocks: BTreeMap<usize, BlockId>,
    /// The block being selected and the location of the op in hand.
    block: BlockId,
    at: Option<SourceLocation>,
    stack: Option<(u32, u32)>,
    lanes: Vec<Vec<Val>>,
    /// The block before the worker's first, where scalar constants are
    /// materialized once (it dominates every block; it jumps to the first
    /// when selection is done, a fall-through in the layout), and the
    /// register of each constant materialized so far.
    constant_block: BlockId,
    constants: BTreeMap<i32, VReg>,
    /// The affine form of each scalar register selection computed by
    /// `add`, `sub` or a multiply by a constant (`affine`), and the
    /// pointers the block in hand has computed, with their addresses'
    /// forms: an access whose address differs from one by a constant its
    /// immediate holds reuses it.
    forms: BTreeMap<VReg, Affine>,
    pointers: Vec<(Affine, VReg)>,
    /// Each MLIR location's line-table entry, as printed once.
    locations: BTreeMap<usize, Option<SourceLocation>>,
    /// The modifier register of each pointer step materialized so far.
    modifiers: BTreeMap<i64, VReg>,
    /// The value each register was first selected for (what a form's
    /// terms are in the source), the worker's innermost loops, the MLIR
    /// block in hand, the addresses found that a loop could carry, and
    /// those this run carries with their header parameters
    /// (select/loops.rs).
    roots: BTreeMap<VReg, MlirValue>,
    loops: Vec<Innermost>,
    current: Option<MlirBlock>,
    found: Found,
    carried: BTreeMap<usize, Vec<(Carried, VReg)>>,
    /// The largest value a lock holds (the profile's).
    lock_value_max: u32,
}

pub(crate) fn key(v: MlirValue) -> usize {
    v.ptr as usize
}

pub(crate) fn block_key(b: MlirBlock) -> usize {
    b.ptr as usize
}

/// `file:line:col` as the line table's location.
fn source_location(op: MlirOperation) -> Option<SourceLocation> {
    let text = location_text(location(op));
    let (file, line, column) = loom_diagnostic::source_position(&text)?;
    Some(SourceLocation::new(
        file,
        line.try_into().ok()?,
        column.try_into().ok()?,
    ))
}

pub(crate) fn fail(op: MlirOperation, message: impl Into<String>) -> Diagnostic {
    Diagnostic::error(location_text(location(op)), message.into())
}

/// The register class that holds a value of type `text`, if any.
fn class_of(text: &str) -> Option<RegClass> {
    match text {
        "index" | "offset" | "i1" | "i8" | "i16" | "i32" | "f32" | "bf16" => Some(RegClass::Scalar),
        _ => vector::form(text).map(vector::Form::class),
    }
}

impl Selector {
    /// An internal error: selection built an instruction the machine layer
    /// refuses (a missing or wrong pattern here, not the user's program).
    fn built(&self, op: MlirOperation, result: Result<(), BuildError>) -> Result<(), Diagnostic> {
        result.map_err(|e| {
            fail(
                op,
                format!("internal compiler error selecting `{}`: {e}", op_name(op)),
            )
        })
    }

    pub(crate) fn inst(
        &mut self,
        op: MlirOperation,
        opcode: &str,
        operands: &[MachineOperand],
    ) -> Result<(), Diagnostic> {
        let r = self.b.inst(self.block, opcode, operands, self.at.clone());
        self.built(op, r)
    }

    pub(crate) fn vreg(&mut self, class: RegClass) -> VReg {
        self.b.vreg(class)
    }

    pub(crate) fn define(&mut self, value: MlirValue, val: Val) {
        if let Val::Reg(r) = val {
            self.roots.entry(r).or_insert(value);
        }
        self.values.insert(key(value), val);
    }

    pub(crate) fn define_lanes(&mut self, value: MlirValue, lanes: Vec<Val>) {
        self.lanes.push(lanes);
        let v = Val::Lanes(self.lanes.len() - 1);
        self.define(value, v);
    }

    /// The lanes of a short vector.
    pub(crate) fn lanes(
        &self,
        op: MlirOperation,
        value: MlirValue,
    ) -> Result<Vec<Val>, Diagnostic> {
        match self.val(op, value)? {
            Val::Lanes(i) => Ok(self.lanes[i].clone()),
            _ => Err(fail(
                op,
                format!(
                    "internal compiler error: `{}` takes a vector of lanes",
                    op_name(op)
                ),
            )),
        }
    }

    /// The registers `value` takes along an edge: one, or one per lane.
    pub(crate) fn registers(
        &mut self,
        op: MlirOperation,
        value: MlirValue,
    ) -> Result<Vec<VReg>, Diagnostic> {
        match self.val(op, value)? {
            Val::Lanes(i) => {
                let lanes = self.lanes[i].clone();
                lanes.into_iter().map(|l| self.materialize(op, l)).collect()
            }
            other => Ok(vec![self.materialize(op, other)?]),
        }
    }

    pub(crate) fn val(&self, op: MlirOperation, value: MlirValue) -> Result<Val, Diagnostic> {
        self.values.get(&key(value)).copied().ok_or_else(|| {
            fail(
                op,
                format!(
                    "internal compiler error: `{}` uses a value selection has not defined",
                    op_name(op)
                ),
            )
        })
    }

    /// A scalar register holding `c`.
    pub(crate) fn constant(&mut self, op: MlirOperation, c: i64) -> Result<VReg, Diagnostic> {
        let Ok(c) = i32::try_from(c).or_else(|_| u32::try_from(c).map(|u| u as i32)) else {
            return Err(fail(
                op,
                format!("the constant {c} does not fit in the core's 32-bit scalar registers"),
            ));
        };
        if let Some(&r) = self.constants.get(&c) {
            return Ok(r);
        }
        let r = self.vreg(RegClass::Scalar);
        // `mov` takes 11 signed bits; `movxm` any 32.
        let opcode = if (-1024..1024).contains(&c) {
            "MOV_alu_mv_mv_mv_cg"
        } else {
            "MOVXM"
        };
        // Once, before the first block: a loop then reuses the register
        // instead of rebuilding the constant every turn.
        let operands = [MachineOperand::VReg(r), MachineOperand::Imm(c.into())];
        let built = self
            .b
            .inst(self.constant_block, opcode, &operands, self.at.clone());
        self.built(op, built)?;
        self.constants.insert(c, r);
        self.forms.insert(r, Affine::constant(c.into()));
        Ok(r)
    }

    /// The affine form of a selected value (`None` for a short vector).
    pub(crate) fn form(&self, val: Val) -> Option<Affine> {
        let of = |r: VReg| {
            self.forms
                .get(&r)
                .cloned()
                .unwrap_or_else(|| Affine::register(r))
        };
        match val {
            Val::Reg(r) => Some(of(r)),
            Val::Const(c) => Some(Affine::constant(c)),
            Val::Addr { base, offset } => {
                let base = Affine::constant(base.into());
                match offset {
                    None => Some(base),
                    Some(o) => base.add_scaled(&of(o), 1),
                }
            }
            Val::Lanes(_) => None,
        }
    }

    /// The pointers of this block whose addresses are `form` less a
    /// constant, with that constant, the newest first.
    pub(crate) fn pointer_near(&self, form: &Affine) -> impl Iterator<Item = (VReg, i64)> + '_ {
        let form = form.clone();
        self.pointers
            .iter()
            .rev()
            .filter_map(move |(f, p)| form.distance(f).map(|d| (*p, d)))
    }

    /// `from + distance` in a new pointer of this block at address `form`:
    /// `padda`/`paddb`/`padds [p], m` (whichever slot is free) with the
    /// distance in a modifier register materialized once, before the first
    /// block.
    pub(crate) fn step_pointer(
        &mut self,
        op: MlirOperation,
        from: VReg,
        distance: i64,
        form: Affine,
    ) -> Result<VReg, Diagnostic> {
        use MachineOperand::VReg as V;
        let m = match self.modifiers.get(&distance) {
            Some(&m) => m,
            None => {
                let m = self.vreg(RegClass::Modifier);
                let opcode = if (-1024..1024).contains(&distance) {
                    "MOV_alu_mv_mv_mv_cg"
                } else {
                    "MOVXM"
                };
                let operands = [V(m), MachineOperand::Imm(distance)];
                let built = self
                    .b
                    .inst(self.constant_block, opcode, &operands, self.at.clone());
                self.built(op, built)?;
                self.modifiers.insert(distance, m);
                m
            }
        };
        let p = self.vreg(RegClass::Pointer);
        let built = self.b.inst_any(
            self.block,
            &["PADDA_pstm_nrm", "PADDB_pstm_nrm", "PADDS_pstm_nrm"],
            &[V(p), V(from), V(m)],
            self.at.clone(),
        );
        self.built(op, built)?;
        self.remember_pointer(form, p);
        Ok(p)
    }

    pub(crate) fn remember_pointer(&mut self, form: Affine, p: VReg) {
        self.pointers.push((form, p));
    }

    /// The innermost loop the block in hand is in, if any.
    fn innermost(&self) -> Option<&Innermost> {
        let current = self.current?;
        self.loops.iter().find(|l| l.contains(current))
    }

    /// Note a fresh pointer's address if the loop it is in could carry it.
    pub(crate) fn found_pointer(&mut self, form: &Affine) {
        let terms: Option<Vec<(MlirValue, i64)>> = form
            .terms
            .iter()
            .map(|&(r, k)| self.roots.get(&r).map(|&v| (v, k)))
            .collect();
        let Some(terms) = terms else {
            return;
        };
        let Some(lp) = self.innermost() else {
            return;
        };
        let header = lp.header();
        if let Some(carried) = lp.carries(&terms, form.constant) {
            self.found.add(header, carried);
        }
    }

    /// The form of a value selection has defined.
    fn value_form(&self, v: MlirValue) -> Option<Affine> {
        let val = self.values.get(&key(v)).copied()?;
        self.form(val)
    }

    /// A pointer holding the address `form`: one of this block's at that
    /// address, stepped from one a constant away, or computed.
    fn pointer_for(&mut self, op: MlirOperation, form: Affine) -> Result<VReg, Diagnostic> {
        let near = self.pointer_near(&form).next();
        if let Some((p, d)) = near {
            if d == 0 {
                return Ok(p);
            }
            return self.step_pointer(op, p, d, form);
        }
        let p = self.computed_pointer(op, &form.terms, form.constant)?;
        self.remember_pointer(form, p);
        Ok(p)
    }

    /// A new pointer holding `constant + sum(k * r)` over `terms`: each
    /// term scaled by a multiply (unless 1) and added in order, the
    /// constant added, moved to a pointer (`movxm` when there are no terms).
    pub(crate) fn computed_pointer(
        &mut self,
        op: MlirOperation,
        terms: &[(VReg, i64)],
        constant: i64,
    ) -> Result<VReg, Diagnostic> {
        use MachineOperand::{Imm, VReg as V};
        let mut sum: Option<VReg> = None;
        for &(r, k) in terms {
            let scaled = if k == 1 {
                r
            } else {
                let k = self.constant(op, k)?;
                self.binary(op, "MUL", r, k)?
            };
            sum = Some(match sum {
                None => scaled,
                Some(t) => self.binary(op, "ADD_alu_r_rr", t, scaled)?,
            });
        }
        let p = self.vreg(RegClass::Pointer);
        match sum {
            None => self.inst(op, "MOVXM", &[V(p), Imm(constant)])?,
            Some(t) => {
                let address = self.add_constant(op, t, constant)?;
                self.inst(op, "MOV_alu_mv_mv_mv_scl", &[V(p), V(address)])?;
            }
        }
        Ok(p)
    }

    /// The pointers an edge to `target` passes along with `values` (the
    /// target's arguments): each address `target`'s loop carries, at the
    /// values the edge gives the header's arguments.
    pub(crate) fn carried_args(
        &mut self,
        op: MlirOperation,
        target: MlirBlock,
        values: &[MlirValue],
    ) -> Result<Vec<VReg>, Diagnostic> {
        let Some(carried) = self.carried.get(&block_key(target)).cloned() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for (c, _) in &carried {
            let form = loops::form_at(
                c,
                target,
                |i| values.get(i).and_then(|&v| self.value_form(v)),
                |v| self.value_form(v),
            );
            let Some(form) = form else {
                return Err(fail(
                    op,
                    "internal compiler error: a loop-carried address has no form along this edge",
                ));
            };
            out.push(self.pointer_for(op, form)?);
        }
        Ok(out)
    }

    /// Make the carried pointers of the loop the block in hand is in this
    /// block's pointers, at their addresses.
    fn enter_carried(&mut self) {
        let Some(header) = self.innermost().map(Innermost::header) else {
            return;
        };
        let carried = self
            .carried
            .get(&block_key(header))
            .cloned()
            .unwrap_or_default();
        for (c, q) in carried {
            let form = loops::form_at(
                &c,
                header,
                |i| self.value_form(arguments(header)[i]),
                |v| self.value_form(v),
            );
            if let Some(form) = form {
                self.remember_pointer(form, q);
            }
        }
    }

    /// `value` in a scalar register, materialized here if it is symbolic.
    pub(crate) fn scalar(
        &mut self,
        op: MlirOperation,
        value: MlirValue,
    ) -> Result<VReg, Diagnostic> {
        let val = self.val(op, value)?;
        self.materialize(op, val)
    }

    pub(crate) fn materialize(&mut self, op: MlirOperation, val: Val) -> Result<VReg, Diagnostic> {
        match val {
            Val::Reg(r) => Ok(r),
            Val::Const(c) => self.constant(op, c),
            Val::Addr { base, offset } => {
                let b = self.constant(op, base.into())?;
                match offset {
                    None => Ok(b),
                    Some(o) => self.binary(op, "ADD_alu_r_rr", b, o),
                }
            }
            Val::Lanes(_) => Err(fail(
                op,
                format!(
                    "`{}` of a short vector (one scalar per lane) has no AIE2P pattern",
                    op_name(op)
                ),
            )),
        }
    }

    /// `d = opcode s0, s1` into a new scalar.
    pub(crate) fn binary(
        &mut self,
        op: MlirOperation,
        opcode: &str,
        s0: VReg,
        s1: VReg,
    ) -> Result<VReg, Diagnostic> {
        use MachineOperand::VReg as V;
        let d = self.vreg(RegClass::Scalar);
        self.inst(op, opcode, &[V(d), V(s0), V(s1)])?;
        let (a, b) = (self.form(Val::Reg(s0)), self.form(Val::Reg(s1)));
        let form = match (opcode, a, b) {
            ("ADD_alu_r_rr", Some(a), Some(b)) => a.add_scaled(&b, 1),
            ("SUB", Some(a), Some(b)) => a.add_scaled(&b, -1),
            ("MUL", Some(a), Some(b)) => match (a.as_constant(), b.as_constant()) {
                (Some(k), _) => b.scale(k),
                (_, Some(k)) => a.scale(k),
                _ => None,
            },
            _ => None,
        };
        if let Some(form) = form {
            self.forms.insert(d, form);
        }
        Ok(d)
    }

    /// `s + c` into a new scalar (`add` with an immediate when it fits).
    pub(crate) fn add_constant(
        &mut self,
        op: MlirOperation,
        s: VReg,
        c: i64,
    ) -> Result<VReg, Diagnostic> {
        if c == 0 {
            return Ok(s);
        }
        let form = self
            .form(Val::Reg(s))
            .and_then(|f| f.add_scaled(&Affine::constant(c), 1));
        // `s` itself a register plus a constant (an unrolled loop's
        // `%p1 = %p + 1`, `%p2 = %p1 + 1`): add to that register, so the
        // chain's links are not each other's inputs and go if unread.
        let (s, c) = match &form {
            Some(f) if f.terms.len() == 1 && f.terms[0].1 == 1 => (f.terms[0].0, f.constant),
            _ => (s, c),
        };
        if c == 0 {
            return Ok(s);
        }
        if (-64..64).contains(&c) {
            let d = self.vreg(RegClass::Scalar);
            self.inst(
                op,
                "ADD_add_r_ri",
                &[
                    MachineOperand::VReg(d),
                    MachineOperand::VReg(s),
                    MachineOperand::Imm(c),
                ],
            )?;
            if let Some(form) = form {
                self.forms.insert(d, form);
            }
            return Ok(d);
        }
        let k = self.constant(op, c)?;
        self.binary(op, "ADD_alu_r_rr", s, k)
    }

    fn select_block(&mut self, block: MlirBlock) -> Result<(), Diagnostic> {
        self.block = self.blocks[&block_key(block)];
        self.current = Some(block);
        self.pointers.clear();
        self.enter_carried();
        self.select_ops(&ops_of(block))
    }

    fn select_ops(&mut self, ops: &[MlirOperation]) -> Result<(), Diagnostic> {
        for &op in ops {
            // Ops share locations (a copy keeps its original's): print each once.
            let loc = location(op).ptr as usize;
            self.at = match self.locations.get(&loc) {
                Some(at) => at.clone(),
                None => {
                    let at = source_location(op);
                    self.locations.insert(loc, at.clone());
                    at
                }
            };
            let name = op_name(op);
            let selected = scalar::select(self, op, &name)?
                || control::select(self, op, &name)?
                || memory::select(self, op, &name)?
                || locks::select(self, op, &name)?
                || vector::select(self, op, &name)?;
            if !selected {
                return Err(fail(
                    op,
                    format!(
                        "`{name}` has no AIE2P instruction selection pattern yet; \
                         compile with --worker-code=lowir to carry the worker as Low aie2p IR"
                    ),
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn target(&self, block: MlirBlock) -> BlockId {
        self.blocks[&block_key(block)]
    }

    pub(crate) fn core(&self) -> Tile {
        self.core
    }

    pub(crate) fn lock_value_max(&self) -> u32 {
        self.lock_value_max
    }

    pub(crate) fn set_stack(&mut self, base: u32, size: u32) {
        self.stack = Some((base, size));
    }

    pub(crate) fn builder(&mut self) -> (&mut FunctionBuilder, BlockId, Option<SourceLocation>) {
        (&mut self.b, self.block, self.at.clone())
    }
}

/// The blocks reachable from the entry, in reverse post-order, so every
/// value is selected before its uses (definitions dominate them).
fn reverse_post_order(entry: MlirBlock) -> Vec<MlirBlock> {
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    // (block, whether its successors are done)
    let mut stack = vec![(entry, false)];
    while let Some((block, done)) = stack.pop() {
        if done {
            order.push(block);
            continue;
        }
        if !seen.insert(block_key(block)) {
            continue;
        }
        stack.push((block, true));
        let successors = terminator(block).map(successors).unwrap_or_default();
        for s in successors.into_iter().rev() {
            if !seen.contains(&block_key(s)) {
                stack.push((s, false));
            }
        }
    }
    order.reverse();
    order
}

/// Select `worker`, which runs on `core`: once, and again carrying the
/// addresses the first run found its innermost loops could carry
/// (select/loops.rs).
pub(crate) fn select(
    worker: MlirOperation,
    core: Tile,
    lock_value_max: u32,
) -> Result<Selected, Diagnostic> {
    let name = symbol_name(worker).unwrap_or_default();
    let Some(entry) = first_block(worker, 0) else {
        return Err(fail(worker, format!("@{name} has no body to compile")));
    };
    let order = reverse_post_order(entry);
    let (first, found) = run(worker, core, lock_value_max, &order, BTreeMap::new())?;
    if found.carried.is_empty() {
        return Ok(first);
    }
    Ok(run(worker, core, lock_value_max, &order, found.carried)?.0)
}

/// One run of selection over the blocks in `order`, carrying `carry`'s
/// addresses (by loop header) in pointers.
fn run(
    worker: MlirOperation,
    core: Tile,
    lock_value_max: u32,
    order: &[MlirBlock],
    carry: BTreeMap<usize, Vec<Carried>>,
) -> Result<(Selected, Found), Diagnostic> {
    let name = symbol_name(worker).unwrap_or_default();
    let mut b = FunctionBuilder::new(name);
    let constant_block = b.block();
    let ids: Vec<BlockId> = order.iter().map(|_| b.block()).collect();
    let mut s = Selector {
        b,
        core,
        values: BTreeMap::new(),
        blocks: order
            .iter()
            .map(|&k| block_key(k))
            .zip(ids.iter().copied())
            .collect(),
        block: ids[0],
        at: source_location(worker),
        stack: None,
        lanes: Vec::new(),
        constant_block,
        constants: BTreeMap::new(),
        forms: BTreeMap::new(),
        pointers: Vec::new(),
        modifiers: BTreeMap::new(),
        locations: BTreeMap::new(),
        roots: BTreeMap::new(),
        loops: loops::innermost(order),
        current: None,
        found: Found::default(),
        carried: BTreeMap::new(),
        lock_value_max,
    };
    for (&block, &id) in order.iter().zip(&ids) {
        for argument in arguments(block) {
            let ty = type_text(value_type(argument));
            if let Some(n) = vector::lane_count(&ty) {
                let mut lanes = Vec::new();
                for _ in 0..n {
                    let r = s.b.param(id, RegClass::Scalar);
                    let r = r.map_err(|e| fail(worker, format!("internal compiler error: {e}")))?;
                    lanes.push(Val::Reg(r));
                }
                s.define_lanes(argument, lanes);
                continue;
            }
            let Some(class) = class_of(&ty) else {
                // The argument's own location (a loop's carried value is
                // where the loop was written), else the first of the
                // block's ops that has one.
                let message = format!("a block argument of type `{ty}` (this block's) has no AIE2P register class in instruction selection yet; compile with --worker-code=lowir to carry the worker as Low aie2p IR");
                let own = location_text(value_location(argument));
                if !own.is_empty() {
                    return Err(Diagnostic::error(own, message));
                }
                let at = ops_of(block)
                    .into_iter()
                    .find(|&op| !location_text(location(op)).is_empty())
                    .unwrap_or(worker);
                return Err(fail(at, message));
            };
            let r = s.b.param(id, class);
            let r = r.map_err(|e| fail(worker, format!("internal compiler error: {e}")))?;
            s.define(argument, Val::Reg(r));
        }
        if let Some(addresses) = carry.get(&block_key(block)) {
            let mut params = Vec::new();
            for c in addresses {
                let q = s.b.param(id, RegClass::Pointer);
                let q = q.map_err(|e| fail(worker, format!("internal compiler error: {e}")))?;
                params.push((c.clone(), q));
            }
            s.carried.insert(block_key(block), params);
        }
    }
    for &block in order {
        s.select_block(block)?;
    }
    let into_first = Terminator::Jump {
        target: ids[0],
        args: Vec::new(),
    };
    s.b.terminate(constant_block, into_first, source_location(worker))
        .map_err(|e| fail(worker, format!("internal compiler error: {e}")))?;
    let function =
        s.b.finish()
            .map_err(|e| fail(worker, format!("internal compiler error: {e}")))?;
    let selected = Selected {
        function,
        stack: s.stack,
    };
    Ok((selected, s.found))
}

/// An op whose only result aliases `operand` (no code).
pub(crate) fn alias(s: &mut Selector, op: MlirOperation, operand: usize) -> Result<(), Diagnostic> {
    let v = s.val(op, operands(op)[operand])?;
    s.define(results(op)[0], v);
    Ok(())
}

/// The type text of `op`'s result `i`.
pub(crate) fn result_type(op: MlirOperation, i: usize) -> String {
    type_text(value_type(results(op)[i]))
}

/// Workers' machine code, generated once per distinct selected function.
/// The SPMD instances of a strand select the same instructions on the same
/// tile-local addresses and locks, and the code generator is a pure
/// function of its input, so an instance reuses the first one's program
/// under its own name: the 32 cores of the whole-array GEMM generate code
/// once.
#[derive(Default)]
pub(crate) struct Programs {
    /// (the selected function named "", its options, its program, the
    /// name it was compiled under).
    done: Vec<(
        MachineFunction,
        loom_aie2p_codegen::Options,
        loom_aie2p_codegen::Program,
        String,
    )>,
}

/// `worker`'s machine code for the core of `core` (whose locks hold up to
/// `lock_value_max`): selected, then allocated, scheduled, emitted and
/// checked by the machine layer (or the same program of an earlier worker
/// that selected the same function, renamed).
pub(crate) fn compile(
    programs: &mut Programs,
    worker: MlirOperation,
    core: Tile,
    lock_value_max: u32,
) -> Result<loom_aie2p_codegen::Program, Diagnostic> {
    let selected = select(worker, core, lock_value_max)?;
    let Some((base, size)) = selected.stack else {
        return Err(fail(
            worker,
            "the worker has no stack in its own tile (aie2p.tile.buffer<stack>)",
        ));
    };
    let options = loom_aie2p_codegen::Options {
        stack: loom_aie2p_codegen::StackRegion { base, size },
        registers_per_class: None,
    };
    let mut key = selected.function;
    let name = std::mem::take(&mut key.name);
    if let Some((_, _, program, compiled_as)) = programs
        .done
        .iter()
        .find(|(f, o, _, _)| *f == key && *o == options)
    {
        return Ok(program.renamed(compiled_as, &name));
    }
    key.name = name;
    let program = loom_aie2p_codegen::compile(&key, &options).map_err(|e| {
        fail(
            worker,
            format!(
                "compiling @{} to AIE2P machine code: {e}",
                symbol_name(worker).unwrap_or_default()
            ),
        )
    })?;
    let compiled_as = std::mem::take(&mut key.name);
    programs
        .done
        .push((key, options, program.clone(), compiled_as));
    Ok(program)
}
