//! loom-test: execute the scenarios of a checked pipeline on a device and
//! compare the results. Scenarios are `// TEST-...` directives in the
//! `.loom` file (docs/checked-pipelines.md).

use clap::{Parser, ValueEnum};
use loom_driver::compile::{self, Request};
use loom_driver::scenario::{self, Scenario};
use loom_driver::{diagnostic, read_input, Failure, Session};
use loom_runtime::interp::{self, Options, Schedule};
use melior::ir::Module;
use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Device {
    /// An attached NPU if there is one, else the best simulated device.
    Auto,
    /// The reference interpreter.
    Interp,
    /// The AIE2P array simulator (not built yet).
    Sim,
    /// An NPU through the amdxdna driver (not built yet).
    Xdna,
}

#[derive(Parser)]
#[command(
    name = "loom-test",
    version,
    about = "Run the scenarios of a checked Loom pipeline and compare the results"
)]
struct Args {
    /// A `.loom` file with `// TEST-SCENARIO:` directives.
    input: String,
    /// Where to run.
    #[arg(long, value_enum, default_value = "auto")]
    device: Device,
    /// Run only this scenario (repeatable).
    #[arg(long = "scenario", value_name = "NAME")]
    scenarios: Vec<String>,
    /// Read the scenarios from this file instead of the input (for running
    /// the same scenarios on a compiled module).
    #[arg(long = "scenario-file", value_name = "FILE")]
    scenario_file: Option<String>,
    /// Directory that `npy(...)` paths are relative to (default: the
    /// directory of the file holding the scenarios).
    #[arg(long = "data-dir", value_name = "DIR")]
    data_dir: Option<String>,
    /// `deterministic`, or `random:SEED` for a seeded random interleaving.
    #[arg(long, default_value = "deterministic")]
    schedule: String,
    /// Stop a run as runaway after this many ops.
    #[arg(long = "max-steps", value_name = "N", default_value_t = Options::default().max_steps)]
    max_steps: u64,
    /// Also run every scenario after each pass of the compile pipeline and
    /// require identical results (the differential check of each pass).
    #[arg(long = "each-pass")]
    each_pass: bool,
}

/// The caller's buffers of one run, by argument name.
type Buffers = Vec<(String, Vec<u8>)>;

/// The file the scenarios come from, for errors located at a directive.
struct Directives<'a> {
    path: &'a str,
    text: &'a str,
}

impl Directives<'_> {
    /// `path:line:1: error: message`, the directive's line and a caret.
    fn error(&self, line: usize, message: &str) -> String {
        format!(
            "{}:{line}:1: error: {message}\n{}\n^\n",
            self.path,
            self.text.lines().nth(line.wrapping_sub(1)).unwrap_or("")
        )
    }
}

fn parse_schedule(text: &str) -> Result<Schedule, Failure> {
    if text == "deterministic" {
        return Ok(Schedule::Deterministic);
    }
    text.strip_prefix("random:")
        .and_then(|s| s.parse().ok())
        .map(Schedule::Random)
        .ok_or_else(|| {
            Failure(format!(
                "loom-test: error: --schedule={text}: use deterministic or random:SEED\n"
            ))
        })
}

/// Pick the device; say which and why when it was not asked for by name.
fn choose_device(device: Device) -> Result<(), Failure> {
    match device {
        Device::Interp => Ok(()),
        Device::Auto => {
            let nodes: Vec<String> = std::fs::read_dir("/dev/accel")
                .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path().display().to_string()).collect())
                .unwrap_or_default();
            let npu = if nodes.is_empty() {
                "no /dev/accel/accel* node".to_string()
            } else {
                format!("{} present, but the xdna device is not built yet", nodes.join(", "))
            };
            println!("device: interp (auto: {npu}; the array simulator is not built yet)");
            Ok(())
        }
        Device::Sim => Err(Failure(
            "loom-test: error: --device=sim is not implemented yet (the AIE2P array simulator); use --device=interp\n".into(),
        )),
        Device::Xdna => Err(Failure(
            "loom-test: error: --device=xdna is not implemented yet (the amdxdna HAL); use --device=interp\n".into(),
        )),
    }
}

/// Run `scenario` on `module`; the buffers after the run, or the rendered
/// runtime error.
fn execute(
    module: &Module,
    scenario: &Scenario,
    base: &Options,
    directives: &Directives,
) -> Result<(Buffers, u64, usize), String> {
    let program = interp::translate(module.as_operation().to_raw())
        .map_err(|e| diagnostic::render(&e.loc, "error", &e.message, &[]))?;
    let Some(pipeline) = program.pipelines.get(&scenario.entry) else {
        let mut known: Vec<String> = program.pipelines.keys().map(|k| format!("@{k}")).collect();
        known.sort();
        return Err(directives.error(
            scenario.line,
            &format!(
                "no pipeline @{}; the module has {}",
                scenario.entry,
                known.join(", ")
            ),
        ));
    };
    if let Some(extra) = scenario
        .bindings
        .keys()
        .find(|k| !pipeline.run_args.contains(k))
    {
        return Err(directives.error(
            scenario
                .bind_lines
                .get(extra)
                .copied()
                .unwrap_or(scenario.line),
            &format!(
                "scenario `{}` binds %{extra}, which @{} does not take (it takes {})",
                scenario.name,
                scenario.entry,
                pipeline
                    .run_args
                    .iter()
                    .map(|a| format!("%{a}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let mut args = Vec::new();
    for name in &pipeline.run_args {
        let Some(data) = scenario.bindings.get(name) else {
            return Err(directives.error(
                scenario.line,
                &format!("scenario `{}` binds no data to %{name}", scenario.name),
            ));
        };
        args.push(data.bytes.clone());
    }
    let names = pipeline.run_args.clone();
    let options = Options {
        config: scenario.config.iter().cloned().collect::<HashMap<_, _>>(),
        ..base.clone()
    };
    let outcome = interp::run(&program, &scenario.entry, args, options).map_err(|e| {
        // The checks at completion report every violation they find.
        std::iter::once(&e)
            .chain(&e.further)
            .map(|e| diagnostic::render(&e.loc, "error", &e.message, &e.notes))
            .collect::<String>()
    })?;
    Ok((
        names.into_iter().zip(outcome.buffers).collect(),
        outcome.steps,
        outcome.strands,
    ))
}

/// Compare against the expectations; the report lines of what differs.
fn compare(scenario: &Scenario, buffers: &Buffers) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, expectation) in &scenario.expectations {
        let Some((_, actual)) = buffers.iter().find(|(n, _)| n == name) else {
            lines.push(format!("  %{name}: not an argument of @{}", scenario.entry));
            continue;
        };
        if actual.len() != expectation.data.bytes.len() {
            lines.push(format!(
                "  %{name}: expected {} bytes, the buffer has {}",
                expectation.data.bytes.len(),
                actual.len()
            ));
            continue;
        }
        let wrong = scenario::mismatches(expectation, actual);
        if wrong.is_empty() {
            continue;
        }
        let element = expectation.data.element;
        let count = expectation.data.bytes.len() / element.size();
        lines.push(format!(
            "  %{name}: {} of {count} {} elements differ ({})",
            wrong.len(),
            element.name(),
            expectation.tolerance
        ));
        let width = element.size() * 2;
        for (i, (ev, eb), (av, ab)) in wrong.iter().take(10) {
            lines.push(format!(
                "    [{i}] expected {ev} (0x{eb:0width$x}), got {av} (0x{ab:0width$x})"
            ));
        }
        if wrong.len() > 10 {
            lines.push(format!("    ... and {} more", wrong.len() - 10));
        }
    }
    lines
}

/// Run every stage the compile pipeline produces and compare each with the
/// source stage's buffers, byte for byte.
fn differential(
    source: &[u8],
    name: &str,
    scenario: &Scenario,
    base: &Options,
    reference: &Buffers,
    directives: &Directives,
) -> Result<usize, String> {
    let session = Session::new();
    let mut parsed = session.parse(source, name).map_err(|f| f.0)?;
    let config: Vec<(String, String)> = scenario
        .config
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect();
    let request = Request {
        root: &scenario.entry,
        target: None,
        config: &config,
        lower: false,
    };
    let steps = compile::plan(&request, &parsed.module);
    let mut problem = None;
    compile::run(&session, &mut parsed.module, &steps, &mut |step, module| {
        if problem.is_some() {
            return Ok(());
        }
        match execute(module, scenario, base, directives) {
            Ok((buffers, _, _)) if &buffers == reference => {}
            Ok((buffers, _, _)) => {
                let differing: Vec<String> = buffers
                    .iter()
                    .zip(reference)
                    .filter(|(a, b)| a != b)
                    .map(|((n, _), _)| format!("%{n}"))
                    .collect();
                problem = Some(format!(
                    "  after {}: {} differ from the source's results\n",
                    step.pass,
                    differing.join(", ")
                ));
            }
            Err(message) => problem = Some(format!("  after {}:\n{message}", step.pass)),
        }
        Ok(())
    })
    .map_err(|f| f.0)?;
    match problem {
        Some(p) => Err(p),
        None => Ok(steps.len()),
    }
}

fn run(args: &Args) -> Result<ExitCode, Failure> {
    let base = Options {
        schedule: parse_schedule(&args.schedule)?,
        max_steps: args.max_steps,
        ..Options::default()
    };
    choose_device(args.device)?;
    let bytes = read_input(&args.input)?;
    let scenario_path = args.scenario_file.as_deref().unwrap_or(&args.input);
    let text = String::from_utf8_lossy(&read_input(scenario_path)?).into_owned();
    let dir = match &args.data_dir {
        Some(dir) => Path::new(dir).to_path_buf(),
        None => Path::new(scenario_path)
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf(),
    };
    let directives = Directives {
        path: scenario_path,
        text: &text,
    };
    let scenarios =
        scenario::parse(&text, &dir).map_err(|e| Failure(directives.error(e.line, &e.message)))?;
    for wanted in &args.scenarios {
        if !scenarios.iter().any(|s| &s.name == wanted) {
            return Err(Failure(format!(
                "loom-test: error: no scenario `{wanted}` in {}; it has {}\n",
                scenario_path,
                scenarios
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let selected: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| args.scenarios.is_empty() || args.scenarios.contains(&s.name))
        .collect();
    if selected.is_empty() {
        return Err(Failure(format!(
            "{}: error: no `// TEST-SCENARIO:` directive; see docs/checked-pipelines.md\n",
            scenario_path
        )));
    }
    let session = Session::new();
    let parsed = session.parse(&bytes, &args.input)?;
    let (mut passed, mut failed) = (0, 0);
    for scenario in selected {
        let ran = execute(&parsed.module, scenario, &base, &directives);
        let result = match (&scenario.expected_error, ran) {
            (Some(text), Err(report)) if report.contains(text.as_str()) => {
                let first = report.lines().next().unwrap_or("");
                Ok(format!("failed as expected: {first}"))
            }
            (Some(text), Err(report)) => Err(format!(
                "  expected an error containing `{text}`, got:\n{report}"
            )),
            (Some(text), Ok(_)) => Err(format!(
                "  expected an error containing `{text}`; the run succeeded\n"
            )),
            (None, ran) => ran.and_then(|(buffers, steps, strands)| {
                let wrong = compare(scenario, &buffers);
                if !wrong.is_empty() {
                    return Err(wrong.join("\n") + "\n");
                }
                let mut summary = format!("{steps} ops, {strands} strands");
                if args.each_pass {
                    let stages =
                        differential(&bytes, &args.input, scenario, &base, &buffers, &directives)?;
                    summary.push_str(&format!("; identical after each of {stages} passes"));
                }
                Ok(summary)
            }),
        };
        match result {
            Ok(summary) => {
                passed += 1;
                println!("PASS {} ({summary})", scenario.name);
            }
            Err(report) => {
                failed += 1;
                println!("FAIL {}", scenario.name);
                print!("{report}");
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn main() -> ExitCode {
    loom_passes::register_all();
    let args = Args::parse();
    loom_driver::exit_with(move || run(&args))
}
