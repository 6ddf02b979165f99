//! A register operand's 32-bit words, lowest first, held inline: reading a
//! vector operand, loading one or computing a result allocates nothing.
//! Operands are at most `MAX_WORDS` wide (`operands` refuses wider ones at
//! decode), so a value always fits.

use std::ops::{Deref, DerefMut};

/// The widest register, an ACC2048 accumulator (`dm`), in words.
pub const MAX_WORDS: usize = 64;

#[derive(Clone, Copy, Debug)]
pub struct Words {
    len: usize,
    words: [u32; MAX_WORDS],
}

impl Words {
    /// `len` zero words (`len` at most `MAX_WORDS`).
    pub fn zeroed(len: usize) -> Words {
        assert!(len <= MAX_WORDS, "{len} words is wider than any register");
        Words {
            len,
            words: [0; MAX_WORDS],
        }
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// `len` words, those past the old length whatever the buffer held
    /// (for a value about to be filled whole).
    pub fn set_len(&mut self, len: usize) {
        assert!(len <= MAX_WORDS, "{len} words is wider than any register");
        self.len = len;
    }

    pub fn extend_from_slice(&mut self, words: &[u32]) {
        let end = self.len + words.len();
        assert!(end <= MAX_WORDS, "{end} words is wider than any register");
        copy_words(&mut self.words[self.len..end], words);
        self.len = end;
    }
}

/// `dst.copy_from_slice(src)`, with the widths of vector registers (8 to
/// 64 words) as copies of a constant length, which compile inline instead
/// of calling `memcpy` (several times a vector instruction).
#[inline]
pub fn copy_words(dst: &mut [u32], src: &[u32]) {
    match src.len() {
        64 => dst[..64].copy_from_slice(&src[..64]),
        32 => dst[..32].copy_from_slice(&src[..32]),
        16 => dst[..16].copy_from_slice(&src[..16]),
        8 => dst[..8].copy_from_slice(&src[..8]),
        _ => dst.copy_from_slice(src),
    }
}

/// `dst.extend_from_slice(src)`, the vector registers' widths inline as in
/// `copy_words`.
#[inline(always)]
pub fn push_words(dst: &mut Vec<u32>, src: &[u32]) {
    match src.len() {
        64 => dst.extend_from_slice(&src[..64]),
        32 => dst.extend_from_slice(&src[..32]),
        16 => dst.extend_from_slice(&src[..16]),
        8 => dst.extend_from_slice(&src[..8]),
        _ => dst.extend_from_slice(src),
    }
}

impl Deref for Words {
    type Target = [u32];

    fn deref(&self) -> &[u32] {
        &self.words[..self.len]
    }
}

impl DerefMut for Words {
    fn deref_mut(&mut self) -> &mut [u32] {
        &mut self.words[..self.len]
    }
}
