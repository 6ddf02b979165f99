//! What the isa core assumes of the vector unit where no public source
//! says what the hardware does (xdna-hardware-facts §7: no public document
//! specifies bf16 `vmac.f` lane order, rounding or denormals; AM020 is
//! AIE-ML, AM027 AIE-ML v2). Every such choice is here, once, with what
//! motivates it and which results depend on it; `vector.rs` only applies
//! them. Where the hardware facts leave the choice open, it is the
//! reference interpreter's numerics (docs/semantics.md, "Floating point";
//! runtime/src/numerics.rs), so a program's outputs can be bit-identical
//! to the interpreter's. Each is to be checked on hardware.
//!
//! - **A1 lane order.** Element i of a vector or accumulator register is
//!   bits [i*w, (i+1)*w) of it, word 0 lowest and the low sub-register
//!   first (`x0` = `wl0`, `wh0`; `dm0` = `cml0`, `cmh0`); in memory element
//!   i is at address + i*w/8. Motivation: llvm-aie's data layout is
//!   little-endian ("e-...") and its patterns build wide registers with
//!   `REG_SEQUENCE ..., sub_*_lo` as the low part. Every vector result
//!   depends on it.
//! - **A2 bf16 products** are formed exactly and rounded once to binary32,
//!   nearest even; **A3** a lane's accumulation `acc + p` is rounded once
//!   to binary32, nearest even (not fused with the product). Together they
//!   are the interpreter's `vector.dot2f` step `f32(acc + f32(x * w))`. A
//!   fused multiply-add gives the same bits except when the product is
//!   outside binary32's normal range. `vmac.f`, `vmsc.f`, `vmul.f`,
//!   `vadd.f`, `vsub.f` depend on them.
//! - **A4 subnormals** are kept (no flush to zero) in inputs, products,
//!   sums and conversions, as the interpreter keeps them. The same
//!   instructions and `vconv` depend on it.
//! - **A5 NaN**: an arithmetic result that is NaN is the canonical quiet
//!   NaN 0x7FC00000 (the interpreter's rule); conversions to bf16 quiet a
//!   NaN keeping its top bits (numerics::f32_to_bf16).
//! - **A6 `vconv.bf16.fp32`** with crRnd = 12 (rnd_conv_even, llvm-aie
//!   aie2p_defines.h) rounds to nearest even as numerics::f32_to_bf16. The
//!   instruction reads crRnd (its itinerary's implicit use), so another
//!   mode is refused rather than guessed: a program sets `movx crrnd, #12`
//!   first. `vconv.fp32.bf16` widens exactly (bits << 16, no choice).
//! - **A7 the mode word** (the `acc` register of `vmac.f` and its kin):
//!   its fields are llvm-aie's VecConf (AIE2PInstrPatterns.td: bit 0
//!   dynZeroAccum, 1-2 amode, 3-4 bmode, 5-7 cmode, 8 signY, 9 signX, 10
//!   accShift, 11-13 negations, 16-23 term negation). Only the word the
//!   patterns build for bf16 (`mulbf16_vecconf`, `accfp32_vecconf`: amode
//!   FP32 = 2, bmode 16x16 = 3, cmode 1, i.e. 0x3C), with or without
//!   dynZeroAccum, is modelled; the patterns read element i's product from
//!   lane i of the accumulator's low 1024 bits (`fmul v32bf16` =
//!   `vconv(EXTRACT_SUBREG(vmul.f, sub_1024_acc_lo))`), a fact. Assumed:
//!   lanes 32-63 of an X_X `vmac.f`/`vmsc.f` keep the first accumulator's
//!   (zero with dynZeroAccum, zero for `vmul.f`); no pattern reads them.
//! - **A8 shuffle modes** 0-23: mode `T<b>_<R>x<C>_<lo|hi>` (aie2p_enums.h)
//!   reads the 1024 bits `s1 ‖ s2` as an R x C row-major matrix of b-bit
//!   elements and gives the low or high 512 bits of its transpose. The
//!   names and llvm-aie's G_TRUNC patterns (modes 0, 2, 4 = the even 8-,
//!   16-, 32-bit elements of the concatenation) support this reading; the
//!   other modes (24-55) are refused. `vshuffle` depends on it.
//! - **A9 status flags**: srFPFlags and srF2FFlags keep their value
//!   (floating-point exception flags are not modelled); crFPMask and
//!   crF2FMask are read only for their timing.
//! - **A10 `vclr`** sets every bit of the accumulator to zero (its name;
//!   no ISel pattern selects it).
//! - **A11 the int8 matrix multiply-accumulate** (`vmac`/`vmul dm, [dm,]
//!   x, x, r`, VMAC/VMUL_vmul_cm_core_X_X) under a mode word of amode
//!   I32 (0), bmode 8x8 (1), cmode 0, no shift or negation, either
//!   operand signed or not (bits 9 and 8) and dynZeroAccum: lane 8i + j of
//!   the 64 i32 lanes is acc(8i + j) plus the sum over p of x1(8i + p)
//!   x2(8p + j), x1 and x2 64 int8 each, all row-major, the sum wrapping
//!   at 32 bits. The word is llvm-aie's `mac_8x8_8x8` (aie2p_vmult.h at
//!   07ff079b: 0x308 signed by signed); the layout is the AIE API's
//!   `mmul<8, 8, 8, int8, int8>` contract (row-major A, B and C, passed to
//!   that intrinsic unshuffled) and iree-amd-aie's lowering of a row-major
//!   8x8x8 `vector.contract` to it (docs/research/int8-matmul). No ISA
//!   document states it; other modes are refused.

use crate::numerics::{bf16_to_f32, f32_to_bf16};

/// A5: an arithmetic NaN becomes the canonical quiet NaN.
fn canonical(v: f32) -> f32 {
    if v.is_nan() {
        f32::from_bits(0x7FC0_0000)
    } else {
        v
    }
}

/// A2: the product of two bf16 values (their bits) as binary32.
pub fn bf16_product(a: u16, b: u16) -> f32 {
    canonical(bf16_to_f32(a) * bf16_to_f32(b))
}

/// A3: `acc + p` rounded once to binary32 (the interpreter's operand
/// order, which matters only for NaN payloads, canonical anyway).
pub fn accumulate(acc: f32, p: f32) -> f32 {
    canonical(p + acc)
}

/// A3 for `vadd.f`/`vsub.f`: a lane-wise sum of two accumulators.
pub fn add(a: f32, b: f32) -> f32 {
    canonical(a + b)
}

/// rnd_conv_even (aie2p_defines.h).
pub const ROUND_NEAREST_EVEN: u32 = 12;

/// A6: binary32 to bf16 under rounding mode `rnd` (crRnd).
pub fn to_bf16(value: f32, rnd: u32) -> Result<u16, String> {
    if rnd != ROUND_NEAREST_EVEN {
        return Err(format!(
            "crRnd is {rnd}; the isa core models the conversion to bf16 only under rnd_conv_even \
             ({ROUND_NEAREST_EVEN}), so set `movx crrnd, #{ROUND_NEAREST_EVEN}` before it"
        ));
    }
    Ok(f32_to_bf16(value))
}

/// A7: the one floating-point mode word modelled, without dynZeroAccum.
pub const FP32_ELEMENTWISE: u32 = 0x3C;

/// A7: whether the mode word `conf` is the modelled one, and then whether
/// it replaces the first accumulator by zeros.
pub fn zero_accumulator(conf: u32) -> Result<bool, String> {
    match conf {
        FP32_ELEMENTWISE => Ok(false),
        c if c == FP32_ELEMENTWISE | 1 => Ok(true),
        _ => Err(format!(
            "mode word {conf:#x} (amode {}, bmode {}, cmode {}, other bits {:#x}): the isa core \
             models only llvm-aie's bf16 element-wise word {FP32_ELEMENTWISE:#x} (amode FP32, \
             bmode 16x16, cmode 1), with or without dynZeroAccum",
            (conf >> 1) & 3,
            (conf >> 3) & 3,
            (conf >> 5) & 7,
            conf & !0xFF
        )),
    }
}

/// A11: whether `conf` is a modelled int8 8x8 mode word, and then
/// (zero accumulator, x1 signed, x2 signed).
pub fn int8_matrix_mode(conf: u32) -> Result<(bool, bool, bool), String> {
    // Everything but dynZeroAccum and the two sign bits must be bmode 8x8.
    if conf & !0x301 != 0x8 {
        return Err(format!(
            "mode word {conf:#x} (amode {}, bmode {}, cmode {}, other bits {:#x}): the isa core \
             models only the int8 8x8 matrix words of llvm-aie's mac_8x8_8x8 (amode I32, bmode \
             8x8, cmode 0, any signedness, with or without dynZeroAccum; 0x308 is signed by \
             signed)",
            (conf >> 1) & 3,
            (conf >> 3) & 3,
            (conf >> 5) & 7,
            conf & !0x3FF
        ));
    }
    Ok((conf & 1 != 0, conf & 0x200 != 0, conf & 0x100 != 0))
}

/// A11: acc + x1 x2 for 8x8 blocks of int8 (64 lanes each, as bytes,
/// row-major) into 64 i32 lanes, wrapping.
pub fn int8_matrix(acc: &mut [u32], x1: &[u8], x2: &[u8], signed: (bool, bool)) {
    let value = |b: u8, signed: bool| if signed { b as i8 as i32 } else { b as i32 };
    for i in 0..8 {
        for p in 0..8 {
            let a = value(x1[8 * i + p], signed.0);
            for j in 0..8 {
                let b = value(x2[8 * p + j], signed.1);
                let lane = &mut acc[8 * i + j];
                *lane = (*lane as i32).wrapping_add(a * b) as u32;
            }
        }
    }
}

/// A8: the 512 result bits of shuffle mode `mode` on `s1 ‖ s2` (16 words
/// each), lowest word first.
pub fn shuffle(mode: u32, s1: &[u32], s2: &[u32]) -> Result<Vec<u32>, String> {
    // (element bits, rows, columns) of modes 0-23 in pairs (lo, hi).
    const SHAPES: [(usize, usize, usize); 12] = [
        (8, 64, 2),
        (16, 32, 2),
        (32, 16, 2),
        (64, 8, 2),
        (128, 4, 2),
        (256, 2, 2),
        (128, 2, 4),
        (64, 2, 8),
        (32, 2, 16),
        (16, 2, 32),
        (8, 2, 64),
        (512, 1, 2),
    ];
    let Some(&(bits, rows, columns)) = SHAPES.get(mode as usize / 2) else {
        return Err(format!(
            "shuffle mode {mode} is not modelled (the isa core models the transposition modes \
             0-23 of aie2p_enums.h)"
        ));
    };
    let bytes: Vec<u8> = s1.iter().chain(s2).flat_map(|w| w.to_le_bytes()).collect();
    let size = bits / 8;
    let n = rows * columns;
    let high = mode % 2 == 1;
    let mut out = Vec::with_capacity(64);
    for k in (if high { n / 2 } else { 0 })..(if high { n } else { n / 2 }) {
        // Output element k = (c, r) of the transpose = input (r, c).
        let (c, r) = (k / rows, k % rows);
        let from = (r * columns + c) * size;
        out.extend_from_slice(&bytes[from..from + size]);
    }
    Ok(out
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Modes 2/3 deinterleave 16-bit elements (the G_TRUNC pattern's
    /// mode 2 keeps the even ones), 18/19 interleave, 22 passes s1.
    #[test]
    fn shuffle_modes_transpose() {
        let s1: Vec<u32> = (0..16).map(|i| ((2 * i + 1) << 16) | (2 * i)).collect();
        let s2: Vec<u32> = (0..16)
            .map(|i| ((2 * i + 33) << 16) | (2 * i + 32))
            .collect();
        let half = |w: &[u32], k: usize| (w[k / 2] >> (16 * (k % 2))) & 0xFFFF;
        let evens = shuffle(2, &s1, &s2).unwrap();
        let odds = shuffle(3, &s1, &s2).unwrap();
        for k in 0..32 {
            assert_eq!(half(&evens, k), 2 * k as u32);
            assert_eq!(half(&odds, k), 2 * k as u32 + 1);
        }
        let low = shuffle(18, &s1, &s2).unwrap();
        for k in 0..16 {
            assert_eq!(half(&low, 2 * k), half(&s1, k));
            assert_eq!(half(&low, 2 * k + 1), half(&s2, k));
        }
        assert_eq!(shuffle(22, &s1, &s2).unwrap(), s1);
        assert_eq!(shuffle(23, &s1, &s2).unwrap(), s2);
        assert!(shuffle(24, &s1, &s2).unwrap_err().contains("not modelled"));
    }

    #[test]
    fn mode_words_and_rounding_modes() {
        assert_eq!(zero_accumulator(0x3C), Ok(false));
        assert_eq!(zero_accumulator(0x3D), Ok(true));
        assert!(zero_accumulator(0x3C | 1 << 9).is_err());
        assert_eq!(to_bf16(1.0, 12), Ok(0x3F80));
        assert!(to_bf16(1.0, 0).unwrap_err().contains("crRnd is 0"));
        // A product of -0 accumulated onto +0 is +0 (the interpreter's
        // dot2f note); a NaN is canonical.
        assert_eq!(accumulate(0.0, bf16_product(0x8000, 0x3F80)).to_bits(), 0);
        assert_eq!(bf16_product(0x7FC1, 0x3F80).to_bits(), 0x7FC0_0000);
    }
}
