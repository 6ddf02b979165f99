//! One MLIR op into interpreter ops: the op-by-op table of the translation.

use crate::body::{Body, Yield};
use crate::types::{elem_of, float_constant, unsupported_lanes, vector_lanes, view_shape};
use crate::{ffi, Result, Translator};
use loom_dialects::ir::*;
use loom_dialects::names;
use loom_runtime::interp::matmul::Shape;
use loom_runtime::interp::program::{BlockId, Dim, FloatOp, IntOp, Lock, Op, Predicate};
use loom_runtime::interp::value::{Elem, Value};
use loom_targets::Tile;
use mlir_sys::{MlirBlock, MlirOperation};
use std::collections::HashMap;
use std::rc::Rc;

impl Translator {
    /// Translate the ops of `block` into `current`, following structured
    /// regions; returns the block where control continues.
    pub(crate) fn ops(
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
            names::index::CONSTANT => {
                let value = int_attribute(op, "value").unwrap_or(0);
                let is_bool = ffi::is_integer(value_type(outs[0]));
                let v = if is_bool {
                    Value::Bool(value != 0)
                } else {
                    Value::Int(value)
                };
                Op::Const(v, body.define(outs[0]))
            }
            names::index::ADD | names::index::SUB | names::index::MUL | names::index::MIN | names::index::MAX => {
                let kind = match name.as_str() {
                    names::index::ADD => IntOp::Add,
                    names::index::SUB => IntOp::Sub,
                    names::index::MUL => IntOp::Mul,
                    names::index::MIN => IntOp::MinU,
                    _ => IntOp::MaxU,
                };
                let (a, b) = (r!(ins[0]), r!(ins[1]));
                Op::Int(kind, a, b, body.define(outs[0]))
            }
            names::index::CAST => {
                let a = r!(ins[0]);
                Op::Move(a, body.define(outs[0]))
            }
            names::index::CMP => {
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
            names::index::ASSUME => {
                let range = attribute(op, "range").map(dense_i64_values);
                let input = r!(ins[0]);
                body.alias(outs[0], input);
                Op::Assume {
                    input,
                    range: range.map(|r| (r[0], r[1])),
                    multiple_of: int_attribute(op, "multiple_of"),
                }
            }
            names::scalar::CONSTANT | names::vector::CONSTANT => {
                let attr = attribute(op, "value").expect("verified constants have a value");
                let ty = value_type(outs[0]);
                let scalar = match elem_of(ty) {
                    Some(elem) if elem.is_integer() => {
                        let value = int_attribute(op, "value").expect("verified integer constants");
                        Value::Integer(elem, elem.wrap(value))
                    }
                    Some(elem @ (Elem::F32 | Elem::BF16)) => float_constant(attr, elem),
                    _ => {
                        body.define(outs[0]);
                        let message = unsupported_lanes(&name, ty).unwrap_or_default();
                        body.emit(current, Op::Unsupported(message), &loc);
                        return Ok(current);
                    }
                };
                let v = match vector_lanes(ty) {
                    Some(lanes) => Value::splat(&scalar, lanes),
                    None => scalar,
                };
                Op::Const(v, body.define(outs[0]))
            }
            names::scalar::ADDF | names::scalar::SUBF | names::scalar::MULF | names::vector::ADDF | names::vector::MULF => {
                let kind = match name.rsplit('.').next() {
                    Some("addf") => FloatOp::Add,
                    Some("subf") => FloatOp::Sub,
                    _ => FloatOp::Mul,
                };
                let (a, b) = (r!(ins[0]), r!(ins[1]));
                Op::Float(kind, a, b, body.define(outs[0]))
            }
            names::scalar::ADDI | names::scalar::SUBI | names::scalar::MULI | names::vector::ADDI | names::vector::SUBI | names::vector::MULI => {
                let kind = match name.rsplit('.').next() {
                    Some("addi") => IntOp::Add,
                    Some("subi") => IntOp::Sub,
                    _ => IntOp::Mul,
                };
                let (a, b) = (r!(ins[0]), r!(ins[1]));
                Op::Wrapping(kind, a, b, body.define(outs[0]))
            }
            names::vector::MAC => {
                let (a, b, c) = (r!(ins[0]), r!(ins[1]), r!(ins[2]));
                Op::Mac(a, b, c, body.define(outs[0]))
            }
            names::vector::MMAC => {
                let shape = attribute(op, "shape")
                    .map(dense_i64_values)
                    .unwrap_or_default();
                let [m, k, n] = shape[..] else {
                    return self.error(op, "vector.mmac needs a shape [m, k, n]".into());
                };
                let shape = Shape {
                    m: m as usize,
                    k: k as usize,
                    n: n as usize,
                };
                let (a, b, c) = (r!(ins[0]), r!(ins[1]), r!(ins[2]));
                Op::Mmac(shape, a, b, c, body.define(outs[0]))
            }
            names::scf::PICK => {
                let index = r!(ins[0]);
                let mut choices = Vec::with_capacity(ins.len() - 1);
                for &choice in &ins[1..] {
                    choices.push(r!(choice));
                }
                Op::Pick(index, choices, body.define(outs[0]))
            }
            names::vector::SRS => {
                let elem = elem_of(value_type(outs[0])).expect("verified srs lanes are integers");
                let shift = int_attribute(op, "shift").expect("verified srs has a shift") as u32;
                let a = r!(ins[0]);
                Op::Srs(a, shift, elem, body.define(outs[0]))
            }
            names::scalar::FPTRUNC | names::scalar::EXTF | names::vector::FPTRUNC | names::vector::EXTF => {
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
            names::scf::SELECT => {
                let (c, a, b) = (r!(ins[0]), r!(ins[1]), r!(ins[2]));
                Op::Select(c, a, b, body.define(outs[0]))
            }
            names::vector::SPLAT => {
                if let Some(message) = unsupported_lanes(&name, value_type(outs[0])) {
                    body.define(outs[0]);
                    Op::Unsupported(message)
                } else {
                    let lanes = vector_lanes(value_type(outs[0])).unwrap_or(1);
                    let a = r!(ins[0]);
                    Op::Splat(a, lanes, body.define(outs[0]))
                }
            }
            names::vector::INTERLEAVE => {
                if int_attribute(op, "mode") != Some(0) {
                    return self.error(op, "only interleave mode 0 is implemented".into());
                }
                let (a, b) = (r!(ins[0]), r!(ins[1]));
                Op::Interleave(a, b, body.define(outs[0]))
            }
            names::vector::DOT2F => {
                let (a, b, c) = (r!(ins[0]), r!(ins[1]), r!(ins[2]));
                Op::Dot2f(a, b, c, body.define(outs[0]))
            }
            names::vector::EXTRACT => {
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
            names::vector::LOAD if unsupported_lanes(&name, value_type(outs[0])).is_some() => {
                body.define(outs[0]);
                Op::Unsupported(unsupported_lanes(&name, value_type(outs[0])).unwrap_or_default())
            }
            names::vector::STORE if unsupported_lanes(&name, value_type(ins[0])).is_some() => {
                Op::Unsupported(unsupported_lanes(&name, value_type(ins[0])).unwrap_or_default())
            }
            names::vector::LOAD | names::view::LOAD => {
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
            names::vector::STORE | names::view::STORE => {
                let typed = self.typed_operands(op);
                let (value, view) = (r!(typed[0]), r!(typed[1]));
                let indices = self.indices(body, op, &typed[2..])?;
                Op::Store {
                    value,
                    view,
                    indices,
                }
            }
            names::buffer::ASSUME_ALIGNMENT => {
                let srcs = self.regs(body, op, &ins)?;
                let dsts = outs.iter().map(|&v| body.define(v)).collect();
                Op::AssumeAlignment(
                    srcs,
                    int_attribute(op, "minimum_alignment").unwrap_or(1) as u64,
                    dsts,
                )
            }
            names::buffer::ASSUME_NOALIAS => {
                let srcs = self.regs(body, op, &ins)?;
                let dsts = outs.iter().map(|&v| body.define(v)).collect();
                Op::AssumeNoalias(srcs, dsts)
            }
            names::buffer::ALLOCA => {
                let size = r!(*ins.last().expect("alloca has a size"));
                let align = int_attribute(op, "alignment").unwrap_or(1).max(1) as u64;
                Op::Alloca(size, align, body.define(outs[0]))
            }
            names::aie2p::TILE_BUFFER => {
                let tile = dense_i64_values(attribute(op, "tile").expect("verified"));
                Op::TileBuffer {
                    tile: Tile {
                        column: tile[0] as u32,
                        row: tile[1] as u32,
                    },
                    offset: int_attribute(op, "offset").unwrap_or(0) as usize,
                    size: int_attribute(op, "size").unwrap_or(0) as usize,
                    result: body.define(outs[0]),
                }
            }
            names::aie2p::LOCK_ACQUIRE | names::aie2p::LOCK_RELEASE => {
                let tile = dense_i64_values(attribute(op, "tile").expect("verified"));
                // A lock's coordinates, number and value are 32-bit words of
                // the hardware: a wider one would be cut, not refused.
                let word = |what: &str, v: i64| {
                    u32::try_from(v).map_err(|_| format!("the lock's {what} {v} is not a 32-bit word"))
                };
                let fields = (|| {
                    Ok::<_, String>(Lock {
                        tile: Tile {
                            column: word("column", tile.first().copied().unwrap_or(0))?,
                            row: word("row", tile.get(1).copied().unwrap_or(0))?,
                        },
                        id: word("number", int_attribute(op, "lock").unwrap_or(0))?,
                        value: word("value", int_attribute(op, "value").unwrap_or(0))?,
                    })
                })();
                let lock = match fields {
                    Ok(lock) => lock,
                    Err(message) => return self.error(op, message),
                };
                if name == names::aie2p::LOCK_ACQUIRE {
                    Op::LockAcquire(lock)
                } else {
                    Op::LockRelease(lock)
                }
            }
            names::buffer::VIEW => {
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
                let strides = view_type_strides(value_type(outs[0]))
                    .map(|list| list.into_iter().map(|s| s as usize).collect());
                Op::View {
                    buffer,
                    offset,
                    shape: spec,
                    elem,
                    strides,
                    result: body.define(outs[0]),
                }
            }
            names::pipeline::MEMORY => Op::Pool(body.define(outs[0])),
            names::pipeline::STRAND => {
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
                let mut instances = Vec::new();
                if origins.len() == 2 && counts.len() == 2 && strides.len() == 2 {
                    for c in 0..counts[0] {
                        for r in 0..counts[1] {
                            workers
                                .push([origins[0] + c * strides[0], origins[1] + r * strides[1]]);
                            instances.push([c, r]);
                        }
                    }
                }
                let id = self.strand(body, op, &loc)?;
                Op::Spawn {
                    body: id,
                    workers,
                    instances,
                }
            }
            names::pipeline::INSTANCE => {
                let (column, row) = (body.define(outs[0]), body.define(outs[1]));
                Op::Instance(column, row)
            }
            names::channel::BIND => {
                let (slots, capacity) = (r!(ins[0]), r!(ins[1]));
                Op::Bind(slots, capacity, body.define(outs[0]))
            }
            names::channel::RESERVE | names::channel::ACQUIRE => {
                let ch = r!(ins[0]);
                let (obligation, view) = (body.define(outs[0]), body.define(outs[1]));
                if name == names::channel::RESERVE {
                    Op::Reserve(ch, obligation, view)
                } else {
                    Op::Acquire(ch, obligation, view)
                }
            }
            names::channel::PUBLISH => Op::Publish(r!(ins[0])),
            names::channel::RELEASE => Op::Release(r!(ins[0])),
            names::view::REINTERPRET => {
                let Some((shape, _)) = view_shape(value_type(outs[0])) else {
                    return self.error(op, "has a view type the interpreter cannot read".into());
                };
                let Some(shape) = shape.into_iter().collect::<Option<Vec<usize>>>() else {
                    return self.error(op, "reinterprets a view of dynamic shape".into());
                };
                let strides = view_type_strides(value_type(outs[0]))
                    .map(|list| list.into_iter().map(|s| s as usize).collect());
                Op::Reinterpret {
                    source: r!(ins[0]),
                    shape,
                    strides,
                    result: body.define(outs[0]),
                }
            }
            names::view::PART => Op::Part {
                source: r!(ins[0]),
                index: r!(ins[1]),
                result: body.define(outs[0]),
            },
            names::kernel::ASYNC_COPY => {
                let (src, dst) = (r!(ins[0]), r!(ins[1]));
                Op::Copy(src, dst, body.define(outs[0]))
            }
            names::kernel::ASYNC_GROUP => {
                let tokens = self.regs(body, op, &ins)?;
                Op::Group(tokens, body.define(outs[0]))
            }
            names::kernel::ASYNC_WAIT => Op::Wait(
                r!(ins[0]),
                int_attribute(op, "newer_groups").unwrap_or(0) as u64,
            ),
            names::func::CALL => {
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
            names::config::GET => Op::ConfigGet(
                symbol_ref(op, "name").unwrap_or_default(),
                body.define(outs[0]),
            ),
            names::cfg::BR => {
                let dest = successors(op)[0];
                let (target, args) = (blocks[&(dest.ptr as usize)], self.regs(body, op, &ins)?);
                match body.blocks[current].insts.last().map(|i| &i.op) {
                    Some(&Op::Int(kind, a, b, d)) => {
                        body.blocks[current].insts.pop();
                        Op::IntBr(kind, a, b, d, target, args)
                    }
                    _ => Op::Br(target, args),
                }
            }
            names::cfg::COND_BR => {
                let sizes = attribute(op, "operandSegmentSizes").expect("cond_br has segments");
                // Three segment sizes; two successors.
                let t = dense_i32_element(sizes, 1) as usize;
                let targets = successors(op);
                let f = (targets[0], targets[1]);
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
            names::func::RETURN => Op::Return(self.regs(body, op, &ins)?),
            names::scf::YIELD => {
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
            names::scf::FOR => return self.for_loop(body, op, current, blocks, &loc),
            names::scf::IF => return self.if_op(body, op, current, blocks, &loc),
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
}
