//! `loom-structured-to-cfg`: lower `scf.for` and `scf.if` to `cfg` blocks,
//! keeping what the loop bounds prove as `index.assume` facts.
//!
//! A loop becomes a header block that tests `index.cmp slt` and a body that
//! branches back with the incremented induction value:
//! ```text
//! ^header(%i: index, %acc: vector<16xf32>):
//!   %c = index.cmp slt, %i, %ub : index
//!   cfg.cond_br %c, ^body, ^exit
//! ^body:
//!   %position = index.assume %i [range(%i, 0, 480), multiple_of(%i, 32)] : index
//!   ...
//!   %n = index.add %position, %step : index
//!   cfg.br ^header(%n, %next : index, vector<16xf32>)
//! ```
//! With constant bounds the induction value's inclusive range is
//! [lb, lb + (trips - 1) * step] and, when the lower bound is a multiple of
//! a step above 1, it is a multiple of the step. The assume takes the
//! induction value's name; loop-carried values keep theirs as header
//! arguments and stand for the loop's results. `scf.if` becomes a
//! conditional branch to its branches, which join in a block whose arguments
//! are the results. A strand body that becomes a graph of blocks ends in
//! `func.return`. Blocks follow source order: before, header, body, after.
//! Structured ops in a pipeline's construction region stay: that region is a
//! single block.

use crate::PassInfo;
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;

inventory::submit! {
    PassInfo {
        argument: "loom-structured-to-cfg",
        description: "Lower scf.for/scf.if to cfg blocks, attaching index.assume range and divisibility facts",
        takes_options: false,
        changes_ir: true,
        run,
    }
}

/// Branches take the location of the structured op they realize, so
/// diagnostics about control flow point at the source's loop or `scf.if`.
fn branch(at: MlirLocation, dest: MlirBlock, args: Vec<MlirValue>) -> MlirOperation {
    let mut spec = OpSpec::new(names::cfg::BR, at);
    spec.operands = args;
    spec.successors = vec![dest];
    spec.build()
}

fn cond_branch(at: MlirLocation, cond: MlirValue, yes: MlirBlock, no: MlirBlock) -> MlirOperation {
    let ctx = location_context(at);
    let mut spec = OpSpec::new(names::cfg::COND_BR, at);
    spec.operands = vec![cond];
    spec.successors = vec![yes, no];
    spec.attributes = vec![("operandSegmentSizes", dense_i32_attr(ctx, &[1, 0, 0]))];
    spec.build()
}

/// Give a strand block left without a terminator its `func.return`.
fn close_strand_block(block: MlirBlock) {
    let owner = block_parent_op(block);
    if terminator(block).is_none() && op_name(owner) == names::pipeline::STRAND {
        append(
            block,
            OpSpec::new(names::func::RETURN, unknown_location(context(owner))).build(),
        );
    }
}

/// Replace a structured terminator with a branch to `dest` carrying its
/// operands after `extra`.
fn yield_to(yield_op: MlirOperation, dest: MlirBlock, extra: Vec<MlirValue>) {
    let mut args = extra;
    args.extend(operands(yield_op));
    insert_before(yield_op, branch(location(yield_op), dest, args));
    erase(yield_op);
}

/// The facts constant bounds prove about the induction value.
fn facts(low: MlirValue, high: MlirValue, step: MlirValue) -> Option<(i64, i64, Option<i64>)> {
    let (low, high, step) = (constant_int(low)?, constant_int(high)?, constant_int(step)?);
    if step <= 0 || high <= low {
        return None;
    }
    // In i128: `high - low` overflows i64 for bounds of opposite signs near
    // the ends of the range; `last` lies in [low, high) so it fits again.
    let (wide_low, wide_high, wide_step) = (low as i128, high as i128, step as i128);
    let last = wide_low + (wide_high - wide_low - 1) / wide_step * wide_step;
    let last = i64::try_from(last).expect("the last value lies between the bounds");
    let divisor = (step > 1 && low % step == 0).then_some(step);
    Some((low, last, divisor))
}

fn lower_for(for_op: MlirOperation) {
    let ctx = context(for_op);
    let all = operands(for_op);
    let (low, high, step) = (all[0], all[1], all[2]);
    let inits = all[3..].to_vec();
    let body = body(for_op);
    let body_args = arguments(body);
    let induction = body_args[0];
    let known = facts(low, high, step);
    let exit = split_block_after(for_op);
    close_strand_block(exit);
    let before = parent_block(for_op);

    // Header: the induction value (unnamed when an assume takes its
    // name) and the loop-carried values.
    let mut types = vec![index_type(ctx)];
    let mut locations = vec![if known.is_some() {
        unknown_location(ctx)
    } else {
        named_location(ctx, &value_name(induction))
    }];
    for &carried in &body_args[1..] {
        types.push(value_type(carried));
        locations.push(named_location(ctx, &value_name(carried)));
    }
    let header = insert_block_after(before, &types, &locations);
    let header_args = arguments(header);
    let mut compare = OpSpec::new(names::index::CMP, unknown_location(ctx));
    compare.operands = vec![header_args[0], high];
    compare.results = vec![i1_type(ctx)];
    compare.attributes = vec![("predicate", string_attr(ctx, "slt"))];
    let compare = compare.build();
    append(header, compare);
    append(
        header,
        cond_branch(location(for_op), results(compare)[0], body, exit),
    );

    move_block_after(body, header);
    let position = match known {
        Some((first, last, divisor)) => {
            let mut assume = OpSpec::new(
                names::index::ASSUME,
                named_location(ctx, &value_name(induction)),
            );
            assume.operands = vec![header_args[0]];
            assume.results = vec![index_type(ctx)];
            assume.attributes = vec![("range", dense_i64_attr(ctx, &[first, last]))];
            if let Some(divisor) = divisor {
                assume
                    .attributes
                    .push(("multiple_of", i64_attr(ctx, divisor)));
            }
            let assume = assume.build();
            insert_at(body, 0, assume);
            results(assume)[0]
        }
        None => header_args[0],
    };
    replace_all_uses(induction, position);
    for (&carried, &arg) in body_args[1..].iter().zip(&header_args[1..]) {
        replace_all_uses(carried, arg);
    }
    for index in (0..body_args.len()).rev() {
        erase_block_argument(body, index as u32);
    }
    if let Some(yield_op) = terminator(body) {
        let mut add = OpSpec::new(names::index::ADD, unknown_location(ctx));
        add.operands = vec![position, step];
        add.results = vec![index_type(ctx)];
        let add = add.build();
        insert_before(yield_op, add);
        yield_to(yield_op, header, vec![results(add)[0]]);
    }

    let mut entry = vec![low];
    entry.extend(inits);
    insert_before(for_op, branch(location(for_op), header, entry));
    for (result, &arg) in results(for_op).into_iter().zip(&header_args[1..]) {
        replace_all_uses(result, arg);
    }
    erase(for_op);
}

fn lower_if(if_op: MlirOperation) {
    let ctx = context(if_op);
    let exit = split_block_after(if_op);
    close_strand_block(exit);
    for result in results(if_op) {
        let arg = add_block_argument(
            exit,
            value_type(result),
            named_location(ctx, &value_name(result)),
        );
        replace_all_uses(result, arg);
    }
    let before = parent_block(if_op);
    let then_block = body(if_op);
    let else_block = first_block(if_op, 1);
    move_block_after(then_block, before);
    let otherwise = match else_block {
        None => exit,
        Some(else_block) => {
            move_block_after(else_block, then_block);
            else_block
        }
    };
    for block in std::iter::once(then_block).chain(else_block) {
        if let Some(yield_op) = terminator(block) {
            yield_to(yield_op, exit, Vec::new());
        }
    }
    let condition = operands(if_op)[0];
    insert_before(
        if_op,
        cond_branch(location(if_op), condition, then_block, otherwise),
    );
    erase(if_op);
}

/// Whether `op` sits in a function or strand body, which may become a graph
/// of blocks; a pipeline's construction region is one block and keeps its
/// structured ops.
fn in_block_graph(op: MlirOperation) -> bool {
    let mut current = parent_op(op);
    while let Some(parent) = current {
        match op_name(parent).as_str() {
            names::func::DEF | names::pipeline::STRAND => return true,
            names::pipeline::DEF => return false,
            _ => current = parent_op(parent),
        }
    }
    false
}

fn run(module: MlirOperation, _options: &str) -> Result<(), ()> {
    // Outer ops first: lowering one moves its body into the enclosing graph,
    // where the ops nested in it are then lowered in place.
    // Only the structured ops are collected: lowering destroys their yields.
    let structured: Vec<(MlirOperation, bool)> = walk(module)
        .into_iter()
        .filter(|&op| in_block_graph(op))
        .filter_map(|op| match op_name(op).as_str() {
            names::scf::FOR => Some((op, true)),
            names::scf::IF => Some((op, false)),
            _ => None,
        })
        .collect();
    for (op, is_loop) in structured {
        if is_loop {
            lower_for(op)
        } else {
            lower_if(op)
        }
    }
    Ok(())
}
