//! What each modelled instruction does, by llvm-aie record name. Every
//! meaning comes from llvm-aie's instruction selection (llvm/lib/Target/AIE/
//! aie2p/AIE2PInstrPatterns.td, read at commit 06a420bf): the generic
//! operation a pattern maps to an instruction is what the instruction
//! computes. An instruction without an entry here is not modelled, and
//! executing it is an error.
//!
//! - ALUPatterns: `add`, `sub`, `and`, `or`, `xor`, `mul` on i32 (mul: the
//!   low 32 bits of the product); `add d, s, #imm` is `add` of the
//!   immediate. `add` also defines srCarry (llvm-aie's `Defs`); the model
//!   gives it the carry out of the 32-bit unsigned sum (assumption: the
//!   value is in no public source; `adc` reads it).
//! - CmpPatterns: `eq`/`ne`/`lt`/`ltu`/`ge`/`geu` d, a, b is setcc a, b
//!   (1 or 0); `eqz`/`nez` d, a is seteq/setne a, 0.
//! - SelectPat: `sel.nez d, a, b, r27` is `r27 != 0 ? a : b`; SelectNotPat:
//!   `sel.eqz d, a, b, r27` is `r27 == 0 ? a : b`.
//! - `lshl d, a, n` is shl for n >= 0 and srl by -n (the srl pattern
//!   negates the amount); `ashl` is shl / sra the same way. The patterns use
//!   amounts -31..=31 (LLVM shifts by 32 or more are poison), so others
//!   are an error here.
//! - brcond patterns: `jnz r, #a` branches when r != 0, `jz` when r == 0;
//!   `br` is `j #a`; int_aie2p_acquire/release are `acq`/`rel` (id, value);
//!   int_aie2p_done is `done`.
//! - Loads and stores: the address is the pointer plus the immediate or
//!   the `dj` register (indexed), or the pointer itself with the pointer
//!   then advanced by the immediate or the modifier (post-modify, `[p], m`);
//!   `padd[a|b|s] [p], #imm | m` (ptradd) adds to the pointer. Pointers are
//!   20 bits (eP), so addresses wrap at 2^20. `lda.s16/u16/s8/u8` sign- or
//!   zero-extend; `st.s16`/`st.s8` store the low 16 or 8 bits.
//! - Moves (`mov`, `movx`, `movxm`, `mova`, `movs`) copy a register or an
//!   immediate (already sign-extended and scaled by the decoder).

use super::addressing::{address, Address, POINTER_MASK};
use super::exec::{Exec, LockRequest};
use super::neighbours::lock_of;

pub use super::exec::Semantics;

/// The semantics of the instruction llvm-aie calls `name`, if modelled.
pub fn of(name: &str) -> Option<Semantics> {
    let f: Semantics = match name {
        "MOV_alu_mv_mv_mv_scl" | "MOVX_mvx_cr_r" | "MOVS" => |x| {
            let v = x.read("src")?;
            x.write("dst", v)
        },
        "MOV_alu_mv_mv_mv_cg" | "MOVX_alu_cg" | "MOVXM" | "MOVA" => |x| {
            let v = x.read("i")?;
            x.write("dst", v)
        },
        "MOVX_mvx_cr_imm" => |x| {
            let v = x.read("src")?;
            x.write("dst", v)
        },
        "ADD_add_r_ri" => |x| add(x, "imm"),
        "ADD_alu_r_rr" => |x| add(x, "s1"),
        "SUB" => |x| binary(x, u32::wrapping_sub),
        "MUL" => |x| binary(x, u32::wrapping_mul),
        "AND" => |x| binary(x, |a, b| a & b),
        "OR" => |x| binary(x, |a, b| a | b),
        "XOR" => |x| binary(x, |a, b| a ^ b),
        "EQ" => |x| binary(x, |a, b| u32::from(a == b)),
        "NE" => |x| binary(x, |a, b| u32::from(a != b)),
        "LT" => |x| binary(x, |a, b| u32::from((a as i32) < (b as i32))),
        "LTU" => |x| binary(x, |a, b| u32::from(a < b)),
        "GE" => |x| binary(x, |a, b| u32::from((a as i32) >= (b as i32))),
        "GEU" => |x| binary(x, |a, b| u32::from(a >= b)),
        "EQZ" => |x| {
            let a = x.read("s0")?;
            x.write("d0", u32::from(a == 0))
        },
        "NEZ" => |x| {
            let a = x.read("s0")?;
            x.write("d0", u32::from(a != 0))
        },
        "SEL_NEZ" => |x| select(x, true),
        "SEL_EQZ" => |x| select(x, false),
        "LSHL" => |x| shift(x, false),
        "ASHL" => |x| shift(x, true),
        // Scalar word loads and stores, then the part-word forms.
        "LDA_dms_lda_idx_imm" => |x| load(x, Address::Offset("imm"), 4, false),
        "LDA_dms_lda_idx" => |x| load(x, Address::Offset("dj"), 4, false),
        "LDA_dms_lda_pstm_nrm_imm" => |x| load(x, Address::Post("imm"), 4, false),
        "LDA_dms_lda_pstm_nrm" => |x| load(x, Address::Post("mod"), 4, false),
        "LDA_dms_lda_spill" => |x| load(x, Address::Stack, 4, false),
        "LDA_s16_idx_imm" => |x| load(x, Address::Offset("imm"), 2, true),
        "LDA_s16_idx" => |x| load(x, Address::Offset("dj"), 2, true),
        "LDA_s16_pstm_nrm_imm" => |x| load(x, Address::Post("imm"), 2, true),
        "LDA_s16_pstm_nrm" => |x| load(x, Address::Post("mod"), 2, true),
        "LDA_u16_idx_imm" => |x| load(x, Address::Offset("imm"), 2, false),
        "LDA_u16_idx" => |x| load(x, Address::Offset("dj"), 2, false),
        "LDA_u16_pstm_nrm_imm" => |x| load(x, Address::Post("imm"), 2, false),
        "LDA_u16_pstm_nrm" => |x| load(x, Address::Post("mod"), 2, false),
        "LDA_s8_idx_imm" => |x| load(x, Address::Offset("imm"), 1, true),
        "LDA_s8_idx" => |x| load(x, Address::Offset("dj"), 1, true),
        "LDA_s8_pstm_nrm_imm" => |x| load(x, Address::Post("imm"), 1, true),
        "LDA_s8_pstm_nrm" => |x| load(x, Address::Post("mod"), 1, true),
        "LDA_u8_idx_imm" => |x| load(x, Address::Offset("imm"), 1, false),
        "LDA_u8_idx" => |x| load(x, Address::Offset("dj"), 1, false),
        "LDA_u8_pstm_nrm_imm" => |x| load(x, Address::Post("imm"), 1, false),
        "LDA_u8_pstm_nrm" => |x| load(x, Address::Post("mod"), 1, false),
        "ST_dms_sts_idx_imm" => |x| store(x, Address::Offset("imm"), 4),
        "ST_dms_sts_idx" => |x| store(x, Address::Offset("dj"), 4),
        "ST_dms_sts_pstm_nrm_imm" => |x| store(x, Address::Post("imm"), 4),
        "ST_dms_sts_pstm_nrm" => |x| store(x, Address::Post("mod"), 4),
        "ST_dms_sts_spill" => |x| store(x, Address::Stack, 4),
        "ST_s16_idx_imm" => |x| store(x, Address::Offset("imm"), 2),
        "ST_s16_idx" => |x| store(x, Address::Offset("dj"), 2),
        "ST_s16_pstm_nrm_imm" => |x| store(x, Address::Post("imm"), 2),
        "ST_s16_pstm_nrm" => |x| store(x, Address::Post("mod"), 2),
        "ST_s8_idx_imm" => |x| store(x, Address::Offset("imm"), 1),
        "ST_s8_idx" => |x| store(x, Address::Offset("dj"), 1),
        "ST_s8_pstm_nrm_imm" => |x| store(x, Address::Post("imm"), 1),
        "ST_s8_pstm_nrm" => |x| store(x, Address::Post("mod"), 1),
        "PADDA_pstm_nrm_imm" | "PADDB_pstm_nrm_imm" | "PADDS_pstm_nrm_imm" => |x| padd(x, "imm"),
        "PADDA_pstm_nrm" | "PADDB_pstm_nrm" | "PADDS_pstm_nrm" => |x| padd(x, "mod"),
        // Control transfers: the target takes effect after the delay slots.
        "J_lng" => |x| {
            let target = x.read("i")?;
            transfer(x, Some(target))
        },
        "J_alumv_or" => |x| {
            let target = x.read("a")?;
            transfer(x, Some(target))
        },
        "JZ" | "JNZ" => |x| {
            let value = x.read("s0")?;
            let target = x.read("i")?;
            let taken = (value == 0) == (x.instruction.opcode.name == "JZ");
            transfer(x, taken.then_some(target))
        },
        "JL_lng" => |x| {
            let target = x.read("i")?;
            link(x, target)
        },
        "JL_alumv_or" => |x| {
            let target = x.read("a")?;
            link(x, target)
        },
        "RET" => |x| {
            let target = x.read_implicit("lr")?;
            transfer(x, Some(target))
        },
        "ACQ_mLockId_imm" | "ACQ_mLockId_reg" => |x| lock(x, true),
        "REL_mLockId_imm" | "REL_mLockId_reg" => |x| lock(x, false),
        "DONE" => |x| {
            x.effects.done = true;
            Ok(())
        },
        // Events go to the tile's event logic, which the model does not
        // follow; they are counted.
        "EVENT_event0" | "EVENT_event1" => |x| {
            x.effects.events += 1;
            Ok(())
        },
        // The vector and accumulator instructions (vector.rs).
        _ => return super::vector::of(name),
    };
    Some(f)
}

fn add(x: &mut Exec, other: &str) -> Result<(), String> {
    let (a, b) = (x.read("s0")?, x.read(other)?);
    let (sum, carry) = a.overflowing_add(b);
    x.write("d0", sum)?;
    x.write_implicit("srCarry", u32::from(carry))
}

fn binary(x: &mut Exec, f: fn(u32, u32) -> u32) -> Result<(), String> {
    let (a, b) = (x.read("s0")?, x.read("s1")?);
    x.write("d0", f(a, b))?;
    // sub's srCarry: its value is in no public source, so it is kept.
    x.keep_implicit()
}

fn select(x: &mut Exec, when_nonzero: bool) -> Result<(), String> {
    let (a, b, c) = (x.read("s0")?, x.read("s1")?, x.read("s2")?);
    let pick_a = (c != 0) == when_nonzero;
    x.write("d0", if pick_a { a } else { b })
}

fn shift(x: &mut Exec, arithmetic: bool) -> Result<(), String> {
    let (a, n) = (x.read("s0")?, x.read("s1")? as i32);
    if !(-31..=31).contains(&n) {
        return Err(format!(
            "shift amount {n} is outside -31..=31, the amounts llvm-aie's shift patterns use; \
             what the hardware does with it is not modelled"
        ));
    }
    let value = match (n >= 0, arithmetic) {
        (true, _) => a << n,
        (false, false) => a >> -n,
        (false, true) => ((a as i32) >> -n) as u32,
    };
    x.write("d0", value)
}

fn load(x: &mut Exec, how: Address, bytes: u32, signed: bool) -> Result<(), String> {
    let at = address(x, &how)?;
    let raw = x.load(at, bytes)?;
    let bits = 8 * bytes;
    let value = if signed && bits < 32 {
        ((raw << (32 - bits)) as i32 >> (32 - bits)) as u32
    } else {
        raw
    };
    x.write("dst", value)?;
    x.keep_implicit()
}

fn store(x: &mut Exec, how: Address, bytes: u32) -> Result<(), String> {
    let value = x.read("src")?;
    let at = address(x, &how)?;
    x.store(at, bytes, value)?;
    x.keep_implicit()
}

fn padd(x: &mut Exec, by: &str) -> Result<(), String> {
    let (p, d) = (x.read("ptr")?, x.read(by)?);
    x.write("ptr_out", p.wrapping_add(d) & POINTER_MASK)
}

fn transfer(x: &mut Exec, target: Option<u32>) -> Result<(), String> {
    x.effects.transfer = Some(target);
    Ok(())
}

fn link(x: &mut Exec, target: u32) -> Result<(), String> {
    let back = x.after_delay_slots.clone()?;
    x.write_implicit("lr", back)?;
    transfer(x, Some(target))
}

fn lock(x: &mut Exec, acquire: bool) -> Result<(), String> {
    let id = x.read("id")?;
    let value = x.read("s1")? as i32;
    let (tile, lock) = lock_of(x.profile, x.tile, id)?;
    x.effects.lock = Some(LockRequest {
        acquire,
        id,
        tile,
        lock,
        value,
    });
    Ok(())
}
