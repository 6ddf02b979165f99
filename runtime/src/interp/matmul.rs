//! `vector.mmac` (docs/semantics.md, "Matrix multiply-accumulate"): an
//! m x k block times a k x n block added to an m x n block, each row-major
//! in its lanes. Integer blocks (i8 or i16 into i32) sum exact products
//! with wrapping; bf16 blocks into f32 add the products in order of p, each
//! sum rounded to f32, as `vector.dot2f` does.

use super::value::{Elem, Value};
use crate::numerics::bf16_to_f32;
use std::rc::Rc;

/// The block shape `[m, k, n]` of one `vector.mmac`.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub m: usize,
    pub k: usize,
    pub n: usize,
}

/// `acc + a * b`; `None` for operands of other kinds or lane counts.
pub fn mmac(shape: Shape, a: &Value, b: &Value, acc: &Value) -> Option<Value> {
    let Shape { m, k, n } = shape;
    let fits = |a: usize, b: usize, acc: usize| a == m * k && b == k * n && acc == m * n;
    match (a, b, acc) {
        (Value::VecInt(e, x), Value::VecInt(f, y), Value::VecInt(Elem::I32, s))
            if e == f && matches!(e, Elem::I8 | Elem::I16) && fits(x.len(), y.len(), s.len()) =>
        {
            let out = blocks(shape, x, y, s, |s, p, q| s.wrapping_add(p * q));
            Some(Value::VecInt(Elem::I32, Rc::from(out)))
        }
        (Value::VecBF16(x), Value::VecBF16(y), Value::VecF32(s))
            if fits(x.len(), y.len(), s.len()) =>
        {
            let x: Vec<f32> = x.iter().map(|&v| bf16_to_f32(v)).collect();
            let y: Vec<f32> = y.iter().map(|&v| bf16_to_f32(v)).collect();
            // Two roundings, no fused multiply-add: f32(s + f32(p q)).
            let out = blocks(shape, &x, &y, s, |s, p, q| s + p * q);
            Some(Value::VecF32(Rc::from(out)))
        }
        _ => None,
    }
}

/// `step(acc(i, j), a(i, p), b(p, j))` for p in order, into a copy of acc.
fn blocks<T: Copy>(
    shape: Shape,
    a: &[T],
    b: &[T],
    acc: &[T],
    step: impl Fn(T, T, T) -> T,
) -> Vec<T> {
    let Shape { k, n, .. } = shape;
    let mut out = acc.to_vec();
    for (i, row) in out.chunks_exact_mut(n).enumerate() {
        for p in 0..k {
            let x = a[i * k + p];
            for (o, &y) in row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                *o = step(*o, x, y);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(elem: Elem, v: &[i32]) -> Value {
        Value::VecInt(elem, Rc::from(v))
    }

    #[test]
    fn integer_blocks_multiply_row_major() {
        // [1 2; 3 4] x [5 6; 7 8] = [19 22; 43 50], plus 1 everywhere.
        let shape = Shape { m: 2, k: 2, n: 2 };
        let a = ints(Elem::I8, &[1, 2, 3, 4]);
        let b = ints(Elem::I8, &[5, 6, 7, 8]);
        let acc = ints(Elem::I32, &[1, 1, 1, 1]);
        let Some(Value::VecInt(Elem::I32, c)) = mmac(shape, &a, &b, &acc) else {
            panic!("no result")
        };
        assert_eq!(&c[..], &[20, 23, 44, 51]);
    }

    #[test]
    fn integer_sum_wraps_at_32_bits() {
        let shape = Shape { m: 1, k: 1, n: 1 };
        let a = ints(Elem::I16, &[-32768]);
        let b = ints(Elem::I16, &[-32768]);
        let acc = ints(Elem::I32, &[i32::MAX]);
        let Some(Value::VecInt(_, c)) = mmac(shape, &a, &b, &acc) else {
            panic!("no result")
        };
        assert_eq!(c[0], i32::MAX.wrapping_add(1 << 30));
    }

    #[test]
    fn bf16_products_are_added_in_order() {
        // 2^24 + 1 - 2^24: in order the 1 is lost (f32 has 24 bits), so 0.
        let bf = |v: f32| (v.to_bits() >> 16) as u16;
        let shape = Shape { m: 1, k: 3, n: 1 };
        let a = Value::VecBF16(Rc::from(vec![bf(16777216.0), bf(1.0), bf(-16777216.0)]));
        let b = Value::VecBF16(Rc::from(vec![bf(1.0), bf(1.0), bf(1.0)]));
        let acc = Value::VecF32(Rc::from(vec![0.0f32]));
        let Some(Value::VecF32(c)) = mmac(shape, &a, &b, &acc) else {
            panic!("no result")
        };
        assert_eq!(c[0], 0.0);
    }

    #[test]
    fn wrong_lane_counts_are_refused() {
        let shape = Shape { m: 2, k: 2, n: 2 };
        let a = ints(Elem::I8, &[1, 2, 3]);
        let b = ints(Elem::I8, &[5, 6, 7, 8]);
        let acc = ints(Elem::I32, &[1, 1, 1, 1]);
        assert!(mmac(shape, &a, &b, &acc).is_none());
    }
}
