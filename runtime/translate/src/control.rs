//! Structured control flow (`scf.for`, `scf.if`) and regions into blocks,
//! and function, pipeline and strand bodies into `Function`s.

use crate::body::{Body, Yield};
use crate::{Result, Translator};
use loom_dialects::ir::*;
use loom_runtime::interp::program::{BlockId, FuncId, Function, Inst, Op, Predicate, Reg};
use mlir_sys::{MlirOperation, MlirRegion};
use std::collections::HashMap;
use std::rc::Rc;

impl Translator {
    pub(crate) fn for_loop(
        &mut self,
        body: &mut Body,
        op: MlirOperation,
        current: BlockId,
        blocks: &HashMap<usize, BlockId>,
        loc: &Rc<str>,
    ) -> Result<BlockId> {
        let ins = operands(op);
        let (low, high, step) = (
            self.reg(body, op, ins[0])?,
            self.reg(body, op, ins[1])?,
            self.reg(body, op, ins[2])?,
        );
        let inits = self.regs(body, op, &ins[3..])?;
        let region_block = first_block(op, 0).expect("a verified loop has a body");
        let args = arguments(region_block);
        let params: Vec<Reg> = args.iter().map(|&a| body.define(a)).collect();
        let header = body.block();
        let entry = body.block();
        let exit = body.block();
        body.blocks[header].params = params.clone();
        let mut start = vec![low];
        start.extend(inits);
        body.emit(current, Op::CheckStep(step), loc);
        body.emit(current, Op::Br(header, start), loc);
        body.emit(
            header,
            Op::CmpBr(Predicate::Slt, params[0], high, entry, vec![], exit, vec![]),
            loc,
        );
        let yield_to = Yield::Loop {
            header,
            induction: params[0],
            step,
        };
        self.ops(body, region_block, entry, blocks, Some(&yield_to))?;
        for (result, &param) in results(op).into_iter().zip(&params[1..]) {
            body.alias(result, param);
        }
        Ok(exit)
    }

    pub(crate) fn if_op(
        &mut self,
        body: &mut Body,
        op: MlirOperation,
        current: BlockId,
        blocks: &HashMap<usize, BlockId>,
        loc: &Rc<str>,
    ) -> Result<BlockId> {
        let cond = self.reg(body, op, operands(op)[0])?;
        let join = body.block();
        body.blocks[join].params = results(op).into_iter().map(|v| body.define(v)).collect();
        let then_block = body.block();
        // An scf.if has two regions; the else region may be empty.
        let then_region = first_block(op, 0).expect("a verified scf.if has a then block");
        let else_region = first_block(op, 1);
        let else_block = if else_region.is_none() {
            join
        } else {
            body.block()
        };
        body.emit(
            current,
            Op::CondBr(cond, then_block, vec![], else_block, vec![]),
            loc,
        );
        let to_join = Yield::Join(join);
        self.ops(body, then_region, then_block, blocks, Some(&to_join))?;
        if let Some(else_region) = else_region {
            self.ops(body, else_region, else_block, blocks, Some(&to_join))?;
        }
        Ok(join)
    }

    /// Translate a region that may be a graph of blocks into `body`,
    /// starting at `entry`.
    fn region(&mut self, body: &mut Body, region: MlirRegion, entry: BlockId) -> Result<()> {
        let mlir_blocks = blocks(region);
        let mut ids = HashMap::new();
        for (i, &b) in mlir_blocks.iter().enumerate() {
            let id = if i == 0 { entry } else { body.block() };
            ids.insert(b.ptr as usize, id);
        }
        for &b in &mlir_blocks {
            let id = ids[&(b.ptr as usize)];
            if id != entry {
                body.blocks[id].params = arguments(b).into_iter().map(|a| body.define(a)).collect();
            }
        }
        for &b in &mlir_blocks {
            let id = ids[&(b.ptr as usize)];
            self.ops(body, b, id, &ids, None)?;
        }
        Ok(())
    }

    /// A strand body: a function over its pipeline's registers.
    pub(crate) fn strand(
        &mut self,
        body: &mut Body,
        op: MlirOperation,
        loc: &Rc<str>,
    ) -> Result<FuncId> {
        // Strand blocks get their own block list, but define registers in
        // the pipeline's numbering (they read captured values directly).
        let mut strand = Body {
            regs: std::mem::take(&mut body.regs),
            next: body.next,
            blocks: Vec::new(),
        };
        let entry = strand.block();
        let region = region(op, 0);
        let result = self.region(&mut strand, region, entry);
        body.regs = std::mem::take(&mut strand.regs);
        body.next = strand.next;
        result?;
        self.finish_blocks(&mut strand, loc);
        let id = self.program.functions.len();
        self.program.functions.push(Function {
            name: format!("strand at {loc}"),
            params: Vec::new(),
            blocks: strand.blocks,
            registers: 0, // set with the pipeline's count
            loc: loc.clone(),
        });
        Ok(id)
    }

    /// Blocks that fall off their end (a strand or pipeline body) return.
    fn finish_blocks(&self, body: &mut Body, loc: &Rc<str>) {
        for block in &mut body.blocks {
            let ends = matches!(
                block.insts.last().map(|i| &i.op),
                Some(Op::Br(..) | Op::CondBr(..) | Op::CmpBr(..) | Op::IntBr(..) | Op::Return(_))
            );
            if !ends {
                block.insts.push(Inst {
                    op: Op::Return(Vec::new()),
                    loc: loc.clone(),
                });
            }
        }
    }

    pub(crate) fn function(&mut self, op: MlirOperation, id: FuncId) -> Result<()> {
        let loc: Rc<str> = location_text(location(op)).into();
        let mut body = Body::new();
        let entry = body.block();
        let region = region(op, 0);
        let first = blocks(region)[0];
        let params: Vec<Reg> = arguments(first)
            .into_iter()
            .map(|a| body.define(a))
            .collect();
        let strands_before = self.program.functions.len();
        self.region(&mut body, region, entry)?;
        self.finish_blocks(&mut body, &loc);
        let registers = body.next;
        for strand in &mut self.program.functions[strands_before..] {
            strand.registers = registers;
        }
        let f = &mut self.program.functions[id];
        f.params = params;
        f.blocks = body.blocks;
        f.registers = registers;
        f.loc = loc;
        Ok(())
    }
}
