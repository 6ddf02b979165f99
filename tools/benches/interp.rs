//! Interpreter throughput (`make bench`, docs/PERFORMANCE.md): records per
//! second of the gated projection at K = 4096, one record per invocation and
//! eight records per invocation, against a plain Rust implementation of the
//! same arithmetic measured in the same run. Both produce the same bits (the
//! bench checks it before timing).
//!
//! cargo bench -p loom-tools --bench interp [-- SECONDS]

use loom_driver::compile::{self, Request, Step};
use loom_driver::Session;
use loom_runtime::interp::{self, Options};
use loom_runtime::numerics::{bf16_to_f32, f32_to_bf16};
use std::time::{Duration, Instant};

const K: usize = 4096;

/// The projection of one record, written directly: 16 F32 lanes per row in
/// dot2f order, the lane sum, then the BF16 epilogue.
fn plain(input: &[u16], weights: &[u16]) -> f32 {
    let mut sums = [0f32; 2];
    for (row, sum) in sums.iter_mut().enumerate() {
        let w = &weights[row * K..(row + 1) * K];
        let mut acc = [0f32; 16];
        for p in (0..K).step_by(32) {
            for (i, lane) in acc.iter_mut().enumerate() {
                let a = bf16_to_f32(input[p + 2 * i]) * bf16_to_f32(w[p + 2 * i]);
                let b = bf16_to_f32(input[p + 2 * i + 1]) * bf16_to_f32(w[p + 2 * i + 1]);
                *lane = (*lane + a) + b;
            }
        }
        *sum = acc.iter().fold(0.0, |s, x| s + x);
    }
    let mul = |a: u16, b: u16| f32_to_bf16((0.0 + bf16_to_f32(a) * bf16_to_f32(b)) + 0.0 * 0.0);
    let (gate, up) = (f32_to_bf16(sums[0]), f32_to_bf16(sums[1]));
    let linear = mul(gate, f32_to_bf16(0.25));
    let scale = f32_to_bf16(0.5 + bf16_to_f32(linear));
    bf16_to_f32(mul(mul(gate, scale), up))
}

fn data(count: usize, seed: u64) -> Vec<u16> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            f32_to_bf16(((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
        })
        .collect()
}

fn bytes(values: &[u16]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Runs of `f` for about `budget`; seconds per run (median of batches).
fn time(budget: Duration, mut f: impl FnMut()) -> f64 {
    f();
    let mut samples = Vec::new();
    let start = Instant::now();
    while start.elapsed() < budget || samples.len() < 5 {
        let t = Instant::now();
        f();
        samples.push(t.elapsed().as_secs_f64());
    }
    samples.sort_by(|a, b| a.partial_cmp(b).expect("finite"));
    samples[samples.len() / 2]
}

fn main() {
    let budget = Duration::from_secs_f64(
        std::env::args()
            .skip(1)
            .find_map(|a| a.parse().ok())
            .unwrap_or(3.0),
    );
    loom_passes::register_all();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    println!("| invocation | interpreter (records/s) | plain Rust (records/s) | interpreter / plain Rust (time) |");
    println!("| --- | ---: | ---: | ---: |");
    for (file, records) in [
        ("examples/gated-projection.loom", 1usize),
        ("test/interp/Inputs/eight-records.loom", 8),
    ] {
        let path = format!("{root}/{file}");
        let source = std::fs::read(&path).expect("the bench inputs exist");
        let session = Session::new();
        let mut module = session
            .parse(&source, &path)
            .expect("the bench input verifies")
            .module;
        let config = vec![("ffn_gate_up.input_size".to_string(), K.to_string())];
        let request = Request {
            root: "@ffn_gate_up_quadratic_bf16",
            target: None,
            config: &config,
            lower: false,
        };
        // The outlined module: what the compiler hands to every device.
        let steps: Vec<Step> = compile::plan(&request, &module, compile::Stage::of(&module))
            .expect("the bench module compiles");
        compile::run(&session, &mut module, &steps, &mut |_, _| Ok(())).expect("compiles");
        let program =
            loom_translate::translate(module.as_operation().to_raw()).expect("translates");
        let input = data(records * K, 1);
        let weights = data(2 * K, 2);
        let invoke = || {
            let args = vec![bytes(&input), bytes(&weights), vec![0u8; 4 * records]];
            interp::run(
                &program,
                "ffn_gate_up_quadratic_bf16",
                args,
                Options::default(),
            )
            .expect("runs")
        };
        let outcome = invoke();
        for r in 0..records {
            let got = f32::from_le_bytes(
                outcome.buffers[2][4 * r..4 * r + 4]
                    .try_into()
                    .expect("4 bytes"),
            );
            let want = plain(&input[r * K..(r + 1) * K], &weights);
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "record {r}: interpreter and plain Rust differ"
            );
        }
        let interp_s = time(budget, || {
            std::hint::black_box(invoke());
        });
        let plain_s = time(budget, || {
            for r in 0..records {
                std::hint::black_box(plain(
                    std::hint::black_box(&input[r * K..(r + 1) * K]),
                    &weights,
                ));
            }
        });
        println!(
            "| K = {K}, {records} record{} | {:.0} | {:.0} | {:.1}x |",
            if records > 1 { "s" } else { "" },
            records as f64 / interp_s,
            records as f64 / plain_s,
            interp_s / plain_s
        );
    }
    println!();
    println!("median of timed runs over {:.0} s per measurement; interpreter runs include buffer setup, not parsing or compiling", budget.as_secs_f64());
}
