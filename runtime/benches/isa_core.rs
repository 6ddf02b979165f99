//! The instruction-level core's speed (`make bench`, docs/PERFORMANCE.md,
//! "The instruction-level core"): simulated bundles per host second on
//! three machine-code programs run on `IsaCores` with the hazard checker
//! on, each against a plain Rust computation of the same result measured
//! in the same run (the bench first checks that both give the same bytes).
//! Issue 17 aims at 10^7 bundles per host second.
//!
//! cargo bench -p loom-runtime --bench isa_core [-- SECONDS] [NAME]
//!
//! (SECONDS per measurement, default 1; NAME runs only the programs whose
//! name contains it, e.g. to profile one.)

use loom_aie2p_isa::elf::{self, CoreImage, DataSegment, OWN_DATA_VIEW};
use loom_aie2p_isa::{parse_bundle, Bundle};
use loom_runtime::numerics::{bf16_to_f32, f32_to_bf16};
use loom_runtime::sim::array::Array;
use loom_runtime::sim::core::isa::{IsaCores, Options, ProgramSource};
use loom_runtime::sim::core::Cores;
use loom_targets::xdna::elf::TileImage;
use loom_targets::{DeviceProfile, Tile};
use std::hint::black_box;
use std::time::{Duration, Instant};

const CORE: Tile = Tile::new(0, 3);

/// Bundles between a control transfer and its effect.
const DELAY_SLOTS: usize = 5;

fn strix() -> &'static DeviceProfile {
    loom_targets::profiles()
        .iter()
        .find(|p| p.name == "amd.xdna.strix.17f0_10")
        .expect("the Strix profile")
}

fn bundle(text: &str) -> Vec<u8> {
    Bundle::pack(parse_bundle(text).unwrap_or_else(|e| panic!("{text}: {e:?}")))
        .and_then(|b| b.encode())
        .unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

/// Machine code of `lines`, one bundle a line: `.align` pads with NOPs to
/// a 16-byte line (jump targets start one), `name:` labels the next
/// bundle and `@name` is its address.
fn assemble(lines: &[&str]) -> Vec<u8> {
    let pass = |labels: &[(String, usize)]| {
        let (mut out, mut found) = (Vec::new(), Vec::new());
        for line in lines {
            if let Some(label) = line.strip_suffix(':') {
                found.push((label.to_string(), out.len()));
            } else if *line == ".align" {
                while out.len() % 16 != 0 {
                    out.extend(bundle("nop"));
                }
            } else {
                let mut text = line.to_string();
                for (name, at) in labels {
                    text = text.replace(&format!("@{name}"), &at.to_string());
                }
                // The first pass: address 0 for the label (at the line's
                // end), which encodes in the same size.
                if let Some((head, _)) = text.split_once('@') {
                    text = format!("{head}0");
                }
                out.extend(bundle(&text));
            }
        }
        (out, found)
    };
    let (_, labels) = pass(&[]);
    pass(&labels).0
}

/// One program: its core ELF, where its result is in the core's memory, and
/// the plain Rust computation of the result's bytes.
struct Program {
    name: &'static str,
    elf: Vec<u8>,
    /// Where in the core's memory its result is, and how long.
    result: (usize, usize),
    plain: fn() -> Vec<u8>,
}

/// The loop-closing `jnz` and its delay slots, each line of `slots` one
/// (NOPs for the rest).
fn close(lines: &mut Vec<String>, counter: &str, label: &str, slots: &[&str]) {
    lines.push(format!("jnz {counter}, #@{label}"));
    for k in 0..DELAY_SLOTS {
        lines.push(slots.get(k).copied().unwrap_or("nop").to_string());
    }
}

fn core_elf(lines: &[String], data: Vec<DataSegment>) -> Vec<u8> {
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    elf::write(&CoreImage {
        program: assemble(&lines),
        data,
        entry: 0,
    })
    .expect("a core ELF")
}

// The scalar counted loop: r1 += r0 for r0 = N down to 1, the delay slots
// NOPs (the loop of the former probe test, so figures stay comparable).
const SCALAR_N: u32 = 64_000;
const SCALAR_OUT: usize = 0x100;

fn scalar() -> Program {
    let mut lines: Vec<String> = [
        format!("movxm r0, #{SCALAR_N}"),
        "movx r1, #0".into(),
        format!("movxm p0, #{}", OWN_DATA_VIEW as usize + SCALAR_OUT),
        ".align".into(),
        "loop:".into(),
        "add r1, r1, r0".into(),
        "add r0, r0, #-1".into(),
    ]
    .into();
    close(&mut lines, "r0", "loop", &[]);
    lines.extend(["st r1, [p0, #0]".into(), "done".into()]);
    Program {
        name: "scalar counted loop",
        elf: core_elf(&lines, vec![]),
        result: (SCALAR_OUT, 4),
        plain: || {
            let mut sum = 0u32;
            for r0 in (1..=black_box(SCALAR_N)).rev() {
                sum = sum.wrapping_add(black_box(r0));
            }
            sum.to_le_bytes().to_vec()
        },
    }
}

// The load/store loop: a running sum of WORDS words, stored word by word,
// PASSES times over the same buffers; word j's slot gets the sum of the
// words before it (the sum carries across passes). `lda` lands 7 cycles
// after issue, so the add is the last delay slot.
const WORDS: u32 = 1024;
const WORD_PASSES: u32 = 64;
const WORDS_IN: usize = 0x400;
const WORDS_OUT: usize = 0x2000;

fn input_words() -> Vec<u32> {
    (0..WORDS)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect()
}

fn loads_and_stores() -> Program {
    let mut lines: Vec<String> = [
        format!("movxm r4, #{WORD_PASSES}"),
        "movx r1, #0".into(),
        ".align".into(),
        "pass:".into(),
        format!("movxm p0, #{}", OWN_DATA_VIEW as usize + WORDS_IN),
        format!("movxm p1, #{}", OWN_DATA_VIEW as usize + WORDS_OUT),
        format!("movxm r0, #{WORDS}"),
        ".align".into(),
        "word:".into(),
        "lda r3, [p0], #4 ; add r0, r0, #-1".into(),
        "st r1, [p1], #4".into(),
    ]
    .into();
    close(
        &mut lines,
        "r0",
        "word",
        &["nop", "nop", "nop", "nop", "add r1, r1, r3"],
    );
    lines.push("add r4, r4, #-1".into());
    close(&mut lines, "r4", "pass", &[]);
    lines.push("done".into());
    let bytes: Vec<u8> = input_words().iter().flat_map(|w| w.to_le_bytes()).collect();
    let data = vec![DataSegment {
        address: OWN_DATA_VIEW + WORDS_IN as u32,
        bytes,
        zeroed: 0,
    }];
    Program {
        name: "load/store loop",
        elf: core_elf(&lines, data),
        result: (WORDS_OUT, 4 * WORDS as usize),
        plain: || {
            let input = input_words();
            let mut sum = 0u32;
            let mut out = vec![0u32; WORDS as usize];
            for _ in 0..black_box(WORD_PASSES) {
                for (word, slot) in input.iter().zip(&mut out) {
                    *slot = sum;
                    sum = sum.wrapping_add(black_box(*word));
                }
            }
            out.iter().flat_map(|w| w.to_le_bytes()).collect()
        },
    }
}

// The bf16 dot product: 32 f32 lanes accumulated by `vmac.f` over VECTORS
// pairs of 32-element bf16 vectors, PASSES times over the same buffers;
// the loads land 7 cycles after issue, so `vmac.f` is the last delay slot.
const VECTORS: u32 = 128;
const VECTOR_PASSES: u32 = 512;
const VECTOR_A: usize = 0x400;
const VECTOR_B: usize = 0x2400;
const LANES_OUT: usize = 0x4400;

fn bf16_values(seed: u32) -> Vec<u16> {
    let mut state = seed;
    (0..32 * VECTORS)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            f32_to_bf16(((state >> 8) as f32 / (1u32 << 24) as f32) * 2.0 - 1.0)
        })
        .collect()
}

fn dot_product() -> Program {
    let mut lines: Vec<String> = [
        format!("movxm r4, #{VECTOR_PASSES}"),
        "movx r5, #60".into(), // mode word 0x3C: bf16 products, f32 lanes
        "vclr dm0".into(),
        "vclr dm1".into(),
        ".align".into(),
        "pass:".into(),
        format!("movxm p0, #{}", OWN_DATA_VIEW as usize + VECTOR_A),
        format!("movxm p1, #{}", OWN_DATA_VIEW as usize + VECTOR_B),
        format!("movxm r0, #{VECTORS}"),
        ".align".into(),
        "vector:".into(),
        "vlda x0, [p0], #64 ; vldb x1, [p1], #64 ; add r0, r0, #-1".into(),
        "nop".into(),
    ]
    .into();
    close(
        &mut lines,
        "r0",
        "vector",
        &["nop", "nop", "nop", "nop", "vmac.f dm0, dm0, x0, x1, r5"],
    );
    lines.push("add r4, r4, #-1".into());
    close(&mut lines, "r4", "pass", &[]);
    lines.extend([
        format!("movxm p2, #{}", OWN_DATA_VIEW as usize + LANES_OUT),
        "nop".into(),
        "vst bmll0, [p2, #0]".into(),
        "vst bmlh0, [p2, #64]".into(),
        "done".into(),
    ]);
    let mut bytes: Vec<u8> = bf16_values(1)
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    bytes.resize(VECTOR_B - VECTOR_A, 0);
    bytes.extend(bf16_values(2).iter().flat_map(|v| v.to_le_bytes()));
    let data = vec![DataSegment {
        address: OWN_DATA_VIEW + VECTOR_A as u32,
        bytes,
        zeroed: 0,
    }];
    Program {
        name: "bf16 dot product (vmac.f)",
        elf: core_elf(&lines, data),
        result: (LANES_OUT, 128),
        plain: || {
            let (a, b) = (bf16_values(1), bf16_values(2));
            let mut lanes = [0f32; 32];
            for _ in 0..black_box(VECTOR_PASSES) {
                for (x, y) in a.chunks(32).zip(b.chunks(32)) {
                    for (lane, (p, q)) in lanes.iter_mut().zip(x.iter().zip(y)) {
                        *lane += bf16_to_f32(*p) * bf16_to_f32(*q);
                    }
                }
                black_box(&mut lanes);
            }
            lanes.iter().flat_map(|v| v.to_le_bytes()).collect()
        },
    }
}

/// This thread's CPU time in seconds: on this shared machine a run's wall
/// time includes waits for the other sessions' processes.
fn cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Seconds per run of `f` over about `budget`, wall and CPU (each the
/// median, at least 5 runs).
fn time<T>(budget: Duration, mut f: impl FnMut() -> T) -> (f64, f64) {
    black_box(f());
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    let start = Instant::now();
    while start.elapsed() < budget || wall.len() < 5 {
        let (t, c) = (Instant::now(), cpu_seconds());
        black_box(f());
        cpu.push(cpu_seconds() - c);
        wall.push(t.elapsed().as_secs_f64());
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).expect("finite"));
        v[v.len() / 2]
    };
    (median(wall), median(cpu))
}

/// A run of `program` from its ELF to its finish (the array, the core and
/// the load included): bundles issued and the result's bytes.
fn simulate(program: &Program) -> (u64, Vec<u8>) {
    let images = [TileImage {
        column: CORE.column,
        row: CORE.row,
        name: "worker".into(),
        bytes: program.elf.clone(),
    }];
    let options = Options {
        program: ProgramSource::TileImage,
        ..Options::default()
    };
    let mut cores = IsaCores::new(strix(), &images, options);
    let mut array = Array::new(strix());
    cores.start("worker", CORE, 0).expect("starts");
    while cores.run(&mut array).unwrap_or_else(|e| panic!("{e}")) {}
    assert!(cores.unfinished().is_empty(), "{:?}", cores.unfinished());
    let bundles = cores.figures()[0].bundles;
    let (at, len) = program.result;
    (
        bundles,
        cores.tile_memory(CORE, 0x1_0000)[at..at + len].to_vec(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let budget = Duration::from_secs_f64(args.iter().find_map(|a| a.parse().ok()).unwrap_or(1.0));
    // Cargo passes `--bench`; a word that is no number picks programs.
    let only = args
        .iter()
        .find(|a| !a.starts_with("--") && a.parse::<f64>().is_err());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "hazard checker on; load average at start: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "| program | bundles per run | isa core (bundles/s) | per CPU second | plain Rust (runs/s) \
         | isa core / plain Rust (time) |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    let mut slowest = f64::INFINITY;
    let programs = [scalar(), loads_and_stores(), dot_product()];
    for program in programs
        .iter()
        .filter(|p| only.is_none_or(|o| p.name.contains(o.as_str())))
    {
        let (bundles, got) = simulate(program);
        assert_eq!(
            got,
            (program.plain)(),
            "{}: the isa core and plain Rust",
            program.name
        );
        let (core, core_cpu) = time(budget, || simulate(program));
        let (plain, _) = time(budget, program.plain);
        let per_second = bundles as f64 / core;
        slowest = slowest.min(per_second);
        println!(
            "| {} | {bundles} | {per_second:.3e} | {:.3e} | {:.0} | {:.0}x |",
            program.name,
            bundles as f64 / core_cpu,
            1.0 / plain,
            core / plain
        );
    }
    println!(
        "target (issue 17): >= 1e7 bundles/s on each program: {}",
        if slowest >= 1e7 { "met" } else { "not met" }
    );
}
