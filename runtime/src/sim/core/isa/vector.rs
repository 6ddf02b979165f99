//! What the modelled vector and accumulator instructions do, by llvm-aie
//! record name: the ones the code generator emits for a bf16 dot product
//! (issue 16) and their near kin. The meaning of each comes from llvm-aie's
//! instruction selection (AIE2PInstrPatterns.td at 06a420bf, the aie2p
//! headers' intrinsics); where those leave it open the choice is in
//! `assumptions` (A1-A11), which this module only applies.
//!
//! - `vlda`/`vldb` load and `vst` stores the register's width (x: 64 bytes,
//!   w: 32, bm: 64) at an address aligned to it, in the scalar loads'
//!   addressing modes (VLDA_dmx_lda_x_*, VLDA_dmx_lda_bm_*,
//!   VLDA_dmw_lda_w_*, VLDB_*, VST_dmx_sts_x_*, VST_dmx_sts_bm_*,
//!   VST_dmw_sts_w_*: pattern-free, by their operands; the code
//!   generator's spills use the `[sp, #imm]` forms).
//! - `vmac.f`/`vmsc.f`/`vmul.f dm, [dm,] x, x, r` (X_X): lane i of 32 is
//!   acc[i] +/- x1[i] * x2[i] in binary32 (int_aie2p_I512_I512_ACC*_bf_mac/
//!   msc/mul_conf; `fmul v32bf16`), under mode word r (A7).
//! - `vmac`/`vmul dm, [dm,] x, x, r` (VMAC/VMUL_vmul_cm_core_X_X): an 8x8
//!   int8 block times an 8x8 int8 block into 64 i32 lanes, row-major, under
//!   the int8 8x8 mode words of `mac_8x8_8x8` (A11).
//! - `vadd.f`/`vsub.f dm, dm, dm, r`: lane-wise over 64 lanes
//!   (`fadd ACC2048` selects VADD_f with accfp32_vecconf).
//! - `vconv.bf16.fp32 x, cm` / `w, bm`: each lane to bf16 (int_aie2p_
//!   v32accfloat_to_v32bf16, A6); `vconv.fp32.bf16 cm, x` / `bm, w`: exact.
//! - `vbcst.8/16/32/64 x, r|l`: the scalar's low bits in every lane
//!   (bcst_vector_node, int_aie2p_vbroadcast*).
//! - `vshuffle x|bm, x, x, r`: shuffle mode r of the two (A8).
//! - `vextract.8/16/32/64 r|l, x, idx, vaddsign0|1`: element idx,
//!   zero-extended (vaddSign0) or sign-extended (vaddSign1), as
//!   AIEBaseInstrPatterns.td's Extract_512 pairs them.
//! - `vmov` (x/bm, cm, w), `vmov.d dm, dm`: copies; `vclr dm`: zero (A10).
//! - `vadd.8/16/32`, `vsub.8/16/32 x, x, x`: lane-wise over 64, 32 or 16
//!   integer lanes, wrapping (AIE2PInstrPatterns.td at 06a420bf selects them
//!   for LLVM's modular `add`/`sub` of v64i8, v32i16, v16i32; they read no
//!   control register).

use super::addressing::{address, Address};
use super::assumptions::{self as a, accumulate, bf16_product};
use super::exec::{Exec, Semantics};
use super::operands::Name;

/// The semantics of vector instruction `name`, if modelled.
pub fn of(name: &str) -> Option<Semantics> {
    let f: Semantics = match name {
        "VLDA_dmx_lda_x_idx_imm"
        | "VLDA_dmx_lda_bm_idx_imm"
        | "VLDA_dmw_lda_w_idx_imm"
        | "VLDB_dmx_ldb_x_idx_imm"
        | "VLDB_dmw_ldb_idx_imm" => |x| load(x, Address::Offset(Name::Imm)),
        "VLDA_dmx_lda_x_idx"
        | "VLDA_dmx_lda_bm_idx"
        | "VLDA_dmw_lda_w_idx"
        | "VLDB_dmx_ldb_x_idx"
        | "VLDB_dmw_ldb_idx" => |x| load(x, Address::Offset(Name::Dj)),
        "VLDA_dmx_lda_x_pstm_nrm_imm"
        | "VLDA_dmx_lda_bm_pstm_nrm_imm"
        | "VLDA_dmw_lda_w_pstm_nrm_imm"
        | "VLDB_dmx_ldb_x_pstm_nrm_imm"
        | "VLDB_dmw_ldb_pstm_nrm_imm" => |x| load(x, Address::Post(Name::Imm)),
        "VLDA_dmx_lda_x_pstm_nrm"
        | "VLDA_dmx_lda_bm_pstm_nrm"
        | "VLDA_dmw_lda_w_pstm_nrm"
        | "VLDB_dmx_ldb_x_pstm_nrm"
        | "VLDB_dmw_ldb_pstm_nrm" => |x| load(x, Address::Post(Name::Mod)),
        "VLDA_dmx_lda_x_spill" | "VLDA_dmx_lda_bm_spill" | "VLDA_dmw_lda_w_spill" => {
            |x| load(x, Address::Stack)
        }
        "VST_dmx_sts_x_idx_imm" | "VST_dmx_sts_bm_idx_imm" | "VST_dmw_sts_w_idx_imm" => {
            |x| store(x, Address::Offset(Name::Imm))
        }
        "VST_dmx_sts_x_idx" | "VST_dmx_sts_bm_idx" | "VST_dmw_sts_w_idx" => {
            |x| store(x, Address::Offset(Name::Dj))
        }
        "VST_dmx_sts_x_pstm_nrm_imm"
        | "VST_dmx_sts_bm_pstm_nrm_imm"
        | "VST_dmw_sts_w_pstm_nrm_imm" => |x| store(x, Address::Post(Name::Imm)),
        "VST_dmx_sts_x_pstm_nrm" | "VST_dmx_sts_bm_pstm_nrm" | "VST_dmw_sts_w_pstm_nrm" => {
            |x| store(x, Address::Post(Name::Mod))
        }
        "VST_dmx_sts_x_spill" | "VST_dmx_sts_bm_spill" | "VST_dmw_sts_w_spill" => {
            |x| store(x, Address::Stack)
        }
        "VMAC_f_vmac_bf_vmul_bf_core_X_X" => |x| multiply(x, Some(1.0)),
        "VMSC_f_vmac_bf_vmul_bf_core_X_X" => |x| multiply(x, Some(-1.0)),
        "VMUL_f_vmul_bf_vmul_bf_core_X_X" => |x| multiply(x, None),
        "VMAC_vmul_cm_core_X_X" => |x| int8_matrix(x, true),
        "VMUL_vmul_cm_core_X_X" => |x| int8_matrix(x, false),
        "VADD_f_vmac_cm2_add_reg" => |x| add(x, 1.0),
        "VSUB_f_vmac_cm2_add_reg" => |x| add(x, -1.0),
        "VCLR" => |x| {
            let words = x.width(Name::Dst)?;
            x.write_words(Name::Dst, &vec![0; words])
        },
        "VMOV_D" => |x| copy(x, Name::Acc1),
        "VMOV_alu_mv_mv_x" | "VMOV_alu_mv_mv_cm" | "VMOV_alu_mv_mv_w" => |x| copy(x, Name::Src),
        "VCONV_bf16_fp32_mv_x_srs_bf" | "VCONV_bf16_fp32_mv_w_srs_bf" => narrow,
        "VCONV_fp32_bf16_mv_ups_xbf" | "VCONV_fp32_bf16_mv_ups_wbf" => widen,
        "VADD_8" => |x| lanes(x, 8, u32::wrapping_add),
        "VADD_16" => |x| lanes(x, 16, u32::wrapping_add),
        "VADD_32" => |x| lanes(x, 32, u32::wrapping_add),
        "VSUB_8" => |x| lanes(x, 8, u32::wrapping_sub),
        "VSUB_16" => |x| lanes(x, 16, u32::wrapping_sub),
        "VSUB_32" => |x| lanes(x, 32, u32::wrapping_sub),
        "VBCST_8" => |x| broadcast(x, 8),
        "VBCST_16" => |x| broadcast(x, 16),
        "VBCST_32" => |x| broadcast(x, 32),
        "VBCST_64" => |x| broadcast(x, 64),
        "VSHUFFLE_vec_shuffle_x" | "VSHUFFLE_vec_shuffle_bm" => |x| {
            let (s1, s2, mode) = (
                x.read_words(Name::S1)?,
                x.read_words(Name::S2)?,
                x.read(Name::Mod)?,
            );
            let out = a::shuffle(mode, &s1, &s2)?;
            x.write_words(Name::Dst, &out)
        },
        "VEXTRACT_8_vec_extract_imm_vaddSign0" | "VEXTRACT_8_vec_extract_r_vaddSign0" => {
            |x| extract(x, 8, false)
        }
        "VEXTRACT_8_vec_extract_imm_vaddSign1" | "VEXTRACT_8_vec_extract_r_vaddSign1" => {
            |x| extract(x, 8, true)
        }
        "VEXTRACT_16_vec_extract_imm_vaddSign0" | "VEXTRACT_16_vec_extract_r_vaddSign0" => {
            |x| extract(x, 16, false)
        }
        "VEXTRACT_16_vec_extract_imm_vaddSign1" | "VEXTRACT_16_vec_extract_r_vaddSign1" => {
            |x| extract(x, 16, true)
        }
        "VEXTRACT_32_vec_extract_imm_vaddSign0" | "VEXTRACT_32_vec_extract_r_vaddSign0" => {
            |x| extract(x, 32, false)
        }
        "VEXTRACT_32_vec_extract_imm_vaddSign1" | "VEXTRACT_32_vec_extract_r_vaddSign1" => {
            |x| extract(x, 32, true)
        }
        "VEXTRACT_64_vec_extract_imm_vaddSign0" | "VEXTRACT_64_vec_extract_r_vaddSign0" => {
            |x| extract(x, 64, false)
        }
        "VEXTRACT_64_vec_extract_imm_vaddSign1" | "VEXTRACT_64_vec_extract_r_vaddSign1" => {
            |x| extract(x, 64, true)
        }
        _ => return None,
    };
    Some(f)
}

/// The bf16 elements of words, element 0 first (A1).
fn halves(words: &[u32]) -> impl Iterator<Item = u16> + '_ {
    words
        .iter()
        .flat_map(|w| [(*w & 0xFFFF) as u16, (*w >> 16) as u16])
}

fn load(x: &mut Exec, how: Address) -> Result<(), String> {
    let words = x.width(Name::Dst)?;
    let at = address(x, &how)?;
    let mut buffers = x.take_words();
    let data = &mut buffers[0];
    data.set_len(words);
    x.load_words(at, data)?;
    x.write_words(Name::Dst, data)?;
    x.put_words(buffers);
    x.keep_implicit()
}

fn store(x: &mut Exec, how: Address) -> Result<(), String> {
    let value = x.read_words(Name::Src)?;
    let at = address(x, &how)?;
    x.store_words(at, &value)?;
    x.keep_implicit()
}

/// `vmac.f` (sign 1), `vmsc.f` (-1), `vmul.f` (no accumulator).
fn multiply(x: &mut Exec, sign: Option<f32>) -> Result<(), String> {
    let conf = x.read(Name::Acc)?;
    let zero = a::zero_accumulator(conf)?;
    let mut buffers = x.take_words();
    let [s1, s2, out] = &mut *buffers;
    x.read_words_into(Name::S1, s1)?;
    x.read_words_into(Name::S2, s2)?;
    let words = x.width(Name::Dst)?;
    if sign.is_some() {
        x.read_words_into(Name::Acc1, out)?; // read even if zeroed: its timing counts
    }
    if zero || sign.is_none() {
        out.set_len(words);
        out.fill(0);
    }
    // Lanes 2k and 2k + 1 are word k's halves (A1); one loop by word
    // pairs, its sign chosen outside it, is what makes this cheap.
    let lanes = out.chunks_exact_mut(2).zip(s1.iter().zip(s2.iter()));
    for (pair, (&u, &v)) in lanes {
        for (half, lane) in pair.iter_mut().enumerate() {
            let shift = 16 * half;
            let product = bf16_product((u >> shift) as u16, (v >> shift) as u16);
            *lane = match sign {
                Some(s) => accumulate(f32::from_bits(*lane), s * product),
                None => product,
            }
            .to_bits();
        }
    }
    x.write_words(Name::Dst, out)?;
    x.put_words(buffers);
    x.keep_implicit()
}

/// `vmac` (accumulating) and `vmul` of two 8x8 int8 blocks into 64 i32
/// lanes (A11).
fn int8_matrix(x: &mut Exec, accumulate: bool) -> Result<(), String> {
    let conf = x.read(Name::Acc)?;
    let (zero, x1_signed, x2_signed) = a::int8_matrix_mode(conf)?;
    let bytes = |words: &[u32]| -> Vec<u8> { words.iter().flat_map(|w| w.to_le_bytes()).collect() };
    let (s1, s2) = (
        bytes(&x.read_words(Name::S1)?),
        bytes(&x.read_words(Name::S2)?),
    );
    let words = x.width(Name::Dst)?;
    let mut out: Vec<u32> = if accumulate {
        x.read_words(Name::Acc1)?.to_vec() // read even if zeroed: its timing counts
    } else {
        vec![0; words]
    };
    if zero {
        out.fill(0);
    }
    a::int8_matrix(&mut out, &s1, &s2, (x1_signed, x2_signed));
    x.write_words(Name::Dst, &out)?;
    x.keep_implicit()
}

/// `vadd.f` (sign 1) and `vsub.f` (-1) over every lane.
fn add(x: &mut Exec, sign: f32) -> Result<(), String> {
    let conf = x.read(Name::Acc)?;
    let zero = a::zero_accumulator(conf)?;
    let (p, q) = (x.read_words(Name::Acc1)?, x.read_words(Name::Acc2)?);
    let out: Vec<u32> = p
        .iter()
        .zip(q.iter())
        .map(|(&u, &v)| {
            let first = if zero { 0.0 } else { f32::from_bits(u) };
            a::add(first, sign * f32::from_bits(v)).to_bits()
        })
        .collect();
    x.write_words(Name::Dst, &out)?;
    x.keep_implicit()
}

fn copy(x: &mut Exec, from: Name) -> Result<(), String> {
    let value = x.read_words(from)?;
    x.write_words(Name::Dst, &value)
}

/// binary32 lanes to bf16 (A6), two to a word.
fn narrow(x: &mut Exec) -> Result<(), String> {
    let rnd = x.read_implicit(Name::CrRnd)?;
    let src = x.read_words(Name::Src)?;
    let mut out = Vec::with_capacity(src.len() / 2);
    for pair in src.chunks(2) {
        let lo = a::to_bf16(f32::from_bits(pair[0]), rnd)?;
        let hi = match pair.get(1) {
            Some(&w) => a::to_bf16(f32::from_bits(w), rnd)?,
            None => 0,
        };
        out.push(u32::from(hi) << 16 | u32::from(lo));
    }
    x.write_words(Name::Dst, &out)?;
    x.keep_implicit()
}

/// bf16 lanes to binary32, exactly.
fn widen(x: &mut Exec) -> Result<(), String> {
    let src = x.read_words(Name::Src)?;
    let out: Vec<u32> = halves(&src).map(|h| u32::from(h) << 16).collect();
    x.write_words(Name::Dst, &out)
}

/// `vadd.N`/`vsub.N d, s1, s2`: `op` on each `bits`-wide lane of the two
/// 512-bit registers, keeping the lane's low bits (a wrap).
fn lanes(x: &mut Exec, bits: u32, op: fn(u32, u32) -> u32) -> Result<(), String> {
    let (s1, s2) = (x.read_words(Name::S1)?, x.read_words(Name::S2)?);
    let mask = if bits == 32 {
        u32::MAX
    } else {
        (1 << bits) - 1
    };
    let out: Vec<u32> = s1
        .iter()
        .zip(s2.iter())
        .map(|(&a, &b)| {
            (0..32 / bits).fold(0, |word, k| {
                let shift = k * bits;
                let lane = op((a >> shift) & mask, (b >> shift) & mask) & mask;
                word | (lane << shift)
            })
        })
        .collect();
    x.write_words(Name::D, &out)
}

fn broadcast(x: &mut Exec, bits: u32) -> Result<(), String> {
    let source = x.read_words(Name::Src)?;
    let words = x.width(Name::Dst)?;
    let pattern: Vec<u32> = match bits {
        8 => vec![(source[0] & 0xFF) * 0x0101_0101],
        16 => vec![(source[0] & 0xFFFF) * 0x0001_0001],
        32 => vec![source[0]],
        _ => source.to_vec(),
    };
    let out: Vec<u32> = pattern.iter().copied().cycle().take(words).collect();
    x.write_words(Name::Dst, &out)
}

fn extract(x: &mut Exec, bits: u32, signed: bool) -> Result<(), String> {
    let vector = x.read_words(Name::S1)?;
    let index = x.read(Name::Idx)?;
    let lanes = 32 * vector.len() as u32 / bits;
    if index >= lanes {
        return Err(format!(
            "element {index} of a {}-bit vector of {bits}-bit elements: what the hardware \
             extracts past element {} is not modelled",
            32 * vector.len(),
            lanes - 1
        ));
    }
    x.keep_implicit()?;
    if bits == 64 {
        let at = 2 * index as usize;
        return x.write_words(Name::Dst, &vector[at..at + 2]);
    }
    let bit = index * bits;
    let raw = (vector[(bit / 32) as usize] >> (bit % 32)) & (u32::MAX >> (32 - bits));
    let value = if signed && bits < 32 {
        ((raw << (32 - bits)) as i32 >> (32 - bits)) as u32
    } else {
        raw
    };
    x.write(Name::Dst, value)
}
