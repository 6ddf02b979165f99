//! loom-test: execute the scenarios of a checked pipeline on a device and
//! compare the results. Scenarios are `// TEST-...` directives in the
//! `.loom` file (docs/checked-pipelines.md).

#![deny(unsafe_code)]

use clap::{Parser, ValueEnum};
use loom_dialects::{ir, names};
use loom_driver::compile::{self, Request};
use loom_driver::scenario::{self, Scenario};
use loom_driver::{output, read_input, xdna, Failure, Session};
use loom_passes::loom_check_progress as progress;
use loom_runtime::interp::{self, Options, Schedule};
use loom_runtime::sim::core::isa::{IsaCores, Options as IsaOptions};
use loom_runtime::sim::trace::{json, Trace};
use loom_runtime::{hal, sim};
use loom_targets::xdna::elf;
use loom_xdna_backend::WorkerCode;
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
    /// The AIE2P array simulator: compiles to the .xdna artifact and runs it.
    Sim,
    /// An NPU through the amdxdna driver (docs/xdna-runtime.md).
    Xdna,
}

/// The simulator's model of the array's cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Core {
    /// Each worker's Low IR in the interpreter, at the profile's cycles per
    /// operation (the oracle: artifacts compiled with --worker-code=lowir).
    Lowir,
    /// The instruction-level AIE2P core: executes machine-code tile images
    /// (core ELFs), bundle by bundle, with the hazard checker on.
    Isa,
}

impl Core {
    /// The worker images a source compiles to for this core.
    fn worker_code(self) -> WorkerCode {
        match self {
            Core::Lowir => WorkerCode::LowIr,
            Core::Isa => WorkerCode::Machine,
        }
    }
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
    /// The target of --device=sim: TARGET:PROFILE.
    #[arg(long, default_value = "amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11")]
    target: String,
    /// `deterministic`, or `random:SEED` for a seeded random interleaving.
    #[arg(long, default_value = "deterministic")]
    schedule: String,
    /// Stop a run as runaway after this many ops: the interpreter's
    /// (default 2^32), or on the simulator's Low IR core its cores' ops in
    /// all (default 2^22); the isa core's limit is --max-cycles.
    #[arg(long = "max-steps", value_name = "N")]
    max_steps: Option<u64>,
    /// Also run every scenario after each pass of the compile pipeline and
    /// require identical results (the differential check of each pass).
    #[arg(long = "each-pass")]
    each_pass: bool,
    /// The firmware image (PDI) the NPU's compute unit runs, for
    /// --device=xdna with a kernel that carries none (a foreign ELF): a PDI
    /// file, or an xclbin whose AIE partition holds one. A Loom `.xdna`
    /// carries its own PDIs and is refused with this flag.
    #[arg(long, value_name = "FILE")]
    firmware: Option<String>,
    /// With --device=sim: write a Chrome/Perfetto trace of the scenarios'
    /// runs to FILE (docs/array-simulator.md, "Traces").
    #[arg(long, value_name = "FILE")]
    trace: Option<String>,
    /// With --device=sim: the core model. `isa` runs machine code (a
    /// source compiles to it); `lowir` runs the workers' Low IR (a source
    /// compiles to it), the oracle the isa core is checked against.
    /// (default isa).
    #[arg(long, value_enum)]
    core: Option<Core>,
    /// With --device=sim --core=isa: a core that runs more cycles than N
    /// ends the run as a runaway, with a report (default 10^8).
    #[arg(long = "max-cycles", value_name = "N")]
    max_cycles: Option<u64>,
    /// Write every buffer of each finished run to DIR/SCENARIO/ARG.bin (the
    /// bytes as the run left them, before they are compared), e.g. to
    /// compare two devices or cores byte for byte.
    #[arg(long = "save-buffers", value_name = "DIR")]
    save_buffers: Option<String>,
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

/// Where scenarios run.
#[derive(Clone, PartialEq, Eq)]
enum Mode {
    Interp,
    Sim,
    /// An attached NPU, through the amdxdna HAL.
    Xdna(std::path::PathBuf),
    /// The simulator, or the interpreter for a module that does not
    /// compile for xdna (what `auto` picks without an NPU).
    SimElseInterp,
}

/// Pick the device; say which and why when it was not asked for by name.
fn choose_device(args: &Args) -> Result<Mode, Failure> {
    if args.device == Device::Xdna && args.max_steps.is_some() {
        return Err(Failure(
            "loom-test: error: --max-steps limits the interpreter and the simulator; an NPU runs its own clock\n"
                .into(),
        ));
    }
    match args.device {
        Device::Interp => Ok(Mode::Interp),
        Device::Sim => Ok(Mode::Sim),
        Device::Auto => {
            let npu = match hal::device::discover_system() {
                Err(none) => none.to_string(),
                Ok(found) => format!(
                    "{}, but auto does not choose it while Loom's artifacts are unverified on hardware; --device=xdna runs on it",
                    describe(&found)
                ),
            };
            let interpreter_options =
                args.each_pass || args.max_steps.is_some() || args.schedule != "deterministic";
            if interpreter_options {
                say(&format!(
                    "device: interp (auto: {npu}; interpreter options given)\n"
                ))?;
                return Ok(Mode::Interp);
            }
            say(&format!("device: sim (auto: {npu}; a scenario whose module does not compile for xdna runs on the interpreter)\n"))?;
            Ok(Mode::SimElseInterp)
        }
        Device::Xdna => match hal::device::discover_system() {
            Err(none) => Err(Failure(format!(
                "loom-test: error: --device=xdna: {none}\n"
            ))),
            Ok(found) => {
                let npu = &found[0];
                let info = query(npu).map_err(|why| {
                    Failure(format!(
                        "loom-test: error: --device=xdna: {}: {why}\n",
                        npu.node.display()
                    ))
                })?;
                say(&format!(
                    "device: xdna ({}, {}; {info})\n",
                    npu.node.display(),
                    npu.profile.name
                ))?;
                Ok(Mode::Xdna(npu.node.clone()))
            }
        },
    }
}

/// The NPU's versions and array (GET_INFO), once the array is checked to
/// be the one its profile describes.
fn query(npu: &hal::Npu) -> Result<hal::device::DeviceInfo, String> {
    let device = npu.open().map_err(|e| e.to_string())?;
    let info = hal::device::device_info(&device).map_err(|e| e.to_string())?;
    hal::device::check_geometry(npu.profile, &info.metadata).map_err(|e| e.to_string())?;
    Ok(info)
}

/// `found /dev/accel/accel0 (amd.xdna.strix.17f0_10)`, for each NPU.
fn describe(npus: &[hal::device::Npu]) -> String {
    let each: Vec<String> = npus
        .iter()
        .map(|n| format!("{} ({})", n.node.display(), n.profile.name))
        .collect();
    format!("found {}", each.join(", "))
}

/// Compile `source` for `target` with the scenario's configuration to the
/// `.xdna` artifact, read back from its bytes as a device loads it.
fn compile_artifact(
    session: &Session,
    source: &[u8],
    name: &str,
    scenario: &Scenario,
    target: &str,
    worker_code: WorkerCode,
) -> Result<elf::Artifact, String> {
    let mut parsed = session.parse(source, name).map_err(|f| f.0)?;
    let config = scenario.config_values();
    let bytes = xdna::compile(
        session,
        &mut parsed.module,
        &scenario.entry,
        target,
        &config,
        worker_code,
    )
    .map_err(|f| f.0)?;
    elf::read(&bytes).map_err(|e| format!("loom-test: error: reading the .xdna back: {e}\n"))
}

/// The artifact `source` is, or the one it compiles to for `target` with
/// `worker_code` images.
fn artifact_for(
    session: &Session,
    source: &[u8],
    name: &str,
    scenario: &Scenario,
    target: &str,
    worker_code: WorkerCode,
) -> Result<elf::Artifact, String> {
    if is_artifact(source) {
        elf::read(source).map_err(|e| format!("{name}: error: not a loadable .xdna: {e}\n"))
    } else {
        compile_artifact(session, source, name, scenario, target, worker_code)
    }
}

fn is_artifact(source: &[u8]) -> bool {
    source.starts_with(b"\x7fELF")
}

/// How the simulator runs a scenario: the runaway limit of the Low IR core,
/// the core model, and where a trace goes.
struct SimRun<'t> {
    max_core_steps: u64,
    core: Core,
    max_cycles: Option<u64>,
    traces: Option<&'t mut Vec<(String, Trace)>>,
}

fn execute_sim(
    session: &Session,
    artifact: &elf::Artifact,
    source: &[u8],
    name: &str,
    scenario: &Scenario,
    directives: &Directives,
    how: SimRun,
) -> Result<(Buffers, String), String> {
    let SimRun {
        max_core_steps,
        core,
        max_cycles,
        traces,
    } = how;
    // Faults of the control code or the array have no source location: they
    // are reported at the artifact, and a tile image's at its section.
    let artifact_name: std::rc::Rc<str> = if is_artifact(source) {
        name.into()
    } else {
        format!("{name} (its .xdna)").into()
    };
    let (names, args) = bind_entry(artifact, scenario, directives)?;
    let (ran, figures) = match core {
        Core::Lowir => {
            let program = xdna::tile_program(session, artifact, &artifact_name).map_err(|f| f.0)?;
            // A traced run keeps its trace, also when it fails (a hang's shows what waited).
            let ran = match traces {
                Some(traces) => {
                    let (ran, trace) =
                        sim::run::run_traced(artifact, &program, args, max_core_steps);
                    traces.push((scenario.name.clone(), trace));
                    ran
                }
                None => sim::run::run(artifact, &program, args, max_core_steps),
            };
            (ran, Vec::new())
        }
        Core::Isa => {
            let profile = sim::run::profile_of(artifact).map_err(|e| e.render())?;
            let defaults = IsaOptions::default();
            let options = IsaOptions {
                max_cycles: max_cycles.unwrap_or(defaults.max_cycles),
                ..defaults
            };
            let mut cores = IsaCores::new(profile, &artifact.tile_images, options);
            let ran = match traces {
                Some(traces) => {
                    let (ran, trace) = sim::run::run_with_traced(artifact, &mut cores, args);
                    traces.push((scenario.name.clone(), trace));
                    ran
                }
                None => sim::run::run_with(artifact, &mut cores, args),
            };
            (ran, cores.figures())
        }
    };
    let outcome = ran.map_err(|mut e| {
        let locations = std::iter::once(&mut e.location);
        for location in locations.chain(e.notes.iter_mut().map(|n| &mut n.location)) {
            if location.is_empty() {
                *location = artifact_name.to_string();
            }
        }
        e.render()
    })?;
    let timing = &outcome.timing;
    let per_record = match timing.records {
        0 => String::new(),
        n => format!(", {} per record", timing.cycles / n),
    };
    let summary = format!(
        "sim {}: {} TXN ops, {} core{}, {} core ops; {} modelled cycles{per_record}, bound by {}",
        artifact.profile,
        outcome.txn_ops,
        outcome.cores,
        if outcome.cores == 1 { "" } else { "s" },
        outcome.core_steps,
        timing.cycles,
        timing.bound
    );
    // The instruction-level core's own figures, a clause a core.
    let summary = figures.iter().fold(summary, |summary, f| {
        let stalls: u64 = f.stalls.values().sum();
        let sites: Vec<String> = f
            .stall_sites
            .iter()
            .map(|(at, cycles)| match channel_at(at) {
                Some(channel) => format!("{cycles} on {channel} ({at})"),
                None => format!("{cycles} at {at}"),
            })
            .collect();
        let sites = if sites.is_empty() {
            String::new()
        } else {
            format!(": {}", sites.join(", "))
        };
        format!(
            "{summary}; core {} ({}): {} cycles, {} bundles ({} with the vector unit), {stalls} cycles stalled on locks{sites}",
            f.tile, f.name, f.cycles, f.bundles, f.vector_bundles
        )
    });
    Ok((names.into_iter().zip(outcome.buffers).collect(), summary))
}

/// The channel a waiting acquire stands for: the `channel.acquire` or
/// `channel.reserve` operand at `location` (FILE:LINE:COL, the line
/// table's), when that source line has one.
fn channel_at(location: &str) -> Option<String> {
    let source = loom_diagnostic::source_line(location)?;
    ["channel.acquire ", "channel.reserve "]
        .iter()
        .find_map(|op| {
            let rest = &source[source.find(op)? + op.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != ':' && *c != ',')
                .collect();
            name.starts_with('%').then_some(name)
        })
}

/// Run `scenario` on `module`; the buffers after the run, or the rendered
/// runtime error.
fn execute(
    module: &Module,
    scenario: &Scenario,
    base: &Options,
    directives: &Directives,
) -> Result<(Buffers, u64, usize), String> {
    let program =
        loom_translate::translate(module.as_operation().to_raw()).map_err(|e| e.render())?;
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
    let config = scenario.config.iter().cloned().collect::<HashMap<_, _>>();
    // A program that can deadlock is run on the schedule that does, whatever
    // the schedule asked for: the same verdict as loom-compile's.
    let deadlock = deadlocking_schedule(module, &scenario.entry, &config);
    let options = Options {
        schedule: deadlock.clone().map_or_else(
            || base.schedule.clone(),
            |(steps, _)| Schedule::Replay(steps),
        ),
        config,
        ..base.clone()
    };
    let outcome = interp::run(&program, &scenario.entry, args, options).map_err(|errors| {
        // The checks at completion report every violation they find.
        let mut errors = errors;
        if let (Some((_, at)), Some(first)) = (&deadlock, errors.first_mut()) {
            *first = first.clone().with_note(
                at.clone(),
                "the strands ran a schedule that loom-check-progress found to deadlock (the shortest); loom-compile refuses this pipeline",
            );
        }
        errors.iter().map(|e| e.render()).collect::<String>()
    })?;
    if deadlock.is_some() {
        return Err(format!(
            "loom-test: error: the interpreter completed a schedule of @{} that loom-check-progress found to deadlock; one of them is wrong\n",
            scenario.entry
        ));
    }
    Ok((
        names.into_iter().zip(outcome.buffers).collect(),
        outcome.steps,
        outcome.strands,
    ))
}

/// The schedule that deadlocks the pipeline `entry` of `module` (with the
/// scenario's configuration values), when the progress analysis finds one,
/// and where the pipeline is.
fn deadlocking_schedule(
    module: &Module,
    entry: &str,
    config: &HashMap<String, i64>,
) -> Option<(Vec<usize>, String)> {
    let pipeline = ir::top_level_ops(module.as_operation().to_raw())
        .into_iter()
        .find(|&op| {
            ir::op_name(op) == names::pipeline::DEF && ir::symbol_name(op).as_deref() == Some(entry)
        })?;
    match progress::decide(
        pipeline,
        &|name| config.get(name).copied(),
        progress::MAX_STATES,
    ) {
        progress::Verdict::Deadlock { schedule, .. } => {
            Some((schedule, ir::location_text(ir::location(pipeline))))
        }
        progress::Verdict::Completes { .. } | progress::Verdict::Undecided(_) => None,
    }
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
    let config = scenario.config_values();
    let request = Request {
        root: &scenario.entry,
        target: None,
        config: &config,
        lower: false,
    };
    let steps = compile::plan(&request, &parsed.module, compile::Stage::of(&parsed.module))
        .map_err(|m| format!("loom-test: error: {m}\n"))?;
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

/// The PDI in `path`: the one image of an xclbin's AIE partition, or the
/// file itself.
fn read_firmware(path: &str) -> Result<Vec<u8>, Failure> {
    let bytes = read_input(path)?;
    let error = |message: String| Failure(format!("{path}: error: --firmware: {message}\n"));
    if bytes.starts_with(b"xclbin2\0") {
        let xclbin = hal::xclbin::parse(&bytes).map_err(|e| error(e.to_string()))?;
        let [pdi] = <[Vec<u8>; 1]>::try_from(xclbin.pdis).map_err(|pdis| {
            error(format!(
                "the xclbin's AIE partition holds {} firmware images (PDIs); one is needed",
                pdis.len()
            ))
        })?;
        if pdi.is_empty() {
            return Err(error("the xclbin's firmware image (PDI) is empty".into()));
        }
        return Ok(pdi);
    }
    if bytes.is_empty() {
        return Err(error("the firmware image is empty".into()));
    }
    Ok(bytes)
}

fn run(args: &Args) -> Result<ExitCode, Failure> {
    // Read before looking for an NPU, so that a bad image is reported
    // anywhere.
    let firmware = match &args.firmware {
        Some(_) if args.device != Device::Xdna => {
            return Err(Failure(
                "loom-test: error: --firmware is an option of --device=xdna\n".into(),
            ))
        }
        Some(path) => read_firmware(path)?,
        None => Vec::new(),
    };
    if args.trace.is_some() && args.device != Device::Sim {
        return Err(Failure(
            "loom-test: error: --trace is an option of --device=sim\n".into(),
        ));
    }
    let core = args.core.unwrap_or(Core::Isa);
    if args.core.is_some() && args.device != Device::Sim {
        return Err(Failure(
            "loom-test: error: --core is an option of --device=sim\n".into(),
        ));
    }
    if args.max_steps.is_some() && args.device == Device::Sim && core == Core::Isa {
        return Err(Failure(
            "loom-test: error: --max-steps limits the interpreter and the Low IR core; the isa core's limit is --max-cycles\n"
                .into(),
        ));
    }
    if args.max_cycles.is_some() && (args.device != Device::Sim || core == Core::Lowir) {
        return Err(Failure(
            "loom-test: error: --max-cycles is an option of --device=sim --core=isa (the Low IR core counts --max-steps)\n"
                .into(),
        ));
    }
    let mut traces: Vec<(String, Trace)> = Vec::new();
    let base = Options {
        schedule: parse_schedule(&args.schedule)?,
        max_steps: args.max_steps.unwrap_or(Options::default().max_steps),
        ..Options::default()
    };
    let mode = choose_device(args)?;
    // The NPU, opened once for every scenario.
    let npu = match &mode {
        Mode::Xdna(node) => {
            let found = hal::discover_system()
                .map_err(|none| Failure(format!("loom-test: error: --device=xdna: {none}\n")))?;
            let Some(npu) = found.into_iter().find(|n| &n.node == node) else {
                return Err(Failure(format!(
                    "loom-test: error: --device=xdna: {} went away\n",
                    node.display()
                )));
            };
            Some(npu)
        }
        _ => None,
    };
    if mode != Mode::Interp {
        loom_passes::parse_target(&args.target)
            .map_err(|m| Failure(format!("loom-test: error: --target: {m}\n")))?;
        if args.each_pass || args.schedule != "deterministic" {
            return Err(Failure(
                "loom-test: error: --each-pass and --schedule are interpreter options; use --device=interp\n"
                    .into(),
            ));
        }
    }
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
    // The interpreter runs the module as given; the simulator compiles (or
    // loads) an artifact per scenario.
    let parsed = if matches!(mode, Mode::Sim | Mode::Xdna(_)) || is_artifact(&bytes) {
        None
    } else {
        Some(session.parse(&bytes, &args.input)?)
    };
    let (mut passed, mut failed) = (0, 0);
    for scenario in selected {
        // The simulator runs the artifact the scenario's module compiles to;
        // under `auto` a module the xdna target refuses runs on the
        // interpreter instead, and the summary says why.
        if let Some(npu) = &npu {
            let target = format!("{}:{}", npu.profile.target, npu.profile.name);
            let ran = artifact_for(
                &session,
                &bytes,
                &args.input,
                scenario,
                &target,
                WorkerCode::Machine,
            )
            .and_then(|artifact| {
                run_npu(
                    npu,
                    &firmware,
                    &artifact,
                    &args.input,
                    scenario,
                    &directives,
                )
            });
            let result = verdict(scenario, ran, |_| Ok(String::new()));
            report(&scenario.name, result, &mut passed, &mut failed)?;
            continue;
        }
        let mut fallback = None;
        let artifact = match &mode {
            Mode::Interp | Mode::Xdna(_) => None,
            Mode::Sim => Some(artifact_for(
                &session,
                &bytes,
                &args.input,
                scenario,
                &args.target,
                core.worker_code(),
            )),
            Mode::SimElseInterp => {
                let code = core.worker_code();
                match artifact_for(&session, &bytes, &args.input, scenario, &args.target, code) {
                    Err(refused) if parsed.is_some() => {
                        fallback = Some(refused.lines().next().unwrap_or("").to_string());
                        None
                    }
                    other => Some(other),
                }
            }
        };
        let result = match (artifact, &parsed) {
            (Some(artifact), _) => verdict(
                scenario,
                saved(
                    &args.save_buffers,
                    scenario,
                    artifact.and_then(|artifact| {
                        execute_sim(
                            &session,
                            &artifact,
                            &bytes,
                            &args.input,
                            scenario,
                            &directives,
                            SimRun {
                                max_core_steps: args
                                    .max_steps
                                    .unwrap_or(sim::run::DEFAULT_MAX_CORE_STEPS),
                                core,
                                max_cycles: args.max_cycles,
                                traces: args.trace.is_some().then_some(&mut traces),
                            },
                        )
                    }),
                ),
                |_| Ok(String::new()),
            ),
            (None, Some(parsed)) => verdict(
                scenario,
                saved(
                    &args.save_buffers,
                    scenario,
                    execute(&parsed.module, scenario, &base, &directives).map(
                        |(buffers, steps, strands)| {
                            let device = match fallback.take() {
                                Some(why) => format!("interp, not compiled for xdna: {why}; "),
                                None => String::new(),
                            };
                            (buffers, format!("{device}{steps} ops, {strands} strands"))
                        },
                    ),
                ),
                |buffers| {
                    if !args.each_pass {
                        return Ok(String::new());
                    }
                    let stages =
                        differential(&bytes, &args.input, scenario, &base, buffers, &directives)?;
                    Ok(format!("; identical after each of {stages} passes"))
                },
            ),
            (None, None) => Err(format!(
                "  {}: an .xdna artifact runs on the simulator only (--device=sim)\n",
                args.input
            )),
        };
        // A failing run on the interpreter says why it ran there.
        let result = match fallback {
            Some(why) => result.map_err(|report| {
                format!("  (on the interpreter: not compiled for xdna: {why})\n{report}")
            }),
            None => result,
        };
        report(&scenario.name, result, &mut passed, &mut failed)?;
    }
    if let Some(path) = &args.trace {
        let runs: Vec<(&str, &Trace)> = traces.iter().map(|(n, t)| (n.as_str(), t)).collect();
        output::write_atomically(path, json::write(&runs).as_bytes())?;
    }
    say(&format!("{passed} passed, {failed} failed\n"))?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `ran`, after writing its buffers under `dir` (--save-buffers) when it
/// finished: DIR/SCENARIO/ARG.bin.
fn saved(
    dir: &Option<String>,
    scenario: &Scenario,
    ran: Result<(Buffers, String), String>,
) -> Result<(Buffers, String), String> {
    let (Some(dir), Ok((buffers, _))) = (dir, &ran) else {
        return ran;
    };
    let folder = Path::new(dir).join(&scenario.name);
    let fail = |e: std::io::Error, path: &Path| {
        format!(
            "loom-test: error: --save-buffers: {}: {e}\n",
            path.display()
        )
    };
    std::fs::create_dir_all(&folder).map_err(|e| fail(e, &folder))?;
    for (name, bytes) in buffers {
        let path = folder.join(format!("{}.bin", name.trim_start_matches('%')));
        output::write_atomically(&path.to_string_lossy(), bytes).map_err(|f| f.0)?;
    }
    ran
}

/// A scenario's verdict from its run (buffers and a summary, or the
/// rendered error): an expected error must be the one reported, otherwise
/// the buffers must match; `then` may check more and extend the summary.
fn verdict(
    scenario: &Scenario,
    ran: Result<(Buffers, String), String>,
    then: impl FnOnce(&Buffers) -> Result<String, String>,
) -> Result<String, String> {
    match (&scenario.expected_error, ran) {
        (Some(text), Err(report)) if report.contains(text.as_str()) => Ok(format!(
            "failed as expected: {}",
            report.lines().next().unwrap_or("")
        )),
        (Some(text), Err(report)) => Err(format!(
            "  expected an error containing `{text}`, got:\n{report}"
        )),
        (Some(text), Ok(_)) => Err(format!(
            "  expected an error containing `{text}`; the run succeeded\n"
        )),
        (None, ran) => ran.and_then(|(buffers, summary)| {
            let wrong = compare(scenario, &buffers);
            if !wrong.is_empty() {
                return Err(wrong.join("\n") + "\n");
            }
            Ok(summary + &then(&buffers)?)
        }),
    }
}

/// The artifact entry's argument names and the scenario's data for each.
fn bind_entry(
    artifact: &elf::Artifact,
    scenario: &Scenario,
    directives: &Directives,
) -> Result<(Vec<String>, Vec<Vec<u8>>), String> {
    let names: Vec<String> = artifact.entries.first().map_or_else(Vec::new, |e| {
        e.args.iter().map(|a| a.name.clone()).collect()
    });
    let mut data = Vec::new();
    for arg in &names {
        let Some(bound) = scenario.bindings.get(arg) else {
            return Err(directives.error(
                scenario.line,
                &format!("scenario `{}` binds no data to %{arg}", scenario.name),
            ));
        };
        data.push(bound.bytes.clone());
    }
    Ok((names, data))
}

/// Run `artifact` with the scenario's buffers on the NPU through the HAL,
/// its compute unit running `firmware` (none: refused), on a descriptor of
/// its own: the driver keeps one device heap per descriptor until it is
/// closed, so each invocation opens the node anew.
fn run_npu(
    npu: &hal::Npu,
    firmware: &[u8],
    artifact: &elf::Artifact,
    name: &str,
    scenario: &Scenario,
    directives: &Directives,
) -> Result<(Buffers, String), String> {
    let (names, inputs) = bind_entry(artifact, scenario, directives)?;
    let device = npu.open().map_err(|e| format!("{name}: error: {e}\n"))?;
    let outputs = hal::run_artifact(
        &device,
        npu.profile,
        artifact,
        firmware,
        inputs,
        NPU_TIMEOUT,
    )
    .map_err(|e| match e {
        hal::InvokeError::NoFirmware => format!("{name}: error: {e} (give one with --firmware)\n"),
        e => format!("{name}: error: {e}\n"),
    })?;
    Ok((
        names.into_iter().zip(outputs).collect(),
        format!("xdna {} at {}", npu.profile.name, npu.node.display()),
    ))
}

/// How long a run on the NPU may take before it counts as hung.
const NPU_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Print one scenario's verdict and count it.
fn report(
    name: &str,
    result: Result<String, String>,
    passed: &mut usize,
    failed: &mut usize,
) -> Result<(), Failure> {
    match result {
        Ok(summary) => {
            *passed += 1;
            say(&format!("PASS {name} ({summary})\n"))
        }
        Err(report) => {
            *failed += 1;
            say(&format!("FAIL {name}\n{report}"))
        }
    }
}

fn say(text: &str) -> Result<(), Failure> {
    loom_driver::output::say(text.as_bytes())
}

fn main() -> ExitCode {
    loom_passes::register_all();
    let args: Args = loom_driver::command_line(std::env::args_os());
    loom_driver::exit_with(move || run(&args))
}
