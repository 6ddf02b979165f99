//! What worker code of a native realization needs from the array it runs
//! on: lock credits and the size of tile data memories. The array simulator
//! provides it; the interpreter alone has no array ([`NoArray`]).

use loom_targets::Tile;

pub trait Tiles {
    /// Take `value` credits of lock `lock` of `tile` at modelled cycle
    /// `now`: the cycle they were taken, or `None` while too few are there.
    fn try_acquire(
        &mut self,
        tile: Tile,
        lock: u32,
        value: u32,
        now: u64,
    ) -> Result<Option<u64>, String>;
    /// Add `value` credits to lock `lock` of `tile` at modelled cycle `now`.
    fn release(&mut self, tile: Tile, lock: u32, value: u32, now: u64) -> Result<(), String>;
    /// Bytes of `tile`'s data memory (0 for a tile without one).
    fn memory_bytes(&self, tile: Tile) -> Result<u64, String>;
}

/// No array: a pipeline run by the interpreter alone.
pub struct NoArray;

impl Tiles for NoArray {
    fn try_acquire(&mut self, _: Tile, _: u32, _: u32, _: u64) -> Result<Option<u64>, String> {
        Err(WORKERS_ONLY.into())
    }

    fn release(&mut self, _: Tile, _: u32, _: u32, _: u64) -> Result<(), String> {
        Err(WORKERS_ONLY.into())
    }

    fn memory_bytes(&self, _: Tile) -> Result<u64, String> {
        Err(
            "placed tile storage exists on the array simulator only (loom-test --device=sim)"
                .into(),
        )
    }
}

const WORKERS_ONLY: &str =
    "worker code of a native realization runs on the array simulator only (loom-test --device=sim)";
