//! The Low IR core model: each enabled core runs its tile image's worker
//! (Low aie2p IR) in the reference interpreter, which takes and gives its
//! lock credits on the array.

use super::{Cores, Timeline};
use crate::interp::{Program, Tiles, Workers};
use crate::sim::array::Array;
use crate::sim::memory::tile_memory_bytes;
use loom_diagnostic::Diagnostic;
use loom_targets::Tile;

pub struct LowIrCores<'p> {
    workers: Workers<'p>,
}

impl<'p> LowIrCores<'p> {
    /// Cores running the functions of `program` (the translated tile
    /// images), each op costing `op_cycles` modelled cycles.
    pub fn new(program: &'p Program, op_cycles: u64, max_steps: u64) -> LowIrCores<'p> {
        LowIrCores {
            workers: Workers::new(program, op_cycles, max_steps),
        }
    }
}

impl Cores for LowIrCores<'_> {
    fn start(&mut self, image: &str, tile: Tile, at: u64) -> Result<(), Diagnostic> {
        self.workers.start(image, tile, at)
    }

    fn run(&mut self, array: &mut Array) -> Result<bool, Diagnostic> {
        self.workers.run(array)
    }

    fn unfinished(&self) -> Vec<(String, String)> {
        self.workers
            .unfinished()
            .into_iter()
            .map(|(loc, why)| (loc.to_string(), why))
            .collect()
    }

    fn steps(&self) -> u64 {
        self.workers.steps()
    }

    fn clocks(&self) -> Vec<(String, u64, u64)> {
        self.workers.clocks()
    }

    fn record_stalls(&mut self) {
        self.workers.record_stalls();
    }

    fn timelines(&self) -> Vec<Timeline> {
        self.workers.timelines()
    }

    fn tile_memory(&mut self, tile: Tile, bytes: u64) -> &mut [u8] {
        self.workers.tile_memory(tile, bytes)
    }
}

/// The array as the interpreter's workers see it.
impl Tiles for Array {
    fn try_acquire(
        &mut self,
        tile: Tile,
        lock: u32,
        value: u32,
        now: u64,
    ) -> Result<Option<u64>, String> {
        Array::try_acquire(self, tile, lock, value, now).map_err(|e| e.to_string())
    }

    fn release(&mut self, tile: Tile, lock: u32, value: u32, now: u64) -> Result<(), String> {
        Array::release(self, tile, lock, value, now).map_err(|e| e.to_string())
    }

    fn memory_bytes(&self, tile: Tile) -> Result<u64, String> {
        Ok(tile_memory_bytes(self.profile(), tile))
    }
}
