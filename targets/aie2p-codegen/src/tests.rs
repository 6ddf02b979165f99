//! Small machine functions through the whole machine layer: built,
//! allocated, scheduled, emitted, then decoded; the text is what is
//! expected, the rule checker and the latency checker pass (compile runs
//! both), and the same function gives the same bytes twice.

use crate::*;
use loom_aie2p_isa::{elf, encode, isa, parse_bundle, rules, IsaError};
use MachineOperand::{Imm, VReg as V};

fn at(line: u32) -> Option<SourceLocation> {
    Some(SourceLocation::new("worker.loom", line, 3))
}

fn options() -> Options {
    Options {
        stack: StackRegion {
            base: 0x7_8000,
            size: 0x400,
        },
        registers_per_class: None,
    }
}

/// for (i = 0; i < 10; i++) acc += i; *p = acc;
fn counted_loop() -> MachineFunction {
    let mut b = FunctionBuilder::new("sum");
    let (entry, body, exit) = (b.block(), b.block(), b.block());
    let n = b.vreg(RegClass::Scalar);
    let zero = b.vreg(RegClass::Scalar);
    let p = b.vreg(RegClass::Pointer);
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(n), Imm(10)], at(1))
        .unwrap();
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(zero), Imm(0)], at(2))
        .unwrap();
    b.inst(entry, "MOVXM", &[V(p), Imm(0x7_0400)], at(3))
        .unwrap();
    let i = b.param(body, RegClass::Scalar).unwrap();
    let acc = b.param(body, RegClass::Scalar).unwrap();
    b.terminate(
        entry,
        Terminator::Jump {
            target: body,
            args: vec![zero, zero],
        },
        at(4),
    )
    .unwrap();
    let (acc2, i2, c) = (
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
    );
    b.inst(body, "ADD_alu_r_rr", &[V(acc2), V(acc), V(i)], at(5))
        .unwrap();
    b.inst(body, "ADD_add_r_ri", &[V(i2), V(i), Imm(1)], at(6))
        .unwrap();
    b.inst(body, "LT", &[V(c), V(i2), V(n)], at(6)).unwrap();
    b.terminate(
        body,
        Terminator::Branch {
            condition: c,
            taken: body,
            taken_args: vec![i2, acc2],
            otherwise: exit,
            otherwise_args: vec![],
        },
        at(6),
    )
    .unwrap();
    b.inst(exit, "ST_dms_sts_idx_imm", &[V(acc2), V(p), Imm(0)], at(7))
        .unwrap();
    b.terminate(exit, Terminator::Done, at(8)).unwrap();
    b.finish().unwrap()
}

/// acquire lock 49 (own tile), *p += 1, release lock 48.
fn lock_pair() -> MachineFunction {
    let mut b = FunctionBuilder::new("locked");
    let entry = b.block();
    let (one, p, x, y) = (
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Pointer),
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
    );
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(one), Imm(1)], at(1))
        .unwrap();
    b.inst(entry, "MOVXM", &[V(p), Imm(0x7_0000)], at(1))
        .unwrap();
    b.inst(entry, "ACQ_mLockId_imm", &[Imm(49), V(one)], at(2))
        .unwrap();
    b.inst(entry, "LDA_dms_lda_idx_imm", &[V(x), V(p), Imm(0)], at(3))
        .unwrap();
    b.inst(entry, "ADD_add_r_ri", &[V(y), V(x), Imm(1)], at(3))
        .unwrap();
    b.inst(entry, "ST_dms_sts_idx_imm", &[V(y), V(p), Imm(0)], at(3))
        .unwrap();
    b.inst(entry, "REL_mLockId_imm", &[Imm(48), V(one)], at(4))
        .unwrap();
    b.terminate(entry, Terminator::Done, at(5)).unwrap();
    b.finish().unwrap()
}

/// `keep` lives across a loop in which three other scalars are live.
fn live_across_loop() -> MachineFunction {
    let mut b = FunctionBuilder::new("spill");
    let (entry, body, exit) = (b.block(), b.block(), b.block());
    let (keep, n, zero, p) = (
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Pointer),
    );
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(keep), Imm(77)], at(1))
        .unwrap();
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(n), Imm(5)], at(2))
        .unwrap();
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(zero), Imm(0)], at(2))
        .unwrap();
    b.inst(entry, "MOVXM", &[V(p), Imm(0x7_0400)], at(2))
        .unwrap();
    let i = b.param(body, RegClass::Scalar).unwrap();
    let acc = b.param(body, RegClass::Scalar).unwrap();
    b.terminate(
        entry,
        Terminator::Jump {
            target: body,
            args: vec![zero, zero],
        },
        at(3),
    )
    .unwrap();
    let (acc2, i2, c) = (
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
    );
    b.inst(body, "ADD_alu_r_rr", &[V(acc2), V(acc), V(i)], at(4))
        .unwrap();
    b.inst(body, "ADD_add_r_ri", &[V(i2), V(i), Imm(1)], at(4))
        .unwrap();
    b.inst(body, "LT", &[V(c), V(i2), V(n)], at(4)).unwrap();
    b.terminate(
        body,
        Terminator::Branch {
            condition: c,
            taken: body,
            taken_args: vec![i2, acc2],
            otherwise: exit,
            otherwise_args: vec![],
        },
        at(4),
    )
    .unwrap();
    let total = b.vreg(RegClass::Scalar);
    b.inst(exit, "ADD_alu_r_rr", &[V(total), V(acc2), V(keep)], at(5))
        .unwrap();
    b.inst(exit, "ST_dms_sts_idx_imm", &[V(total), V(p), Imm(0)], at(5))
        .unwrap();
    b.terminate(exit, Terminator::Done, at(6)).unwrap();
    b.finish().unwrap()
}

/// A loop of `n` turns whose branch needs only `i + 1 < n`; `work` adds
/// the rest of the body, given the block and the loop-carried values
/// (`a`, `p`), and returns their next values.
fn loop_with(
    name: &str,
    work: impl Fn(&mut FunctionBuilder, BlockId, VReg, VReg) -> (VReg, VReg),
) -> MachineFunction {
    let mut b = FunctionBuilder::new(name);
    let (entry, body, exit) = (b.block(), b.block(), b.block());
    let (n, zero, p) = (
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Pointer),
    );
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(n), Imm(8)], at(1))
        .unwrap();
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(zero), Imm(0)], at(1))
        .unwrap();
    b.inst(entry, "MOVXM", &[V(p), Imm(0x7_0400)], at(1))
        .unwrap();
    let i = b.param(body, RegClass::Scalar).unwrap();
    let a = b.param(body, RegClass::Scalar).unwrap();
    let q = b.param(body, RegClass::Pointer).unwrap();
    b.terminate(
        entry,
        Terminator::Jump {
            target: body,
            args: vec![zero, zero, p],
        },
        at(2),
    )
    .unwrap();
    let (i2, c) = (b.vreg(RegClass::Scalar), b.vreg(RegClass::Scalar));
    b.inst(body, "ADD_add_r_ri", &[V(i2), V(i), Imm(1)], at(3))
        .unwrap();
    b.inst(body, "LT", &[V(c), V(i2), V(n)], at(3)).unwrap();
    let (a2, q2) = work(&mut b, body, a, q);
    b.terminate(
        body,
        Terminator::Branch {
            condition: c,
            taken: body,
            taken_args: vec![i2, a2, q2],
            otherwise: exit,
            otherwise_args: vec![],
        },
        at(3),
    )
    .unwrap();
    b.inst(exit, "ST_dms_sts_idx_imm", &[V(a2), V(q2), Imm(0)], at(5))
        .unwrap();
    b.terminate(exit, Terminator::Done, at(6)).unwrap();
    b.finish().unwrap()
}

/// The bundles of the block labelled `label`, as text.
fn block_text(program: &Program, label: &str) -> Vec<String> {
    let text = text(program);
    let mut lines = text.lines().skip_while(|l| *l != format!("{label}:"));
    lines.next();
    lines
        .take_while(|l| !l.ends_with(':'))
        .map(|l| l.split_once(": ").map_or(l, |(_, b)| b).to_string())
        .collect()
}

#[test]
fn delay_slots_take_the_work_the_branch_does_not_need() {
    // a + 3 and a store of a, a pointer step: none feeds the condition.
    let f = loop_with("filled", |b, body, a, q| {
        let (a2, q2) = (b.vreg(RegClass::Scalar), b.vreg(RegClass::Pointer));
        b.inst(body, "ST_dms_sts_idx_imm", &[V(a), V(q), Imm(0)], at(4))
            .unwrap();
        b.inst(body, "ADD_add_r_ri", &[V(a2), V(a), Imm(3)], at(4))
            .unwrap();
        b.inst(body, "PADDA_pstm_nrm_imm", &[V(q2), V(q), Imm(64)], at(4))
            .unwrap();
        (a2, q2)
    });
    let program = compile(&f, &options()).unwrap();
    let body = block_text(&program, "filled.bb1");
    let jump = body.iter().position(|b| b.contains("jnz")).unwrap();
    // The transfer waits only for the condition (add, lt) ...
    assert_eq!(jump, 2, "{body:?}");
    // ... and its 5 delay slots end the block, holding the other work.
    assert_eq!(body.len(), jump + 6, "{body:?}");
    let slots = &body[jump + 1..];
    assert!(slots.iter().any(|b| b.starts_with("add")), "{body:?}");
    assert_eq!(
        text(&program),
        concat!(
            "_start:\n",
            "   0: movxm\tsp, #491520\n",
            "filled:\n",
            "   6: mov\tr4, #0\n",
            "   a: mov\tr0, #8\n",
            "   e: movxm\tp0, #459776\n",
            "  14: mov\tr16, r4\n",
            "  18: nop\n",
            "  1a: nop\n",
            "  1c: nop\n",
            "  1e: nop\n",
            "filled.bb1:\n",
            "  20: padda\t[p0], #64 ; st\tr16, [p0, #0] ; add\tr4, r4, #1\n",
            "  2a: lt\tr17, r4, r0\n",
            "  2e: jnz\tr17, #32\n",
            "  34: add\tr16, r16, #3\n",
            "  38: nop\n",
            "  3a: nop\n",
            "  3c: nop\n",
            "  3e: nop\n",
            "filled.bb2:\n",
            "  40: st\tr16, [p0, #0]\n",
            "  44: nop\n",
            "  46: nop\n",
            "  48: nop\n",
            "  4a: nop\n",
            "  4c: done\n",
        )
    );
}

#[test]
fn delay_slots_stay_empty_when_all_the_work_precedes_the_branch() {
    // The body is the condition and a lock release, which may not sit in
    // delay slots: the 5 slots are NOP bundles.
    let f = loop_with("empty", |b, body, a, q| {
        let one = b.vreg(RegClass::Scalar);
        b.inst(body, "MOV_alu_mv_mv_mv_cg", &[V(one), Imm(1)], at(4))
            .unwrap();
        b.inst(body, "REL_mLockId_imm", &[Imm(48), V(one)], at(4))
            .unwrap();
        (a, q)
    });
    let program = compile(&f, &options()).unwrap();
    let body = block_text(&program, "empty.bb1");
    let jump = body.iter().position(|b| b.contains("jnz")).unwrap();
    assert_eq!(body.len(), jump + 6, "{body:?}");
    assert!(body[jump + 1..].iter().all(|b| b == "nop"), "{body:?}");
    assert!(body[..jump].iter().any(|b| b.contains("rel")), "{body:?}");
    assert_eq!(
        text(&program),
        concat!(
            "_start:\n",
            "   0: movxm\tsp, #491520\n",
            "empty:\n",
            "   6: mov\tr4, #0\n",
            "   a: mov\tr0, #8\n",
            "   e: movxm\tp0, #459776\n",
            "  14: mov\tr16, r4\n",
            "  18: nop\n",
            "  1a: nop\n",
            "  1c: nop\n",
            "  1e: nop\n",
            "empty.bb1:\n",
            "  20: add\tr4, r4, #1 ; mov\tr18, #1\n",
            "  26: rel\t#48, r18\n",
            "  2a: lt\tr17, r4, r0\n",
            "  2e: jnz\tr17, #32\n",
            "  34: nop\n",
            "  36: nop\n",
            "  38: nop\n",
            "  3a: nop\n",
            "  3c: nop\n",
            "empty.bb2:\n",
            "  3e: st\tr16, [p0, #0]\n",
            "  42: nop\n",
            "  44: nop\n",
            "  46: nop\n",
            "  48: nop\n",
            "  4a: done\n",
        )
    );
}

/// Bundles of the block labelled `label` and the `vmac.f` among them.
fn loop_shape(program: &Program, label: &str) -> (usize, usize) {
    let body = program.block(label).unwrap().unwrap();
    (body.len(), reference::vmac_f_count(&body))
}

fn dot_product(groups: usize, shared: bool, turns: i64) -> MachineFunction {
    reference::dot_product(groups, shared, turns).unwrap()
}

#[test]
fn a_software_pipelined_dot_product_issues_six_vmac_f_in_seven_bundles() {
    let program = compile(&dot_product(6, false, 16), &options()).unwrap();
    assert_eq!(rules::check(&program.bytes, 0), Ok(()));
    assert_eq!(hazard::check(&program.bytes, 0), Ok(()));
    // The inner loop: 6 vmac.f and 12 loads in 7 bundles, 0.857 vmac.f a
    // cycle. 12 x registers, each reloaded no sooner than the vmac.f that
    // reads it and read 7 bundles after its load, allow no more than 6 in
    // 7 for two streams without reuse.
    assert_eq!(loop_shape(&program, "dot.bb1"), (7, 6));
    assert_eq!(
        text(&program),
        concat!(
            "_start:\n",
            "   0: movxm\tsp, #491520\n",
            "dot:\n",
            "   6: movxm\tp0, #458752 ; vclr\tdm0\n",
            "  10: vlda\tx0, [p0, #0] ; vldb\tx2, [p0, #64] ; movxm\tp1, #466944 ; vclr\tdm2\n",
            "  1e: vlda\tx4, [p1, #0] ; vldb\tx8, [p1, #64] ; movxm\tp4, #483328 ; vclr\tdm1\n",
            "  2c: vlda\tx6, [p0, #128] ; vldb\tx1, [p1, #128] ; mov\tr6, #14\n",
            "  36: vlda\tx10, [p0, #192] ; vldb\tx5, [p1, #192] ; mov\tr17, #0\n",
            "  40: vlda\tx3, [p0, #256] ; vldb\tx9, [p1, #256] ; mov\tr16, #60\n",
            "  4a: vlda\tx7, [p0], #384 ; vldb\tx11, [p1], #384\n",
            "  50: nop\n",
            "  52: nop\n",
            "  54: nop\n",
            "  56: nop\n",
            "  58: nop\n",
            "  5a: nop\n",
            "  5c: nop\n",
            "  5e: nop\n",
            "dot.bb1:\n",
            "  60: vlda\tx0, [p0, #0] ; vldb\tx4, [p1, #0] ; lt\tr0, r17, r6 ; vmac.f\tdm0, dm0, x0, x4, r16\n",
            "  6c: vlda\tx2, [p0, #64] ; vldb\tx8, [p1, #64] ; jnz\tr0, #96 ; vmac.f\tdm2, dm2, x2, x8, r16\n",
            "  7a: vlda\tx6, [p0, #128] ; vldb\tx1, [p1, #128] ; add\tr17, r17, #1 ; vmac.f\tdm1, dm1, x6, x1, r16\n",
            "  86: vlda\tx10, [p0, #192] ; vldb\tx5, [p1, #192] ; vmac.f\tdm0, dm0, x10, x5, r16\n",
            "  90: vlda\tx3, [p0, #256] ; vldb\tx9, [p1, #256] ; vmac.f\tdm2, dm2, x3, x9, r16\n",
            "  9a: vlda\tx7, [p0], #384 ; vldb\tx11, [p1], #384 ; vmac.f\tdm1, dm1, x7, x11, r16\n",
            "  a4: nop\n",
            "dot.bb2:\n",
            "  a6: vmac.f\tdm0, dm0, x0, x4, r16\n",
            "  aa: vmac.f\tdm2, dm2, x2, x8, r16\n",
            "  ae: vmac.f\tdm1, dm1, x6, x1, r16\n",
            "  b2: vmac.f\tdm0, dm0, x10, x5, r16\n",
            "  b6: vmac.f\tdm2, dm2, x3, x9, r16\n",
            "  ba: vmac.f\tdm1, dm1, x7, x11, r16\n",
            "  be: nop\n",
            "  c0: vadd.f\tdm0, dm0, dm2, r16\n",
            "  c4: nop\n",
            "  c6: nop\n",
            "  c8: vadd.f\tdm0, dm0, dm1, r16\n",
            "  cc: nop\n",
            "  ce: nop\n",
            "  d0: nop\n",
            "  d2: nop\n",
            "  d4: nop\n",
            "  d6: vconv.bf16.fp32\tx0, cml0\n",
            "  da: nop\n",
            "  dc: vst\tx0, [p4, #0]\n",
            "  e0: nop\n",
            "  e2: nop\n",
            "  e4: nop\n",
            "  e6: nop\n",
            "  e8: done\n",
        )
    );
}

#[test]
fn the_gate_and_up_rows_share_their_input_loads() {
    // Three input vectors a turn, each multiplied by a gate and an up
    // weight vector: 9 loads and 6 vmac.f a turn, in 8 bundles. Not 7: an
    // input is reloaded into its register no sooner than the second of
    // its two vmac.f (one vector slot: a bundle after the first) and read
    // 7 bundles after its load by the next turn's first, so a turn takes
    // at least 1 + 7 bundles; 6 vmac.f fill only 6 of them.
    let program = compile(&dot_product(3, true, 16), &options()).unwrap();
    assert_eq!(hazard::check(&program.bytes, 0), Ok(()));
    assert_eq!(loop_shape(&program, "dot.bb1"), (8, 6));
}

#[test]
fn the_walkthrough_loop_issues_at_least_0_9_vmac_f_per_cycle() {
    // The walkthrough worker's gate/up form with four input vectors a
    // turn: 12 loads, 8 vmac.f into 4 accumulators (2 a row), in 8
    // bundles. No accumulator spills: each accumulation chain keeps its dm
    // register through the loop and its back edge.
    let program = compile(&dot_product(4, true, 16), &options()).unwrap();
    assert_eq!(rules::check(&program.bytes, 0), Ok(()));
    assert_eq!(hazard::check(&program.bytes, 0), Ok(()));
    assert_eq!(program.frame_bytes, 0);
    let (bundles, macs) = loop_shape(&program, reference::DOT_PRODUCT_LOOP);
    // No stall is modelled: a turn of the loop takes its bundles' cycles.
    let per_cycle = macs as f64 / bundles as f64;
    assert!(per_cycle >= 0.9, "{macs} vmac.f in {bundles} bundles");
    assert_eq!((bundles, macs), (8, 8));
    // Both load slots carry the loads: the scheduler bound each.
    let body = block_text(&program, reference::DOT_PRODUCT_LOOP);
    let (lda, ldb) = (
        body.iter().filter(|b| b.contains("vlda")).count(),
        body.iter().filter(|b| b.contains("vldb")).count(),
    );
    assert_eq!(lda, 8, "{body:?}");
    assert_eq!(ldb, 4, "{body:?}");
}

#[test]
fn an_accumulator_spills_a_quarter_at_a_time() {
    // Six accumulators live at once, one more than there are dm
    // registers: the allocator keeps one in the frame (256 bytes, stored
    // and reloaded as four bm quarters), and the latency checker passes
    // the result.
    let mut b = FunctionBuilder::new("sums");
    let entry = b.block();
    let (mode, p) = (b.vreg(RegClass::Scalar), b.vreg(RegClass::Pointer));
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(mode), Imm(60)], at(1))
        .unwrap();
    b.inst(entry, "MOVXM", &[V(p), Imm(0x7_0000)], at(1))
        .unwrap();
    let accs: Vec<VReg> = (0..6).map(|_| b.vreg(RegClass::Accumulator)).collect();
    for &acc in &accs {
        b.inst(entry, "VCLR", &[V(acc)], at(2)).unwrap();
    }
    let mut sum = accs[0];
    for &acc in &accs[1..] {
        let next = b.vreg(RegClass::Accumulator);
        let operands = [V(next), V(sum), V(acc), V(mode)];
        b.inst(entry, "VADD_f_vmac_cm2_add_reg", &operands, at(3))
            .unwrap();
        sum = next;
    }
    let out = b.vreg(RegClass::Vector);
    let low = MachineOperand::Part(sum, Part::Low);
    b.inst(entry, "VCONV_bf16_fp32_mv_x_srs_bf", &[V(out), low], at(4))
        .unwrap();
    b.inst(
        entry,
        "VST_dmx_sts_x_idx_imm",
        &[V(out), V(p), Imm(0)],
        at(4),
    )
    .unwrap();
    b.terminate(entry, Terminator::Done, at(5)).unwrap();
    let program = compile(&b.finish().unwrap(), &options()).unwrap();
    assert_eq!(program.frame_bytes, 256);
    let text = text(&program);
    for quarter in ["bmll", "bmlh", "bmhl", "bmhh"] {
        assert!(text.contains(&format!("vst\t{quarter}")), "{text}");
        assert!(text.contains(&format!("vlda\t{quarter}")), "{text}");
    }
}

#[test]
fn splat_shuffle_and_extract_schedule_and_encode() {
    // The epilogue's vector moves: a scalar splat (vbcst), an interleave
    // with zeros (vshuffle), a lane extracted (vextract) and stored.
    let mut b = FunctionBuilder::new("lanes");
    let entry = b.block();
    let (one, nought, mode, lane) = (
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
    );
    let (splat, zeros, mixed) = (
        b.vreg(RegClass::Vector),
        b.vreg(RegClass::Vector),
        b.vreg(RegClass::Vector),
    );
    let p = b.vreg(RegClass::Pointer);
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(one), Imm(1000)], at(1))
        .unwrap();
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(nought), Imm(0)], at(1))
        .unwrap();
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(mode), Imm(24)], at(1))
        .unwrap();
    b.inst(entry, "MOVXM", &[V(p), Imm(0x7_0000)], at(1))
        .unwrap();
    b.inst(entry, "VBCST_16", &[V(splat), V(one)], at(2))
        .unwrap();
    b.inst(entry, "VBCST_16", &[V(zeros), V(nought)], at(2))
        .unwrap();
    b.inst(
        entry,
        "VSHUFFLE_vec_shuffle_x",
        &[V(mixed), V(splat), V(zeros), V(mode)],
        at(3),
    )
    .unwrap();
    b.inst(
        entry,
        "VEXTRACT_16_vec_extract_imm_vaddSign0",
        &[V(lane), V(mixed), Imm(1)],
        at(4),
    )
    .unwrap();
    b.inst(entry, "ST_dms_sts_idx_imm", &[V(lane), V(p), Imm(0)], at(5))
        .unwrap();
    b.terminate(entry, Terminator::Done, at(6)).unwrap();
    let program = compile(&b.finish().unwrap(), &options()).unwrap();
    let text = text(&program);
    for op in ["vbcst.16", "vshuffle", "vextract.16", "st\t"] {
        assert!(text.contains(op), "{text}");
    }
    assert_eq!(
        text,
        concat!(
            "_start:\n",
            "   0: movxm\tsp, #491520\n",
            "lanes:\n",
            "   6: mov\tr0, #1000\n",
            "   a: mov\tr2, #0\n",
            "   e: mov\tr4, #24\n",
            "  12: vbcst.16\tx8, r0\n",
            "  16: vbcst.16\tx1, r2\n",
            "  1a: vshuffle\tx5, x8, x1, r4\n",
            "  1e: vextract.16\tr16, x5, #1, vaddsign0\n",
            "  22: nop\n",
            "  24: movxm\tp0, #458752\n",
            "  2a: st\tr16, [p0, #0]\n",
            "  2e: nop\n",
            "  30: nop\n",
            "  32: nop\n",
            "  34: nop\n",
            "  36: done\n",
        )
    );
}

#[test]
fn a_part_is_read_only_and_only_of_registers_that_have_it() {
    let mut b = FunctionBuilder::new("parts");
    let entry = b.block();
    let (acc, x, r) = (
        b.vreg(RegClass::Accumulator),
        b.vreg(RegClass::Vector),
        b.vreg(RegClass::Scalar),
    );
    assert!(matches!(
        b.inst(entry, "VCLR", &[MachineOperand::Part(acc, Part::Low)], None),
        Err(BuildError::PartialDefinition { .. })
    ));
    // vconv takes a cm half: a scalar has none, a whole dm is too wide.
    assert!(matches!(
        b.inst(
            entry,
            "VCONV_bf16_fp32_mv_x_srs_bf",
            &[V(x), MachineOperand::Part(r, Part::Low)],
            None
        ),
        Err(BuildError::NoSuchPart { .. })
    ));
    assert!(matches!(
        b.inst(entry, "VCONV_bf16_fp32_mv_x_srs_bf", &[V(x), V(acc)], None),
        Err(BuildError::WrongClass { .. })
    ));
    assert!(matches!(
        b.inst(
            entry,
            "VCONV_bf16_fp32_mv_x_srs_bf",
            &[V(x), MachineOperand::Part(acc, Part::LowLow)],
            None
        ),
        Err(BuildError::NoSuchPart { .. })
    ));
}

#[test]
fn a_part_definition_defines_the_whole_register_by_one_part() {
    // A scalar f32 add on the vector unit: the value in lane 0 of an x,
    // moved into the low quarter of a dm (PartDef: the dm is defined, its
    // other quarters unspecified), added there, and moved back from it.
    let mut b = FunctionBuilder::new("part_defs");
    let entry = b.block();
    let (a, conf, sum) = (
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
    );
    let (x, back) = (b.vreg(RegClass::Vector), b.vreg(RegClass::Vector));
    let (acc, total) = (b.vreg(RegClass::Accumulator), b.vreg(RegClass::Accumulator));
    let p = b.vreg(RegClass::Pointer);
    b.inst(entry, "MOVXM", &[V(a), Imm(0x3F80_0000)], at(1))
        .unwrap();
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(conf), Imm(0x3C)], at(1))
        .unwrap();
    b.inst(entry, "VBCST_32", &[V(x), V(a)], at(2)).unwrap();
    // A part definition is an output only.
    assert!(matches!(
        b.inst(
            entry,
            "VMOV_alu_mv_mv_x",
            &[V(back), MachineOperand::PartDef(acc, Part::LowLow)],
            at(3)
        ),
        Err(BuildError::PartDefinitionRead { .. })
    ));
    b.inst(
        entry,
        "VMOV_alu_mv_mv_x",
        &[MachineOperand::PartDef(acc, Part::LowLow), V(x)],
        at(3),
    )
    .unwrap();
    // Defined once: a second part definition of it is a redefinition.
    assert!(matches!(
        b.inst(
            entry,
            "VMOV_alu_mv_mv_x",
            &[MachineOperand::PartDef(acc, Part::LowLow), V(x)],
            at(3)
        ),
        Err(BuildError::Redefined(_))
    ));
    b.inst(
        entry,
        "VADD_f_vmac_cm2_add_reg",
        &[V(total), V(acc), V(acc), V(conf)],
        at(4),
    )
    .unwrap();
    b.inst(
        entry,
        "VMOV_alu_mv_mv_x",
        &[V(back), MachineOperand::Part(total, Part::LowLow)],
        at(5),
    )
    .unwrap();
    b.inst(
        entry,
        "VEXTRACT_32_vec_extract_imm_vaddSign0",
        &[V(sum), V(back), Imm(0)],
        at(6),
    )
    .unwrap();
    b.inst(entry, "MOVXM", &[V(p), Imm(0x7_0000)], at(7))
        .unwrap();
    b.inst(entry, "ST_dms_sts_idx_imm", &[V(sum), V(p), Imm(0)], at(7))
        .unwrap();
    b.terminate(entry, Terminator::Done, at(8)).unwrap();
    let function = b.finish().unwrap();
    let program = compile(&function, &options()).unwrap();
    let text = text(&program);
    for op in ["vbcst.32", "vmov\tbmll", "vadd.f\tdm", "vextract.32"] {
        assert!(text.contains(op), "{op} in {text}");
    }
    // The function shows the part definition.
    assert!(function.to_string().contains(".low.low!"), "{function}");
}

fn text(program: &Program) -> String {
    program.disassembly().unwrap()
}

#[test]
fn a_counted_loop_compiles_to_the_expected_code() {
    let program = compile(&counted_loop(), &options()).unwrap();
    let got = text(&program);
    assert!(rules::check(&program.bytes, 0).is_ok());
    assert!(hazard::check(&program.bytes, 0).is_ok());
    assert_eq!(
        got,
        concat!(
            "_start:\n",
            "   0: movxm\tsp, #491520\n",
            "sum:\n",
            "   6: mov\tr4, #0\n",
            "   a: mov\tr0, #10\n",
            "   e: movxm\tp4, #459776\n",
            "  14: mov\tr16, r4\n",
            "  18: nop\n",
            "  1a: nop\n",
            "  1c: nop\n",
            "  1e: nop\n",
            "sum.bb1:\n",
            "  20: add\tr16, r16, r4\n",
            "  24: add\tr4, r4, #1\n",
            "  28: lt\tr17, r4, r0\n",
            "  2c: jnz\tr17, #32\n",
            "  32: nop\n",
            "  34: nop\n",
            "  36: nop\n",
            "  38: nop\n",
            "  3a: nop\n",
            "sum.bb2:\n",
            "  3c: st\tr16, [p4, #0]\n",
            "  40: nop\n",
            "  42: nop\n",
            "  44: nop\n",
            "  46: nop\n",
            "  48: done\n",
        )
    );
}

#[test]
fn a_lock_pair_compiles_to_the_expected_code() {
    let program = compile(&lock_pair(), &options()).unwrap();
    let got = text(&program);
    assert_eq!(
        got,
        concat!(
            "_start:\n",
            "   0: movxm\tsp, #491520\n",
            "locked:\n",
            "   6: mov\tr0, #1\n",
            "   a: acq\t#49, r0\n",
            "   e: movxm\tp2, #458752\n",
            "  14: nop\n",
            "  16: nop\n",
            "  18: lda\tr5, [p2, #0]\n",
            "  1c: nop\n",
            "  1e: nop\n",
            "  20: nop\n",
            "  22: nop\n",
            "  24: nop\n",
            "  26: nop\n",
            "  28: add\tr7, r5, #1\n",
            "  2c: st\tr7, [p2, #0]\n",
            "  30: nop\n",
            "  32: nop\n",
            "  34: nop\n",
            "  36: nop\n",
            "  38: rel\t#48, r0\n",
            "  3c: nop\n",
            "  3e: nop\n",
            "  40: nop\n",
            "  42: done\n",
        )
    );
}

#[test]
fn scarce_registers_spill_a_value_live_across_the_loop() {
    let scarce = Options {
        registers_per_class: Some(3),
        ..options()
    };
    let program = compile(&live_across_loop(), &scarce).unwrap();
    let got = text(&program);
    assert!(program.frame_bytes > 0);
    assert_eq!(
        got,
        concat!(
            "_start:\n",
            "   0: movxm\tsp, #491584\n",
            "spill:\n",
            "   6: mov\tr2, #77\n",
            "   a: st\tr2, [sp, #-64] ; mov\tr1, #5\n",
            "  12: st\tr1, [sp, #-60] ; mov\tr1, #0\n",
            "  1a: movxm\tp0, #459776\n",
            "  20: mov\tr0, r1\n",
            "  24: nop\n",
            "  26: nop\n",
            "  28: nop\n",
            "  2a: nop\n",
            "  2c: nop\n",
            "  2e: nop\n",
            "spill.bb1:\n",
            "  30: nop\n",
            "  32: add\tr0, r0, r1\n",
            "  36: st\tr0, [sp, #-56] ; add\tr1, r1, #1\n",
            "  3c: lda\tr0, [sp, #-60]\n",
            "  40: nop\n",
            "  42: nop\n",
            "  44: nop\n",
            "  46: nop\n",
            "  48: nop\n",
            "  4a: nop\n",
            "  4c: lt\tr2, r1, r0\n",
            "  50: jz\tr2, #128\n",
            "  56: nop\n",
            "  58: nop\n",
            "  5a: nop\n",
            "  5c: nop\n",
            "  5e: nop\n",
            "  60: lda\tr0, [sp, #-56] ; j\t#48\n",
            "  6a: nop\n",
            "  6c: nop\n",
            "  6e: nop\n",
            "  70: nop\n",
            "  72: nop\n",
            "  74: nop\n",
            "  76: nop\n",
            "  78: nop\n",
            "  7a: nop\n",
            "  7c: nop\n",
            "  7e: nop\n",
            "spill.bb2:\n",
            "  80: lda\tr1, [sp, #-56]\n",
            "  84: lda\tr2, [sp, #-64]\n",
            "  88: nop\n",
            "  8a: nop\n",
            "  8c: nop\n",
            "  8e: nop\n",
            "  90: nop\n",
            "  92: nop\n",
            "  94: add\tr0, r1, r2\n",
            "  98: st\tr0, [p0, #0]\n",
            "  9c: nop\n",
            "  9e: nop\n",
            "  a0: nop\n",
            "  a2: nop\n",
            "  a4: done\n",
        )
    );
}

#[test]
fn the_same_function_gives_the_same_bytes_twice() {
    for f in [
        counted_loop(),
        lock_pair(),
        live_across_loop(),
        dot_product(6, false, 16),
        dot_product(4, true, 16),
    ] {
        let a = compile(&f, &options()).unwrap();
        let b = compile(&f, &options()).unwrap();
        assert_eq!(a, b);
    }
}

#[test]
fn the_program_has_symbols_a_line_table_and_a_core_elf() {
    let program = compile(&counted_loop(), &options()).unwrap();
    let names: Vec<(&str, u32)> = program
        .symbols
        .iter()
        .map(|s| (s.name.as_str(), s.address))
        .collect();
    assert_eq!(
        names,
        [
            ("_start", 0),
            ("sum", 6),
            ("sum.bb1", 0x20),
            ("sum.bb2", 0x3c)
        ]
    );
    let lines: Vec<(u32, u32)> = program
        .line_table
        .iter()
        .map(|e| (e.address, e.location.line))
        .collect();
    assert_eq!(
        lines,
        [
            (6, 2),
            (0xa, 1),
            (0xe, 3),
            (0x14, 4),
            (0x20, 5),
            (0x24, 6),
            (0x3c, 7),
            (0x48, 8)
        ]
    );
    let image = elf::read(&program.elf().unwrap()).unwrap();
    assert_eq!(image.program, program.bytes);
    assert_eq!(image.entry, 0);
    assert!(program.stack_pointer >= 0x7_8000 && program.stack_pointer <= 0x7_8400);
}

fn image(lines: &[&str]) -> Vec<u8> {
    lines
        .iter()
        .flat_map(|l| encode(parse_bundle(l).unwrap()).unwrap())
        .collect()
}

fn hazard_of(lines: &[&str]) -> hazard::HazardKind {
    match hazard::check(&image(lines), 0) {
        Err(hazard::CheckError::Hazard(h)) => h.kind,
        other => panic!("expected a hazard, got {other:?}"),
    }
}

#[test]
fn the_latency_checker_finds_each_hazard() {
    use hazard::HazardKind::*;
    let nops = |n: usize| vec!["nop"; n];
    // A load's result is visible 7 bundles after it, not 6.
    let mut early = vec!["lda r1, [p0, #0]"];
    early.extend(nops(5));
    early.push("add r2, r1, r1");
    assert_eq!(hazard_of(&early), ReadBeforeWrite);
    let mut late = vec!["lda r1, [p0, #0]"];
    late.extend(nops(6));
    late.push("add r2, r1, r1");
    assert_eq!(hazard::check(&image(&late), 0), Ok(()));
    // A move landing before the load that came first.
    assert_eq!(hazard_of(&["lda r1, [p0, #0]", "mov r1, #3"]), WriteOrder);
    // The load's register write port and a move's at the same cycle.
    let mut port = vec!["lda r1, [p0, #0]"];
    port.extend(nops(5));
    port.push("mov r2, #1");
    assert_eq!(hazard_of(&port), UnitConflict);
    // vmac.f reads its accumulator at cycle 4; a move into half of it
    // issued the bundle after lands at cycle 1 + 2: before the read.
    assert_eq!(
        hazard_of(&["vmac.f dm1, dm0, x2, x3, r4", "vmov cml0, cmh2"]),
        WriteBeforeRead
    );
    assert_eq!(
        hazard_of(&["acq #1, r0", "nop", "rel #1, r0"]),
        LockDistance
    );
    // Around a loop's back edge: the load in the jump's bundle holds the
    // register write port 6 bundles after it, when the loop's first
    // bundle (`mov`, at 0x10) issues again: a conflict on the second turn.
    let mut back = nops(8);
    back.extend(["mov r2, #1", "nop", "lda r1, [p0, #0] ; j #16"]);
    back.extend(nops(5));
    assert_eq!(rules::check(&image(&back), 0), Ok(()));
    assert_eq!(hazard_of(&back), UnitConflict);
    // One bundle earlier, the port is free again when `mov` comes round.
    let mut back = nops(8);
    back.extend(["mov r2, #1", "lda r1, [p0, #0]", "j #16"]);
    back.extend(nops(5));
    assert_eq!(hazard::check(&image(&back), 0), Ok(()));
}

#[test]
fn bad_instructions_are_typed_errors() {
    let mut b = FunctionBuilder::new("bad");
    let entry = b.block();
    let r = b.vreg(RegClass::Scalar);
    let p = b.vreg(RegClass::Pointer);
    assert!(matches!(
        b.inst(entry, "ADD_alu_r_rr", &[V(p), V(r), V(r)], None),
        Err(BuildError::WrongClass {
            class: RegClass::Pointer,
            ..
        })
    ));
    match b.inst(entry, "ADD_add_r_ri", &[V(r), V(r), Imm(100)], None) {
        Err(BuildError::Operand { error, .. }) => assert!(matches!(
            *error,
            IsaError::OutOfRange {
                min: -64,
                max: 63,
                ..
            }
        )),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        b.inst(entry, "ADD_alu_r_rr", &[V(r)], None),
        Err(BuildError::OperandCount { given: 1, .. })
    ));
    assert!(matches!(
        b.inst(entry, "NO_SUCH_RECORD", &[], None),
        Err(BuildError::UnknownOpcode { .. })
    ));
    assert!(matches!(
        b.inst(entry, "J_lng", &[Imm(0)], None),
        Err(BuildError::UnsupportedOpcode { .. })
    ));
    assert!(matches!(
        b.inst(entry, "ADD_alu_r_rr", &[V(r), Imm(1), V(r)], None),
        Err(BuildError::WrongKind { .. })
    ));
    assert!(matches!(
        b.inst(
            entry,
            "MOV_alu_mv_mv_mv_cg",
            &[MachineOperand::Phys("r3".into()), Imm(1)],
            None
        ),
        Err(BuildError::AllocatableRegister { .. })
    ));
    assert_eq!(
        b.param(entry, RegClass::Scalar),
        Err(BuildError::EntryParameters)
    );
    // A use without a definition.
    let s = b.vreg(RegClass::Scalar);
    b.inst(entry, "ADD_add_r_ri", &[V(s), V(r), Imm(1)], None)
        .unwrap();
    assert_eq!(
        b.inst(entry, "ADD_add_r_ri", &[V(s), V(r), Imm(1)], None),
        Err(BuildError::Redefined(s.index()))
    );
    b.terminate(entry, Terminator::Done, None).unwrap();
    assert_eq!(b.finish(), Err(BuildError::Undefined(r.index())));
}

#[test]
fn a_frame_larger_than_the_stack_region_is_refused() {
    let tiny = Options {
        stack: StackRegion {
            base: 0x7_8000,
            size: 16,
        },
        registers_per_class: Some(3),
    };
    assert!(matches!(
        compile(&live_across_loop(), &tiny),
        Err(CodegenError::Stack(_))
    ));
}

#[test]
fn a_load_issues_in_whichever_load_slot_is_free() {
    // Two loads given as the same vlda record land in one bundle, one in
    // each load slot: the scheduler bound the second to vldb.
    let mut b = FunctionBuilder::new("two");
    let entry = b.block();
    let p = b.vreg(RegClass::Pointer);
    let (x, y) = (b.vreg(RegClass::Vector), b.vreg(RegClass::Vector));
    b.inst(entry, "MOVXM", &[V(p), Imm(0x7_0000)], at(1))
        .unwrap();
    for (v, offset) in [(x, 0), (y, 64)] {
        b.load(
            entry,
            "VLDA_dmx_lda_x_idx_imm",
            &[V(v), V(p), Imm(offset)],
            at(2),
        )
        .unwrap();
    }
    for (v, offset) in [(x, 128), (y, 192)] {
        b.inst(
            entry,
            "VST_dmx_sts_x_idx_imm",
            &[V(v), V(p), Imm(offset)],
            at(3),
        )
        .unwrap();
    }
    b.terminate(entry, Terminator::Done, at(4)).unwrap();
    let f = b.finish().unwrap();
    let vldb = isa()
        .opcodes
        .iter()
        .find(|o| o.name == "VLDB_dmx_ldb_x_idx_imm");
    assert_eq!(
        f.blocks[0].insts[1].alternatives,
        vldb.into_iter().collect::<Vec<_>>()
    );
    let text = text(&compile(&f, &options()).unwrap());
    let both = text
        .lines()
        .find(|l| l.contains("vlda"))
        .unwrap_or_default();
    assert!(both.contains("vldb"), "{text}");
}

#[test]
fn alternatives_must_be_the_same_operation_in_another_slot() {
    let mut b = FunctionBuilder::new("alternatives");
    let entry = b.block();
    let (p, x, r) = (
        b.vreg(RegClass::Pointer),
        b.vreg(RegClass::Vector),
        b.vreg(RegClass::Scalar),
    );
    // A post-modify form has one more operand: not the same load.
    let records = ["VLDA_dmx_lda_x_idx_imm", "VLDA_dmx_lda_x_idx"];
    assert!(matches!(
        b.inst_any(entry, &records, &[V(x), V(p), Imm(0)], None),
        Err(BuildError::NotAlternative { .. })
    ));
    assert!(matches!(
        b.load(entry, "ADD_add_r_ri", &[V(r), V(r), Imm(1)], None),
        Err(BuildError::UnsupportedOpcode { .. })
    ));
    assert!(matches!(
        b.inst_any(entry, &[], &[], None),
        Err(BuildError::UnknownOpcode { .. })
    ));
    // The same load in both slots is taken.
    let records = ["VLDA_dmx_lda_x_idx_imm", "VLDB_dmx_ldb_x_idx_imm"];
    b.inst_any(entry, &records, &[V(x), V(p), Imm(0)], None)
        .unwrap();
}

#[test]
fn a_register_is_loaded_in_parts_into_one_register() {
    // A 2048-bit accumulator from memory: the first quarter defines it
    // (PartDef), the other three write into it (PartInto), then an int8
    // matrix vmac reads it whole and its four quarters are stored.
    let mut b = FunctionBuilder::new("part_into");
    let entry = b.block();
    let (p, conf) = (b.vreg(RegClass::Pointer), b.vreg(RegClass::Scalar));
    let (x, y) = (b.vreg(RegClass::Vector), b.vreg(RegClass::Vector));
    let quarters: Vec<VReg> = (0..4).map(|_| b.vreg(RegClass::Accumulator)).collect();
    let sum = b.vreg(RegClass::Accumulator);
    b.inst(entry, "MOVXM", &[V(p), Imm(0x7_0000)], at(1))
        .unwrap();
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(conf), Imm(0x308)], at(1))
        .unwrap();
    b.inst(
        entry,
        "VLDA_dmx_lda_x_idx_imm",
        &[V(x), V(p), Imm(0)],
        at(2),
    )
    .unwrap();
    b.inst(
        entry,
        "VLDA_dmx_lda_x_idx_imm",
        &[V(y), V(p), Imm(64)],
        at(2),
    )
    .unwrap();
    let parts = [Part::LowLow, Part::LowHigh, Part::HighLow, Part::HighHigh];
    for (k, part) in parts.into_iter().enumerate() {
        let out = match k {
            0 => MachineOperand::PartDef(quarters[0], part),
            _ => MachineOperand::PartInto(quarters[k], quarters[k - 1], part),
        };
        let offset = 128 + 64 * k as i64;
        b.inst(
            entry,
            "VLDA_dmx_lda_bm_idx_imm",
            &[out, V(p), Imm(offset)],
            at(3),
        )
        .unwrap();
    }
    // The register it writes into must be defined, of its class.
    assert!(matches!(
        b.inst(
            entry,
            "VLDA_dmx_lda_bm_idx_imm",
            &[MachineOperand::PartInto(sum, x, Part::LowLow), V(p), Imm(0)],
            at(3)
        ),
        Err(BuildError::TiedOutput { .. })
    ));
    b.inst(
        entry,
        "VMAC_vmul_cm_core_X_X",
        &[V(sum), V(quarters[3]), V(x), V(y), V(conf)],
        at(4),
    )
    .unwrap();
    for (k, part) in parts.into_iter().enumerate() {
        let offset = 64 * k as i64;
        b.inst(
            entry,
            "VST_dmx_sts_bm_idx_imm",
            &[MachineOperand::Part(sum, part), V(p), Imm(offset)],
            at(5),
        )
        .unwrap();
    }
    b.terminate(entry, Terminator::Done, at(6)).unwrap();
    let function = b.finish().unwrap();
    assert!(function.to_string().contains("!<-"), "{function}");
    let program = compile(&function, &options()).unwrap();
    let text = text(&program);
    // The four loads land in the quarters of one dm, the one vmac reads.
    let loaded: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("vlda") && l.contains("bm"))
        .collect();
    assert_eq!(loaded.len(), 4, "{text}");
    let dm = |quarter: &str| quarter.chars().last().unwrap();
    let registers: Vec<char> = loaded
        .iter()
        .map(|l| {
            let at = l.find("bm").unwrap();
            dm(&l[at..at + 5])
        })
        .collect();
    assert!(registers.iter().all(|&r| r == registers[0]), "{text}");
    let vmac = text.lines().find(|l| l.contains("vmac")).unwrap();
    assert!(vmac.contains(&format!("dm{}", registers[0])), "{text}");
}

/// A program renamed is the program compiled under the new name: the same
/// bytes and line table, its block symbols renamed (and `_start` kept).
#[test]
fn a_renamed_program_is_the_one_compiled_under_the_new_name() {
    let function = counted_loop();
    let mut other = function.clone();
    other.name = "sum_again".into();
    let program = compile(&function, &options()).unwrap();
    let expected = compile(&other, &options()).unwrap();
    assert_eq!(program.renamed("sum", "sum_again"), expected);
    assert!(expected.symbols.iter().any(|s| s.name == "_start"));
    assert!(expected
        .symbols
        .iter()
        .any(|s| s.name.starts_with("sum_again.")));
}

#[test]
fn dead_instructions_go_and_effects_stay() {
    // a = 5; b = a + 1 and c = b * b are read by nothing; the write of
    // crRnd and the store are effects; d feeds the store.
    let mut b = FunctionBuilder::new("dead");
    let entry = b.block();
    let (a, bb, c, d) = (
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
    );
    let p = b.vreg(RegClass::Pointer);
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(a), Imm(5)], at(1))
        .unwrap();
    b.inst(entry, "ADD_add_r_ri", &[V(bb), V(a), Imm(1)], at(2))
        .unwrap();
    b.inst(entry, "MUL", &[V(c), V(bb), V(bb)], at(3)).unwrap();
    b.inst(entry, "ADD_add_r_ri", &[V(d), V(a), Imm(2)], at(4))
        .unwrap();
    b.inst(
        entry,
        "MOVX_mvx_cr_imm",
        &[MachineOperand::Phys("crrnd".into()), Imm(12)],
        at(5),
    )
    .unwrap();
    b.inst(entry, "MOVXM", &[V(p), Imm(0x7_0400)], at(6))
        .unwrap();
    b.inst(entry, "ST_dms_sts_idx_imm", &[V(d), V(p), Imm(0)], at(7))
        .unwrap();
    b.terminate(entry, Terminator::Done, at(8)).unwrap();
    let text = text(&compile(&b.finish().unwrap(), &options()).unwrap());
    assert!(!text.contains("mul\t"), "{text}");
    assert_eq!(text.matches("add\t").count(), 1, "{text}");
    for kept in ["mov\tr", "movx\tcrrnd, #12", "st\tr"] {
        assert!(text.contains(kept), "{kept}: {text}");
    }
}

/// Four pairs of x loads, each pair shuffled and stored, a pair after the
/// one before is stored: the allocator gives a pair the registers the one
/// before just freed.
fn shuffled_pairs() -> MachineFunction {
    let mut b = FunctionBuilder::new("pairs");
    let entry = b.block();
    let mode = b.vreg(RegClass::Scalar);
    let p = b.vreg(RegClass::Pointer);
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(mode), Imm(24)], at(1))
        .unwrap();
    b.inst(entry, "MOVXM", &[V(p), Imm(0x7_0000)], at(1))
        .unwrap();
    for pair in 0..4i64 {
        let (x, y, z) = (
            b.vreg(RegClass::Vector),
            b.vreg(RegClass::Vector),
            b.vreg(RegClass::Vector),
        );
        for (v, at_byte) in [(x, 128 * pair), (y, 128 * pair + 64)] {
            b.load(
                entry,
                "VLDA_dmx_lda_x_idx_imm",
                &[V(v), V(p), Imm(at_byte)],
                at(2),
            )
            .unwrap();
        }
        b.inst(
            entry,
            "VSHUFFLE_vec_shuffle_x",
            &[V(z), V(x), V(y), V(mode)],
            at(3),
        )
        .unwrap();
        b.inst(
            entry,
            "VST_dmx_sts_x_idx_imm",
            &[V(z), V(p), Imm(256 + 64 * pair)],
            at(4),
        )
        .unwrap();
    }
    b.terminate(entry, Terminator::Done, at(5)).unwrap();
    b.finish().unwrap()
}

/// The x registers the loads of `text` write, in address order.
fn loaded_registers(text: &str) -> Vec<String> {
    text.split([';', '\n'])
        .filter_map(|part| {
            let at = part.find("vld")?;
            let rest = &part[at..];
            let register = rest.split(['\t', ' ']).nth(1)?;
            Some(register.trim_end_matches(',').to_string())
        })
        .collect()
}

#[test]
fn renaming_gives_a_reload_a_register_no_earlier_read_holds() {
    // Renamed, no pair loads into a register an earlier pair used: each
    // pair's loads need not wait for the reads before them.
    let spread = text(&compile(&shuffled_pairs(), &options()).unwrap());
    let loaded = loaded_registers(&spread);
    assert_eq!(loaded.len(), 8, "{spread}");
    let distinct: std::collections::BTreeSet<&String> = loaded.iter().collect();
    assert_eq!(distinct.len(), 8, "{spread}");
    // With three registers kept there is nothing to rename to: the second
    // pair reuses the first's.
    let few = Options {
        registers_per_class: Some(3),
        ..options()
    };
    let kept = text(&compile(&shuffled_pairs(), &few).unwrap());
    let loaded = loaded_registers(&kept);
    assert_eq!(loaded.len(), 8, "{kept}");
    let allowed = &RegClass::Vector.registers()[..3];
    assert!(
        loaded.iter().all(|r| allowed.contains(&r.as_str())),
        "{kept}"
    );
}
