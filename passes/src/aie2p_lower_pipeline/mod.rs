//! `aie2p-lower-pipeline`: the native realization of an outlined pipeline
//! on its aie2p device profile (the walkthrough's second boundary).
//!
//! The plan (`plan.rs`, its vocabulary in `realization.rs`) checks the placement against the profile: worker
//! selections and memory pools (tile kinds, direct access only to adjacent
//! core-tile memory), each tile's data memory (channel storage, private
//! buffers, worker stacks, alignment), locks, buffer descriptors and DMA
//! channels; and it picks the command-stream strand, the one strand that
//! moves the caller's buffers, and evaluates it: its control flow must be
//! fixed when it is compiled (loops over records are unrolled), with fixed
//! transfer endpoints. Every refusal names the resource, the tile, what was
//! needed and what exists. An endpoint the stream admits repeatedly becomes
//! one ring of records (`ring.rs`: the DMA engine goes round the channel's
//! slots itself). A channel the stream fills or drains with records of at
//! least 1 KiB is striped over both shim channels, a lock pair and half of
//! every slot per lane (`lanes.rs`). A strand that only forwards records
//! between channels runs as DMA between their tiles, without a core
//! (`forward.rs`). The command
//! stream's schedule (`schedule.rs`) picks each
//! transfer's DMA channels and buffer descriptors and moves its waits as
//! late as the program allows, so that transfers run side by side.
//!
//! The rewrite (`rewrite.rs`) turns compute strands into worker functions
//! `@__loom_worker_C_R_N` (tile code: lock credits, storage placed with
//! `aie2p.tile.buffer`) and the pipeline into a public configuration
//! function of the same name targeting an `aie2p.target<configuration>`
//! context: channel storage, lock initialization, stream routes,
//! `aie2p.program.load` and `aie2p.core.enable` of each worker, then the
//! command stream's buffer descriptors, DMA starts and ordered waits.
//! Each worker's loops are then rearranged for its core (unroll-and-jam,
//! unrolling: `crate::worker_loops`), every value computed as before.
//!
//! A module without an unlowered pipeline is left as it is (resume).

mod access;
mod command_stream;
mod cycles;
mod evaluate;
mod forward;
mod joins;
mod lanes;
mod placement;
mod plan;
mod realization;
mod rewrite;
mod ring;
mod schedule;
mod workers;

use crate::diagnostics::error;
use crate::PassInfo;
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;

inventory::submit! {
    PassInfo {
        argument: "aie2p-lower-pipeline",
        description: "Realize outlined pipelines on their aie2p device profile: worker functions and the configuration function",
        takes_options: false,
        changes_ir: true,
        run,
    }
}

fn run(module: MlirOperation, _options: &str) -> Result<(), ()> {
    let symbols = symbols(module);
    let pipelines: Vec<MlirOperation> = top_level_ops(module)
        .into_iter()
        .filter(|&op| op_name(op) == names::pipeline::DEF)
        .collect();
    for pipeline in pipelines {
        let context = symbol_ref(pipeline, "target").and_then(|t| symbols.get(&t).copied());
        let Some(profile_name) = context.and_then(|c| string_attribute(c, "device_profile")) else {
            error(
                location(pipeline),
                "aie2p-lower-pipeline: the pipeline's target has no device profile; run loom-resolve-target{target=amd.xdna.aie2p:PROFILE} first",
            );
            return Err(());
        };
        let Some(profile) = loom_targets::profiles()
            .iter()
            .find(|p| p.name == profile_name)
        else {
            let known: Vec<&str> = loom_targets::profiles()
                .iter()
                .map(|p| p.name.as_str())
                .collect();
            error(
                location(context.expect("a profile comes from a context")),
                &format!(
                    "aie2p-lower-pipeline: unknown device profile `{profile_name}`; known profiles: {}",
                    known.join(", ")
                ),
            );
            return Err(());
        };
        let realized = realization::Plan::of(pipeline, profile)
            .and_then(|plan| rewrite::realize(module, &plan));
        if let Err(refusal) = realized {
            error(refusal.at, &refusal.message);
            return Err(());
        }
    }
    Ok(())
}
