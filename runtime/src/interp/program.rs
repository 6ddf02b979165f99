//! The interpreter's form of a module: every function, pipeline body and
//! strand body as a flat graph of blocks over numbered registers. The
//! executor only knows branches, so the same executor runs every stage of
//! the compiler's output; loom-translate (runtime/translate) reads a
//! verified module into this form.

use super::matmul::Shape;
use super::value::{Elem, Value};
use loom_targets::Tile;
use std::collections::HashMap;
use std::rc::Rc;

pub type Reg = u32;
pub type FuncId = usize;
pub type BlockId = usize;

/// A view index: a register, or a constant the op spells.
#[derive(Clone, Copy, Debug)]
pub enum Index {
    Reg(Reg),
    Const(i64),
}

/// A dimension of a view type: fixed, or held in a register.
#[derive(Clone, Copy, Debug)]
pub enum Dim {
    Fixed(usize),
    Reg(Reg),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    MinU,
    MaxU,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Predicate {
    Eq,
    Ne,
    Slt,
    Sle,
    Sgt,
    Sge,
    Ult,
    Ule,
    Ugt,
    Uge,
}

/// One operation, with its operands and results as registers.
#[derive(Clone, Debug)]
pub enum Op {
    Const(Value, Reg),
    Move(Reg, Reg),
    Int(IntOp, Reg, Reg, Reg),
    Cmp(Predicate, Reg, Reg, Reg),
    /// `index.assume`: its result shares the input's register (an SSA
    /// value is never reassigned while a use of the result can still see
    /// it), so only the facts are checked.
    Assume {
        input: Reg,
        range: Option<(i64, i64)>,
        multiple_of: Option<i64>,
    },
    Float(FloatOp, Reg, Reg, Reg),
    Convert(Reg, Elem, Reg),
    Select(Reg, Reg, Reg, Reg),
    Splat(Reg, usize, Reg),
    Interleave(Reg, Reg, Reg),
    Dot2f(Reg, Reg, Reg, Reg),
    /// `scalar/vector.addi, subi, muli` on i8, i16, i32 (interp/integers.rs).
    Wrapping(IntOp, Reg, Reg, Reg),
    /// `vector.mac`: lhs, rhs, accumulator, result.
    Mac(Reg, Reg, Reg, Reg),
    /// `vector.mmac`: block shape, lhs, rhs, accumulator, result.
    Mmac(Shape, Reg, Reg, Reg, Reg),
    /// `scf.pick`: index, choices, result.
    Pick(Reg, Vec<Reg>, Reg),
    /// `vector.srs`: input, shift, the narrower lane type, result.
    Srs(Reg, u32, Elem, Reg),
    Extract(Reg, usize, Reg),
    Load {
        view: Reg,
        indices: Vec<Index>,
        lanes: Option<usize>,
        result: Reg,
    },
    Store {
        value: Reg,
        view: Reg,
        indices: Vec<Index>,
    },
    AssumeAlignment(Vec<Reg>, u64, Vec<Reg>),
    AssumeNoalias(Vec<Reg>, Vec<Reg>),
    /// Size, alignment, result.
    Alloca(Reg, u64, Reg),
    View {
        buffer: Reg,
        offset: Reg,
        shape: Vec<Dim>,
        elem: Elem,
        /// A strided layout's element strides.
        strides: Option<Vec<usize>>,
        result: Reg,
    },
    /// `view.reinterpret`: the source's storage from its start, with
    /// another shape and layout (both static).
    Reinterpret {
        source: Reg,
        shape: Vec<usize>,
        strides: Option<Vec<usize>>,
        result: Reg,
    },
    /// `view.part`: the elements of a row-major source at one leading
    /// index, as a view of the remaining dimensions.
    Part {
        source: Reg,
        index: Reg,
        result: Reg,
    },
    Pool(Reg),
    /// `aie2p.tile.buffer`: a byte range of a tile's data memory (array
    /// simulator only).
    TileBuffer {
        tile: Tile,
        offset: usize,
        size: usize,
        result: Reg,
    },
    /// Worker lock credits on the array (array simulator only).
    LockAcquire(Lock),
    LockRelease(Lock),
    /// `pipeline.strand`: one task per selected worker, with its instance
    /// coordinates within the selection (what `pipeline.instance` gives).
    Spawn {
        body: FuncId,
        workers: Vec<[i64; 2]>,
        instances: Vec<[i64; 2]>,
    },
    /// `pipeline.instance`: the running task's coordinates, column then row.
    Instance(Reg, Reg),
    Bind(Reg, Reg, Reg),
    Reserve(Reg, Reg, Reg),
    Acquire(Reg, Reg, Reg),
    Publish(Reg),
    Release(Reg),
    Copy(Reg, Reg, Reg),
    Group(Vec<Reg>, Reg),
    Wait(Reg, u64),
    Call(FuncId, Vec<Reg>, Vec<Reg>),
    ConfigGet(String, Reg),
    /// An `scf.for` step, checked positive when the loop starts.
    CheckStep(Reg),
    /// An op the interpreter cannot run; the message says why.
    Unsupported(String),
    Br(BlockId, Vec<Reg>),
    CondBr(Reg, BlockId, Vec<Reg>, BlockId, Vec<Reg>),
    /// An `index.cmp` whose only use is the `cfg.cond_br` right after it,
    /// fused: loop headers run one op instead of two.
    CmpBr(Predicate, Reg, Reg, BlockId, Vec<Reg>, BlockId, Vec<Reg>),
    /// Index arithmetic right before a `cfg.br`, fused: a loop latch's
    /// increment and back edge are one op.
    IntBr(IntOp, Reg, Reg, Reg, BlockId, Vec<Reg>),
    Return(Vec<Reg>),
}

/// A lock of a tile and a credit: at least `value` to acquire, `value`
/// added on release.
#[derive(Clone, Copy, Debug)]
pub struct Lock {
    pub tile: Tile,
    pub id: u32,
    pub value: u32,
}

/// An op and where it came from (`file:line:col`).
#[derive(Clone, Debug)]
pub struct Inst {
    pub op: Op,
    pub loc: Rc<str>,
}

#[derive(Debug, Default)]
pub struct Block {
    pub params: Vec<Reg>,
    pub insts: Vec<Inst>,
}

/// A function body, a pipeline's construction code, or a strand body (which
/// shares its pipeline's registers: strands capture lexically).
#[derive(Debug, Default)]
pub struct Function {
    pub name: String,
    pub params: Vec<Reg>,
    pub blocks: Vec<Block>,
    pub registers: u32,
    pub loc: Rc<str>,
}

#[derive(Debug)]
pub struct Pipeline {
    pub body: FuncId,
    /// The arguments (specialization, then `run(...)`), by source name.
    pub run_args: Vec<String>,
    /// Their types, as Loom spells them (`buffer`, `index`, ...).
    pub arg_types: Vec<String>,
}

/// What a `config.def` promises about its value.
#[derive(Debug, Default, Clone)]
pub struct ConfigFacts {
    pub range: Option<(i64, i64)>,
    pub multiple_of: Option<i64>,
}

impl ConfigFacts {
    /// How `value` breaks the facts, if it does.
    pub fn violation(&self, value: i64) -> Option<String> {
        if let Some((lo, hi)) = self.range {
            if value < lo || value > hi {
                return Some(format!("is outside its declared range [{lo}, {hi}]"));
            }
        }
        match self.multiple_of {
            Some(d) if d != 0 && value % d != 0 => Some(format!("is not a multiple of {d}")),
            _ => None,
        }
    }
}

#[derive(Debug, Default)]
pub struct Program {
    pub functions: Vec<Function>,
    pub pipelines: HashMap<String, Pipeline>,
    /// The module's `config.def` declarations, by name.
    pub configs: HashMap<String, ConfigFacts>,
}
