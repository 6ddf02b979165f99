//! Fields split into runs of bits: read from and written into a bundle
//! word (bit 0 = the least significant bit of byte 0) or a slot word.

use crate::tables::Run;

fn ones(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// The field the runs hold in `word`.
pub fn extract(word: u128, runs: &[Run]) -> u128 {
    runs.iter().fold(0, |value, r| {
        value | ((word >> r.lsb) & ones(r.width)) << r.field_lsb
    })
}

/// `word` with the runs set to `value`'s bits.
pub fn insert(word: u128, runs: &[Run], value: u128) -> u128 {
    runs.iter().fold(word, |word, r| {
        let piece = (value >> r.field_lsb) & ones(r.width);
        word & !(ones(r.width) << r.lsb) | piece << r.lsb
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_fields_round_trip() {
        let runs = [
            Run {
                lsb: 4,
                width: 3,
                field_lsb: 0,
            },
            Run {
                lsb: 20,
                width: 2,
                field_lsb: 3,
            },
        ];
        let word = insert(0xFFFF_FFFF, &runs, 0b10_101);
        assert_eq!(extract(word, &runs), 0b10_101);
        assert_eq!(
            word & !(0b111 << 4 | 0b11 << 20),
            0xFFFF_FFFF & !(0b111 << 4 | 0b11 << 20)
        );
    }
}
