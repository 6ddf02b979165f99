//! BF16 and F32 conversions as `docs/semantics.md` specifies them.

/// BF16 bits widened to F32: exact.
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits((bits as u32) << 16)
}

/// F32 rounded to BF16: nearest, ties to even; a NaN stays a quiet NaN.
pub fn f32_to_bf16(value: f32) -> u16 {
    let bits = value.to_bits();
    if value.is_nan() {
        return ((bits >> 16) as u16) | 0x0040;
    }
    let bias = 0x7FFF + ((bits >> 16) & 1);
    (bits.wrapping_add(bias) >> 16) as u16
}

/// F64 rounded to the nearest F32, then (for BF16) to the nearest BF16.
pub fn f64_to_f32(value: f64) -> f32 {
    value as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounding_ties_to_even() {
        // 1.0 + half an ulp of bf16 (2^-8): a tie, stays at the even 1.0.
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F80_8000)), 0x3F80);
        // 1.0 + 3/2 ulp: a tie between 0x3F81 (odd) and 0x3F82: goes even.
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F81_8000)), 0x3F82);
        // Just above the tie rounds up.
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F80_8001)), 0x3F81);
        // The largest finite f32 overflows to infinity.
        assert_eq!(f32_to_bf16(f32::MAX), 0x7F80);
        // A signalling NaN becomes quiet.
        assert_eq!(f32_to_bf16(f32::from_bits(0x7F80_0001)) & 0x7FC0, 0x7FC0);
        assert_eq!(bf16_to_f32(0x3F80), 1.0);
    }
}
