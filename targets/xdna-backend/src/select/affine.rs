//! Index values as affine forms: a constant plus registers times
//! constants, in the 32-bit arithmetic the core computes (mod 2^32).
//! Selection records the form of each `add`, `sub` and multiply by a
//! constant it emits, in terms of the registers it started from, so that
//! two addresses that differ by a constant are known to: the second access
//! takes the first one's pointer and an immediate (`vlda x, [p, #128]`)
//! instead of computing its own.

use loom_aie2p_codegen::VReg;

/// More terms than this and a value is its own register: addresses in
/// practice have a term per varying index.
const MOST_TERMS: usize = 4;

/// `constant + sum(coefficient * register)`, the terms sorted by register,
/// none with a zero coefficient, every number wrapped to 32 bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Affine {
    pub terms: Vec<(VReg, i64)>,
    pub constant: i64,
}

fn wrap(x: i64) -> i64 {
    i64::from(x as i32)
}

impl Affine {
    pub fn constant(c: i64) -> Affine {
        Affine {
            terms: Vec::new(),
            constant: wrap(c),
        }
    }

    pub fn register(r: VReg) -> Affine {
        Affine {
            terms: vec![(r, 1)],
            constant: 0,
        }
    }

    /// `self + k * other`, if it keeps few enough terms.
    pub fn add_scaled(&self, other: &Affine, k: i64) -> Option<Affine> {
        let mut terms = self.terms.clone();
        for &(r, c) in &other.terms {
            match terms.binary_search_by_key(&r, |&(t, _)| t) {
                Ok(i) => terms[i].1 = wrap(terms[i].1.wrapping_add(c.wrapping_mul(k))),
                Err(i) => terms.insert(i, (r, wrap(c.wrapping_mul(k)))),
            }
        }
        terms.retain(|&(_, c)| c != 0);
        (terms.len() <= MOST_TERMS).then(|| Affine {
            terms,
            constant: wrap(self.constant.wrapping_add(other.constant.wrapping_mul(k))),
        })
    }

    /// `k * self`.
    pub fn scale(&self, k: i64) -> Option<Affine> {
        Affine::constant(0).add_scaled(self, k)
    }

    /// The constant, when there are no terms.
    pub fn as_constant(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// `self - other` when both have the same terms: the byte distance
    /// between two addresses.
    pub fn distance(&self, other: &Affine) -> Option<i64> {
        (self.terms == other.terms).then(|| wrap(self.constant.wrapping_sub(other.constant)))
    }
}
