//! Array simulator throughput and modelled performance (`make bench`,
//! docs/PERFORMANCE.md): for the gated projection at K = 512 and 4096 (one
//! record) and at K = 4096 with eight records (the command stream's loops
//! realized as DMA rings), the simulated array cycles per second of host
//! time, the modelled cycles per record, and the roofline bound per record
//! the profile gives: the cycles the column's shim MM2S channels need to
//! bring in the inputs and weights at their full rate
//! (`timing.dma_bytes_per_cycle` each, all channels in parallel); first on
//! the Low IR core (its per-operation model), then with the worker as
//! machine code on the instruction-level core: the worker's machine-code
//! size, bundles and NOP share, the modelled cycles, the worker's cycles,
//! bundles and vector-unit bundles, and the inner loop's `vmac.f` per
//! cycle, measured as the growth in vector-unit bundles over the growth in
//! the worker's issue cycles (its cycles but those stalled on locks, which
//! wait outside the loop) from K = 512 to K = 4096: the bundles K adds are
//! the dot-product loop's turns, whose vector-unit bundles are its
//! `vmac.f`.
//!
//! cargo bench -p loom-tools --bench sim [-- SECONDS]

use loom_driver::{xdna, Session};
use loom_runtime::sim::core::isa::{CoreFigures, IsaCores, Options};
use loom_runtime::sim::run;
use loom_targets::xdna::elf;
use loom_xdna_backend::WorkerCode;
use std::time::{Duration, Instant};

const TARGET: &str = "amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11";

fn main() {
    let budget = Duration::from_secs_f64(
        std::env::args()
            .skip(1)
            .find_map(|a| a.parse().ok())
            .unwrap_or(3.0),
    );
    loom_passes::register_all();
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/gated-projection.loom"
    );
    let eight = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../test/interp/Inputs/eight-records.loom"
    );
    println!("The Low IR core (its per-operation model):");
    println!();
    println!("| K | records | host runs/s | simulated cycles/s of host time | modelled cycles/record | roofline (cycles/record) | modelled / roofline | bound |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
    for (path, k, records) in [
        (example, 512usize, 1usize),
        (example, 4096, 1),
        (eight, 4096, 8),
    ] {
        let artifact = compile(path, k, WorkerCode::LowIr);
        let session = Session::new();
        let program = xdna::tile_program(&session, &artifact, "bench.xdna").expect("translates");
        let args = || {
            vec![
                vec![0u8; 2 * k * records],
                vec![0u8; 4 * k],
                vec![0u8; 4 * records],
            ]
        };
        let outcome =
            run::run(&artifact, &program, args(), run::DEFAULT_MAX_CORE_STEPS).expect("runs");
        let runs = |limit: Duration| {
            let start = Instant::now();
            let mut n = 0u32;
            while start.elapsed() < limit || n < 5 {
                std::hint::black_box(
                    run::run(&artifact, &program, args(), run::DEFAULT_MAX_CORE_STEPS)
                        .expect("runs"),
                );
                n += 1;
            }
            start.elapsed().as_secs_f64() / f64::from(n)
        };
        let seconds = runs(budget);
        let profile = loom_targets::profiles()
            .iter()
            .find(|p| p.name == artifact.profile)
            .expect("the artifact's profile");
        // The invocation's external input: K bf16 inputs per record and
        // 2 x K weights once.
        let input_bytes = (2 * k * records + 4 * k) as u64;
        let channels = u64::from(profile.shim_tile.dma_mm2s_channels);
        let roofline =
            input_bytes.div_ceil(profile.timing.dma_bytes_per_cycle * channels) / records as u64;
        let t = &outcome.timing;
        let per_record = t.cycles / t.records.max(1);
        println!(
            "| {k} | {records} | {:.0} | {:.2e} | {per_record} | {roofline} | {:.2} | {} |",
            1.0 / seconds,
            t.cycles as f64 / seconds,
            per_record as f64 / roofline as f64,
            t.bound
        );
    }
    println!();
    println!(
        "profile {}; host time per run includes building the array and the cores (mean over {:.0} s of runs)",
        TARGET.split(':').nth(1).unwrap_or(TARGET),
        budget.as_secs_f64()
    );
    println!();
    machine_code(example, eight, budget);
}

/// The gated projection with its worker as machine code, on the isa core.
fn machine_code(example: &str, eight: &str, budget: Duration) {
    println!("Machine code on the instruction-level core (hazard checker on):");
    println!();
    println!("| K | records | code bytes | bundles | NOP bundles | modelled cycles | per record | worker cycles | worker bundles | vector-unit bundles | lock stalls | host runs/s | bound |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
    let mut single = Vec::new();
    for (path, k, records) in [
        (example, 512usize, 1usize),
        (example, 4096, 1),
        (eight, 4096, 8),
    ] {
        let artifact = compile(path, k, WorkerCode::Machine);
        let [image] = artifact.tile_images.as_slice() else {
            panic!("the projection has one worker");
        };
        let program = loom_aie2p_isa::elf::read(&image.bytes)
            .expect("a core ELF")
            .program;
        let bundles = loom_aie2p_isa::decode(&program).expect("decodes");
        let nops = bundles
            .iter()
            .filter(|(_, b)| b.instructions.iter().all(|i| i.opcode.is_slot_nop))
            .count();
        let args = || {
            vec![
                vec![0u8; 2 * k * records],
                vec![0u8; 4 * k],
                vec![0u8; 4 * records],
            ]
        };
        let profile = run::profile_of(&artifact).expect("a known profile");
        let once = || {
            let mut cores = IsaCores::new(profile, &artifact.tile_images, Options::default());
            let outcome = run::run_with(&artifact, &mut cores, args()).expect("runs");
            (outcome, cores.figures())
        };
        let (outcome, figures) = once();
        let [worker]: [CoreFigures; 1] = figures.try_into().expect("one core");
        let start = Instant::now();
        let mut n = 0u32;
        while start.elapsed() < budget || n < 3 {
            std::hint::black_box(once());
            n += 1;
        }
        let seconds = start.elapsed().as_secs_f64() / f64::from(n);
        let t = &outcome.timing;
        let stalls: u64 = worker.stalls.values().sum();
        println!(
            "| {k} | {records} | {} | {} | {nops} ({:.0}%) | {} | {} | {} | {} | {} | {stalls} | {:.0} | {} |",
            program.len(),
            bundles.len(),
            100.0 * nops as f64 / bundles.len() as f64,
            t.cycles,
            t.cycles / t.records.max(1),
            worker.cycles,
            worker.bundles,
            worker.vector_bundles,
            1.0 / seconds,
            t.bound
        );
        if records == 1 {
            single.push(worker);
        }
    }
    let [small, large] = single.as_slice() else {
        unreachable!("two single-record runs")
    };
    // Issue cycles: the worker's lock stalls (waiting for the weights,
    // which grow with K) are outside the loop.
    let issuing = |w: &CoreFigures| w.cycles - w.stalls.values().sum::<u64>();
    let macs = large.vector_bundles - small.vector_bundles;
    let cycles = issuing(large) - issuing(small);
    println!();
    println!(
        "inner loop, K = 512 -> 4096: {macs} more vmac.f in {cycles} more issue cycles of the worker: {:.3} vmac.f per cycle \
         ({:.1} cycles per 32-element step of a row; bound of the walkthrough's order: 2 dependent vmac.f a step, \
         3 cycles apart)",
        macs as f64 / cycles as f64,
        2.0 * cycles as f64 / macs as f64
    );
}

/// The projection's artifact at K = `k` with `worker_code` images.
fn compile(path: &str, k: usize, worker_code: WorkerCode) -> elf::Artifact {
    let source = std::fs::read(path).expect("the module exists");
    let session = Session::new();
    let mut module = session.parse(&source, path).expect("verifies").module;
    let config = vec![("ffn_gate_up.input_size".to_string(), k.to_string())];
    let bytes = xdna::compile(
        &session,
        &mut module,
        "@ffn_gate_up_quadratic_bf16",
        TARGET,
        &config,
        worker_code,
    )
    .expect("compiles");
    elf::read(&bytes).expect("reads back")
}
