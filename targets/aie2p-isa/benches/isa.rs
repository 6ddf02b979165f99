//! Instruction-set throughput (`make bench`, docs/PERFORMANCE.md): decode,
//! encode, print and parse of llvm-aie's golden bundles (data/golden.json),
//! in bundles per second, each as a ratio against a reference measured in
//! the same run: a scan that sums the same bytes.
//!
//! cargo bench -p loom-aie2p-isa --bench isa [-- SECONDS]

use loom_aie2p_isa::{decode, parse_bundle, print_bundle, Bundle};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Runs of `f` per second over `budget`.
fn rate(budget: Duration, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut runs = 0u64;
    while start.elapsed() < budget {
        f();
        runs += 1;
    }
    runs as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let budget = Duration::from_secs_f64(
        std::env::args()
            .skip(1)
            .find_map(|a| a.parse().ok())
            .unwrap_or(1.0),
    );
    let golden: serde_json::Value =
        serde_json::from_str(include_str!("../data/golden.json")).expect("golden.json reads");
    let bytes: Vec<u8> = golden["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .flat_map(|p| {
            p["bytes"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .map(|b| u8::from_str_radix(b, 16).unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    let bundles: Vec<Bundle> = decode(&bytes)
        .expect("decodes")
        .into_iter()
        .map(|(_, b)| b)
        .collect();
    let texts: Vec<String> = bundles.iter().map(print_bundle).collect();
    let n = bundles.len() as f64;

    let scan = rate(budget, || {
        black_box(
            bytes
                .iter()
                .fold(0u64, |s, &b| s.wrapping_add(u64::from(b))),
        );
    });
    let decode_rate = rate(budget, || {
        black_box(decode(black_box(&bytes)).unwrap());
    });
    let encode_rate = rate(budget, || {
        for b in &bundles {
            black_box(b.encode().unwrap());
        }
    });
    let print_rate = rate(budget, || {
        for b in &bundles {
            black_box(print_bundle(b));
        }
    });
    let parse_rate = rate(budget, || {
        for t in &texts {
            black_box(Bundle::pack(parse_bundle(t).unwrap()).unwrap());
        }
    });
    println!(
        "{} bundles, {} bytes; reference: a scan summing the bytes, {:.0} scans/s",
        bundles.len(),
        bytes.len(),
        scan
    );
    println!("| operation | bundles/s | time relative to the scan |");
    println!("| --- | ---: | ---: |");
    for (what, per_second) in [
        ("decode", decode_rate),
        ("encode", encode_rate),
        ("print", print_rate),
        ("parse and pack", parse_rate),
    ] {
        println!(
            "| {what} | {:.0} | {:.0}x |",
            per_second * n,
            scan / per_second
        );
    }
}
