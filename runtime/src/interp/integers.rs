//! Integer lanes (i8, i16, i32; docs/semantics.md, "Integers"): wrapping
//! arithmetic, the widening multiply-accumulate and shift-round-saturate.
//! Values are held sign-extended in an `i32` and stay in their type's range.

use super::program::IntOp;
use super::value::{Elem, Value};

/// `scalar.addi/subi/muli` and `vector.addi/subi/muli`: the low bits of the
/// exact result, sign-extended; `None` for operands of other kinds or types.
pub fn wrapping(op: IntOp, a: &Value, b: &Value) -> Option<Value> {
    let lane = |elem: Elem, x: i32, y: i32| {
        let (x, y) = (x as i64, y as i64);
        elem.wrap(match op {
            IntOp::Add => x + y,
            IntOp::Sub => x - y,
            _ => x * y,
        })
    };
    match (a, b) {
        (Value::Integer(e, x), Value::Integer(f, y)) if e == f => {
            Some(Value::Integer(*e, lane(*e, *x, *y)))
        }
        (Value::VecInt(e, x), Value::VecInt(f, y)) if e == f && x.len() == y.len() => {
            Some(Value::VecInt(
                *e,
                x.iter()
                    .zip(y.iter())
                    .map(|(p, q)| lane(*e, *p, *q))
                    .collect(),
            ))
        }
        _ => None,
    }
}

/// `vector.mac`: acc + x * y per lane; the product of two i8 or i16 lanes is
/// exact in 32 bits, the sum wraps at 32 bits.
pub fn mac(x: &Value, y: &Value, acc: &Value) -> Option<Value> {
    match (x, y, acc) {
        (Value::VecInt(e, x), Value::VecInt(f, y), Value::VecInt(Elem::I32, acc))
            if e == f
                && matches!(e, Elem::I8 | Elem::I16)
                && x.len() == y.len()
                && x.len() == acc.len() =>
        {
            let lanes = x.iter().zip(y.iter()).zip(acc.iter());
            Some(Value::VecInt(
                Elem::I32,
                lanes.map(|((p, q), s)| s.wrapping_add(p * q)).collect(),
            ))
        }
        _ => None,
    }
}

/// `vector.srs`: each i32 lane divided by 2^shift, rounded to nearest with
/// ties to even, clamped to `to`'s signed range.
pub fn srs(input: &Value, shift: u32, to: Elem) -> Option<Value> {
    match input {
        Value::VecInt(Elem::I32, x) if to.is_integer() => Some(Value::VecInt(
            to,
            x.iter()
                .map(|&v| to.saturate(shift_round(v, shift)))
                .collect(),
        )),
        _ => None,
    }
}

/// v / 2^shift, rounded to nearest, ties to even.
fn shift_round(v: i32, shift: u32) -> i64 {
    let v = v as i64;
    if shift == 0 {
        return v;
    }
    let floor = v >> shift;
    let rest = v - (floor << shift);
    let half = 1i64 << (shift - 1);
    if rest > half || (rest == half && floor & 1 == 1) {
        floor + 1
    } else {
        floor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(elem: Elem, v: &[i32]) -> Value {
        Value::VecInt(elem, v.into())
    }

    fn lanes(v: Option<Value>) -> Vec<i32> {
        match v {
            Some(Value::VecInt(_, x)) => x.to_vec(),
            other => panic!("expected integer lanes, got {other:?}"),
        }
    }

    #[test]
    fn arithmetic_wraps_to_the_type() {
        let a = ints(Elem::I8, &[127, -128, 100, -1]);
        let b = ints(Elem::I8, &[1, -1, 100, -1]);
        assert_eq!(lanes(wrapping(IntOp::Add, &a, &b)), [-128, 127, -56, -2]);
        assert_eq!(lanes(wrapping(IntOp::Sub, &a, &b)), [126, -127, 0, 0]);
        assert_eq!(lanes(wrapping(IntOp::Mul, &a, &b)), [127, -128, 16, 1]);
        let big = ints(Elem::I32, &[i32::MAX]);
        assert_eq!(
            lanes(wrapping(IntOp::Add, &big, &ints(Elem::I32, &[1]))),
            [i32::MIN]
        );
        // Two types do not mix.
        assert!(wrapping(IntOp::Add, &a, &ints(Elem::I16, &[1, 2, 3, 4])).is_none());
    }

    #[test]
    fn mac_multiplies_exactly_and_wraps_the_sum() {
        let x = ints(Elem::I8, &[-128, 127, 3]);
        let acc = ints(Elem::I32, &[0, i32::MAX, -10]);
        assert_eq!(lanes(mac(&x, &x, &acc)), [16384, i32::MIN + 16128, -1]);
        let w = ints(Elem::I16, &[-32768]);
        assert_eq!(lanes(mac(&w, &w, &ints(Elem::I32, &[0]))), [1 << 30]);
    }

    #[test]
    fn srs_rounds_ties_to_even_and_saturates() {
        let x = ints(Elem::I32, &[5, 6, 7, -5, -6, -7, 2, 4000, -4000]);
        // 5/4 = 1.25 -> 1; 6/4 = 1.5 -> 2; 7/4 -> 2; -1.25 -> -1; -1.5 -> -2;
        // -1.75 -> -2; 0.5 -> 0 (even); 1000 and -1000 clamp to i8.
        assert_eq!(
            lanes(srs(&x, 2, Elem::I8)),
            [1, 2, 2, -1, -2, -2, 0, 127, -128]
        );
        assert_eq!(
            lanes(srs(&ints(Elem::I32, &[10, -3]), 1, Elem::I8)),
            [5, -2]
        );
        assert_eq!(
            lanes(srs(&ints(Elem::I32, &[-70000]), 0, Elem::I16)),
            [-32768]
        );
    }
}
