//! Reference machine functions: the walkthrough worker's bf16 inner loop
//! built as selection is to emit it (software-pipelined, several
//! accumulators), for the tests and the bench that measure its throughput
//! (docs/code-generator.md, "Throughput of the dot-product loop"), and as
//! an example of the form for selection.

use crate::builder::FunctionBuilder;
use crate::class::{Part, RegClass};
use crate::error::BuildError;
use crate::function::{BlockId, MachineFunction, MachineOperand, Terminator, VReg};
use crate::location::SourceLocation;
use loom_aie2p_isa::Bundle;
use MachineOperand::{Imm, VReg as V};

fn at(line: u32) -> Option<SourceLocation> {
    Some(SourceLocation::new("worker.loom", line, 3))
}

/// The `vmac.f` among `bundles`.
pub fn vmac_f_count(bundles: &[Bundle]) -> usize {
    bundles
        .iter()
        .flat_map(|b| &b.instructions)
        .filter(|i| i.opcode.mnemonic == "vmac.f")
        .count()
}

/// The label of the loop block in the compiled program.
pub const DOT_PRODUCT_LOOP: &str = "dot.bb1";

/// The multiplier's configuration register value the functions pass to
/// `vmac.f` and `vadd.f`. Which mode computes `vector.dot2f` is
/// selection's to establish; the schedule does not depend on it.
pub const MODE: i64 = 60;

/// bf16 dot products, 32 lanes a load, software-pipelined as selection
/// would write them: each turn multiplies the vectors the turn before
/// loaded (`vmac.f`, f32 accumulators in turn) and loads the next turn's
/// (`load`: either load slot, the scheduler's choice; the last load of
/// each stream post-modifies its pointer), so no load is waited for
/// inside the turn. `groups` vectors of the input a turn; with `shared`
/// each is multiplied by a gate and an up weight row (the walkthrough
/// worker's two rows over one input), else by one weight row. `turns`
/// turns in all (at least 2): the entry loads the first turn's vectors and
/// clears the accumulators, the loop block runs `turns - 1` times, and the
/// exit does the last turn's multiplies, adds each row's accumulators
/// (`vadd.f`), converts the low half to bf16 (`vconv`, from a part of the
/// accumulator) and stores it (`vst`).
pub fn dot_product(groups: usize, shared: bool, turns: i64) -> Result<MachineFunction, BuildError> {
    let rows = if shared { 2 } else { 1 };
    // Accumulators a row: a row's vmac.f comes every `rows` bundles and
    // may use an accumulator every 3 (its read at 4, write at 6).
    let per_row = 3usize.div_ceil(rows);
    let mut b = FunctionBuilder::new("dot");
    let (entry, body, exit) = (b.block(), b.block(), b.block());
    let streams = 1 + rows;
    let pointers: Vec<VReg> = (0..streams).map(|_| b.vreg(RegClass::Pointer)).collect();
    let pout = b.vreg(RegClass::Pointer);
    let (n, zero, mode) = (
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
        b.vreg(RegClass::Scalar),
    );
    for (s, &p) in pointers.iter().enumerate() {
        let base = 0x7_0000 + 0x2000 * s as i64;
        b.inst(entry, "MOVXM", &[V(p), Imm(base)], at(1))?;
    }
    b.inst(entry, "MOVXM", &[V(pout), Imm(0x7_6000)], at(1))?;
    // The loop runs while i < turns - 2 (the exit does the last turn's
    // multiplies): compared before the increment, so the branch waits
    // for one instruction, not two.
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(n), Imm(turns - 2)], at(1))?;
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(zero), Imm(0)], at(1))?;
    b.inst(entry, "MOV_alu_mv_mv_mv_cg", &[V(mode), Imm(MODE)], at(1))?;
    let step = 64 * groups as i64;
    let (first, stepped) = load_turn(&mut b, entry, &pointers, groups, step, 2)?;
    let mut args = stepped;
    args.push(zero);
    let accumulators = rows * per_row;
    for _ in 0..accumulators {
        let acc = b.vreg(RegClass::Accumulator);
        b.inst(entry, "VCLR", &[V(acc)], at(2))?;
        args.push(acc);
    }
    args.extend(first.iter().flatten());
    // The body's parameters, in the order of `args`.
    let q = (0..streams)
        .map(|_| b.param(body, RegClass::Pointer))
        .collect::<Result<Vec<_>, _>>()?;
    let i = b.param(body, RegClass::Scalar)?;
    let accs = (0..accumulators)
        .map(|_| b.param(body, RegClass::Accumulator))
        .collect::<Result<Vec<_>, _>>()?;
    let current = vector_params(&mut b, body, groups, streams)?;
    // The exit's: the accumulators and the last turn's vectors.
    let exit_accs = (0..accumulators)
        .map(|_| b.param(exit, RegClass::Accumulator))
        .collect::<Result<Vec<_>, _>>()?;
    let exit_vectors = vector_params(&mut b, exit, groups, streams)?;
    b.terminate(entry, Terminator::Jump { target: body, args }, at(2))?;
    let mut body_accs = accs.clone();
    for (k, group) in current.iter().enumerate() {
        multiply(&mut b, body, &mut body_accs, k, group, per_row, mode)?;
    }
    let (next, stepped) = load_turn(&mut b, body, &q, groups, step, 3)?;
    let (i2, c) = (b.vreg(RegClass::Scalar), b.vreg(RegClass::Scalar));
    b.inst(body, "LT", &[V(c), V(i), V(n)], at(5))?;
    b.inst(body, "ADD_add_r_ri", &[V(i2), V(i), Imm(1)], at(5))?;
    let mut taken = stepped;
    taken.push(i2);
    taken.extend(&body_accs);
    taken.extend(next.iter().flatten());
    let mut otherwise = body_accs.clone();
    otherwise.extend(next.iter().flatten());
    b.terminate(
        body,
        Terminator::Branch {
            condition: c,
            taken: body,
            taken_args: taken,
            otherwise: exit,
            otherwise_args: otherwise,
        },
        at(5),
    )?;
    let mut last = exit_accs.clone();
    for (k, group) in exit_vectors.iter().enumerate() {
        multiply(&mut b, exit, &mut last, k, group, per_row, mode)?;
    }
    for row in 0..rows {
        let mut sum = last[row * per_row];
        for &acc in &last[row * per_row + 1..(row + 1) * per_row] {
            let next = b.vreg(RegClass::Accumulator);
            let operands = [V(next), V(sum), V(acc), V(mode)];
            b.inst(exit, "VADD_f_vmac_cm2_add_reg", &operands, at(6))?;
            sum = next;
        }
        let out = b.vreg(RegClass::Vector);
        let low = MachineOperand::Part(sum, Part::Low);
        b.inst(exit, "VCONV_bf16_fp32_mv_x_srs_bf", &[V(out), low], at(7))?;
        let offset = Imm(64 * row as i64);
        let operands = [V(out), V(pout), offset];
        b.inst(exit, "VST_dmx_sts_x_idx_imm", &operands, at(7))?;
    }
    b.terminate(exit, Terminator::Done, at(8))?;
    b.finish()
}

/// One turn's loads from `pointers`: the vectors [group][stream] and the
/// stepped pointers.
fn load_turn(
    b: &mut FunctionBuilder,
    block: BlockId,
    pointers: &[VReg],
    groups: usize,
    step: i64,
    line: u32,
) -> Result<(Vec<Vec<VReg>>, Vec<VReg>), BuildError> {
    let mut vectors = vec![Vec::new(); groups];
    let mut stepped = pointers.to_vec();
    for (k, group) in vectors.iter_mut().enumerate() {
        for (s, &p) in pointers.iter().enumerate() {
            let v = b.vreg(RegClass::Vector);
            // Either load slot: the scheduler binds a free one.
            if k + 1 < groups {
                let offset = Imm(64 * k as i64);
                b.load(
                    block,
                    "VLDA_dmx_lda_x_idx_imm",
                    &[V(v), V(p), offset],
                    at(line),
                )?;
            } else {
                let q = b.vreg(RegClass::Pointer);
                let operands = [V(v), V(q), V(p), Imm(step)];
                b.load(block, "VLDA_dmx_lda_x_pstm_nrm_imm", &operands, at(line))?;
                stepped[s] = q;
            }
            group.push(v);
        }
    }
    Ok((vectors, stepped))
}

fn vector_params(
    b: &mut FunctionBuilder,
    block: BlockId,
    groups: usize,
    streams: usize,
) -> Result<Vec<Vec<VReg>>, BuildError> {
    (0..groups)
        .map(|_| {
            (0..streams)
                .map(|_| b.param(block, RegClass::Vector))
                .collect()
        })
        .collect()
}

/// Group `k`'s multiplies: its input vector (`group[0]`) by each row's
/// weights, row `r` accumulating into `accs[r * per_row + k % per_row]`.
fn multiply(
    b: &mut FunctionBuilder,
    block: BlockId,
    accs: &mut [VReg],
    k: usize,
    group: &[VReg],
    per_row: usize,
    mode: VReg,
) -> Result<(), BuildError> {
    for (row, &weights) in group.iter().skip(1).enumerate() {
        let a = row * per_row + k % per_row;
        let next = b.vreg(RegClass::Accumulator);
        let operands = [V(next), V(accs[a]), V(group[0]), V(weights), V(mode)];
        b.inst(block, "VMAC_f_vmac_bf_vmul_bf_core_X_X", &operands, at(4))?;
        accs[a] = next;
    }
    Ok(())
}
