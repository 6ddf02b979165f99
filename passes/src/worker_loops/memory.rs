//! What a worker's memory accesses may touch, as far as moving them past
//! each other needs: a view is traced to the placed `aie2p.tile.buffer`
//! it was cut from, and two accesses are independent when their buffers
//! are on different tiles or their byte ranges do not overlap.

use loom_dialects::ir::*;
use loom_dialects::names::{aie2p, buffer, cfg, vector, view};
use mlir_sys::{MlirOperation, MlirValue};

/// How an op touches memory, for the transformations here.
pub(crate) enum Access {
    /// No memory effect (a pure op or a branch).
    None,
    /// Reads these placed ranges.
    Reads(Vec<Range>),
    /// Writes (and may read) these placed ranges.
    Writes(Vec<Range>),
    /// Anything else: a lock, a call, a store through an untraced view.
    Unknown,
}

/// Bytes of one tile's data memory.
#[derive(Clone, Copy)]
pub(crate) struct Range {
    tile: usize,
    begin: i64,
    end: i64,
}

impl Range {
    pub(crate) fn overlaps(&self, other: &Range) -> bool {
        self.tile == other.tile && self.begin < other.end && other.begin < self.end
    }
}

pub(crate) fn access(op: MlirOperation) -> Access {
    let name = op_name(op);
    let reads = name == view::LOAD || name == vector::LOAD;
    let writes = name == view::STORE || name == vector::STORE;
    if !reads && !writes {
        return if is_pure(op) || is_branch(&name) {
            Access::None
        } else {
            Access::Unknown
        };
    }
    let ranges: Option<Vec<Range>> = operands(op)
        .into_iter()
        .filter(|&v| is_view(v))
        .map(placed)
        .collect();
    match ranges {
        Some(r) if reads => Access::Reads(r),
        Some(r) => Access::Writes(r),
        None => Access::Unknown,
    }
}

fn is_view(value: MlirValue) -> bool {
    type_text(value_type(value)).starts_with("!view.view<")
}

fn is_branch(name: &str) -> bool {
    name == cfg::BR || name == cfg::COND_BR
}

/// The placed bytes `view` lies in: the whole tile buffer it is a view of.
fn placed(view: MlirValue) -> Option<Range> {
    if !is_op_result(view) || op_name(owner_op(view)) != buffer::VIEW {
        return None;
    }
    let source = operands(owner_op(view))[0];
    if !is_op_result(source) {
        return None;
    }
    let tile_buffer = owner_op(source);
    if op_name(tile_buffer) != aie2p::TILE_BUFFER {
        return None;
    }
    let begin = int_attribute(tile_buffer, "offset")?;
    Some(Range {
        tile: attribute(tile_buffer, "tile")?.ptr as usize,
        begin,
        end: begin + int_attribute(tile_buffer, "size")?,
    })
}

#[cfg(test)]
mod tests {
    use super::Range;

    fn range(tile: usize, begin: i64, end: i64) -> Range {
        Range { tile, begin, end }
    }

    #[test]
    fn ranges_overlap_only_on_one_tile_and_shared_bytes() {
        assert!(range(1, 0, 64).overlaps(&range(1, 32, 96)));
        assert!(range(1, 32, 96).overlaps(&range(1, 0, 64)));
        assert!(range(1, 0, 64).overlaps(&range(1, 16, 32)));
        // Adjacent ranges share no byte.
        assert!(!range(1, 0, 64).overlaps(&range(1, 64, 128)));
        assert!(!range(1, 64, 128).overlaps(&range(1, 0, 64)));
        // The same offsets of two tiles' memories are different bytes.
        assert!(!range(1, 0, 64).overlaps(&range(2, 0, 64)));
    }
}
