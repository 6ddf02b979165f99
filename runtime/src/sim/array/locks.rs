//! Locks and their credits: the core side (`try_acquire`, `release`) and
//! the DMA side of buffer descriptors' acquires and releases, each credit
//! stamped with the modelled cycle it was released at.

use super::dma::ChannelId;
use super::Array;
use crate::sim::error::SimError;
use loom_targets::Tile;
use std::collections::VecDeque;

/// When each credit of a lock was released, oldest first: an acquire takes
/// the oldest credits, so a consumer waits for the release that made its
/// record, not for a later one. The lock's value is authoritative; credits
/// it holds beyond the stamps (its initial value, or a value the control
/// code wrote) date from cycle 0.
#[derive(Debug, Clone, Default)]
pub(super) struct Credits(VecDeque<u64>);

impl Credits {
    /// Takes `n` of the `held` credits: the cycle the last of them was
    /// released at.
    pub(super) fn take(&mut self, held: u32, n: u32) -> u64 {
        self.fit(held);
        let unstamped = (held as usize).saturating_sub(self.0.len());
        let stamped = (n as usize).saturating_sub(unstamped);
        self.0.drain(..stamped.min(self.0.len())).max().unwrap_or(0)
    }

    /// Adds `n` credits released at `at` to the `held` ones.
    fn give(&mut self, held: u32, n: u32, at: u64) {
        self.fit(held);
        self.0.extend(std::iter::repeat_n(at, n as usize));
    }

    /// Drops stamps the lock no longer holds (a value written lower).
    fn fit(&mut self, held: u32) {
        while self.0.len() > held as usize {
            self.0.pop_front();
        }
    }

    /// The latest release.
    pub(super) fn last(&self) -> u64 {
        self.0.iter().copied().max().unwrap_or(0)
    }
}

impl Array {
    /// Core side: take `at_least` from a lock of `tile` (tile-relative id, as
    /// `aie2p.lock.acquire [c, r] lock N ge V` names it) if its value is at
    /// least that much.
    /// `now` is the core's modelled cycle; on success, the cycle it holds
    /// the credit (after the release of the credit it takes, and the
    /// handoff).
    pub fn try_acquire(
        &mut self,
        tile: Tile,
        lock: u32,
        at_least: u32,
        now: u64,
    ) -> Result<Option<u64>, SimError> {
        let max = self.profile.limits.lock_value_max;
        let handoff = self.profile.timing.lock_handoff_cycles;
        let value = self.core_lock(tile, lock)?;
        if at_least > max {
            return Err(SimError::new(format!(
                "acquire of {at_least} can never succeed: a lock holds at most {max}"
            ))
            .tile(tile)
            .register(format!("lock[{lock}]")));
        }
        if *value < at_least {
            return Ok(None);
        }
        let held = *value;
        *value -= at_least;
        let released = self
            .tiles
            .get_mut(&tile)
            .and_then(|state| state.lock_times.get_mut(lock as usize))
            .map_or(0, |credits| credits.take(held, at_least));
        Ok(Some(now.max(released + handoff)))
    }

    /// Core side: acquire-equal, `value` >= 0 (mlir-aie AIECoreToStandard
    /// lowers AIE2's acquire to `llvm.aie2.acquire(id, value)`, acquire
    /// greater-equal with the value negated): granted while the lock holds
    /// exactly `value`, which it keeps. On success, the cycle the core holds
    /// it: after the latest release and the handoff.
    pub fn try_acquire_equal(
        &mut self,
        tile: Tile,
        lock: u32,
        value: u32,
        now: u64,
    ) -> Result<Option<u64>, SimError> {
        let handoff = self.profile.timing.lock_handoff_cycles;
        if *self.core_lock(tile, lock)? != value {
            return Ok(None);
        }
        let released = self
            .tiles
            .get(&tile)
            .and_then(|state| state.lock_times.get(lock as usize))
            .map_or(0, Credits::last);
        Ok(Some(now.max(released + handoff)))
    }

    #[cfg(test)]
    pub(super) fn lock_time(&self, tile: Tile, lock: u32) -> u64 {
        self.tiles
            .get(&tile)
            .and_then(|state| state.lock_times.get(lock as usize))
            .map_or(0, Credits::last)
    }

    /// Core side: add `add` to a lock of `tile`; past `lock_value_max` is an error.
    /// `now` is the core's modelled cycle.
    pub fn release(&mut self, tile: Tile, lock: u32, add: u32, now: u64) -> Result<(), SimError> {
        let held = *self.core_lock(tile, lock)?;
        let max = self.profile.limits.lock_value_max;
        // Refused before any credit is stamped: a release is at most the
        // lock's range, never one stamp per unit of a huge value.
        let Some(new) = held.checked_add(add).filter(|&v| v <= max) else {
            return Err(SimError::new(format!(
                "lock overflow: release of {add} on value {held} exceeds the maximum {max}"
            ))
            .tile(tile)
            .register(format!("lock[{lock}]")));
        };
        if let Some(credits) = self
            .tiles
            .get_mut(&tile)
            .and_then(|state| state.lock_times.get_mut(lock as usize))
        {
            credits.give(held, add, now);
        }
        *self.core_lock(tile, lock)? = new;
        Ok(())
    }

    fn core_lock(&mut self, tile: Tile, lock: u32) -> Result<&mut u32, SimError> {
        let Some(state) = self.tiles.get_mut(&tile) else {
            return Err(SimError::new("no such tile in the array").tile(tile));
        };
        let count = state.locks.len();
        state.locks.get_mut(lock as usize).ok_or_else(|| {
            SimError::new(format!(
                "lock {lock} does not exist: the tile has {count} locks"
            ))
            .tile(tile)
        })
    }

    /// The tile's own lock a buffer descriptor's lock id names.
    fn dma_lock(&mut self, id: ChannelId, lock: u32) -> Result<&mut u32, String> {
        let base = self.profile.tile_registers(id.kind).dma_own_lock_id_base;
        let state = self
            .tiles
            .get_mut(&id.tile)
            .ok_or("no such tile in the array")?;
        let count = state.locks.len() as u32;
        match lock.checked_sub(base).filter(|&own| own < count) {
            Some(own) => state
                .locks
                .get_mut(own as usize)
                .ok_or_else(|| format!("lock id {lock} does not exist")),
            None => Err(format!(
                "lock id {lock} names a neighbouring tile's lock (this tile's own are \
                 {base}..={}); neighbour locks are not modelled",
                base + count - 1
            )),
        }
    }

    /// Takes the descriptor's credit if the lock allows it: the cycle the
    /// credit was released at, or None while the lock does not allow it.
    pub(super) fn dma_acquire(
        &mut self,
        id: ChannelId,
        lock: u32,
        value: i32,
    ) -> Result<Option<u64>, String> {
        let current = self.dma_lock(id, lock)?;
        let held = *current;
        let need = value.unsigned_abs();
        let taken = if value < 0 {
            if held < need {
                return Ok(None);
            }
            *current -= need;
            need
        } else if held == need {
            // Acquire-equal takes nothing: the credits stay.
            0
        } else {
            return Ok(None);
        };
        let credits = self.dma_credits(id, lock);
        Ok(Some(credits.map_or(0, |c| {
            if taken == 0 {
                c.last()
            } else {
                c.take(held, taken)
            }
        })))
    }

    /// The credit stamps of a buffer descriptor's lock.
    fn dma_credits(&mut self, id: ChannelId, lock: u32) -> Option<&mut Credits> {
        let base = self.profile.tile_registers(id.kind).dma_own_lock_id_base;
        self.tiles
            .get_mut(&id.tile)
            .and_then(|state| state.lock_times.get_mut(lock.wrapping_sub(base) as usize))
    }

    pub(super) fn dma_release(
        &mut self,
        id: ChannelId,
        lock: u32,
        value: i32,
        at: u64,
    ) -> Result<(), String> {
        let held = *self.dma_lock(id, lock)?;
        if let (Some(credits), Ok(add)) = (self.dma_credits(id, lock), u32::try_from(value)) {
            credits.give(held, add, at);
        }
        let max = self.profile.limits.lock_value_max;
        let current = self.dma_lock(id, lock)?;
        let new = i64::from(*current) + i64::from(value);
        if new < 0 || new > i64::from(max) {
            return Err(format!(
                "lock {} {}: release of {value:+} on value {current} leaves 0..={max}",
                lock,
                if new < 0 { "underflow" } else { "overflow" }
            ));
        }
        *current = new as u32;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::array::testing::*;
    use crate::sim::memory::Memory;

    #[test]
    fn a_core_release_unblocks_a_waiting_transfer() {
        let data: Vec<u8> = (100..132).collect();
        let mut memory = TestMemory::new(vec![(ARG0, data.clone())]);
        let mut array = array();
        let mut ops = shim_to_core(tile_bd(0, 32, Some((0, -1)), Some((1, 1))), 32, 0);
        ops[0] = lock_init(CORE, 0, 0); // no free slot yet
        run(&mut array, &ops, &mut memory).unwrap();
        assert!(array.busy());
        assert_eq!(
            array.pending(),
            [
                "tile [0, 3] core.dma.s2mm[0] bd[0] (task queued by TXN op 12, run 1 of 1): \
              waits to acquire lock 0 >= 1 (value 0)"
            ]
        );
        assert!(memory.tile(CORE)[..32].iter().all(|&b| b == 0));
        assert!(!array.step(&mut memory).unwrap(), "still blocked");

        array.release(CORE, 0, 1, 0).unwrap();
        assert!(array.step(&mut memory).unwrap());
        assert_eq!(memory.tile(CORE)[..32], data[..]);
        assert_eq!(locks(&array, CORE)[..2], [0, 1]);
        assert!(!array.busy());
        assert!(
            array.try_acquire(CORE, 1, 1, 0).unwrap().is_some(),
            "the worker takes the record"
        );
        assert_eq!(array.try_acquire(CORE, 1, 1, 0).unwrap(), None);
    }

    #[test]
    fn lock_overflow_is_an_error() {
        let mut array = array();
        array.apply(0, &lock_init(CORE, 3, 63), &[]).unwrap();
        let error = array.release(CORE, 3, 1, 0).unwrap_err();
        assert_eq!(
            error.to_string(),
            "tile [0, 3] lock[3]: lock overflow: release of 1 on value 63 exceeds the maximum 63"
        );
        assert_eq!(locks(&array, CORE)[3], 63, "unchanged");
        let error = array.apply(1, &lock_init(CORE, 3, 64), &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 1: tile [0, 3] core.lock[3].value: lock value 64 is above the maximum 63"
        );
        assert!(
            array.try_acquire(CORE, 3, 64, 0).is_err(),
            "can never succeed"
        );
        assert!(array.release(CORE, 16, 1, 0).is_err(), "no lock 16");
    }

    #[test]
    fn a_dma_release_past_the_maximum_is_an_error() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 16])]);
        let mut array = array();
        let mut ops = shim_to_core(tile_bd(0, 16, None, Some((1, 1))), 16, 0);
        ops[1] = lock_init(CORE, 1, 63);
        let error = run(&mut array, &ops, &mut memory).unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 12: tile [0, 3] core.dma.s2mm[0] bd[0]: lock 1 overflow: release of +1 on \
             value 63 leaves 0..=63"
        );
    }

    /// A consumer waits for the release of its own record's credit, not for
    /// the latest release: records a producer ran ahead with are queued.
    #[test]
    fn an_acquire_takes_the_oldest_credit() {
        let mut credits = Credits::default();
        // Two initial credits (value 2, no releases yet), then releases at
        // cycles 10 and 30.
        credits.give(2, 1, 10);
        credits.give(3, 1, 30);
        assert_eq!(credits.take(4, 1), 0);
        assert_eq!(credits.take(3, 1), 0);
        assert_eq!(credits.take(2, 1), 10);
        assert_eq!(credits.last(), 30);
        assert_eq!(credits.take(1, 1), 30);
        // A value written lower drops the oldest stamps.
        credits.give(0, 3, 50);
        assert_eq!(credits.take(1, 1), 50);
        assert_eq!(credits.take(0, 0), 0);
    }
}
