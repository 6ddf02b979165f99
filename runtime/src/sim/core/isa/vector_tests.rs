//! The vector instructions on small programs, each result checked against
//! a plain Rust computation of the same lanes (assumptions.rs A1-A11).

use super::tests::{message, options, register, run_alone};
use super::{IsaCores, Options};
use crate::numerics::{bf16_to_f32, f32_to_bf16};
use crate::sim::array::testing::CORE;
use crate::sim::core::Cores;
use loom_aie2p_isa::elf::{DataSegment, OWN_DATA_VIEW};

/// Bundles between dependent instructions: the longest latency (a vector
/// load's 7) less one, so every write has landed before the next reads.
const SPACING: usize = 6;

/// The program with `SPACING` NOP bundles after each line.
fn spaced(lines: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for line in lines {
        out.push(line.to_string());
        out.extend(std::iter::repeat_n("nop".to_string(), SPACING));
    }
    out.push("done".into());
    out
}

fn run(lines: &[&str], data: Vec<DataSegment>) -> (IsaCores, Result<(), String>) {
    let lines = spaced(lines);
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let (cores, _, result) = run_alone(&refs, data, options());
    (cores, result.map_err(|e| e.to_string()))
}

/// Data at `offset` of the core's own memory (view 0x70000).
fn segment(offset: u32, bytes: Vec<u8>) -> DataSegment {
    DataSegment {
        address: OWN_DATA_VIEW + offset,
        bytes,
        zeroed: 0,
    }
}

fn memory(cores: &mut IsaCores, offset: usize, bytes: usize) -> Vec<u8> {
    cores.tile_memory(CORE, 0x1_0000)[offset..offset + bytes].to_vec()
}

fn bf16_bytes(values: &[u16]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn f32_at(bytes: &[u8], lane: usize) -> f32 {
    let b = &bytes[4 * lane..4 * lane + 4];
    f32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// A deterministic spread of bf16 values in [-4, 4) (a fixed LCG).
fn values(seed: u32, n: usize) -> Vec<u16> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let unit = (state >> 8) as f32 / (1u32 << 24) as f32;
            f32_to_bf16(8.0 * unit - 4.0)
        })
        .collect()
}

/// The per-lane products of two 32-element bf16 vectors, accumulated in
/// dm0 by `vmac.f` over two pairs of vectors, then summed over the lanes
/// by a tree of `vshuffle` (odd elements first) and `vadd.f`: the dot
/// product of 64 elements in one f32, equal bit for bit to the same order
/// of binary32 operations in Rust.
#[test]
fn a_bf16_dot_product_accumulates_in_f32() {
    let (a, b, c, d) = (values(1, 32), values(2, 32), values(3, 32), values(4, 32));
    let mut bytes = Vec::new();
    for v in [&a, &b, &c, &d] {
        bytes.extend(bf16_bytes(v));
    }
    let data = vec![segment(0x400, bytes)];
    let mut lines = vec![
        "movxm p0, #459776", // 0x70400: a, b, c, d, 64 bytes each
        "movxm p1, #460288", // 0x70600: the result
        "movx r0, #60",      // mode word 0x3C: bf16 element-wise, fp32
        "vlda x0, [p0, #0]",
        "vlda x1, [p0, #64]",
        "vlda x2, [p0, #128]",
        "vlda x3, [p0, #192]",
        "vclr dm0",
        "vmac.f dm0, dm0, x0, x1, r0",
        "vmac.f dm0, dm0, x2, x3, r0",
    ];
    // Lanes 32 -> 1: move the low 512 bits out, bring the upper half of
    // the live lanes down (T512 hi for 16 lanes, then odd 256-, 128-,
    // 64-, 32-bit elements first), add.
    let steps = [
        ("movx r1, #23", "vshuffle x5, x4, x6, r1"), // lanes 16-31
        ("movx r1, #11", "vshuffle x5, x4, x4, r1"), // 8-15
        ("movx r1, #9", "vshuffle x5, x4, x4, r1"),  // 4-7
        ("movx r1, #7", "vshuffle x5, x4, x4, r1"),  // 2-3
        ("movx r1, #5", "vshuffle x5, x4, x4, r1"),  // 1
    ];
    for (k, (mode, shuffle)) in steps.iter().enumerate() {
        lines.push("vmov x4, bmll0");
        if k == 0 {
            lines.push("vmov x6, bmlh0");
        }
        lines.extend([mode, shuffle, "vmov bmll1, x5", "vadd.f dm0, dm0, dm1, r0"]);
    }
    lines.extend(["vst bmll0, [p1, #0]"]);
    let (mut cores, result) = run(&lines, data);
    result.unwrap();

    let product = |x: u16, y: u16| bf16_to_f32(x) * bf16_to_f32(y);
    let mut lanes: Vec<f32> = (0..32)
        .map(|i| (0.0 + product(a[i], b[i])) + product(c[i], d[i]))
        .collect();
    for width in [16, 8, 4, 2, 1] {
        for i in 0..width {
            lanes[i] += lanes[i + width];
        }
    }
    let got = memory(&mut cores, 0x600, 64);
    assert_eq!(f32_at(&got, 0).to_bits(), lanes[0].to_bits());
    let exact: f64 = (0..32)
        .map(|i| {
            f64::from(bf16_to_f32(a[i])) * f64::from(bf16_to_f32(b[i]))
                + f64::from(bf16_to_f32(c[i])) * f64::from(bf16_to_f32(d[i]))
        })
        .sum();
    // The bf16 inputs give 22.66; f32 rounding keeps it near the exact sum.
    assert!(exact.abs() > 1.0 && (f64::from(f32_at(&got, 0)) - exact).abs() < 1e-3);
}

/// `vconv.bf16.fp32` rounds each lane to nearest even under crRnd = 12
/// (ties, a NaN, a subnormal, overflow), `vconv.fp32.bf16` widens back
/// exactly; another rounding mode is refused.
#[test]
fn conversions_round_to_nearest_even_under_conv_even() {
    let inputs: Vec<f32> = (0..32)
        .map(|i| match i {
            0 => f32::from_bits(0x3F80_8000), // tie: stays even
            1 => f32::from_bits(0x3F81_8000), // tie: goes up to even
            2 => f32::from_bits(0x7F80_0001), // signalling NaN
            3 => f32::from_bits(0x0000_1234), // subnormal
            4 => f32::MAX,                    // overflows to infinity
            _ => (i as f32 - 15.5) * 0.37,
        })
        .collect();
    let bytes: Vec<u8> = inputs.iter().flat_map(|v| v.to_le_bytes()).collect();
    let data = vec![segment(0x400, bytes)];
    let lines = [
        "movxm p0, #459776", // 0x70400: 32 f32
        "movxm p1, #460288", // 0x70600: 32 bf16, then 32 f32
        "movx crrnd, #12",
        "vlda bmll0, [p0, #0]",
        "vlda bmlh0, [p0, #64]",
        "vconv.bf16.fp32 x0, cml0",
        "vst x0, [p1, #0]",
        "vconv.fp32.bf16 cml1, x0",
        "vst bmll1, [p1, #64]",
        "vst bmlh1, [p1, #128]",
    ];
    let (mut cores, result) = run(&lines, data.clone());
    result.unwrap();
    let narrowed = memory(&mut cores, 0x600, 64);
    let widened = memory(&mut cores, 0x640, 128);
    for (i, v) in inputs.iter().enumerate() {
        let expected = f32_to_bf16(*v);
        let got = u16::from_le_bytes([narrowed[2 * i], narrowed[2 * i + 1]]);
        assert_eq!(got, expected, "lane {i}");
        assert_eq!(f32_at(&widened, i).to_bits(), u32::from(expected) << 16);
    }
    let refused: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.contains("crrnd"))
        .collect();
    let error = run(&refused, data).1.unwrap_err();
    assert!(error.contains("crRnd is 0"), "{error}");
}

/// `vbcst.16` and `vbcst.32` put the scalar in every lane; `vextract`
/// takes one back out, zero- or sign-extended.
#[test]
fn broadcast_and_extract() {
    let lines = [
        "movxm p1, #460288",  // 0x70600
        "movxm r1, #-123456", // 0xFFFE1DC0
        "vbcst.16 x0, r1",
        "vbcst.32 x1, r1",
        "vst x0, [p1, #0]",
        "vst x1, [p1, #64]",
        "vextract.16 r2, x0, #31, vaddsign1",
        "vextract.16 r3, x0, #7, vaddsign0",
        "vextract.32 r4, x1, #15, vaddsign0",
    ];
    let (mut cores, result) = run(&lines, vec![]);
    result.unwrap();
    let value = (-123_456i32) as u32;
    let halves = memory(&mut cores, 0x600, 64);
    let words = memory(&mut cores, 0x640, 64);
    for i in 0..32 {
        let h = u16::from_le_bytes([halves[2 * i], halves[2 * i + 1]]);
        assert_eq!(h, value as u16, "lane {i}");
    }
    for i in 0..16 {
        assert_eq!(f32_at(&words, i).to_bits(), value, "lane {i}");
    }
    assert_eq!(
        register(&cores, CORE, "r2"),
        value as u16 as i16 as i32 as u32
    );
    assert_eq!(register(&cores, CORE, "r3"), u32::from(value as u16));
    assert_eq!(register(&cores, CORE, "r4"), value);
}

/// `vshuffle` mode 18 (T16_2x32_lo) interleaves the low 16 elements of
/// two vectors; mode 3 (T16_32x2_hi) takes the odd elements of both.
#[test]
fn shuffles_interleave_and_deinterleave() {
    let s1: Vec<u16> = (0..32).collect();
    let s2: Vec<u16> = (100..132).collect();
    let mut bytes = bf16_bytes(&s1);
    bytes.extend(bf16_bytes(&s2));
    let data = vec![segment(0x400, bytes)];
    let lines = [
        "movxm p0, #459776",
        "movxm p1, #460288",
        "vlda x0, [p0, #0]",
        "vlda x1, [p0, #64]",
        "movx r1, #18",
        "vshuffle x2, x0, x1, r1",
        "movx r1, #3",
        "vshuffle x3, x0, x1, r1",
        "vst x2, [p1, #0]",
        "vst x3, [p1, #64]",
    ];
    let (mut cores, result) = run(&lines, data);
    result.unwrap();
    let got = memory(&mut cores, 0x600, 128);
    let half = |k: usize| u16::from_le_bytes([got[2 * k], got[2 * k + 1]]);
    let both: Vec<u16> = s1.iter().chain(&s2).copied().collect();
    for i in 0..16 {
        assert_eq!(half(2 * i), s1[i]);
        assert_eq!(half(2 * i + 1), s2[i]);
    }
    for i in 0..32 {
        assert_eq!(half(32 + i), both[2 * i + 1]);
    }
}

/// A mode word other than llvm-aie's bf16 element-wise one is refused,
/// naming its fields.
#[test]
fn an_unmodelled_mode_word_is_refused() {
    let lines = ["movx r0, #62", "vclr dm0", "vmac.f dm0, dm0, x0, x1, r0"];
    let error = message(
        run_alone(
            &spaced(&lines)
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            vec![],
            options(),
        )
        .2,
    );
    assert!(error.contains("mode word 0x3e"), "{error}");
}

/// A `vmac.f` whose accumulator is read (cycle 4) before the previous
/// `vmac.f`'s result lands (cycle 6) is refused by the hazard checker; 3
/// bundles apart it is not (llvm-aie's latency 6 - 4 + 1).
#[test]
fn back_to_back_macs_on_one_accumulator_are_three_bundles_apart() {
    let program = |gap: usize| {
        let mut lines = vec!["movx r0, #60".to_string()];
        lines.extend(std::iter::repeat_n("nop".to_string(), 6));
        lines.push("vmac.f dm0, dm0, x0, x1, r0".into());
        lines.extend(std::iter::repeat_n("nop".to_string(), gap - 1));
        lines.push("vmac.f dm0, dm0, x0, x1, r0".into());
        lines.extend(std::iter::repeat_n("nop".to_string(), 6));
        lines.push("done".into());
        lines
    };
    let early = program(2);
    let refs: Vec<&str> = early.iter().map(String::as_str).collect();
    let error = message(run_alone(&refs, vec![], options()).2);
    assert!(
        error.contains("reads bmll0") && error.contains("hazard"),
        "{error}"
    );
    let on_time = program(3);
    let refs: Vec<&str> = on_time.iter().map(String::as_str).collect();
    let (cores, _, result) = run_alone(&refs, vec![], options());
    result.unwrap();
    // The vector unit issued in the two bundles of the two vmac.f.
    assert_eq!(cores.figures()[0].vector_bundles, 2);
}

/// A vector load issued at t writes x through QEY_WA_PORT at t + 6 (its
/// itinerary's Required stage); a `vconv` issued at t + 5 needs that port
/// at t + 6 too and is refused by the hazard checker; one bundle later it
/// is not.
#[test]
fn two_instructions_holding_one_unit_in_one_cycle_are_refused() {
    let program = |gap: usize| {
        let mut lines: Vec<String> = ["movxm p0, #459776", "movx crrnd, #12"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        lines.extend(std::iter::repeat_n("nop".to_string(), 6));
        lines.push("vlda x0, [p0, #0]".into());
        lines.extend(std::iter::repeat_n("nop".to_string(), gap - 1));
        lines.push("vconv.bf16.fp32 x1, cml0".into());
        lines.extend(std::iter::repeat_n("nop".to_string(), 6));
        lines.push("done".into());
        lines
    };
    let clash = program(5);
    let refs: Vec<&str> = clash.iter().map(String::as_str).collect();
    let error = message(run_alone(&refs, vec![], options()).2);
    assert!(
        error.contains("needs functional unit QEY_WA_PORT")
            && error.contains("`vlda\tx0, [p0, #0]`")
            && error.contains("structural hazard"),
        "{error}"
    );
    let apart = program(6);
    let refs: Vec<&str> = apart.iter().map(String::as_str).collect();
    run_alone(&refs, vec![], options()).2.unwrap();
    let unchecked = Options {
        hazards: false,
        ..options()
    };
    run_alone(&refs[..], vec![], unchecked).2.unwrap();
    let refs: Vec<&str> = clash.iter().map(String::as_str).collect();
    run_alone(&refs, vec![], unchecked).2.unwrap();
}

/// `vadd.8`/`vsub.16`/`vadd.32` wrap each lane and keep the others apart:
/// no carry crosses a lane boundary.
#[test]
fn integer_lanes_add_and_subtract_wrapping() {
    let a: Vec<u8> = (0..64).map(|i| (i * 37 + 100) as u8).collect();
    let b: Vec<u8> = (0..64).map(|i| (255 - i * 11) as u8).collect();
    let mut bytes = a.clone();
    bytes.extend(&b);
    let data = vec![segment(0x400, bytes)];
    let lines = [
        "movxm p0, #459776", // 0x70400: a, b
        "movxm p1, #460288", // 0x70600: three results
        "vlda x0, [p0, #0]",
        "vlda x1, [p0, #64]",
        "vadd.8 x2, x0, x1",
        "vsub.16 x3, x0, x1",
        "vadd.32 x4, x0, x1",
        "vst x2, [p1, #0]",
        "vst x3, [p1, #64]",
        "vst x4, [p1, #128]",
    ];
    let (mut cores, result) = run(&lines, data);
    result.unwrap();
    let out = memory(&mut cores, 0x600, 192);
    for i in 0..64 {
        assert_eq!(out[i], a[i].wrapping_add(b[i]), "8-bit lane {i}");
    }
    let half = |v: &[u8], i: usize| u16::from_le_bytes([v[2 * i], v[2 * i + 1]]);
    for i in 0..32 {
        assert_eq!(
            half(&out[64..], i),
            half(&a, i).wrapping_sub(half(&b, i)),
            "16-bit lane {i}"
        );
    }
    let word = |v: &[u8], i: usize| u32::from_le_bytes(v[4 * i..4 * i + 4].try_into().unwrap());
    for i in 0..16 {
        assert_eq!(
            word(&out[128..], i),
            word(&a, i).wrapping_add(word(&b, i)),
            "32-bit lane {i}"
        );
    }
}

/// `vmac dm, dm, x, x, r` under 0x308 (signed int8 8x8): the row-major
/// block product added to the accumulator, lane 8i + j of 64 i32 lanes;
/// `vmul` under 0x208 (x1 signed, x2 unsigned) overwrites. Checked against
/// the sums written out here; another mode word is refused.
#[test]
fn int8_blocks_multiply_accumulate_row_major() {
    let a: Vec<u8> = (0..64).map(|i| (i * 29 + 3) as u8).collect();
    let b: Vec<u8> = (0..64).map(|i| (200 - i * 7) as u8).collect();
    let acc: Vec<u8> = (0..64u32)
        .flat_map(|i| (i * 1000).wrapping_sub(30_000).to_le_bytes())
        .collect();
    let mut bytes = a.clone();
    bytes.extend(&b);
    bytes.extend(&acc);
    let data = vec![segment(0x400, bytes)];
    let lines = [
        "movxm p0, #459776", // 0x70400: a, b, the accumulator
        "movxm p1, #461824", // 0x70c00: two results of 256 bytes
        "movx r0, #776",     // 0x308: signed by signed
        "movx r1, #520",     // 0x208: signed by unsigned
        "vlda x0, [p0, #0]",
        "vlda x1, [p0, #64]",
        "vlda bmll0, [p0, #128]",
        "vlda bmlh0, [p0, #192]",
        "vlda bmhl0, [p0, #256]",
        "vlda bmhh0, [p0, #320]",
        "vmac dm0, dm0, x0, x1, r0",
        "vmul dm1, x0, x1, r1",
        "vst bmll0, [p1, #0]",
        "vst bmlh0, [p1, #64]",
        "vst bmhl0, [p1, #128]",
        "vst bmhh0, [p1, #192]",
        "vst bmll1, [p1, #256]",
        "vst bmlh1, [p1, #320]",
        "vst bmhl1, [p1, #384]",
        "vst bmhh1, [p1, #448]",
    ];
    let (mut cores, result) = run(&lines, data);
    result.unwrap();
    let out = memory(&mut cores, 0xc00, 512);
    let lane = |v: &[u8], k: usize| i32::from_le_bytes(v[4 * k..4 * k + 4].try_into().unwrap());
    for i in 0..8 {
        for j in 0..8 {
            let (mut mac, mut mul) = (lane(&acc, 8 * i + j), 0i32);
            for p in 0..8 {
                let x = a[8 * i + p] as i8 as i32;
                mac = mac.wrapping_add(x * (b[8 * p + j] as i8 as i32));
                mul += x * b[8 * p + j] as i32;
            }
            assert_eq!(lane(&out, 8 * i + j), mac, "vmac lane ({i}, {j})");
            assert_eq!(lane(&out[256..], 8 * i + j), mul, "vmul lane ({i}, {j})");
        }
    }
    let refused = ["movx r0, #780", "vmul dm1, x0, x1, r0"]; // 0x30c: bmode 16x8
    let error = run(&refused, vec![]).1.unwrap_err();
    assert!(error.contains("mode word 0x30c"), "{error}");
}
