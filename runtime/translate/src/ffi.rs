//! The MLIR C API calls the translation makes beyond `loom_dialects::ir`,
//! as safe functions: the one module of this crate with `unsafe`. Every
//! handle passed in is live IR of the verified module being translated,
//! which the caller holds for the whole translation; each block relies on
//! that, and on the verifier for the shape it states.

#![allow(unsafe_code)]

use loom_dialects::ir::printed;
use mlir_sys::*;

pub fn attribute_text(attr: MlirAttribute) -> String {
    // SAFETY: a live attribute.
    printed(|f, d| unsafe { mlirAttributePrint(attr, f, d) })
}

/// The value of a float attribute.
pub fn float_value(attr: MlirAttribute) -> f64 {
    // SAFETY: a float attribute.
    unsafe { mlirFloatAttrGetValueDouble(attr) }
}

/// The last element of a dense i32 array attribute.
pub fn last_dense_i32(attr: MlirAttribute) -> i32 {
    // SAFETY: a non-empty dense i32 array attribute.
    unsafe { mlirDenseI32ArrayGetElement(attr, mlirDenseArrayGetNumElements(attr) - 1) }
}

pub fn is_integer(ty: MlirType) -> bool {
    // SAFETY: a live type.
    unsafe { mlirTypeIsAInteger(ty) }
}

pub fn is_vector(ty: MlirType) -> bool {
    // SAFETY: a live type.
    unsafe { mlirTypeIsAVector(ty) }
}

/// The element type of a shaped type.
pub fn element_type(ty: MlirType) -> MlirType {
    // SAFETY: a live shaped type.
    unsafe { mlirShapedTypeGetElementType(ty) }
}

pub fn is_f32(ty: MlirType) -> bool {
    // SAFETY: a live type.
    unsafe { mlirTypeIsAF32(ty) }
}

pub fn is_bf16(ty: MlirType) -> bool {
    // SAFETY: a live type.
    unsafe { mlirTypeIsABF16(ty) }
}

pub fn is_index(ty: MlirType) -> bool {
    // SAFETY: a live type.
    unsafe { mlirTypeIsAIndex(ty) }
}

/// Rank and dimension sizes of a shaped type.
pub fn shape(ty: MlirType) -> Vec<i64> {
    // SAFETY: a live shaped type; dimensions below its rank.
    unsafe {
        (0..mlirShapedTypeGetRank(ty) as isize)
            .map(|d| mlirShapedTypeGetDimSize(ty, d))
            .collect()
    }
}
