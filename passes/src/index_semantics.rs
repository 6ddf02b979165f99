//! Index arithmetic as docs/semantics.md defines it, for the passes that
//! evaluate it at compile time (the command stream's evaluation, the
//! progress analysis): wrapping at 64 bits, `min`/`max` unsigned, `cmp`
//! signed or unsigned by its predicate.

use loom_dialects::names;

/// The function of a binary `index` op named `name`, if it is one.
pub fn binary(name: &str) -> Option<fn(i64, i64) -> i64> {
    Some(match name {
        names::index::ADD => i64::wrapping_add,
        names::index::SUB => i64::wrapping_sub,
        names::index::MUL => i64::wrapping_mul,
        names::index::MIN => |a, b| (a as u64).min(b as u64) as i64,
        names::index::MAX => |a, b| (a as u64).max(b as u64) as i64,
        _ => return None,
    })
}

/// `index.cmp PREDICATE, a, b`, or None for an unknown predicate.
pub fn compare(predicate: &str, a: i64, b: i64) -> Option<bool> {
    let (ua, ub) = (a as u64, b as u64);
    Some(match predicate {
        "eq" => a == b,
        "ne" => a != b,
        "slt" => a < b,
        "sle" => a <= b,
        "sgt" => a > b,
        "sge" => a >= b,
        "ult" => ua < ub,
        "ule" => ua <= ub,
        "ugt" => ua > ub,
        "uge" => ua >= ub,
        _ => return None,
    })
}
