//! The tiles a core reaches: its four data views (0x40000 south, 0x50000
//! west, 0x60000 north, 0x70000 its own tile, 64 KiB each) and its lock ids
//! (0-15 south, 16-31 west, 32-47 north, 48-63 own).
//!
//! AIE-ML has no checkerboard: every core tile's own memory is the one it
//! calls east/internal, and its neighbours are the same in every row
//! (mlir-aie lib/Dialect/AIE/IR/AIETargetModel.cpp, AIE2TargetModel:
//! isMemWest = the tile at column - 1, isMemEast = the tile itself
//! (isInternal), isMemNorth = row + 1, isMemSouth = row - 1;
//! isLegalMemAffinity refuses a south neighbour that is a memory tile;
//! AIETargetModel::getLockLocalBaseIndex gives a core's locks of south,
//! west, north, east at 0, 16, 32, 48). The view bases are
//! AIE2TargetModel's getMem{South,West,North,East}BaseAddress (facts §7).
//! A lock of a neighbour follows the same affinity as its memory
//! (inferred: mlir-aie checks lock and buffer placement alike).

use loom_targets::xdna::regs::TileKind;
use loom_targets::{DeviceProfile, Tile};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    South,
    West,
    North,
    Own,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::South => "south",
            Side::West => "west",
            Side::North => "north",
            Side::Own => "own",
        }
    }

    const ALL: [Side; 4] = [Side::South, Side::West, Side::North, Side::Own];

    fn of_index(index: u32) -> Option<Side> {
        Side::ALL.get(index as usize).copied()
    }
}

/// Per side, in `Side` order, the tile its data view reaches (or why the
/// core cannot reach it): found once per core, not on every access.
pub type Views = [Result<Tile, String>; 4];

pub fn views(profile: &DeviceProfile, tile: Tile) -> Views {
    Side::ALL.map(|side| neighbour(profile, tile, side))
}

/// Bytes of one data view.
pub const VIEW_BYTES: u32 = 0x1_0000;
const FIRST_VIEW: u32 = 4;
/// Locks a core sees per neighbour.
pub const LOCKS_PER_SIDE: u32 = 16;

/// The tile on `side` of the core at `tile`, if the core may reach it.
pub fn neighbour(profile: &DeviceProfile, tile: Tile, side: Side) -> Result<Tile, String> {
    let (column, row) = (tile.column as i64, tile.row as i64);
    let (c, r) = match side {
        Side::South => (column, row - 1),
        Side::West => (column - 1, row),
        Side::North => (column, row + 1),
        Side::Own => (column, row),
    };
    let kind = (c >= 0 && r >= 0)
        .then(|| profile.tile_kind(c as u32, r as u32))
        .flatten();
    match kind {
        Some(TileKind::Core) => Ok(Tile::new(c as u32, r as u32)),
        Some(other) => Err(format!(
            "the core's {} neighbour [{c}, {r}] is a {} tile, which a core cannot reach \
             (mlir-aie AIE2TargetModel::isLegalMemAffinity)",
            side.name(),
            match other {
                TileKind::Shim => "shim",
                TileKind::Memory => "memory",
                TileKind::Core => "core",
            }
        )),
        None => Err(format!(
            "the core has no {} neighbour: [{c}, {r}] is outside the array",
            side.name()
        )),
    }
}

/// The side and offset a data address names.
pub fn view_of(address: u32) -> Option<(Side, u32)> {
    let view = address / VIEW_BYTES;
    let side = Side::of_index(view.checked_sub(FIRST_VIEW)?)?;
    Some((side, address % VIEW_BYTES))
}

/// The tile and tile-relative lock a core lock id names.
pub fn lock_of(profile: &DeviceProfile, tile: Tile, id: u32) -> Result<(Tile, u32), String> {
    let side = Side::of_index(id / LOCKS_PER_SIDE).ok_or_else(|| {
        format!("lock id {id} is outside the core's 0..=63 (16 per side: south, west, north, own)")
    })?;
    Ok((neighbour(profile, tile, side)?, id % LOCKS_PER_SIDE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::array::testing::strix;

    #[test]
    fn views_and_locks_name_the_neighbours() {
        let p = strix();
        let core = Tile::new(1, 3);
        assert_eq!(view_of(0x7_0010), Some((Side::Own, 0x10)));
        assert_eq!(view_of(0x4_FFFF), Some((Side::South, 0xFFFF)));
        assert_eq!(view_of(0x3_FFFF), None);
        assert_eq!(view_of(0x8_0000), None);
        assert_eq!(neighbour(p, core, Side::South), Ok(Tile::new(1, 2)));
        assert_eq!(neighbour(p, core, Side::West), Ok(Tile::new(0, 3)));
        assert_eq!(neighbour(p, core, Side::North), Ok(Tile::new(1, 4)));
        assert_eq!(lock_of(p, core, 49), Ok((core, 1)));
        assert_eq!(lock_of(p, core, 17), Ok((Tile::new(0, 3), 1)));
        // Row 2's south is the memory tile; column 0 has no west; row 5 no north.
        assert!(neighbour(p, Tile::new(0, 2), Side::South)
            .unwrap_err()
            .contains("memory tile"));
        assert!(neighbour(p, Tile::new(0, 3), Side::West).is_err());
        assert!(neighbour(p, Tile::new(0, 5), Side::North).is_err());
        assert!(lock_of(p, core, 64).is_err());
    }
}
