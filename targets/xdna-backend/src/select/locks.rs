//! Lock requests. The core numbers the locks it reaches by the tile that
//! holds them: its own 48-63, south 0-15, west 16-31, north 32-47. As
//! mlir-aie lowers AIE2's `use_lock`, acquire-greater-equal N is `acq` with
//! -N (wait until the value is at least N, then take N) and release adds N.

use super::{fail, Selector};
use crate::attributes::{int, tile};
use loom_aie2p_codegen::MachineOperand::{Imm, VReg as V};
use loom_diagnostic::Diagnostic;
use loom_dialects::names::aie2p;
use loom_targets::Tile;
use mlir_sys::MlirOperation;

/// Which of the core's neighbours `at` is, as the first lock (and, in
/// `memory`, the data view) the core reaches it by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    South,
    West,
    North,
    Own,
}

pub(crate) fn side(core: Tile, at: Tile) -> Option<Side> {
    let (c, r) = (core.column, core.row);
    if at == core {
        Some(Side::Own)
    } else if at.column == c && r.checked_sub(1) == Some(at.row) {
        Some(Side::South)
    } else if at.row == r && c.checked_sub(1) == Some(at.column) {
        Some(Side::West)
    } else if at.column == c && r.checked_add(1) == Some(at.row) {
        Some(Side::North)
    } else {
        None
    }
}

fn first_lock(side: Side) -> i64 {
    match side {
        Side::South => 0,
        Side::West => 16,
        Side::North => 32,
        Side::Own => 48,
    }
}

pub(crate) fn select(s: &mut Selector, op: MlirOperation, name: &str) -> Result<bool, Diagnostic> {
    let (opcode, sign) = match name {
        aie2p::LOCK_ACQUIRE => ("ACQ_mLockId_imm", -1),
        aie2p::LOCK_RELEASE => ("REL_mLockId_imm", 1),
        _ => return Ok(false),
    };
    let at = tile(op, "tile");
    let core = s.core();
    let Some(side) = side(core, at) else {
        return Err(fail(
            op,
            format!("the core of tile {core} reaches the locks of its own tile and its south, west and north neighbours, not tile {at}"),
        ));
    };
    let lock = int(op, "lock");
    if !(0..16).contains(&lock) {
        return Err(fail(
            op,
            format!("lock {lock} is not one of a tile's 16 locks"),
        ));
    }
    // A request beyond the lock's range could never be granted (an
    // acquire) or always overflows (a release); negative ones the
    // instruction would read as the other request.
    let amount = int(op, "value");
    let max = s.lock_value_max();
    if !(0..=i64::from(max)).contains(&amount) {
        return Err(fail(
            op,
            format!("a lock request of {amount}: tile {at}'s locks hold 0 to {max}"),
        ));
    }
    let value = s.constant(op, sign * amount)?;
    s.inst(op, opcode, &[Imm(first_lock(side) + lock), V(value)])?;
    Ok(true)
}
