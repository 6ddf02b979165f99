//! A tile of the array, by column and row (row 0 is the shim row).

use std::fmt;

/// One tile's coordinates: what placement, routes, the register map, the
/// simulator and the HAL all name a tile by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tile {
    pub column: u32,
    pub row: u32,
}

impl Tile {
    pub const fn new(column: u32, row: u32) -> Tile {
        Tile { column, row }
    }
}

/// `[column, row]`, as Loom IR writes a tile.
impl fmt::Display for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {}]", self.column, self.row)
    }
}
