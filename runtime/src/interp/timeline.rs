//! A worker's timeline on the array simulator, for its trace: when the core
//! started, where its clock stands, and the lock waits that stalled it.
//! The workers record stalls only when asked (`Workers::record_stalls`),
//! so a run without a trace pays nothing for them.

use loom_targets::Tile;

/// A core stalled on a lock: from the modelled cycle its acquire was
/// issued to the cycle it held the credit (the credit's release plus the
/// handoff).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockStall {
    /// The lock's tile, its tile-relative id and the credits the acquire took.
    pub tile: Tile,
    pub lock: u32,
    pub value: u32,
    pub begin: u64,
    pub end: u64,
}

/// One core's run: it executed from `started` to `end` except while it
/// stalled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeline {
    /// `core [0, 3] (@worker)`.
    pub name: String,
    pub tile: Tile,
    pub started: u64,
    /// The modelled cycle it finished, or stands at if it did not.
    pub end: u64,
    pub finished: bool,
    /// Oldest first.
    pub stalls: Vec<LockStall>,
}
