//! The join of what two ways into a block may leave in flight, for the
//! parts the scheduler's `InFlight` and the latency checker's state share:
//! the later of two times, the units either holds, the nearer lock request.

use std::collections::BTreeMap;

/// The later of two optional cycles (none is no constraint).
pub(crate) fn later(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Bundles since the last lock request: the fewer of the two (the nearer
/// request binds the spacing rule).
pub(crate) fn nearer_lock(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Per cycle, the functional units either state holds (sorted, once each).
pub(crate) fn join_units(
    mine: &mut BTreeMap<i64, Vec<(String, bool)>>,
    other: &BTreeMap<i64, Vec<(String, bool)>>,
) {
    for (c, held) in other {
        let units = mine.entry(*c).or_default();
        for h in held {
            if !units.contains(h) {
                units.push(h.clone());
            }
        }
        units.sort();
    }
}
