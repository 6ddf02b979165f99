//! Memory: tile buffers are addresses in one of the core's four data views
//! (south 0x40000, west 0x50000, north 0x60000, own 0x70000, 64 KiB each),
//! `buffer.view` adds its byte offset, and `view.load`/`view.store` of a
//! scalar compute the element's address (row-major) into a pointer and
//! access it with `lda`/`st`. Addresses known when compiling stay symbolic
//! until an access needs them in a pointer.

use super::locks::{side, Side};
use super::{fail, Selector, Val};
use crate::attributes::{int, tile};
use loom_aie2p_codegen::MachineOperand::{Imm, VReg as V};
use loom_aie2p_codegen::{FunctionBuilder, RegClass, VReg};
use loom_diagnostic::Diagnostic;
use loom_dialects::ir::*;
use loom_dialects::names::{aie2p, buffer, view};
use mlir_sys::{MlirOperation, MlirValue};

/// A data view spans 64 KiB.
const VIEW_BYTES: i64 = 0x1_0000;

fn view_base(side: Side) -> u32 {
    match side {
        Side::South => 0x4_0000,
        Side::West => 0x5_0000,
        Side::North => 0x6_0000,
        Side::Own => 0x7_0000,
    }
}

/// An element type's bytes in memory and the bytes a register holds of it.
fn element_bytes(element: &str) -> Option<u32> {
    match element {
        "f32" | "i32" => Some(4),
        // 64-bit in memory; computed in 32 bits (see the module doc of select).
        "index" | "i64" => Some(8),
        "bf16" | "i16" => Some(2),
        "i8" => Some(1),
        _ => None,
    }
}

/// The view's row-major shape with every dimension known.
fn shape(s: &Selector, op: MlirOperation, v: MlirValue) -> Result<(Vec<i64>, String), Diagnostic> {
    let ty = value_type(v);
    let Some((dims, element)) = view_type_shape(ty) else {
        return Err(fail(op, format!("`{}` is not a view type", type_text(ty))));
    };
    let mut dynamic = value_dims(v).unwrap_or_default().into_iter();
    let mut out = Vec::new();
    for d in dims {
        let n = match d {
            Some(n) => n as i64,
            None => match dynamic.next().map(|d| s.val(op, d)).transpose()? {
                Some(Val::Const(n)) => n,
                _ => {
                    return Err(fail(
                        op,
                        format!(
                            "the view `{}` has a dimension not known when compiling; \
                             AIE2P selection needs every dimension but the first constant",
                            type_text(ty)
                        ),
                    ))
                }
            },
        };
        out.push(n);
    }
    Ok((out, element))
}

/// The element type of the view `v` ("" if it is none).
pub(crate) fn view_element(v: MlirValue) -> String {
    view_type_shape(value_type(v)).map_or_else(String::new, |(_, element)| element)
}

/// A pointer to the element at `indices` of the view `v`, and the byte
/// displacement of the element from it: each of `accesses` (an opcode
/// record and its own offset from the element) takes the displacement plus
/// its offset as its immediate `imm`. An address that differs by a
/// constant from one this block put in a pointer, within every access's
/// reach, reuses that pointer (select/affine.rs).
pub(crate) fn element_pointer(
    s: &mut Selector,
    op: MlirOperation,
    v: MlirValue,
    dynamic: &[MlirValue],
    static_indices: &[i64],
    accesses: &[(&str, i64)],
) -> Result<(VReg, i64, String), Diagnostic> {
    let (dims, element) = shape(s, op, v)?;
    let Some(size) = element_bytes(&element) else {
        return Err(fail(
            op,
            format!(
                "`{}` of `{element}` elements has no AIE2P pattern",
                op_name(op)
            ),
        ));
    };
    let Val::Addr { base, offset } = s.val(op, v)? else {
        return Err(fail(
            op,
            "internal compiler error: a view without an address",
        ));
    };
    // (the index's value, its dimension's stride in bytes)
    let mut indices = Vec::new();
    let mut next = dynamic.iter();
    for (position, &index) in static_indices.iter().enumerate() {
        let stride: i64 = dims[position + 1..].iter().product::<i64>() * i64::from(size);
        let value = if index == i64::MIN {
            match next.next() {
                Some(&d) => s.val(op, d)?,
                None => return Err(fail(op, "internal compiler error: too few indices")),
            }
        } else {
            Val::Const(index)
        };
        indices.push((value, stride));
    }
    let mut form = s.form(Val::Addr { base, offset });
    for &(value, stride) in &indices {
        form = form.and_then(|f| f.add_scaled(&s.form(value)?, stride));
    }
    if let Some(form) = &form {
        let reaches = |d: i64| {
            accesses
                .iter()
                .all(|&(opcode, at)| FunctionBuilder::admits_immediate(opcode, "imm", d + at))
        };
        let near: Vec<(VReg, i64)> = s.pointer_near(form).collect();
        if let Some(&(p, d)) = near.iter().find(|&&(_, d)| reaches(d)) {
            return Ok((p, d, element));
        }
        // Beyond every access's reach of the newest such pointer: step it
        // by a modifier (`padda [p], m`, one load or store slot) instead
        // of computing the address afresh.
        if let Some(&(from, d)) = near.first() {
            let p = s.step_pointer(op, from, d, form.clone())?;
            return Ok((p, 0, element));
        }
    }
    // Afresh, from the registers the indices are in (the offset's first).
    let mut constant = i64::from(base);
    let mut terms: Vec<(VReg, i64)> = offset.map(|o| (o, 1)).into_iter().collect();
    for (value, stride) in indices {
        match value {
            Val::Const(c) => constant += c * stride,
            other => terms.push((s.materialize(op, other)?, stride)),
        }
    }
    let p = s.computed_pointer(op, &terms, constant)?;
    if let Some(form) = form {
        s.found_pointer(&form);
        s.remember_pointer(form, p);
    }
    Ok((p, 0, element))
}

/// The index operands and static positions of a view access whose view is
/// operand `view_at` (its segments: [value,] view, indices, type dims).
pub(crate) fn access(op: MlirOperation, view_at: usize) -> (MlirValue, Vec<MlirValue>, Vec<i64>) {
    let ins = operands(op);
    let count = attribute(op, "operandSegmentSizes")
        .map_or(0, |a| dense_i32_element(a, view_at as isize + 1) as usize);
    let positions = attribute(op, "static_indices")
        .map(dense_i64_values)
        .unwrap_or_default();
    (
        ins[view_at],
        ins[view_at + 1..view_at + 1 + count].to_vec(),
        positions,
    )
}

pub(crate) fn select(s: &mut Selector, op: MlirOperation, name: &str) -> Result<bool, Diagnostic> {
    match name {
        aie2p::TILE_BUFFER => {
            let at = tile(op, "tile");
            let core = s.core();
            let Some(side) = side(core, at) else {
                return Err(fail(
                    op,
                    format!("the core of tile {core} addresses the data memory of its own tile and its south, west and north neighbours, not tile {at}"),
                ));
            };
            let (offset, size) = (int(op, "offset"), int(op, "size"));
            if offset < 0 || size < 0 || offset + size > VIEW_BYTES {
                return Err(fail(
                    op,
                    format!(
                        "bytes [{offset}, {}) are outside the tile's 64 KiB data memory",
                        offset + size
                    ),
                ));
            }
            let base = view_base(side) + offset as u32;
            if string_attribute(op, "role").as_deref() == Some("stack") && side == Side::Own {
                s.set_stack(base, size as u32);
            }
            s.define(results(op)[0], Val::Addr { base, offset: None });
        }
        buffer::VIEW => {
            let ins = operands(op);
            let Val::Addr { base, offset } = s.val(op, ins[0])? else {
                return Err(fail(
                    op,
                    "internal compiler error: a buffer without an address",
                ));
            };
            let out = match s.val(op, ins[1])? {
                Val::Const(c) => match u32::try_from(i64::from(base) + c) {
                    Ok(base) => Val::Addr { base, offset },
                    Err(_) => {
                        return Err(fail(
                            op,
                            format!("offset {c} is outside the core's addresses"),
                        ))
                    }
                },
                other => {
                    let r = s.materialize(op, other)?;
                    let offset = Some(match offset {
                        None => r,
                        Some(t) => s.binary(op, "ADD_alu_r_rr", t, r)?,
                    });
                    Val::Addr { base, offset }
                }
            };
            s.define(results(op)[0], out);
        }
        view::LOAD => {
            let (v, dynamic, positions) = access(op, 0);
            // Integers are held sign-extended (docs/semantics.md,
            // "Integers"); bf16 is its bits.
            let opcode = match view_element(v).as_str() {
                "bf16" => "LDA_u16_idx_imm",
                "i16" => "LDA_s16_idx_imm",
                "i8" => "LDA_s8_idx_imm",
                // The low word of a 64-bit index.
                _ => "LDA_dms_lda_idx_imm",
            };
            let (p, at, _) = element_pointer(s, op, v, &dynamic, &positions, &[(opcode, 0)])?;
            let d = s.vreg(RegClass::Scalar);
            s.inst(op, opcode, &[V(d), V(p), Imm(at)])?;
            s.define(results(op)[0], Val::Reg(d));
        }
        view::STORE => {
            let (v, dynamic, positions) = access(op, 1);
            let value = s.scalar(op, operands(op)[0])?;
            let element = view_element(v);
            let opcode = match element.as_str() {
                "bf16" | "i16" => "ST_s16_idx_imm",
                "i8" => "ST_s8_idx_imm",
                _ => "ST_dms_sts_idx_imm",
            };
            // A 64-bit index is two words.
            let words: &[(&str, i64)] = match element.as_str() {
                "index" | "i64" => &[(opcode, 0), (opcode, 4)],
                _ => &[(opcode, 0)],
            };
            let (p, at, _) = element_pointer(s, op, v, &dynamic, &positions, words)?;
            if words.len() == 2 {
                // The sign extension in the high word: -(value < 0).
                let zero = s.constant(op, 0)?;
                let negative = s.binary(op, "LT", value, zero)?;
                let high = s.binary(op, "SUB", zero, negative)?;
                s.inst(op, opcode, &[V(value), V(p), Imm(at)])?;
                s.inst(op, opcode, &[V(high), V(p), Imm(at + 4)])?;
            } else {
                s.inst(op, opcode, &[V(value), V(p), Imm(at)])?;
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}
