//! `outline-pipeline-strands`: each `pipeline.strand` body becomes an
//! ordinary function the strand calls.
//!
//! The values a body captures from the construction region become explicit
//! arguments, in the order the body first uses them, followed by any value
//! that only names a dimension of a captured value's type; dependent types
//! keep naming their dimensions through `arg_dims`. Where the strand names
//! a captured value's constant dimension with another, equal constant, its
//! type lists are first made to name the value's own dimension, since two
//! arguments are never the same dimension. The function, `func.def
//! inline @__pipeline_strand_N`, starts with an entry block that branches to
//! the body's blocks; the strand's body becomes a single `func.call`.
//! Storage, channels and placement stay in the pipeline.
//!
//! A strand whose body is already a single call is left as it is, so the pass
//! can run again on its own output.
//!
//! Strands are numbered from the last one of each pipeline to the first, as
//! the walkthrough's compiler does. When the pipeline's target context
//! carries a device profile, every strand function gets a core context of
//! that profile, `aie2p.target<core> @__loom_target_context_1_J`, appended
//! after the functions.

use crate::diagnostics::error;
use crate::loom_resolve_target::{context_op, fresh_context_name};
use crate::PassInfo;
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;
use std::collections::BTreeSet;

inventory::submit! {
    PassInfo {
        argument: "outline-pipeline-strands",
        description: "Outline each pipeline.strand body into a func.def @__pipeline_strand_N with explicit captured arguments",
        takes_options: false,
        changes_ir: true,
        run,
    }
}

fn push_unique(list: &mut Vec<MlirValue>, value: MlirValue) {
    if !list.iter().any(|&v| same_value(v, value)) {
        list.push(value);
    }
}

/// For each constant value that a captured value's type names as a
/// dimension, the captured value that stands for every equal constant.
///
/// Outside the function, two distinct constants with the same value are the
/// same dimension (the verifier compares constants by value). Inside it, the
/// captured values become arguments, which are only equal to themselves: a
/// channel whose definition names `%n` but that the strand reserves with
/// `[%m]`, `%m` another constant 4, would no longer verify. So such
/// dimensions are all named by one captured value before outlining.
struct DimConstants(Vec<(i64, MlirValue)>);

impl DimConstants {
    fn of(captured: &[MlirValue]) -> Self {
        let mut found: Vec<(i64, MlirValue)> = Vec::new();
        for &value in captured {
            for dim in value_dims(value).unwrap_or_default() {
                if let Some(constant) = constant_int(dim) {
                    if !found.iter().any(|&(known, _)| known == constant) {
                        found.push((constant, dim));
                    }
                }
            }
        }
        DimConstants(found)
    }

    /// The value that names dimension `dim` from now on.
    fn canonical(&self, dim: MlirValue) -> MlirValue {
        constant_int(dim)
            .and_then(|constant| self.0.iter().find(|&&(known, _)| known == constant))
            .map_or(dim, |&(_, value)| value)
    }
}

/// The number of `type_dims` operands of `op`: the dependent dimensions of
/// its operand and result types (the only values with dependent types are
/// the ones its type list spells). None when some cannot be traced.
fn type_dim_count(op: MlirOperation) -> Option<usize> {
    let mut count = 0;
    for value in operands(op).into_iter().chain(results(op)) {
        count += value_dims(value)?.len();
    }
    Some(count)
}

/// Make the strand name each constant dimension of a captured value with
/// the one value `dims` chose for it, wherever an op's type list names it.
fn unify_dimension_constants(strand: MlirOperation, dims: &DimConstants) {
    if dims.0.is_empty() {
        return;
    }
    for op in walk(strand).into_iter().skip(1) {
        let Some(count) = type_dim_count(op) else {
            continue;
        };
        let all = operands(op);
        for (position, &value) in all.iter().enumerate().skip(all.len() - count) {
            let canonical = dims.canonical(value);
            if !same_value(canonical, value) {
                // The replacement dominates the strand.
                set_operand(op, position, canonical);
            }
        }
    }
}

/// The construction-region values the strand uses, first use first, then
/// the dimension values their types name.
fn captured_values(strand: MlirOperation, known: &DimConstants) -> Result<Vec<MlirValue>, ()> {
    let mut captured = Vec::new();
    for op in walk(strand).into_iter().skip(1) {
        for value in operands(op) {
            if !defined_within(value, strand) {
                push_unique(&mut captured, value);
            }
        }
    }
    let mut index = 0;
    while index < captured.len() {
        let Some(dims) = value_dims(captured[index]) else {
            error(
                location(strand),
                &format!(
                    "outline-pipeline-strands: cannot relate the dimensions of captured value %{} to values",
                    value_name(captured[index])
                ),
            );
            return Err(());
        };
        for dim in dims {
            push_unique(&mut captured, known.canonical(dim));
        }
        index += 1;
    }
    Ok(captured)
}

/// The captured values in order, with equal constant dimensions named by
/// one of them (see `DimConstants`).
fn capture(strand: MlirOperation) -> Result<(Vec<MlirValue>, DimConstants), ()> {
    let first = captured_values(strand, &DimConstants(Vec::new()))?;
    let dims = DimConstants::of(&first);
    if dims.0.is_empty() {
        return Ok((first, dims));
    }
    unify_dimension_constants(strand, &dims);
    Ok((captured_values(strand, &dims)?, dims))
}

/// For each dynamic dimension of each captured type, the argument holding it.
fn argument_dims(captured: &[MlirValue], known: &DimConstants) -> Vec<i64> {
    captured
        .iter()
        .flat_map(|&value| value_dims(value).unwrap_or_default())
        .map(|dim| {
            let dim = known.canonical(dim);
            captured
                .iter()
                .position(|&v| same_value(v, dim))
                .expect("dimension values are captured") as i64
        })
        .collect()
}

/// Outline one strand into a detached function named `name`.
fn outline(strand: MlirOperation, name: &str) -> Result<MlirOperation, ()> {
    let ctx = context(strand);
    let (captured, known) = capture(strand)?;
    let types: Vec<MlirType> = captured.iter().map(|&v| value_type(v)).collect();
    let locations: Vec<MlirLocation> = captured
        .iter()
        .map(|&v| named_location(ctx, &value_name(v)))
        .collect();
    let dims: Vec<MlirValue> = captured
        .iter()
        .flat_map(|&v| value_dims(v).unwrap_or_default())
        .map(|dim| known.canonical(dim))
        .collect();
    // The function is detached until the caller inserts it; blocks move
    // between regions whole.
    let signature = function_type(ctx, &types, &[]);
    let mut spec = OpSpec::new(names::func::DEF, unknown_location(ctx));
    spec.attributes = vec![
        ("sym_name", string_attr(ctx, name)),
        ("inline_hint", unit_attr(ctx)),
        ("function_type", type_attr(signature)),
        (
            "arg_dims",
            dense_i64_attr(ctx, &argument_dims(&captured, &known)),
        ),
    ];
    spec.regions = 1;
    let function = spec.build();
    let body = region(function, 0);
    let strand_body = region(strand, 0);
    take_body(body, strand_body);
    if blocks(body).is_empty() {
        append_block(body, &[], &[]);
    }
    for block in blocks(body) {
        if terminator(block).is_none() {
            append(
                block,
                OpSpec::new(names::func::RETURN, unknown_location(ctx)).build(),
            );
        }
    }
    let first = blocks(body)[0];
    let entry = prepend_block(body, &types, &locations);
    let mut enter = OpSpec::new(names::cfg::BR, unknown_location(ctx));
    enter.successors = vec![first];
    append(entry, enter.build());
    for (value, argument) in captured.iter().zip(arguments(entry)) {
        for (user, operand) in uses(*value) {
            if is_within(user, function) {
                set_operand(user, operand as usize, argument);
            }
        }
    }

    let call_block = append_block(strand_body, &[], &[]);
    let mut call = OpSpec::new(names::func::CALL, unknown_location(ctx));
    call.operands = captured.clone();
    call.operands.extend(&dims);
    call.attributes = vec![
        ("callee", flat_symbol_ref_attr(ctx, name)),
        (
            "operandSegmentSizes",
            dense_i32_attr(ctx, &[captured.len() as i32, dims.len() as i32]),
        ),
    ];
    append(call_block, call.build());
    Ok(function)
}

/// A strand whose body is a single call has nothing left to outline.
pub fn is_outlined(strand: MlirOperation) -> bool {
    let body = blocks(region(strand, 0));
    body.len() == 1 && {
        let ops = ops_of(body[0]);
        ops.len() == 1 && op_name(ops[0]) == names::func::CALL
    }
}

fn run(module: MlirOperation, _options: &str) -> Result<(), ()> {
    let ctx = context(module);
    let top = top_level_ops(module);
    let symbols = symbols(module);
    let mut taken: BTreeSet<String> = symbols.keys().cloned().collect();
    let module_block = body(module);
    let mut contexts = Vec::new();
    for pipeline in top
        .into_iter()
        .filter(|&op| op_name(op) == names::pipeline::DEF)
    {
        let profile = symbol_ref(pipeline, "target")
            .and_then(|target| symbols.get(&target).copied())
            .and_then(|target| string_attribute(target, "device_profile"));
        let strands: Vec<MlirOperation> = walk(pipeline)
            .into_iter()
            .filter(|&op| op_name(op) == names::pipeline::STRAND && !is_outlined(op))
            .collect();
        for strand in strands.into_iter().rev() {
            let name = fresh_symbol(&mut taken, "__pipeline_strand_");
            let function = outline(strand, &name)?;
            append(module_block, function);
            if let Some(profile) = &profile {
                contexts.push((function, profile.clone()));
            }
        }
    }
    for (function, profile) in contexts {
        let name = fresh_context_name(&mut taken, 1);
        set_attribute(function, "target", flat_symbol_ref_attr(ctx, &name));
        append(module_block, context_op(ctx, "core", &name, &profile));
    }
    Ok(())
}
