//! Loading a tile image as aie-rt's loader does (driver/src/core/
//! xaie_elfloader.c, through `loom_aie2p_isa::elf::read`): the program
//! segment into the core's 16 KiB program memory, each data segment into
//! the tile memory its view names (p_paddr / 64 KiB: 4 south, 5 west,
//! 6 north, 7 own), zero-filled past p_filesz (.bss).

use super::neighbours::{neighbour, view_of};
use crate::sim::memory::tile_memory_bytes;
use loom_aie2p_isa::elf::{self, PROGRAM_MEMORY_BYTES};
use loom_targets::{DeviceProfile, Tile};
use std::collections::BTreeMap;

/// A loaded program: program memory and where execution starts.
pub struct Program {
    pub memory: Vec<u8>,
    pub entry: u32,
}

/// Load `bytes` (the tile image named `name`) for the core at `tile`,
/// writing its data into `memories`.
pub fn load(
    profile: &DeviceProfile,
    name: &str,
    bytes: &[u8],
    tile: Tile,
    memories: &mut BTreeMap<Tile, Vec<u8>>,
) -> Result<Program, String> {
    if !bytes.starts_with(b"\x7fELF") {
        return Err(format!(
            "tile image `{name}` for core {tile} is not a core ELF: it holds Low aie2p IR \
             (compiled with --worker-code=lowir); the isa core executes AIE2P machine code \
             (--worker-code=machine, the default): run these images with --core=lowir"
        ));
    }
    let image = elf::read(bytes).map_err(|e| format!("tile image `{name}`: {e}"))?;
    let mut memory = image.program;
    memory.resize(PROGRAM_MEMORY_BYTES as usize, 0);
    for segment in &image.data {
        let fail = |why: String| {
            format!(
                "tile image `{name}`: data segment at {:#x}: {why}",
                segment.address
            )
        };
        let (side, offset) = view_of(segment.address)
            .ok_or_else(|| fail("is in none of the core's data views".into()))?;
        let target = neighbour(profile, tile, side).map_err(fail)?;
        let size = tile_memory_bytes(profile, target) as usize;
        let data = memories.entry(target).or_insert_with(|| vec![0; size]);
        let start = offset as usize;
        let end = start + segment.bytes.len() + segment.zeroed as usize;
        let Some(window) = data.get_mut(start..end) else {
            return Err(fail(format!(
                "bytes [{start:#x}, {end:#x}) of the {} view are outside the tile's {size} bytes",
                side.name()
            )));
        };
        let (filled, zeroed) = window.split_at_mut(segment.bytes.len());
        filled.copy_from_slice(&segment.bytes);
        zeroed.fill(0);
    }
    Ok(Program {
        memory,
        entry: image.entry,
    })
}
