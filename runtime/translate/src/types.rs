//! MLIR types and constants as the interpreter's elements and values.

use crate::ffi;
use loom_dialects::ir::{type_text, view_type_shape};
use loom_runtime::interp::value::{Elem, Value};
use mlir_sys::{MlirAttribute, MlirType};

/// The value of a float constant of type `elem`. Every f32 and bf16 value
/// but a NaN converts exactly through f64; a NaN would be quieted on the way
/// (a signalling NaN's bits changed), so its bits are read from the printed
/// attribute, which spells NaNs in hexadecimal (`0x7F81 : bf16`).
pub fn float_constant(attr: MlirAttribute, elem: Elem) -> Value {
    let value = ffi::float_value(attr);
    if value.is_nan() {
        let printed = ffi::attribute_text(attr);
        let bits = printed
            .trim()
            .strip_prefix("0x")
            .or_else(|| printed.trim().strip_prefix("0X"))
            .and_then(|rest| {
                let end = rest
                    .find(|c: char| !c.is_ascii_hexdigit())
                    .unwrap_or(rest.len());
                u32::from_str_radix(&rest[..end], 16).ok()
            });
        if let Some(bits) = bits {
            return match elem {
                Elem::BF16 => Value::BF16(bits as u16),
                _ => Value::F32(f32::from_bits(bits)),
            };
        }
    }
    Value::float(elem, value as f32)
}

/// Why `op` cannot run on vectors of type `ty`, if it cannot: the
/// interpreter's vectors hold f32, bf16, i8, i16 or i32 lanes.
pub fn unsupported_lanes(op: &str, ty: MlirType) -> Option<String> {
    match elem_of(ty) {
        Some(Elem::F32 | Elem::BF16 | Elem::I8 | Elem::I16 | Elem::I32) => None,
        _ => Some(format!(
            "{op} on {}: the interpreter implements f32, bf16, i8, i16 and i32 lanes only",
            type_text(ty)
        )),
    }
}

/// The element type of a scalar or vector type.
pub fn elem_of(ty: MlirType) -> Option<Elem> {
    let scalar = if ffi::is_vector(ty) {
        ffi::element_type(ty)
    } else {
        ty
    };
    if ffi::is_f32(scalar) {
        Some(Elem::F32)
    } else if ffi::is_bf16(scalar) {
        Some(Elem::BF16)
    } else if ffi::is_index(scalar) {
        Some(Elem::Index)
    } else {
        Elem::named(&type_text(scalar)).filter(|e| e.is_integer())
    }
}

pub fn vector_lanes(ty: MlirType) -> Option<usize> {
    if !ffi::is_vector(ty) {
        return None;
    }
    match ffi::shape(ty)[..] {
        [lanes] => Some(lanes as usize),
        _ => None,
    }
}

/// Shape (`None` for a dynamic dimension) and element of a Loom view or tile
/// type.
pub fn view_shape(ty: MlirType) -> Option<(Vec<Option<usize>>, Elem)> {
    let (shape, name) = view_type_shape(ty)?;
    Some((shape, Elem::named(&name)?))
}
