//! Index and scalar values: constants, `index` arithmetic and compares,
//! casts and facts (no code), integer scalar arithmetic (i8, i16, i32), and
//! `scf.select` of scalars.

use super::{alias, fail, result_type, Selector, Val};
use loom_aie2p_codegen::{RegClass, VReg};
use loom_diagnostic::Diagnostic;
use loom_dialects::ir::*;
use loom_dialects::names::{index, scalar, scf};
use mlir_sys::MlirOperation;

/// The bits of a float constant of type `ty` (`f32`, or `bf16` rounded to
/// nearest even, as the interpreter's numerics do).
pub(crate) fn float_bits(value: f64, ty: &str) -> Option<i64> {
    let f = value as f32;
    match ty {
        "f32" => Some(i64::from(f.to_bits())),
        "bf16" => {
            let bits = f.to_bits();
            if f.is_nan() {
                return Some(i64::from((bits >> 16) | 0x40));
            }
            let round = 0x7fff + ((bits >> 16) & 1);
            Some(i64::from((bits.wrapping_add(round)) >> 16))
        }
        _ => None,
    }
}

/// `c ? a : b` for a condition of 0 or 1, without branches: with the mask
/// m = -c, `b ^ ((a ^ b) & m)`.
pub(crate) fn select_scalar(
    s: &mut Selector,
    op: MlirOperation,
    c: VReg,
    a: VReg,
    b: VReg,
) -> Result<VReg, Diagnostic> {
    let zero = s.constant(op, 0)?;
    let mask = s.binary(op, "SUB", zero, c)?;
    let diff = s.binary(op, "XOR", a, b)?;
    let chosen = s.binary(op, "AND", diff, mask)?;
    s.binary(op, "XOR", b, chosen)
}

/// A 32-bit result wrapped to `ty`: i8 and i16 values are held
/// sign-extended (docs/semantics.md, "Integers"), so the low 8 or 16 bits
/// are shifted to the top and arithmetically back.
fn wrap(s: &mut Selector, op: MlirOperation, r: VReg, ty: &str) -> Result<VReg, Diagnostic> {
    let spare = match ty {
        "i8" => 24,
        "i16" => 16,
        _ => return Ok(r),
    };
    let up = s.constant(op, spare)?;
    let down = s.constant(op, -spare)?;
    let high = s.binary(op, "LSHL", r, up)?;
    s.binary(op, "ASHL", high, down)
}

fn compare(
    s: &mut Selector,
    op: MlirOperation,
    predicate: &str,
    a: VReg,
    b: VReg,
) -> Result<VReg, Diagnostic> {
    let (opcode, swap) = match predicate {
        "eq" => ("EQ", false),
        "ne" => ("NE", false),
        "slt" => ("LT", false),
        "sgt" => ("LT", true),
        "sge" => ("GE", false),
        "sle" => ("GE", true),
        "ult" => ("LTU", false),
        "ugt" => ("LTU", true),
        "uge" => ("GEU", false),
        "ule" => ("GEU", true),
        other => {
            return Err(fail(
                op,
                format!("`index.cmp` predicate `{other}` has no AIE2P pattern"),
            ))
        }
    };
    if swap {
        s.binary(op, opcode, b, a)
    } else {
        s.binary(op, opcode, a, b)
    }
}

pub(crate) fn select(s: &mut Selector, op: MlirOperation, name: &str) -> Result<bool, Diagnostic> {
    match name {
        index::CONSTANT => {
            let c = int_attribute(op, "value").unwrap_or(0);
            s.define(results(op)[0], Val::Const(c));
        }
        scalar::CONSTANT => {
            let ty = result_type(op, 0);
            let bits = match (int_attribute(op, "value"), float_attribute(op, "value")) {
                (Some(i), _) => Some(i),
                (None, Some(f)) => float_bits(f, &ty),
                _ => None,
            };
            let Some(bits) = bits else {
                return Err(fail(
                    op,
                    format!("`scalar.constant` of type `{ty}` has no AIE2P pattern"),
                ));
            };
            s.define(results(op)[0], Val::Const(bits));
        }
        index::ASSUME | index::CAST => alias(s, op, 0)?,
        index::ADD | index::SUB | index::MUL => {
            let ins = operands(op);
            let (x, y) = (s.val(op, ins[0])?, s.val(op, ins[1])?);
            let out = match (name, x, y) {
                (index::ADD, Val::Const(a), Val::Const(b)) => Val::Const(a.wrapping_add(b)),
                (index::SUB, Val::Const(a), Val::Const(b)) => Val::Const(a.wrapping_sub(b)),
                (index::MUL, Val::Const(a), Val::Const(b)) => Val::Const(a.wrapping_mul(b)),
                (index::ADD, other, Val::Const(c)) | (index::ADD, Val::Const(c), other) => {
                    let r = s.materialize(op, other)?;
                    Val::Reg(s.add_constant(op, r, c)?)
                }
                (index::SUB, other, Val::Const(c)) if c != i64::MIN => {
                    let r = s.materialize(op, other)?;
                    Val::Reg(s.add_constant(op, r, -c)?)
                }
                _ => {
                    let opcode = match name {
                        index::ADD => "ADD_alu_r_rr",
                        index::SUB => "SUB",
                        _ => "MUL",
                    };
                    let (a, b) = (s.materialize(op, x)?, s.materialize(op, y)?);
                    Val::Reg(s.binary(op, opcode, a, b)?)
                }
            };
            s.define(results(op)[0], out);
        }
        scalar::ADDI | scalar::SUBI | scalar::MULI => {
            let ins = operands(op);
            let (a, b) = (s.scalar(op, ins[0])?, s.scalar(op, ins[1])?);
            let opcode = match name {
                scalar::ADDI => "ADD_alu_r_rr",
                scalar::SUBI => "SUB",
                _ => "MUL",
            };
            let r = s.binary(op, opcode, a, b)?;
            let r = wrap(s, op, r, &result_type(op, 0))?;
            s.define(results(op)[0], Val::Reg(r));
        }
        index::MIN | index::MAX => {
            let ins = operands(op);
            let (a, b) = (s.scalar(op, ins[0])?, s.scalar(op, ins[1])?);
            let less = s.binary(op, "LTU", a, b)?;
            let r = if name == index::MIN {
                select_scalar(s, op, less, a, b)?
            } else {
                select_scalar(s, op, less, b, a)?
            };
            s.define(results(op)[0], Val::Reg(r));
        }
        index::CMP => {
            let predicate = string_attribute(op, "predicate").unwrap_or_default();
            let ins = operands(op);
            let (a, b) = (s.scalar(op, ins[0])?, s.scalar(op, ins[1])?);
            let r = compare(s, op, &predicate, a, b)?;
            s.define(results(op)[0], Val::Reg(r));
        }
        scf::SELECT => {
            let ins = operands(op);
            let ty = result_type(op, 0);
            if super::class_of(&ty) != Some(RegClass::Scalar) {
                return Err(fail(
                    op,
                    format!("`scf.select` of `{ty}` has no AIE2P pattern yet"),
                ));
            }
            let c = s.scalar(op, ins[0])?;
            let (a, b) = (s.scalar(op, ins[1])?, s.scalar(op, ins[2])?);
            let r = select_scalar(s, op, c, a, b)?;
            s.define(results(op)[0], Val::Reg(r));
        }
        _ => return Ok(false),
    }
    Ok(true)
}
