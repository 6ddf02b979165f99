//! When a write becomes visible to a read: the one rule the register files
//! and the hazard checker follow, from LLVM's itinerary model.
//!
//! An itinerary gives each operand the cycle, counted from issue, at which
//! it is read (use cycle U) or written (def cycle D). LLVM's
//! `InstrItineraryData::getOperandLatency` (llvm/include/llvm/MC/
//! MCInstrItineraries.h) makes the latency from a def to a use
//! `D - U + 1`, less one when `hasPipelineForwarding` holds: both operands
//! name the same bypass, and not NoBypass (forwarding index 0). A consumer
//! issued `latency` cycles after the producer sees the value. With the
//! producer issued at t and the consumer at t', that is
//! `t' - t >= D - U + 1`, i.e. `t' + U > t + D`: the read's cycle is after
//! the write's (`>=` with a shared bypass). Earlier, the hardware's read
//! still sees the old value, and so does the model.

use std::sync::{Mutex, PoisonError};

/// A bypass (forwarding path) an operand names (`MV_Bypass`,
/// `VEC_Bypass`; NoBypass is `Bypass::NONE`), interned when an operand is
/// resolved so that every read and write compares numbers, not names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bypass(u16);

impl Bypass {
    pub const NONE: Bypass = Bypass(0);

    /// The bypass called `name` (None: no bypass).
    pub fn named(name: Option<&str>) -> Bypass {
        // Decode-time only: the names the itineraries use, in first use
        // order.
        static NAMES: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let Some(name) = name else {
            return Bypass::NONE;
        };
        let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
        let k = names.iter().position(|n| n == name).unwrap_or_else(|| {
            names.push(name.to_string());
            names.len() - 1
        });
        Bypass(u16::try_from(k + 1).expect("fewer than 65535 bypasses"))
    }
}

/// Whether a write landing at cycle `write` (its issue + D) is visible to
/// a read at cycle `read` (its issue + U).
pub fn visible(write: u64, write_bypass: Bypass, read: u64, read_bypass: Bypass) -> bool {
    let forwarded = write_bypass != Bypass::NONE && write_bypass == read_bypass;
    if forwarded {
        read >= write
    } else {
        read > write
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// llvm-aie's figures (schedule.json): `mov` writes at 1 and reads at
    /// 1, so a consumer in the next bundle sees it (latency 1); a scalar
    /// `lda` writes at 7, so a consumer reading at 1 waits 7 bundles.
    #[test]
    fn latency_is_def_minus_use_plus_one() {
        let (t, u) = (10, 1);
        let none = Bypass::NONE;
        assert!(!visible(t + 1, none, t + u, none), "same bundle: old value");
        assert!(visible(t + 1, none, t + 1 + u, none), "next bundle");
        assert!(!visible(t + 7, none, t + 6 + u, none), "lda: 6 later");
        assert!(visible(t + 7, none, t + 7 + u, none), "lda: 7 later");
        // A shared bypass gains one cycle; different ones do not.
        let mv = Bypass::named(Some("MV_Bypass"));
        assert_eq!(mv, Bypass::named(Some("MV_Bypass")));
        let vec = Bypass::named(Some("VEC_Bypass"));
        assert!(visible(t + 2, mv, t + 1 + u, mv));
        assert!(!visible(t + 2, mv, t + 1 + u, vec));
        assert!(!visible(t + 2, mv, t + 1 + u, none));
    }
}
