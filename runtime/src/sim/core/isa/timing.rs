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

/// A bypass (forwarding path) an operand names, if any (`MV_Bypass`,
/// `VEC_Bypass`; NoBypass is `None`).
pub type Bypass = Option<&'static str>;

/// Whether a write landing at cycle `write` (its issue + D) is visible to
/// a read at cycle `read` (its issue + U).
pub fn visible(write: u64, write_bypass: Bypass, read: u64, read_bypass: Bypass) -> bool {
    let forwarded = write_bypass.is_some() && write_bypass == read_bypass;
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
        assert!(!visible(t + 1, None, t + u, None), "same bundle: old value");
        assert!(visible(t + 1, None, t + 1 + u, None), "next bundle");
        assert!(!visible(t + 7, None, t + 6 + u, None), "lda: 6 later");
        assert!(visible(t + 7, None, t + 7 + u, None), "lda: 7 later");
        // A shared bypass gains one cycle; different ones do not.
        let mv = Some("MV_Bypass");
        assert!(visible(t + 2, mv, t + 1 + u, mv));
        assert!(!visible(t + 2, mv, t + 1 + u, Some("VEC_Bypass")));
        assert!(!visible(t + 2, mv, t + 1 + u, None));
    }
}
