//! Reading the aie2p ops' attributes, which their verifiers guarantee: an
//! absent one reads as its zero (the verifier has refused that module).

use loom_dialects::ir::*;
use loom_targets::xdna::regs::Direction;
use loom_targets::Tile;
use mlir_sys::MlirOperation;

/// An integer attribute the op's verifier guarantees.
pub(crate) fn int(op: MlirOperation, name: &str) -> i64 {
    int_attribute(op, name).unwrap_or(0)
}

/// A `[column, row]` attribute; a coordinate outside u32 reads as one
/// outside every array, which the emitter refuses.
pub(crate) fn tile(op: MlirOperation, name: &str) -> Tile {
    let t = attribute(op, name)
        .map(dense_i64_values)
        .unwrap_or_default();
    let at = |i: usize| {
        t.get(i)
            .map_or(0, |&v| u32::try_from(v).unwrap_or(u32::MAX))
    };
    Tile::new(at(0), at(1))
}

pub(crate) fn direction(op: MlirOperation) -> Direction {
    match string_attribute(op, "direction").as_deref() {
        Some("s2mm") => Direction::S2mm,
        _ => Direction::Mm2s,
    }
}
