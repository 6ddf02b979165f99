//! The memories the array's DMA engines read and write: the tiles' data
//! memories, which the cores hold, and DDR, which holds the caller's
//! buffers at the simulator's own argument addresses.

use super::core::Cores;
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

/// The memories of one run: the caller's buffers and the cores' tile
/// memories.
pub struct Memories<'m> {
    pub callers: &'m mut [Vec<u8>],
    pub cores: &'m mut dyn Cores,
    pub profile: &'static DeviceProfile,
}

impl Memory for Memories<'_> {
    fn tile(&mut self, tile: Tile) -> &mut [u8] {
        let bytes = tile_memory_bytes(self.profile, tile);
        self.cores.tile_memory(tile, bytes)
    }

    fn ddr(&mut self, address: u64, len: usize) -> Result<&mut [u8], String> {
        let argument = (address >> 32) as usize;
        let offset = (address & 0xFFFF_FFFF) as usize;
        if argument == 0 || argument > self.callers.len() {
            return Err(format!(
                "DDR address {address:#x} is in none of the {} caller buffers",
                self.callers.len()
            ));
        }
        let buffer = &mut self.callers[argument - 1];
        let size = buffer.len();
        match offset.checked_add(len) {
            Some(end) if end <= size => Ok(&mut buffer[offset..end]),
            _ => Err(format!(
                "DDR bytes [{offset}, {}) of argument {} are outside its {size} bytes",
                offset.saturating_add(len),
                argument - 1
            )),
        }
    }
}
