//! Array simulator throughput and modelled performance (`make bench`,
//! docs/PERFORMANCE.md): for the gated projection at K = 512 and 4096 (one
//! record) and at K = 4096 with eight records (the command stream's loops
//! realized as DMA rings), the simulated array cycles per second of host
//! time, the modelled cycles per record, and the roofline bound per record
//! the profile gives: the cycles the column's shim MM2S channels need to
//! bring in the inputs and weights at their full rate
//! (`timing.dma_bytes_per_cycle` each, all channels in parallel).
//!
//! cargo bench -p loom-tools --bench sim [-- SECONDS]

use loom_driver::{xdna, Session};
use loom_runtime::sim::run;
use loom_targets::xdna::elf;
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
    println!("| K | records | host runs/s | simulated cycles/s of host time | modelled cycles/record | roofline (cycles/record) | modelled / roofline | bound |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
    for (path, k, records) in [
        (example, 512usize, 1usize),
        (example, 4096, 1),
        (eight, 4096, 8),
    ] {
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
            // This bench measures the Low IR core (the isa core's is
            // runtime/benches/isa_core.rs).
            loom_xdna_backend::WorkerCode::LowIr,
        )
        .expect("compiles");
        let artifact = elf::read(&bytes).expect("reads back");
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
}
