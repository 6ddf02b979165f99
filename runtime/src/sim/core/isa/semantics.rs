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
use super::operands::Name;

pub use super::exec::Semantics;

/// The semantics of the instruction llvm-aie calls `name`, if modelled.
pub fn of(name: &str) -> Option<Semantics> {
    let f: Semantics = match name {
        "MOV_alu_mv_mv_mv_scl" | "MOVX_mvx_cr_r" | "MOVS" => |x| {
            let v = x.read(Name::Src)?;
            x.write(Name::Dst, v)
        },
        "MOV_alu_mv_mv_mv_cg" | "MOVX_alu_cg" | "MOVXM" | "MOVA" => |x| {
            let v = x.read(Name::I)?;
            x.write(Name::Dst, v)
        },
        "MOVX_mvx_cr_imm" => |x| {
            let v = x.read(Name::Src)?;
            x.write(Name::Dst, v)
        },
        "ADD_add_r_ri" => |x| add(x, Name::Imm),
        "ADD_alu_r_rr" => |x| add(x, Name::S1),
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
            let a = x.read(Name::S0)?;
            x.write(Name::D0, u32::from(a == 0))
        },
        "NEZ" => |x| {
            let a = x.read(Name::S0)?;
            x.write(Name::D0, u32::from(a != 0))
        },
        "SEL_NEZ" => |x| select(x, true),
        "SEL_EQZ" => |x| select(x, false),
        "LSHL" => |x| shift(x, false),
        "ASHL" => |x| shift(x, true),
        // Scalar word loads and stores, then the part-word forms.
        "LDA_dms_lda_idx_imm" => |x| load(x, Address::Offset(Name::Imm), 4, false),
        "LDA_dms_lda_idx" => |x| load(x, Address::Offset(Name::Dj), 4, false),
        "LDA_dms_lda_pstm_nrm_imm" => |x| load(x, Address::Post(Name::Imm), 4, false),
        "LDA_dms_lda_pstm_nrm" => |x| load(x, Address::Post(Name::Mod), 4, false),
        "LDA_dms_lda_spill" => |x| load(x, Address::Stack, 4, false),
        "LDA_s16_idx_imm" => |x| load(x, Address::Offset(Name::Imm), 2, true),
        "LDA_s16_idx" => |x| load(x, Address::Offset(Name::Dj), 2, true),
        "LDA_s16_pstm_nrm_imm" => |x| load(x, Address::Post(Name::Imm), 2, true),
        "LDA_s16_pstm_nrm" => |x| load(x, Address::Post(Name::Mod), 2, true),
        "LDA_u16_idx_imm" => |x| load(x, Address::Offset(Name::Imm), 2, false),
        "LDA_u16_idx" => |x| load(x, Address::Offset(Name::Dj), 2, false),
        "LDA_u16_pstm_nrm_imm" => |x| load(x, Address::Post(Name::Imm), 2, false),
        "LDA_u16_pstm_nrm" => |x| load(x, Address::Post(Name::Mod), 2, false),
        "LDA_s8_idx_imm" => |x| load(x, Address::Offset(Name::Imm), 1, true),
        "LDA_s8_idx" => |x| load(x, Address::Offset(Name::Dj), 1, true),
        "LDA_s8_pstm_nrm_imm" => |x| load(x, Address::Post(Name::Imm), 1, true),
        "LDA_s8_pstm_nrm" => |x| load(x, Address::Post(Name::Mod), 1, true),
        "LDA_u8_idx_imm" => |x| load(x, Address::Offset(Name::Imm), 1, false),
        "LDA_u8_idx" => |x| load(x, Address::Offset(Name::Dj), 1, false),
        "LDA_u8_pstm_nrm_imm" => |x| load(x, Address::Post(Name::Imm), 1, false),
        "LDA_u8_pstm_nrm" => |x| load(x, Address::Post(Name::Mod), 1, false),
        "ST_dms_sts_idx_imm" => |x| store(x, Address::Offset(Name::Imm), 4),
        "ST_dms_sts_idx" => |x| store(x, Address::Offset(Name::Dj), 4),
        "ST_dms_sts_pstm_nrm_imm" => |x| store(x, Address::Post(Name::Imm), 4),
        "ST_dms_sts_pstm_nrm" => |x| store(x, Address::Post(Name::Mod), 4),
        "ST_dms_sts_spill" => |x| store(x, Address::Stack, 4),
        "ST_s16_idx_imm" => |x| store(x, Address::Offset(Name::Imm), 2),
        "ST_s16_idx" => |x| store(x, Address::Offset(Name::Dj), 2),
        "ST_s16_pstm_nrm_imm" => |x| store(x, Address::Post(Name::Imm), 2),
        "ST_s16_pstm_nrm" => |x| store(x, Address::Post(Name::Mod), 2),
        "ST_s8_idx_imm" => |x| store(x, Address::Offset(Name::Imm), 1),
        "ST_s8_idx" => |x| store(x, Address::Offset(Name::Dj), 1),
        "ST_s8_pstm_nrm_imm" => |x| store(x, Address::Post(Name::Imm), 1),
        "ST_s8_pstm_nrm" => |x| store(x, Address::Post(Name::Mod), 1),
        "PADDA_pstm_nrm_imm" | "PADDB_pstm_nrm_imm" | "PADDS_pstm_nrm_imm" => {
            |x| padd(x, Name::Imm)
        }
        "PADDA_pstm_nrm" | "PADDB_pstm_nrm" | "PADDS_pstm_nrm" => |x| padd(x, Name::Mod),
        // Control transfers: the target takes effect after the delay slots.
        "J_lng" => |x| {
            let target = x.read(Name::I)?;
            transfer(x, Some(target))
        },
        "J_alumv_or" => |x| {
            let target = x.read(Name::A)?;
            transfer(x, Some(target))
        },
        "JZ" => |x| branch(x, true),
        "JNZ" => |x| branch(x, false),
        "JL_lng" => |x| {
            let target = x.read(Name::I)?;
            link(x, target)
        },
        "JL_alumv_or" => |x| {
            let target = x.read(Name::A)?;
            link(x, target)
        },
        "RET" => |x| {
            let target = x.read_implicit(Name::Lr)?;
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

fn add(x: &mut Exec, other: Name) -> Result<(), String> {
    let (a, b) = (x.read(Name::S0)?, x.read(other)?);
    let (sum, carry) = a.overflowing_add(b);
    x.write(Name::D0, sum)?;
    x.write_implicit(Name::SrCarry, u32::from(carry))
}

fn binary(x: &mut Exec, f: fn(u32, u32) -> u32) -> Result<(), String> {
    let (a, b) = (x.read(Name::S0)?, x.read(Name::S1)?);
    x.write(Name::D0, f(a, b))?;
    // sub's srCarry: its value is in no public source, so it is kept.
    x.keep_implicit()
}

fn select(x: &mut Exec, when_nonzero: bool) -> Result<(), String> {
    let (a, b, c) = (x.read(Name::S0)?, x.read(Name::S1)?, x.read(Name::S2)?);
    let pick_a = (c != 0) == when_nonzero;
    x.write(Name::D0, if pick_a { a } else { b })
}

fn shift(x: &mut Exec, arithmetic: bool) -> Result<(), String> {
    let (a, n) = (x.read(Name::S0)?, x.read(Name::S1)? as i32);
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
    x.write(Name::D0, value)
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
    x.write(Name::Dst, value)?;
    x.keep_implicit()
}

fn store(x: &mut Exec, how: Address, bytes: u32) -> Result<(), String> {
    let value = x.read(Name::Src)?;
    let at = address(x, &how)?;
    x.store(at, bytes, value)?;
    x.keep_implicit()
}

fn padd(x: &mut Exec, by: Name) -> Result<(), String> {
    let (p, d) = (x.read(Name::Ptr)?, x.read(by)?);
    x.write(Name::PtrOut, p.wrapping_add(d) & POINTER_MASK)
}

fn transfer(x: &mut Exec, target: Option<u32>) -> Result<(), String> {
    x.effects.transfer = Some(target);
    Ok(())
}

/// `jz` (when zero) or `jnz`.
fn branch(x: &mut Exec, when_zero: bool) -> Result<(), String> {
    let value = x.read(Name::S0)?;
    let target = x.read(Name::I)?;
    let taken = (value == 0) == when_zero;
    transfer(x, taken.then_some(target))
}

fn link(x: &mut Exec, target: u32) -> Result<(), String> {
    let back = x.after_delay_slots.clone()?;
    x.write_implicit(Name::Lr, back)?;
    transfer(x, Some(target))
}

fn lock(x: &mut Exec, acquire: bool) -> Result<(), String> {
    let id = x.read(Name::Id)?;
    let value = x.read(Name::S1)? as i32;
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
