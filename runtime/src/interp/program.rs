//! The interpreter's form of a module: every function, pipeline body and
//! strand body as a flat graph of blocks over numbered registers. Structured
//! control flow (`scf.for`, `scf.if`) is turned into blocks here, so the
//! executor only knows branches, and the same executor runs every stage of
//! the compiler's output.

use super::value::{Elem, Value};
use loom_dialects::ir::*;
use mlir_sys::*;
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
        result: Reg,
    },
    Pool(Reg),
    /// `aie2p.tile.buffer`: a byte range of a tile's data memory (array
    /// simulator only).
    TileBuffer {
        tile: (u32, u32),
        offset: usize,
        size: usize,
        result: Reg,
    },
    /// Worker lock credits on the array (array simulator only).
    LockAcquire(Lock),
    LockRelease(Lock),
    Spawn {
        body: FuncId,
        workers: Vec<[i64; 2]>,
    },
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
    pub tile: (u32, u32),
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

/// Why a module cannot be turned into a program.
#[derive(Debug)]
pub struct TranslateError {
    pub loc: Rc<str>,
    pub message: String,
}

type Result<T> = std::result::Result<T, TranslateError>;

/// `file:line:col` of a location, or "" when it has none.
pub fn location_text(loc: MlirLocation) -> String {
    // SAFETY: a live location.
    let printed = printed(|f, d| unsafe { mlirLocationPrint(loc, f, d) });
    // The first `"file":line:col` inside (names and comments wrap it).
    let Some(start) = printed.find('"') else {
        return String::new();
    };
    let mut rest = &printed[start..];
    while let Some(open) = rest.find('"') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('"') else { break };
        let file = &after[..close];
        let tail = &after[close + 1..];
        if let Some(numbers) = tail.strip_prefix(':') {
            let end = numbers
                .find(|c: char| !(c.is_ascii_digit() || c == ':'))
                .unwrap_or(numbers.len());
            return format!("{file}:{}", &numbers[..end]);
        }
        rest = tail;
    }
    String::new()
}

fn attribute_text(attr: MlirAttribute) -> String {
    // SAFETY: a live attribute.
    printed(|f, d| unsafe { mlirAttributePrint(attr, f, d) })
}

/// The value of a float constant of type `elem`. Every f32 and bf16 value
/// but a NaN converts exactly through f64; a NaN would be quieted on the way
/// (a signalling NaN's bits changed), so its bits are read from the printed
/// attribute, which spells NaNs in hexadecimal (`0x7F81 : bf16`).
fn float_constant(attr: MlirAttribute, elem: Elem) -> Value {
    // SAFETY: a float attribute.
    let value = unsafe { mlirFloatAttrGetValueDouble(attr) };
    if value.is_nan() {
        let printed = attribute_text(attr);
        let bits = printed
            .trim()
            .strip_prefix("0x")
            .or_else(|| printed.trim().strip_prefix("0X"))
            .and_then(|rest| {
                let end = rest
                    .find(|c: char| !c.is_ascii_hexdigit())
                    .unwrap_or(rest.len());
                u32::from_str_radix(&rest[..end], 16).ok()
            });
        if let Some(bits) = bits {
            return match elem {
                Elem::BF16 => Value::BF16(bits as u16),
                _ => Value::F32(f32::from_bits(bits)),
            };
        }
    }
    Value::float(elem, value as f32)
}

/// Why `op` cannot run on vectors of type `ty`, if it cannot: the
/// interpreter's vectors hold f32 or bf16 lanes.
fn unsupported_lanes(op: &str, ty: MlirType) -> Option<String> {
    match elem_of(ty) {
        Some(Elem::F32 | Elem::BF16) => None,
        _ => Some(format!(
            "{op} on {}: the interpreter implements f32 and bf16 lanes only",
            type_text(ty)
        )),
    }
}

/// The element type of a scalar or vector type.
fn elem_of(ty: MlirType) -> Option<Elem> {
    // SAFETY: type queries on a live type.
    unsafe {
        let scalar = if mlirTypeIsAVector(ty) {
            mlirShapedTypeGetElementType(ty)
        } else {
            ty
        };
        if mlirTypeIsAF32(scalar) {
            Some(Elem::F32)
        } else if mlirTypeIsABF16(scalar) {
            Some(Elem::BF16)
        } else if mlirTypeIsAIndex(scalar) {
            Some(Elem::Index)
        } else {
            None
        }
    }
}

fn vector_lanes(ty: MlirType) -> Option<usize> {
    // SAFETY: type queries on a live type.
    unsafe {
        (mlirTypeIsAVector(ty) && mlirShapedTypeGetRank(ty) == 1)
            .then(|| mlirShapedTypeGetDimSize(ty, 0) as usize)
    }
}

/// Shape (`None` for a dynamic dimension) and element of a Loom view or tile
/// type.
fn view_shape(ty: MlirType) -> Option<(Vec<Option<usize>>, Elem)> {
    let (shape, name) = view_type_shape(ty)?;
    Some((shape, Elem::named(&name)?))
}

struct Translator {
    program: Program,
    functions: HashMap<String, FuncId>,
}

/// Registers and blocks of the body being translated.
struct Body {
    regs: HashMap<usize, Reg>,
    next: Reg,
    blocks: Vec<Block>,
}

impl Body {
    fn new() -> Self {
        Body {
            regs: HashMap::new(),
            next: 0,
            blocks: Vec::new(),
        }
    }

    fn fresh(&mut self) -> Reg {
        self.next += 1;
        self.next - 1
    }

    fn define(&mut self, value: MlirValue) -> Reg {
        let reg = self.fresh();
        self.regs.insert(value.ptr as usize, reg);
        reg
    }

    fn alias(&mut self, value: MlirValue, reg: Reg) {
        self.regs.insert(value.ptr as usize, reg);
    }

    fn block(&mut self) -> BlockId {
        self.blocks.push(Block::default());
        self.blocks.len() - 1
    }

    fn emit(&mut self, block: BlockId, op: Op, loc: &Rc<str>) {
        self.blocks[block].insts.push(Inst {
            op,
            loc: loc.clone(),
        });
    }
}

/// Where an `scf.yield` goes.
#[derive(Clone)]
enum Yield {
    /// Back to a loop header: the next induction value first.
    Loop {
        header: BlockId,
        induction: Reg,
        step: Reg,
    },
    /// To the join block of an `scf.if`.
    Join(BlockId),
}

impl Translator {
    fn error<T>(&self, op: MlirOperation, message: String) -> Result<T> {
        Err(TranslateError {
            loc: location_text(location(op)).into(),
            message,
        })
    }

    fn reg(&self, body: &Body, op: MlirOperation, value: MlirValue) -> Result<Reg> {
        match body.regs.get(&(value.ptr as usize)) {
            Some(&reg) => Ok(reg),
            None => self.error(op, "uses a value the interpreter has not defined".into()),
        }
    }

    fn regs(&self, body: &Body, op: MlirOperation, values: &[MlirValue]) -> Result<Vec<Reg>> {
        values.iter().map(|&v| self.reg(body, op, v)).collect()
    }

    /// The operands of `op` without its trailing `type_dims`.
    fn typed_operands(&self, op: MlirOperation) -> Vec<MlirValue> {
        let all = operands(op);
        let dims = attribute(op, "operandSegmentSizes")
            .map(|a| {
                // SAFETY: a dense i32 array attribute.
                let n = unsafe { mlirDenseArrayGetNumElements(a) };
                unsafe { mlirDenseI32ArrayGetElement(a, n - 1) as usize }
            })
            .unwrap_or(0);
        all[..all.len() - dims].to_vec()
    }

    fn indices(&self, body: &Body, op: MlirOperation, dynamic: &[MlirValue]) -> Result<Vec<Index>> {
        let positions = attribute(op, "static_indices")
            .map(dense_i64_values)
            .unwrap_or_default();
        let mut next = dynamic.iter();
        positions
            .into_iter()
            .map(|p| {
                if p == i64::MIN {
                    let value = next.next().copied();
                    match value {
                        Some(v) => self.reg(body, op, v).map(Index::Reg),
                        None => self.error(op, "has fewer index operands than positions".into()),
                    }
                } else {
                    Ok(Index::Const(p))
                }
            })
            .collect()
    }

    /// Translate the ops of `block` into `current`, following structured
    /// regions; returns the block where control continues.
    fn ops(
        &mut self,
        body: &mut Body,
        block: MlirBlock,
        mut current: BlockId,
        blocks: &HashMap<usize, BlockId>,
        yield_to: Option<&Yield>,
    ) -> Result<BlockId> {
        for op in ops_of(block) {
            current = self.op(body, op, current, blocks, yield_to)?;
        }
        Ok(current)
    }

    fn op(
        &mut self,
        body: &mut Body,
        op: MlirOperation,
        current: BlockId,
        blocks: &HashMap<usize, BlockId>,
        yield_to: Option<&Yield>,
    ) -> Result<BlockId> {
        let name = op_name(op);
        let loc: Rc<str> = location_text(location(op)).into();
        let ins = operands(op);
        let outs = results(op);
        macro_rules! r {
            ($v:expr) => {
                self.reg(body, op, $v)?
            };
        }
        let emitted = match name.as_str() {
            "index.constant" => {
                let value = int_attribute(op, "value").unwrap_or(0);
                // SAFETY: a live type.
                let is_bool = unsafe { mlirTypeIsAInteger(value_type(outs[0])) };
                let v = if is_bool {
                    Value::Bool(value != 0)
                } else {
                    Value::Int(value)
                };
                Op::Const(v, body.define(outs[0]))
            }
            "index.add" | "index.sub" | "index.mul" | "index.min" | "index.max" => {
                let kind = match name.as_str() {
                    "index.add" => IntOp::Add,
                    "index.sub" => IntOp::Sub,
                    "index.mul" => IntOp::Mul,
                    "index.min" => IntOp::MinU,
                    _ => IntOp::MaxU,
                };
                let (a, b) = (r!(ins[0]), r!(ins[1]));
                Op::Int(kind, a, b, body.define(outs[0]))
            }
            "index.cast" => {
                let a = r!(ins[0]);
                Op::Move(a, body.define(outs[0]))
            }
            "index.cmp" => {
                let predicate = match string_attribute(op, "predicate").as_deref() {
                    Some("eq") => Predicate::Eq,
                    Some("ne") => Predicate::Ne,
                    Some("slt") => Predicate::Slt,
                    Some("sle") => Predicate::Sle,
                    Some("sgt") => Predicate::Sgt,
                    Some("sge") => Predicate::Sge,
                    Some("ult") => Predicate::Ult,
                    Some("ule") => Predicate::Ule,
                    Some("ugt") => Predicate::Ugt,
                    Some("uge") => Predicate::Uge,
                    other => return self.error(op, format!("unknown predicate {other:?}")),
                };
                let (a, b) = (r!(ins[0]), r!(ins[1]));
                Op::Cmp(predicate, a, b, body.define(outs[0]))
            }
            "index.assume" => {
                let range = attribute(op, "range").map(dense_i64_values);
                let input = r!(ins[0]);
                body.alias(outs[0], input);
                Op::Assume {
                    input,
                    range: range.map(|r| (r[0], r[1])),
                    multiple_of: int_attribute(op, "multiple_of"),
                }
            }
            "scalar.constant" | "vector.constant" => {
                let attr = attribute(op, "value").expect("verified constants have a value");
                let ty = value_type(outs[0]);
                let Some(elem @ (Elem::F32 | Elem::BF16)) = elem_of(ty) else {
                    body.define(outs[0]);
                    let message = unsupported_lanes(&name, ty).unwrap_or_default();
                    body.emit(current, Op::Unsupported(message), &loc);
                    return Ok(current);
                };
                let scalar = float_constant(attr, elem);
                let v = match vector_lanes(ty) {
                    Some(lanes) => Value::splat(&scalar, lanes),
                    None => scalar,
                };
                Op::Const(v, body.define(outs[0]))
            }
            "scalar.addf" | "scalar.subf" | "scalar.mulf" | "vector.addf" | "vector.mulf" => {
                let kind = match name.rsplit('.').next() {
                    Some("addf") => FloatOp::Add,
                    Some("subf") => FloatOp::Sub,
                    _ => FloatOp::Mul,
                };
                let (a, b) = (r!(ins[0]), r!(ins[1]));
                Op::Float(kind, a, b, body.define(outs[0]))
            }
            "scalar.fptrunc" | "scalar.extf" | "vector.fptrunc" | "vector.extf" => {
                let (from, to) = (value_type(ins[0]), value_type(outs[0]));
                let Some(elem @ (Elem::F32 | Elem::BF16)) = elem_of(to) else {
                    body.define(outs[0]);
                    let message = unsupported_lanes(&name, to).unwrap_or_default();
                    body.emit(current, Op::Unsupported(message), &loc);
                    return Ok(current);
                };
                if let Some(message) = unsupported_lanes(&name, from) {
                    body.define(outs[0]);
                    body.emit(current, Op::Unsupported(message), &loc);
                    return Ok(current);
                }
                let a = r!(ins[0]);
                Op::Convert(a, elem, body.define(outs[0]))
            }
            "scf.select" => {
                let (c, a, b) = (r!(ins[0]), r!(ins[1]), r!(ins[2]));
                Op::Select(c, a, b, body.define(outs[0]))
            }
            "vector.splat" => {
                if let Some(message) = unsupported_lanes(&name, value_type(outs[0])) {
                    body.define(outs[0]);
                    Op::Unsupported(message)
                } else {
                    let lanes = vector_lanes(value_type(outs[0])).unwrap_or(1);
                    let a = r!(ins[0]);
                    Op::Splat(a, lanes, body.define(outs[0]))
                }
            }
            "vector.interleave" => {
                if int_attribute(op, "mode") != Some(0) {
                    return self.error(op, "only interleave mode 0 is implemented".into());
                }
                let (a, b) = (r!(ins[0]), r!(ins[1]));
                Op::Interleave(a, b, body.define(outs[0]))
            }
            "vector.dot2f" => {
                let (a, b, c) = (r!(ins[0]), r!(ins[1]), r!(ins[2]));
                Op::Dot2f(a, b, c, body.define(outs[0]))
            }
            "vector.extract" => {
                let position = attribute(op, "position")
                    .map(dense_i64_values)
                    .unwrap_or_default();
                let a = r!(ins[0]);
                Op::Extract(
                    a,
                    position.first().copied().unwrap_or(0) as usize,
                    body.define(outs[0]),
                )
            }
            "vector.load" if unsupported_lanes(&name, value_type(outs[0])).is_some() => {
                body.define(outs[0]);
                Op::Unsupported(unsupported_lanes(&name, value_type(outs[0])).unwrap_or_default())
            }
            "vector.store" if unsupported_lanes(&name, value_type(ins[0])).is_some() => {
                Op::Unsupported(unsupported_lanes(&name, value_type(ins[0])).unwrap_or_default())
            }
            "vector.load" | "view.load" => {
                let typed = self.typed_operands(op);
                let view = r!(typed[0]);
                let indices = self.indices(body, op, &typed[1..])?;
                Op::Load {
                    view,
                    indices,
                    lanes: vector_lanes(value_type(outs[0])),
                    result: body.define(outs[0]),
                }
            }
            "vector.store" | "view.store" => {
                let typed = self.typed_operands(op);
                let (value, view) = (r!(typed[0]), r!(typed[1]));
                let indices = self.indices(body, op, &typed[2..])?;
                Op::Store {
                    value,
                    view,
                    indices,
                }
            }
            "buffer.assume.alignment" => {
                let srcs = self.regs(body, op, &ins)?;
                let dsts = outs.iter().map(|&v| body.define(v)).collect();
                Op::AssumeAlignment(
                    srcs,
                    int_attribute(op, "minimum_alignment").unwrap_or(1) as u64,
                    dsts,
                )
            }
            "buffer.assume.noalias" => {
                let srcs = self.regs(body, op, &ins)?;
                let dsts = outs.iter().map(|&v| body.define(v)).collect();
                Op::AssumeNoalias(srcs, dsts)
            }
            "buffer.alloca" => {
                let size = r!(*ins.last().expect("alloca has a size"));
                let align = int_attribute(op, "alignment").unwrap_or(1).max(1) as u64;
                Op::Alloca(size, align, body.define(outs[0]))
            }
            "aie2p.tile.buffer" => {
                let tile = dense_i64_values(attribute(op, "tile").expect("verified"));
                Op::TileBuffer {
                    tile: (tile[0] as u32, tile[1] as u32),
                    offset: int_attribute(op, "offset").unwrap_or(0) as usize,
                    size: int_attribute(op, "size").unwrap_or(0) as usize,
                    result: body.define(outs[0]),
                }
            }
            "aie2p.lock.acquire" | "aie2p.lock.release" => {
                let tile = dense_i64_values(attribute(op, "tile").expect("verified"));
                let lock = Lock {
                    tile: (tile[0] as u32, tile[1] as u32),
                    id: int_attribute(op, "lock").unwrap_or(0) as u32,
                    value: int_attribute(op, "value").unwrap_or(0) as u32,
                };
                if name == "aie2p.lock.acquire" {
                    Op::LockAcquire(lock)
                } else {
                    Op::LockRelease(lock)
                }
            }
            "buffer.view" => {
                let (buffer, offset) = (r!(ins[0]), r!(ins[1]));
                let Some((shape, elem)) = view_shape(value_type(outs[0])) else {
                    return self.error(op, "has a view type the interpreter cannot read".into());
                };
                let mut dims = ins[2..].iter();
                let mut spec = Vec::new();
                for d in shape {
                    spec.push(match d {
                        Some(n) => Dim::Fixed(n),
                        None => match dims.next() {
                            Some(&v) => Dim::Reg(r!(v)),
                            None => return self.error(op, "lacks a dimension operand".into()),
                        },
                    });
                }
                Op::View {
                    buffer,
                    offset,
                    shape: spec,
                    elem,
                    result: body.define(outs[0]),
                }
            }
            "pipeline.memory" => Op::Pool(body.define(outs[0])),
            "pipeline.strand" => {
                let origins = attribute(op, "origins")
                    .map(dense_i64_values)
                    .unwrap_or_default();
                let counts = attribute(op, "counts")
                    .map(dense_i64_values)
                    .unwrap_or_default();
                let strides = attribute(op, "strides")
                    .map(dense_i64_values)
                    .unwrap_or_default();
                let mut workers = Vec::new();
                if origins.len() == 2 && counts.len() == 2 && strides.len() == 2 {
                    for c in 0..counts[0] {
                        for r in 0..counts[1] {
                            workers
                                .push([origins[0] + c * strides[0], origins[1] + r * strides[1]]);
                        }
                    }
                }
                let id = self.strand(body, op, &loc)?;
                Op::Spawn { body: id, workers }
            }
            "channel.bind" => {
                let (slots, capacity) = (r!(ins[0]), r!(ins[1]));
                Op::Bind(slots, capacity, body.define(outs[0]))
            }
            "channel.reserve" | "channel.acquire" => {
                let ch = r!(ins[0]);
                let (obligation, view) = (body.define(outs[0]), body.define(outs[1]));
                if name == "channel.reserve" {
                    Op::Reserve(ch, obligation, view)
                } else {
                    Op::Acquire(ch, obligation, view)
                }
            }
            "channel.publish" => Op::Publish(r!(ins[0])),
            "channel.release" => Op::Release(r!(ins[0])),
            "kernel.async.copy" => {
                let (src, dst) = (r!(ins[0]), r!(ins[1]));
                Op::Copy(src, dst, body.define(outs[0]))
            }
            "kernel.async.group" => {
                let tokens = self.regs(body, op, &ins)?;
                Op::Group(tokens, body.define(outs[0]))
            }
            "kernel.async.wait" => Op::Wait(
                r!(ins[0]),
                int_attribute(op, "newer_groups").unwrap_or(0) as u64,
            ),
            "func.call" => {
                let callee = symbol_ref(op, "callee").unwrap_or_default();
                let Some(&id) = self.functions.get(&callee) else {
                    body.emit(
                        current,
                        Op::Unsupported(format!(
                            "func.call @{callee} calls a declaration, which has no body to run"
                        )),
                        &loc,
                    );
                    for &v in &outs {
                        body.define(v);
                    }
                    return Ok(current);
                };
                let args = self.typed_operands(op);
                let args = self.regs(body, op, &args)?;
                let dsts = outs.iter().map(|&v| body.define(v)).collect();
                Op::Call(id, args, dsts)
            }
            "config.get" => Op::ConfigGet(
                symbol_ref(op, "name").unwrap_or_default(),
                body.define(outs[0]),
            ),
            "cfg.br" => {
                // SAFETY: a branch has one successor.
                let dest = unsafe { mlirOperationGetSuccessor(op, 0) };
                let (target, args) = (blocks[&(dest.ptr as usize)], self.regs(body, op, &ins)?);
                match body.blocks[current].insts.last().map(|i| &i.op) {
                    Some(&Op::Int(kind, a, b, d)) => {
                        body.blocks[current].insts.pop();
                        Op::IntBr(kind, a, b, d, target, args)
                    }
                    _ => Op::Br(target, args),
                }
            }
            "cfg.cond_br" => {
                let sizes = attribute(op, "operandSegmentSizes").expect("cond_br has segments");
                // SAFETY: a dense i32 array of three sizes; two successors.
                let (t, f) = unsafe {
                    (
                        mlirDenseI32ArrayGetElement(sizes, 1) as usize,
                        (
                            mlirOperationGetSuccessor(op, 0),
                            mlirOperationGetSuccessor(op, 1),
                        ),
                    )
                };
                let cond = r!(ins[0]);
                let yes = self.regs(body, op, &ins[1..1 + t])?;
                let no = self.regs(body, op, &ins[1 + t..])?;
                let (yes_block, no_block) =
                    (blocks[&(f.0.ptr as usize)], blocks[&(f.1.ptr as usize)]);
                let fusable = uses(ins[0]).len() == 1;
                match body.blocks[current].insts.last().map(|i| &i.op) {
                    Some(&Op::Cmp(p, a, b, d)) if fusable && d == cond => {
                        body.blocks[current].insts.pop();
                        Op::CmpBr(p, a, b, yes_block, yes, no_block, no)
                    }
                    _ => Op::CondBr(cond, yes_block, yes, no_block, no),
                }
            }
            "func.return" => Op::Return(self.regs(body, op, &ins)?),
            "scf.yield" => {
                let values = self.regs(body, op, &ins)?;
                match yield_to {
                    Some(Yield::Loop {
                        header,
                        induction,
                        step,
                    }) => {
                        let next = body.fresh();
                        let mut args = vec![next];
                        args.extend(values);
                        Op::IntBr(IntOp::Add, *induction, *step, next, *header, args)
                    }
                    Some(Yield::Join(join)) => Op::Br(*join, values),
                    None => return self.error(op, "yields outside a structured op".into()),
                }
            }
            "scf.for" => return self.for_loop(body, op, current, blocks, &loc),
            "scf.if" => return self.if_op(body, op, current, blocks, &loc),
            // The configuration function of a native realization runs as
            // TXN control code on the array simulator, not here.
            other if other.starts_with("aie2p.") => Op::Unsupported(format!(
                "`{other}` is configuration code of a native realization; it runs on the array simulator (loom-test --device=sim)"
            )),
            other => {
                return self.error(op, format!("the interpreter does not implement `{other}`"));
            }
        };
        body.emit(current, emitted, &loc);
        Ok(current)
    }

    fn for_loop(
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
        // SAFETY: a loop has one region with one block.
        let region_block = unsafe { mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0)) };
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

    fn if_op(
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
        // SAFETY: an scf.if has two regions; the else region may be empty.
        let (then_region, else_region) = unsafe {
            (
                mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0)),
                mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 1)),
            )
        };
        let else_block = if else_region.ptr.is_null() {
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
        if !else_region.ptr.is_null() {
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
    fn strand(&mut self, body: &mut Body, op: MlirOperation, loc: &Rc<str>) -> Result<FuncId> {
        // Strand blocks get their own block list, but define registers in
        // the pipeline's numbering (they read captured values directly).
        let mut strand = Body {
            regs: std::mem::take(&mut body.regs),
            next: body.next,
            blocks: Vec::new(),
        };
        let entry = strand.block();
        // SAFETY: a strand has one region.
        let region = unsafe { mlirOperationGetRegion(op, 0) };
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

    fn function(&mut self, op: MlirOperation, id: FuncId) -> Result<()> {
        let loc: Rc<str> = location_text(location(op)).into();
        let mut body = Body::new();
        let entry = body.block();
        // SAFETY: functions and pipelines have one region.
        let region = unsafe { mlirOperationGetRegion(op, 0) };
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

/// Translate every function and pipeline of `module`.
pub fn translate(module: MlirOperation) -> Result<Program> {
    let mut t = Translator {
        program: Program::default(),
        functions: HashMap::new(),
    };
    // Functions first get their ids, so calls resolve in any order.
    let mut defined = Vec::new();
    for op in top_level_ops(module) {
        let kind = op_name(op);
        if kind == "config.def" {
            let facts = ConfigFacts {
                range: attribute(op, "range")
                    .map(dense_i64_values)
                    .map(|r| (r[0], r[1])),
                multiple_of: int_attribute(op, "multiple_of"),
            };
            t.program
                .configs
                .insert(symbol_name(op).unwrap_or_default(), facts);
            continue;
        }
        if kind != "func.def" && kind != "pipeline.def" {
            continue;
        }
        // SAFETY: one region each.
        let has_body = unsafe {
            !mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0))
                .ptr
                .is_null()
        };
        if !has_body {
            continue;
        }
        let name = symbol_name(op).unwrap_or_default();
        let id = t.program.functions.len();
        t.program.functions.push(Function {
            name: name.clone(),
            ..Function::default()
        });
        if kind == "func.def" {
            t.functions.insert(name, id);
        } else {
            // SAFETY: a pipeline has one region with an entry block.
            let entry = unsafe { mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0)) };
            let args = arguments(entry);
            let run_args = args.iter().map(|&a| value_name(a)).collect();
            let arg_types = args
                .iter()
                .map(|&a| {
                    let ty = type_text(value_type(a));
                    if ty == "!buffer.buffer" {
                        "buffer".to_string()
                    } else {
                        ty
                    }
                })
                .collect();
            t.program.pipelines.insert(
                name,
                Pipeline {
                    body: id,
                    run_args,
                    arg_types,
                },
            );
        }
        defined.push((op, id));
    }
    for (op, id) in defined {
        t.function(op, id)?;
    }
    Ok(t.program)
}
