//! Vectors on the vector unit, and the scalar float arithmetic that only
//! the vector unit can do (AIE2P has no scalar FPU).
//!
//! Each type has one register form: `vector<32xbf16>` an x register;
//! `vector<16xbf16>` the low half (`wl`) of one; `vector<16xf32>` the low
//! quarter (`bmll`) of a dm accumulator, where `vadd.f` and `vmac.f` work;
//! `vector<64xi32>` a whole dm, loaded and stored by quarters, where the
//! int8 matrix `vmac` of `vector.mmac [8, 8, 8]` accumulates.
//! Bits outside that part are unspecified (`MachineOperand::PartDef`).
//! Every instruction here is one the isa core models
//! (runtime/src/sim/core/isa/vector.rs), with its mode word or rounding
//! mode as the core's assumptions fix them (assumptions.rs A6-A8, A11).

use super::memory::{access, element_pointer};
use super::{fail, result_type, Selector, Val};
use loom_aie2p_codegen::MachineOperand::{self, Imm, Part as P, PartDef as Def, VReg as V};
use loom_aie2p_codegen::{Part, RegClass, VReg};
use loom_diagnostic::Diagnostic;
use loom_dialects::ir::*;
use loom_dialects::names::{scalar, vector};
use mlir_sys::MlirOperation;

/// A7: llvm-aie's bf16 / fp32 element-wise mode word (amode FP32, bmode
/// 16x16, cmode 1) for `vmac.f` and `vadd.f`.
const FP32_ELEMENTWISE: i64 = 0x3C;
/// A6: rnd_conv_even, the one rounding mode the isa core converts under.
const ROUND_NEAREST_EVEN: i64 = 12;
/// A11: llvm-aie's `mac_8x8_8x8` mode word for signed int8 by signed int8
/// into acc32 (amode I32, bmode 8x8, signX, signY).
const INT8_MATRIX_SIGNED: i64 = 0x308;
/// A dm's quarters in lane order, 64 bytes apart in memory.
const QUARTERS: [Part; 4] = [Part::LowLow, Part::LowHigh, Part::HighLow, Part::HighHigh];
/// A8: shuffle modes T16_32x2_lo / _hi (even / odd 16-bit elements of
/// s1 ‖ s2) and T16_2x32_lo (s1 and s2 interleaved, low halves).
const EVENS_16: i64 = 2;
const ODDS_16: i64 = 3;
const INTERLEAVE_16: i64 = 18;

/// The register forms of the vector types selection supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// vector<32xbf16>: a whole x.
    Bf16x32,
    /// vector<16xbf16>: the `wl` half of an x.
    Bf16x16,
    /// vector<16xf32>: the `bmll` quarter of a dm.
    F32x16,
    /// vector<64xi32>: a whole dm, lanes 0-15 in `bmll` ... 48-63 in
    /// `bmhh` (what the int8 matrix `vmac` accumulates into).
    I32x64,
    /// vector<64xi8>, vector<32xi16>, vector<16xi32> (lanes of this many
    /// bits): a whole x, each lane's bits in place.
    Int(u32),
}

pub(crate) fn form(ty: &str) -> Option<Form> {
    match ty {
        "vector<32xbf16>" => Some(Form::Bf16x32),
        "vector<16xbf16>" => Some(Form::Bf16x16),
        "vector<16xf32>" => Some(Form::F32x16),
        "vector<64xi8>" => Some(Form::Int(8)),
        "vector<32xi16>" => Some(Form::Int(16)),
        "vector<16xi32>" => Some(Form::Int(32)),
        "vector<64xi32>" => Some(Form::I32x64),
        _ => None,
    }
}

impl Form {
    /// The lanes' element type.
    fn element(self) -> &'static str {
        match self {
            Form::F32x16 => "f32",
            Form::Int(8) => "i8",
            Form::Int(16) => "i16",
            Form::Int(_) | Form::I32x64 => "i32",
            _ => "bf16",
        }
    }

    pub(crate) fn class(self) -> RegClass {
        match self {
            Form::F32x16 | Form::I32x64 => RegClass::Accumulator,
            _ => RegClass::Vector,
        }
    }
}

/// The lanes of a short f32 vector, kept one scalar per lane (`Val::Lanes`).
pub(crate) fn lane_count(ty: &str) -> Option<usize> {
    let n: usize = ty
        .strip_prefix("vector<")?
        .strip_suffix("xf32>")?
        .parse()
        .ok()?;
    (1..16).contains(&n).then_some(n)
}

fn form_of(op: MlirOperation, ty: &str) -> Result<Form, Diagnostic> {
    form(ty).ok_or_else(|| {
        fail(
            op,
            format!(
                "`{}` of `{ty}` has no AIE2P instruction selection pattern yet (vector<32xbf16>, \
                 vector<16xbf16>, vector<16xf32>, f32 vectors of fewer lanes, vector<64xi8>, \
                 vector<32xi16>, vector<16xi32> and vector<64xi32> have); compile with \
                 --worker-code=lowir to carry the worker as Low aie2p IR",
                op_name(op)
            ),
        )
    })
}

fn reg(s: &mut Selector, op: MlirOperation, i: usize) -> Result<VReg, Diagnostic> {
    s.scalar(op, operands(op)[i])
}

fn vreg_inst(
    s: &mut Selector,
    op: MlirOperation,
    class: RegClass,
    opcode: &str,
    build: impl FnOnce(VReg) -> Vec<MachineOperand>,
) -> Result<VReg, Diagnostic> {
    let d = s.vreg(class);
    s.inst(op, opcode, &build(d))?;
    Ok(d)
}

/// The mode word in a scalar.
fn mode_word(s: &mut Selector, op: MlirOperation) -> Result<VReg, Diagnostic> {
    s.constant(op, FP32_ELEMENTWISE)
}

/// crRnd set for a conversion to bf16; before each one, so no path
/// reaches a `vconv` without it (one `movx`, nothing else reads crRnd).
fn round_nearest_even(s: &mut Selector, op: MlirOperation) -> Result<(), Diagnostic> {
    s.inst(
        op,
        "MOVX_mvx_cr_imm",
        &[
            MachineOperand::Phys("crrnd".into()),
            Imm(ROUND_NEAREST_EVEN),
        ],
    )
}

/// A 32-bit scalar in every lane of an x.
fn broadcast(s: &mut Selector, op: MlirOperation, r: VReg, bits: u32) -> Result<VReg, Diagnostic> {
    let opcode = match bits {
        8 => "VBCST_8",
        16 => "VBCST_16",
        _ => "VBCST_32",
    };
    vreg_inst(s, op, RegClass::Vector, opcode, |d| vec![V(d), V(r)])
}

/// An x's low 512 bits as the `bmll` quarter of a new dm.
fn to_accumulator(s: &mut Selector, op: MlirOperation, x: VReg) -> Result<VReg, Diagnostic> {
    vreg_inst(s, op, RegClass::Accumulator, "VMOV_alu_mv_mv_x", |d| {
        vec![Def(d, Part::LowLow), V(x)]
    })
}

/// A dm's `bmll` quarter as a new x.
fn from_accumulator(s: &mut Selector, op: MlirOperation, acc: VReg) -> Result<VReg, Diagnostic> {
    vreg_inst(s, op, RegClass::Vector, "VMOV_alu_mv_mv_x", |d| {
        vec![V(d), P(acc, Part::LowLow)]
    })
}

/// Lane `lane` of an x as a scalar (16- or 32-bit lanes, zero-extended).
fn extract(
    s: &mut Selector,
    op: MlirOperation,
    x: VReg,
    lane: i64,
    bits: u32,
) -> Result<VReg, Diagnostic> {
    // An integer lane is sign-extended (docs/semantics.md, "Integers"); a
    // float lane is its bits.
    let opcode = match bits {
        8 => "VEXTRACT_8_vec_extract_imm_vaddSign1",
        16 => "VEXTRACT_16_vec_extract_imm_vaddSign0",
        _ => "VEXTRACT_32_vec_extract_imm_vaddSign0",
    };
    vreg_inst(s, op, RegClass::Scalar, opcode, |d| {
        vec![V(d), V(x), Imm(lane)]
    })
}

/// `vadd.f` or `vsub.f` of two dm.
fn add_accumulators(
    s: &mut Selector,
    op: MlirOperation,
    subtract: bool,
    a: VReg,
    b: VReg,
) -> Result<VReg, Diagnostic> {
    let conf = mode_word(s, op)?;
    let opcode = if subtract {
        "VSUB_f_vmac_cm2_add_reg"
    } else {
        "VADD_f_vmac_cm2_add_reg"
    };
    vreg_inst(s, op, RegClass::Accumulator, opcode, |d| {
        vec![V(d), V(a), V(b), V(conf)]
    })
}

/// The f32 lanes of a dm's `bmll` rounded to bf16 in the `wl` of a new x.
fn narrow(s: &mut Selector, op: MlirOperation, acc: VReg) -> Result<VReg, Diagnostic> {
    round_nearest_even(s, op)?;
    vreg_inst(
        s,
        op,
        RegClass::Vector,
        "VCONV_bf16_fp32_mv_w_srs_bf",
        |d| vec![Def(d, Part::Low), P(acc, Part::LowLow)],
    )
}

/// `scalar.addf`/`subf` of f32 and the scalar conversions: through lane 0
/// of the vector unit, as llvm-aie legalizes a bf16 scalar G_FADD
/// (AIELegalizerHelper::legalizeG_FADDSUB: insert into a v16f32, add,
/// extract); an f32 needs no conversion around it. `scalar.mulf` has no
/// pattern: the vector unit multiplies bf16, and an fp32 multiply is not
/// modelled by the isa core.
fn select_scalar(s: &mut Selector, op: MlirOperation, name: &str) -> Result<bool, Diagnostic> {
    match name {
        scalar::ADDF | scalar::SUBF => {
            let ty = result_type(op, 0);
            if ty != "f32" {
                return Err(fail(
                    op,
                    format!("`{name}` of `{ty}` has no AIE2P pattern yet (f32 has)"),
                ));
            }
            let (a, b) = (reg(s, op, 0)?, reg(s, op, 1)?);
            let r = add_f32(s, op, name == scalar::SUBF, a, b)?;
            s.define(results(op)[0], Val::Reg(r));
        }
        scalar::FPTRUNC => {
            scalar_conversion(op, name, "f32", "bf16")?;
            let a = reg(s, op, 0)?;
            let x = broadcast(s, op, a, 32)?;
            let acc = to_accumulator(s, op, x)?;
            let w = narrow(s, op, acc)?;
            let r = extract(s, op, w, 0, 16)?;
            s.define(results(op)[0], Val::Reg(r));
        }
        scalar::EXTF => {
            scalar_conversion(op, name, "bf16", "f32")?;
            // Exact: a bf16 is the high half of its f32.
            let a = reg(s, op, 0)?;
            let sixteen = s.constant(op, 16)?;
            let r = s.binary(op, "LSHL", a, sixteen)?;
            s.define(results(op)[0], Val::Reg(r));
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// `a + b` (or `a - b`) of two f32 scalars in lane 0 of the vector unit.
fn add_f32(
    s: &mut Selector,
    op: MlirOperation,
    subtract: bool,
    a: VReg,
    b: VReg,
) -> Result<VReg, Diagnostic> {
    let (xa, xb) = (broadcast(s, op, a, 32)?, broadcast(s, op, b, 32)?);
    let (da, db) = (to_accumulator(s, op, xa)?, to_accumulator(s, op, xb)?);
    let sum = add_accumulators(s, op, subtract, da, db)?;
    let x = from_accumulator(s, op, sum)?;
    extract(s, op, x, 0, 32)
}

/// A short f32 vector's ops, lane by lane on scalars.
fn select_lanes(s: &mut Selector, op: MlirOperation, name: &str) -> Result<bool, Diagnostic> {
    let results = results(op);
    // A store and an extract take the short vector; the others make one.
    let takes = matches!(name, vector::STORE | vector::EXTRACT);
    let Some(ty) = (if takes {
        operands(op).first().map(|&v| type_text(value_type(v)))
    } else {
        results.first().map(|&r| type_text(value_type(r)))
    }) else {
        return Ok(false);
    };
    let Some(n) = lane_count(&ty) else {
        return Ok(false);
    };
    match name {
        vector::CONSTANT => {
            let bits = lane_bits(op, "f32")?;
            s.define_lanes(results[0], vec![Val::Const(bits); n]);
        }
        vector::SPLAT => {
            let v = s.val(op, operands(op)[0])?;
            s.define_lanes(results[0], vec![v; n]);
        }
        vector::LOAD => {
            let (view, dynamic, positions) = access(op, 0);
            let words = lane_words("LDA_dms_lda_idx_imm", n);
            let (p, at, element) = element_pointer(s, op, view, &dynamic, &positions, &words)?;
            check_element(op, Form::F32x16, &element)?;
            let mut lanes = Vec::new();
            for (opcode, offset) in words {
                let d = s.vreg(RegClass::Scalar);
                s.inst(op, opcode, &[V(d), V(p), Imm(at + offset)])?;
                lanes.push(Val::Reg(d));
            }
            s.define_lanes(results[0], lanes);
        }
        vector::STORE => {
            let lanes = s.lanes(op, operands(op)[0])?;
            let (view, dynamic, positions) = access(op, 1);
            let words = lane_words("ST_dms_sts_idx_imm", lanes.len());
            let (p, at, element) = element_pointer(s, op, view, &dynamic, &positions, &words)?;
            check_element(op, Form::F32x16, &element)?;
            for (lane, (opcode, offset)) in lanes.into_iter().zip(words) {
                let r = s.materialize(op, lane)?;
                s.inst(op, opcode, &[V(r), V(p), Imm(at + offset)])?;
            }
        }
        vector::EXTRACT => {
            let lanes = s.lanes(op, operands(op)[0])?;
            let lane = attribute(op, "position")
                .map(dense_i64_values)
                .and_then(|p| p.first().copied())
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| lanes.get(i).copied());
            let Some(lane) = lane else {
                return Err(fail(op, "internal compiler error: a lane out of range"));
            };
            s.define(results[0], lane);
        }
        vector::ADDF => {
            let ins = operands(op);
            let (a, b) = (s.lanes(op, ins[0])?, s.lanes(op, ins[1])?);
            let mut lanes = Vec::new();
            for (x, y) in a.into_iter().zip(b) {
                let (x, y) = (s.materialize(op, x)?, s.materialize(op, y)?);
                lanes.push(Val::Reg(add_f32(s, op, false, x, y)?));
            }
            s.define_lanes(results[0], lanes);
        }
        _ => {
            return Err(fail(
                op,
                format!(
                    "`{name}` of `{ty}` has no AIE2P instruction selection pattern yet; \
                     compile with --worker-code=lowir to carry the worker as Low aie2p IR"
                ),
            ))
        }
    }
    Ok(true)
}

/// The bits of one lane of a constant of element type `element`.
fn lane_bits(op: MlirOperation, element: &str) -> Result<i64, Diagnostic> {
    if element.starts_with('i') {
        return int_attribute(op, "value")
            .ok_or_else(|| fail(op, format!("`vector.constant` of `{element}` lanes")));
    }
    let value = float_attribute(op, "value").unwrap_or(0.0);
    super::scalar::float_bits(value, element)
        .ok_or_else(|| fail(op, format!("`vector.constant` of `{element}` lanes")))
}

/// `s` (a scalar's bits) in every lane of a value of form `f`.
fn splat(s: &mut Selector, op: MlirOperation, f: Form, r: VReg) -> Result<VReg, Diagnostic> {
    match f {
        Form::F32x16 => {
            let x = broadcast(s, op, r, 32)?;
            to_accumulator(s, op, x)
        }
        Form::Int(bits) => broadcast(s, op, r, bits),
        Form::I32x64 => Err(fail(
            op,
            format!(
                "`{}` of vector<64xi32> has no AIE2P pattern yet (its zero constant has: vclr)",
                op_name(op)
            ),
        )),
        _ => broadcast(s, op, r, 16),
    }
}

/// `opcode` at each of `n` words, 4 bytes apart: a short f32 vector's lanes.
fn lane_words(opcode: &str, n: usize) -> Vec<(&str, i64)> {
    (0..n).map(|i| (opcode, 4 * i as i64)).collect()
}

/// The four `bm` quarters of a dm, 64 bytes apart, each by `opcode`.
fn quarter_accesses(opcode: &str) -> Vec<(&str, i64)> {
    (0..QUARTERS.len())
        .map(|k| (opcode, 64 * k as i64))
        .collect()
}

/// A vector<64xi32> from the 256 bytes at `p` + `at`: its first quarter
/// defines a dm, the other three are written into it
/// (MachineOperand::PartInto).
fn load_quarters(
    s: &mut Selector,
    op: MlirOperation,
    p: VReg,
    at: i64,
) -> Result<VReg, Diagnostic> {
    let mut whole = s.vreg(RegClass::Accumulator);
    for (k, part) in QUARTERS.into_iter().enumerate() {
        let out = if k == 0 {
            Def(whole, part)
        } else {
            let next = s.vreg(RegClass::Accumulator);
            let written = MachineOperand::PartInto(next, whole, part);
            whole = next;
            written
        };
        let (b, block, location) = s.builder();
        let r = b.load(
            block,
            "VLDA_dmx_lda_bm_idx_imm",
            &[out, V(p), Imm(at + 64 * k as i64)],
            location,
        );
        s.built(op, r)?;
    }
    Ok(whole)
}

fn shuffle(
    s: &mut Selector,
    op: MlirOperation,
    a: VReg,
    b: VReg,
    mode: i64,
) -> Result<VReg, Diagnostic> {
    let m = s.constant(op, mode)?;
    vreg_inst(s, op, RegClass::Vector, "VSHUFFLE_vec_shuffle_x", |d| {
        vec![V(d), V(a), V(b), V(m)]
    })
}

fn multiply_accumulate(
    s: &mut Selector,
    op: MlirOperation,
    acc: VReg,
    x: VReg,
    w: VReg,
    conf: VReg,
) -> Result<VReg, Diagnostic> {
    vreg_inst(
        s,
        op,
        RegClass::Accumulator,
        "VMAC_f_vmac_bf_vmul_bf_core_X_X",
        |d| vec![V(d), V(acc), V(x), V(w), V(conf)],
    )
}

/// Refuses the scalar conversion `op` (`name`) unless it is from `from`
/// to `to`, the one form it has a pattern for.
fn scalar_conversion(
    op: MlirOperation,
    name: &str,
    from: &str,
    to: &str,
) -> Result<(), Diagnostic> {
    let (given, wanted) = (type_text(value_type(operands(op)[0])), result_type(op, 0));
    if (given.as_str(), wanted.as_str()) != (from, to) {
        return Err(fail(
            op,
            format!("`{name}` from `{given}` to `{wanted}` has no AIE2P pattern"),
        ));
    }
    Ok(())
}

pub(crate) fn select(s: &mut Selector, op: MlirOperation, name: &str) -> Result<bool, Diagnostic> {
    if select_scalar(s, op, name)? || select_lanes(s, op, name)? {
        return Ok(true);
    }
    match name {
        vector::CONSTANT => {
            let f = form_of(op, &result_type(op, 0))?;
            let bits = lane_bits(op, f.element())?;
            let v = if matches!(f, Form::F32x16 | Form::I32x64) && bits == 0 {
                vreg_inst(s, op, RegClass::Accumulator, "VCLR", |d| vec![V(d)])?
            } else {
                let r = s.constant(op, bits)?;
                splat(s, op, f, r)?
            };
            s.define(results(op)[0], Val::Reg(v));
        }
        vector::SPLAT => {
            let f = form_of(op, &result_type(op, 0))?;
            let r = reg(s, op, 0)?;
            let v = splat(s, op, f, r)?;
            s.define(results(op)[0], Val::Reg(v));
        }
        vector::LOAD => {
            let f = form_of(op, &result_type(op, 0))?;
            let (view, dynamic, positions) = access(op, 0);
            let accesses = match f {
                Form::Bf16x32 | Form::Int(_) => vec![("VLDA_dmx_lda_x_idx_imm", 0)],
                Form::Bf16x16 => vec![("VLDA_dmw_lda_w_idx_imm", 0)],
                Form::F32x16 => vec![("VLDA_dmx_lda_bm_idx_imm", 0)],
                Form::I32x64 => quarter_accesses("VLDA_dmx_lda_bm_idx_imm"),
            };
            let (p, at, element) = element_pointer(s, op, view, &dynamic, &positions, &accesses)?;
            check_element(op, f, &element)?;
            let (opcode, d, out) = match f {
                Form::Bf16x32 | Form::Int(_) => {
                    let d = s.vreg(RegClass::Vector);
                    ("VLDA_dmx_lda_x_idx_imm", d, V(d))
                }
                Form::Bf16x16 => {
                    let d = s.vreg(RegClass::Vector);
                    ("VLDA_dmw_lda_w_idx_imm", d, Def(d, Part::Low))
                }
                Form::F32x16 => {
                    let d = s.vreg(RegClass::Accumulator);
                    ("VLDA_dmx_lda_bm_idx_imm", d, Def(d, Part::LowLow))
                }
                Form::I32x64 => {
                    let d = load_quarters(s, op, p, at)?;
                    s.define(results(op)[0], Val::Reg(d));
                    return Ok(true);
                }
            };
            let (b, block, location) = s.builder();
            let r = b.load(block, opcode, &[out, V(p), Imm(at)], location);
            s.built(op, r)?;
            s.define(results(op)[0], Val::Reg(d));
        }
        vector::STORE => {
            let value = operands(op)[0];
            let f = form_of(op, &type_text(value_type(value)))?;
            let v = s.scalar(op, value)?;
            let (view, dynamic, positions) = access(op, 1);
            // (opcode, the register or part stored, byte offset)
            let pieces: Vec<(&str, MachineOperand, i64)> = match f {
                Form::Bf16x32 | Form::Int(_) => vec![("VST_dmx_sts_x_idx_imm", V(v), 0)],
                Form::Bf16x16 => vec![("VST_dmw_sts_w_idx_imm", P(v, Part::Low), 0)],
                Form::F32x16 => vec![("VST_dmx_sts_bm_idx_imm", P(v, Part::LowLow), 0)],
                // A whole dm, quarter by quarter.
                Form::I32x64 => QUARTERS
                    .into_iter()
                    .enumerate()
                    .map(|(k, part)| ("VST_dmx_sts_bm_idx_imm", P(v, part), 64 * k as i64))
                    .collect(),
            };
            let accesses: Vec<(&str, i64)> = pieces.iter().map(|&(o, _, at)| (o, at)).collect();
            let (p, at, element) = element_pointer(s, op, view, &dynamic, &positions, &accesses)?;
            check_element(op, f, &element)?;
            for (opcode, src, offset) in pieces {
                s.inst(op, opcode, &[src, V(p), Imm(at + offset)])?;
            }
        }
        vector::DOT2F => {
            let ins = operands(op);
            let (tx, tacc) = (type_text(value_type(ins[0])), type_text(value_type(ins[2])));
            if form(&tx) != Some(Form::Bf16x32) || form(&tacc) != Some(Form::F32x16) {
                return Err(fail(
                    op,
                    format!(
                        "`vector.dot2f` of `{tx}` into `{tacc}` has no AIE2P pattern \
                         (vector<32xbf16> into vector<16xf32> has)"
                    ),
                ));
            }
            let (x, w, acc) = (reg(s, op, 0)?, reg(s, op, 1)?, reg(s, op, 2)?);
            // Lane i is (acc[i] + x[2i] w[2i]) + x[2i+1] w[2i+1], each step
            // rounded: two element-wise vmac.f over the even, then the odd
            // elements, deinterleaved into lanes 0-15.
            let (xe, we) = (
                shuffle(s, op, x, w, EVENS_16)?,
                shuffle(s, op, w, x, EVENS_16)?,
            );
            let (xo, wo) = (
                shuffle(s, op, x, w, ODDS_16)?,
                shuffle(s, op, w, x, ODDS_16)?,
            );
            let conf = mode_word(s, op)?;
            let even = multiply_accumulate(s, op, acc, xe, we, conf)?;
            let out = multiply_accumulate(s, op, even, xo, wo, conf)?;
            s.define(results(op)[0], Val::Reg(out));
        }
        vector::MMAC => {
            let ins = operands(op);
            let shape = attribute(op, "shape")
                .map(dense_i64_values)
                .unwrap_or_default();
            let (ta, tacc) = (type_text(value_type(ins[0])), type_text(value_type(ins[2])));
            if shape != [8, 8, 8] || ta != "vector<64xi8>" || tacc != "vector<64xi32>" {
                return Err(fail(
                    op,
                    format!(
                        "`vector.mmac {shape:?}` of `{ta}` into `{tacc}` has no AIE2P pattern yet \
                         ([8, 8, 8] of vector<64xi8> into vector<64xi32> has: the int8 matrix \
                         vmac); compile with --worker-code=lowir to carry the worker as Low \
                         aie2p IR"
                    ),
                ));
            }
            let (a, b, acc) = (reg(s, op, 0)?, reg(s, op, 1)?, reg(s, op, 2)?);
            let conf = s.constant(op, INT8_MATRIX_SIGNED)?;
            let out = vreg_inst(s, op, RegClass::Accumulator, "VMAC_vmul_cm_core_X_X", |d| {
                vec![V(d), V(acc), V(a), V(b), V(conf)]
            })?;
            s.define(results(op)[0], Val::Reg(out));
        }
        vector::INTERLEAVE => {
            let ty = type_text(value_type(operands(op)[0]));
            let mode = int_attribute(op, "mode").unwrap_or(-1);
            if form(&ty) != Some(Form::Bf16x16) || mode != 0 {
                return Err(fail(
                    op,
                    format!(
                        "`vector.interleave<{mode}>` of `{ty}` has no AIE2P pattern \
                         (mode 0 of vector<16xbf16> has)"
                    ),
                ));
            }
            let (a, b) = (reg(s, op, 0)?, reg(s, op, 1)?);
            let v = shuffle(s, op, a, b, INTERLEAVE_16)?;
            s.define(results(op)[0], Val::Reg(v));
        }
        vector::FPTRUNC | vector::EXTF => {
            let (from, to) = (type_text(value_type(operands(op)[0])), result_type(op, 0));
            let v = reg(s, op, 0)?;
            let out = match (name, form(&from), form(&to)) {
                (vector::FPTRUNC, Some(Form::F32x16), Some(Form::Bf16x16)) => narrow(s, op, v)?,
                (vector::EXTF, Some(Form::Bf16x16), Some(Form::F32x16)) => vreg_inst(
                    s,
                    op,
                    RegClass::Accumulator,
                    "VCONV_fp32_bf16_mv_ups_wbf",
                    |d| vec![Def(d, Part::LowLow), P(v, Part::Low)],
                )?,
                _ => {
                    return Err(fail(
                        op,
                        format!("`{name}` from `{from}` to `{to}` has no AIE2P pattern yet"),
                    ))
                }
            };
            s.define(results(op)[0], Val::Reg(out));
        }
        vector::ADDF => {
            let ty = result_type(op, 0);
            if form(&ty) != Some(Form::F32x16) {
                return Err(fail(
                    op,
                    format!(
                        "`vector.addf` of `{ty}` has no AIE2P pattern yet (vector<16xf32> has)"
                    ),
                ));
            }
            let (a, b) = (reg(s, op, 0)?, reg(s, op, 1)?);
            let sum = add_accumulators(s, op, false, a, b)?;
            s.define(results(op)[0], Val::Reg(sum));
        }
        vector::ADDI | vector::SUBI => {
            let ty = result_type(op, 0);
            let Some(Form::Int(bits)) = form(&ty) else {
                return Err(fail(
                    op,
                    format!(
                        "`{name}` of `{ty}` has no AIE2P pattern yet \
                         (vector<64xi8>, vector<32xi16> and vector<16xi32> have)"
                    ),
                ));
            };
            let (a, b) = (reg(s, op, 0)?, reg(s, op, 1)?);
            let opcode = match (name == vector::ADDI, bits) {
                (true, 8) => "VADD_8",
                (true, 16) => "VADD_16",
                (true, _) => "VADD_32",
                (false, 8) => "VSUB_8",
                (false, 16) => "VSUB_16",
                (false, _) => "VSUB_32",
            };
            let v = vreg_inst(s, op, RegClass::Vector, opcode, |d| vec![V(d), V(a), V(b)])?;
            s.define(results(op)[0], Val::Reg(v));
        }
        vector::EXTRACT => {
            let input = operands(op)[0];
            let f = form_of(op, &type_text(value_type(input)))?;
            let lane = attribute(op, "position")
                .map(dense_i64_values)
                .and_then(|p| p.first().copied())
                .unwrap_or(0);
            let v = s.scalar(op, input)?;
            let r = match f {
                Form::F32x16 => {
                    let x = from_accumulator(s, op, v)?;
                    extract(s, op, x, lane, 32)?
                }
                Form::I32x64 => {
                    // Lane k is lane k % 16 of quarter k / 16.
                    let part = QUARTERS[(lane / 16) as usize % 4];
                    let x = vreg_inst(s, op, RegClass::Vector, "VMOV_alu_mv_mv_x", |d| {
                        vec![V(d), P(v, part)]
                    })?;
                    extract(s, op, x, lane % 16, 32)?
                }
                Form::Int(bits) => extract(s, op, v, lane, bits)?,
                _ => extract(s, op, v, lane, 16)?,
            };
            s.define(results(op)[0], Val::Reg(r));
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn check_element(op: MlirOperation, f: Form, element: &str) -> Result<(), Diagnostic> {
    let wanted = f.element();
    if element == wanted {
        Ok(())
    } else {
        Err(fail(
            op,
            format!(
                "`{}` of {wanted} lanes from a view of `{element}` elements",
                op_name(op)
            ),
        ))
    }
}
