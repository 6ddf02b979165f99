//! The progress analysis's time on every program in the repository
//! (`make bench`, docs/PERFORMANCE.md): each public pipeline of every `.loom`
//! file under `examples/` and `test/` that parses and verifies is compiled as
//! `loom-compile --root=@P --target=TARGET` does (configuration values at the
//! bottom of their declared range), and `loom-check-progress`'s decision on
//! the outlined module is timed on its own. Each row: the verdict, the
//! analysis's time, the whole compile's time (parse, every pass up to the
//! native module or the refusal, with the analysis among them) and the
//! share. Target (issue 18): the analysis under 10% of the whole compile.
//!
//! cargo bench -p loom-tools --bench progress [-- SECONDS per measurement]

use loom_dialects::{ir, names};
use loom_driver::compile::{self, Request};
use loom_driver::Session;
use loom_passes::loom_check_progress::{decide, Verdict, MAX_STATES};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const TARGET: &str = "amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11";

/// Median seconds of `run`, repeated for `budget` (at least 5 times).
fn median(budget: Duration, mut run: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut times = Vec::new();
    while start.elapsed() < budget || times.len() < 5 {
        let t = Instant::now();
        run();
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn loom_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            loom_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "loom") {
            found.push(path);
        }
    }
}

/// The values of each `config.def` at the bottom and at the top of its
/// range (multiples of its divisor): one configuration, or two when the
/// module declares values.
fn configurations(module: mlir_sys::MlirOperation) -> Vec<Vec<(String, String)>> {
    let mut low = Vec::new();
    let mut high = Vec::new();
    for op in ir::walk(module) {
        if ir::op_name(op) != names::config::DEF {
            continue;
        }
        let Some(name) = ir::symbol_name(op) else {
            continue;
        };
        let range = ir::attribute(op, "range").map(ir::dense_i64_values);
        let (lo, hi) = match range.as_deref() {
            Some(&[lo, hi]) => (lo, hi),
            _ => (1, 1),
        };
        let divisor = ir::int_attribute(op, "multiple_of").unwrap_or(1).max(1);
        low.push((
            name.clone(),
            (lo + (divisor - lo.rem_euclid(divisor)) % divisor).to_string(),
        ));
        high.push((name, (hi - hi.rem_euclid(divisor)).to_string()));
    }
    if low.is_empty() {
        vec![low]
    } else {
        vec![low, high]
    }
}

fn main() {
    let budget = Duration::from_secs_f64(
        std::env::args()
            .skip(1)
            .find_map(|a| a.parse().ok())
            .unwrap_or(0.3),
    );
    loom_passes::register_all();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    loom_files(&root.join("examples"), &mut files);
    loom_files(&root.join("test"), &mut files);
    println!("| program (configuration) | verdict | analysis (ms) | whole compile (ms) | analysis / compile |");
    println!("| --- | --- | ---: | ---: | ---: |");
    let (mut worst, mut programs, mut skipped) = (0f64, 0, 0);
    for path in files {
        let shown = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let source = std::fs::read(&path).expect("a file that was listed");
        let session = Session::new();
        let Ok(parsed) = session.parse(&source, &shown) else {
            skipped += 1; // an invalid-input test
            continue;
        };
        let top = ir::top_level_ops(parsed.module.as_operation().to_raw());
        let configs = configurations(parsed.module.as_operation().to_raw());
        let roots: Vec<String> = top
            .iter()
            .filter(|&&op| {
                ir::op_name(op) == names::pipeline::DEF
                    && ir::string_attribute(op, "sym_visibility").as_deref() == Some("public")
            })
            .filter_map(|&op| ir::symbol_name(op))
            .collect();
        drop(parsed);
        for (name, config) in roots
            .iter()
            .flat_map(|r| configs.iter().map(move |c| (r.clone(), c.clone())))
        {
            let shown_config: Vec<String> =
                config.iter().map(|(n, v)| format!("{n}={v}")).collect();
            let label = if shown_config.is_empty() {
                format!("{shown} @{name}")
            } else {
                format!("{shown} @{name} ({})", shown_config.join(", "))
            };
            let request = Request {
                root: &name,
                target: Some(TARGET),
                config: &config,
                lower: true,
            };
            // The outlined module, to decide on.
            let mut module = session
                .parse(&source, &shown)
                .expect("parsed before")
                .module;
            let stage = compile::Stage::of(&module);
            let Ok(steps) = compile::plan(&request, &module, stage) else {
                continue;
            };
            let before: Vec<_> = steps
                .iter()
                .take_while(|s| s.pass != "loom-check-progress")
                .cloned()
                .collect();
            if compile::run(&session, &mut module, &before, &mut |_, _| Ok(())).is_err() {
                println!("| {label} | refused before the analysis | | | |");
                continue;
            }
            let Some(pipeline) = ir::top_level_ops(module.as_operation().to_raw())
                .into_iter()
                .find(|&op| ir::op_name(op) == names::pipeline::DEF)
            else {
                continue;
            };
            let verdict = match decide(pipeline, &|_| None, MAX_STATES) {
                Verdict::Completes { tasks, states } => {
                    format!("proven: {tasks} strand tasks, {states} states")
                }
                Verdict::Deadlock { schedule, .. } => {
                    format!("deadlock after {} channel actions", schedule.len())
                }
                Verdict::Undecided(report) => format!("not decided: {}", report.message),
            };
            let analysis = median(budget, || {
                std::hint::black_box(decide(pipeline, &|_| None, MAX_STATES));
            });
            let whole = median(budget, || {
                let mut module = session
                    .parse(&source, &shown)
                    .expect("parsed before")
                    .module;
                let _ = compile::run(&session, &mut module, &steps, &mut |_, _| Ok(()));
                let _ = session.take_diagnostics();
            });
            let share = analysis / whole;
            worst = worst.max(share);
            programs += 1;
            println!(
                "| {label} | {} | {:.3} | {:.3} | {:.1}% |",
                verdict.replace('|', "/"),
                analysis * 1e3,
                whole * 1e3,
                share * 100.0
            );
        }
        let _ = session.take_diagnostics();
    }
    println!();
    println!(
        "{programs} pipelines decided ({skipped} files are invalid-input tests that do not verify); the analysis takes at most {:.1}% of a whole compile (target: under 10%)",
        worst * 100.0
    );
}
