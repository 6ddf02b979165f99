//! The body being translated: its registers, by MLIR value, and its blocks.

use loom_runtime::interp::program::{Block, BlockId, Inst, Op, Reg};
use mlir_sys::MlirValue;
use std::collections::HashMap;
use std::rc::Rc;

/// Registers and blocks of the body being translated.
pub struct Body {
    pub regs: HashMap<usize, Reg>,
    pub next: Reg,
    pub blocks: Vec<Block>,
}

impl Body {
    pub fn new() -> Self {
        Body {
            regs: HashMap::new(),
            next: 0,
            blocks: Vec::new(),
        }
    }

    pub fn fresh(&mut self) -> Reg {
        self.next += 1;
        self.next - 1
    }

    pub fn define(&mut self, value: MlirValue) -> Reg {
        let reg = self.fresh();
        self.regs.insert(value.ptr as usize, reg);
        reg
    }

    pub fn alias(&mut self, value: MlirValue, reg: Reg) {
        self.regs.insert(value.ptr as usize, reg);
    }

    pub fn block(&mut self) -> BlockId {
        self.blocks.push(Block::default());
        self.blocks.len() - 1
    }

    pub fn emit(&mut self, block: BlockId, op: Op, loc: &Rc<str>) {
        self.blocks[block].insts.push(Inst {
            op,
            loc: loc.clone(),
        });
    }
}

/// Where an `scf.yield` goes.
#[derive(Clone)]
pub enum Yield {
    /// Back to a loop header: the next induction value first.
    Loop {
        header: BlockId,
        induction: Reg,
        step: Reg,
    },
    /// To the join block of an `scf.if`.
    Join(BlockId),
}
