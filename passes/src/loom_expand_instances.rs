//! `loom-expand-instances`: SPMD worker ranges become one strand per worker.
//!
//! A strand whose selection `workers([c, r], [n, m], [sc, sr])` holds more
//! than one worker is replaced, in place, by one strand per worker in the
//! order the interpreter enters them (column index outer, row index inner),
//! each selecting its one worker `[c + i sc, r + j sr]`. In each copy the
//! `pipeline.instance` ops become that instance's coordinates `i` and `j` as
//! `index.constant`s, so canonicalization folds what they decide (the
//! instance's channels, its share of a buffer). A singleton strand's
//! `pipeline.instance` is `(0, 0)`. The instances run exactly as the
//! interpreter runs the unexpanded strand: each copy is one of its entries.

use crate::PassInfo;
use loom_dialects::instance::{INSTANCE, SELECTION};
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;

inventory::submit! {
    PassInfo {
        argument: "loom-expand-instances",
        description: "Expand each strand selecting several workers into one strand per worker, pipeline.instance becoming its coordinates",
        takes_options: false,
        changes_ir: true,
        run,
    }
}

fn run(module: MlirOperation, _options: &str) -> Result<(), ()> {
    let strands: Vec<MlirOperation> = walk(module)
        .into_iter()
        .filter(|&op| op_name(op) == names::pipeline::STRAND)
        .collect();
    for strand in strands {
        let selection = |name: &str| attribute(strand, name).map(dense_i64_values);
        let (Some(origins), Some(counts), Some(strides)) = (
            selection("origins"),
            selection("counts"),
            selection("strides"),
        ) else {
            continue;
        };
        // The verifier has checked two dimensions of positive counts.
        if counts.iter().product::<i64>() == 1 {
            place_instance(strand, [0, 0]);
            continue;
        }
        let ctx = context(strand);
        for i in 0..counts[0] {
            for j in 0..counts[1] {
                let copy = clone_op(strand);
                let worker = [origins[0] + i * strides[0], origins[1] + j * strides[1]];
                set_attribute(copy, "origins", dense_i64_attr(ctx, &worker));
                set_attribute(copy, "counts", dense_i64_attr(ctx, &[1, 1]));
                set_attribute(copy, "strides", dense_i64_attr(ctx, &[1, 1]));
                // What the author selected, for diagnostics about this worker.
                let authored: Vec<i64> = [&origins, &counts, &strides]
                    .into_iter()
                    .flatten()
                    .copied()
                    .collect();
                set_attribute(copy, SELECTION, dense_i64_attr(ctx, &authored));
                set_attribute(copy, INSTANCE, dense_i64_attr(ctx, &[i, j]));
                insert_before(strand, copy);
                place_instance(copy, [i, j]);
            }
        }
        erase(strand);
    }
    Ok(())
}

/// Replace the `pipeline.instance` ops in `op` (a strand, or the function
/// one worker runs) with `coordinates`.
pub(crate) fn place_instance(op: MlirOperation, coordinates: [i64; 2]) {
    let instances: Vec<MlirOperation> = walk(op)
        .into_iter()
        .filter(|&op| op_name(op) == names::pipeline::INSTANCE)
        .collect();
    for op in instances {
        let ctx = context(op);
        for (result, value) in results(op).into_iter().zip(coordinates) {
            let at = named_location(ctx, &value_name(result));
            let constant = index_constant(at, value, value_type(result));
            insert_before(op, constant);
            replace_all_uses(result, results(constant)[0]);
        }
        erase(op);
    }
}
