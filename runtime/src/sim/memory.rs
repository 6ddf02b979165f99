//! The memories the array's DMA engines read and write: the tiles' data
//! memories, which the cores hold, and DDR, which holds the caller's
//! buffers at the simulator's own argument addresses.

use loom_targets::{DeviceProfile, Tile};

/// The memories the DMA engines read and write.
pub trait Memory {
    /// The data memory of a core or memory tile (64 KiB / 512 KiB per the profile).
    fn tile(&mut self, tile: Tile) -> &mut [u8];
    /// `len` bytes of the caller's buffers at DDR `address` (error if outside every buffer).
    fn ddr(&mut self, address: u64, len: usize) -> Result<&mut [u8], String>;
}

/// DDR addresses of the caller's buffers: argument `i` starts at
/// `(i + 1) << 32`, so any address names one buffer and an offset.
pub fn argument_address(argument: usize) -> u64 {
    (argument as u64 + 1) << 32
}

/// Bytes of `tile`'s data memory (0 for a tile without one).
pub fn tile_memory_bytes(profile: &DeviceProfile, tile: Tile) -> u64 {
    profile
        .tile_kind(tile.column, tile.row)
        .map_or(0, |kind| profile.budget(kind).memory)
}
