//! loom-compile: production builds. Selects one public pipeline (`--root`),
//! binds configuration values and a target, runs the compile pipeline
//! (see `loom_driver::compile`) and writes the result, with optional IR
//! dumps after named passes and a JSON compile report.

#![deny(unsafe_code)]

use clap::{Parser, ValueEnum};
use loom_dialects::names;
use loom_driver::compile::{self, Record, Request, Step};
use loom_driver::output::Outputs;
use loom_driver::{error, read_input, Failure, Format, Session};
use melior::ir::Module;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum OutputFormat {
    /// Loom text.
    Loom,
    /// MLIR's generic form.
    Mlir,
    /// MLIR bytecode.
    Bc,
    /// The .xdna ELF: TXN control code, argument patches, worker images.
    Xdna,
    /// The .xdna's TXN control code, disassembled with register names.
    TxnText,
}

/// The form of the worker tile images in the .xdna.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum WorkerCode {
    /// Low aie2p IR, for the simulator's Low IR core (not device-loadable).
    Lowir,
    /// AIE2P machine code: each worker image is its core ELF, written into
    /// the core's program memory by the control code.
    Machine,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ReportLevel {
    /// Passes, timings and the final module's op counts.
    Summary,
    /// Also the op counts after every pass.
    Full,
}

#[derive(Parser)]
#[command(
    name = "loom-compile",
    version,
    about = "Compile one Loom pipeline for a target",
    after_help = "Pipeline: loom-specialize-config, loom-inline, loom-select-root, loom-expand-instances, \
                  loom-canonicalize, loom-cse, loom-structured-to-cfg, loom-resolve-target, \
                  outline-pipeline-strands, then with --target (or --format=xdna) \
                  aie2p-lower-pipeline. An outlined module resumes after outlining, a native \
                  realization after lowering."
)]
struct Args {
    /// Input: Loom text, generic MLIR or MLIR bytecode (detected); `-` for stdin.
    input: String,
    /// The public pipeline.def to compile, e.g. @ffn_gate_up_quadratic_bf16.
    #[arg(long)]
    root: String,
    /// TARGET:PROFILE, e.g. amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11.
    #[arg(long)]
    target: Option<String>,
    /// A configuration value NAME=VALUE (repeatable).
    #[arg(long = "config", value_name = "NAME=VALUE")]
    config: Vec<String>,
    /// Output form.
    #[arg(long, value_enum, default_value = "loom")]
    format: OutputFormat,
    /// Worker tile images: AIE2P machine code (an op without a selection
    /// pattern is an error naming it), or Low IR for the simulator's Low IR
    /// core (not device-loadable).
    #[arg(long = "worker-code", value_enum, default_value = "machine")]
    worker_code: WorkerCode,
    /// Output file (`-` for stdout).
    #[arg(short = 'o', long, default_value = "-")]
    output: String,
    /// Write the module after this pass to --dump-ir-output (repeatable).
    #[arg(long = "dump-ir-after", value_name = "PASS")]
    dump_ir_after: Vec<String>,
    /// Directory for IR dumps and their trace index (index.json).
    #[arg(long = "dump-ir-output", value_name = "DIR")]
    dump_ir_output: Option<String>,
    /// Write a JSON compile report.
    #[arg(long = "compile-report", value_enum)]
    compile_report: Option<ReportLevel>,
    /// Where the compile report goes (`-` for stdout).
    #[arg(long = "compile-report-output", value_name = "FILE")]
    compile_report_output: Option<String>,
}

fn usage(message: String) -> Failure {
    error("loom-compile", message)
}

/// Check the flags that need no input, before reading it.
fn check_flags(args: &Args) -> Result<Vec<(String, String)>, Failure> {
    if let Some(target) = &args.target {
        loom_passes::parse_target(target).map_err(|m| usage(format!("--target: {m}")))?;
    }
    for pass in &args.dump_ir_after {
        if !compile::PASSES.contains(&pass.as_str()) {
            return Err(usage(format!(
                "--dump-ir-after={pass}: not a pass of the compile pipeline; its passes are {}",
                compile::PASSES.join(", ")
            )));
        }
    }
    if !args.dump_ir_after.is_empty() && args.dump_ir_output.is_none() {
        return Err(usage("--dump-ir-after needs --dump-ir-output=DIR".into()));
    }
    if args.compile_report_output.is_some() && args.compile_report.is_none() {
        return Err(usage(
            "--compile-report-output needs --compile-report=summary|full".into(),
        ));
    }
    if args.compile_report.is_some()
        && args.compile_report_output.as_deref().unwrap_or("-") == "-"
        && args.output == "-"
    {
        return Err(usage(
            "the module goes to stdout; give the report a file with --compile-report-output=FILE"
                .into(),
        ));
    }
    let mut config = Vec::new();
    for item in &args.config {
        let (name, value) = item
            .split_once('=')
            .ok_or_else(|| usage(format!("--config={item}: expected NAME=VALUE")))?;
        config.push((name.trim_start_matches('@').to_string(), value.to_string()));
    }
    Ok(config)
}

/// IR dumps: `DIR/NN-PASS.loom`, and the trace index that lists them, kept
/// until the run's outputs are committed together.
struct Trace {
    dir: String,
    wanted: Vec<String>,
    entries: Vec<Value>,
    dumps: Vec<(String, Vec<u8>)>,
}

impl Trace {
    fn dump(
        &mut self,
        session: &Session,
        order: usize,
        count: usize,
        step: &Step,
        module: &Module,
    ) -> Result<(), Failure> {
        if !self.wanted.iter().any(|p| p == step.pass) {
            return Ok(());
        }
        let file = format!("{order:02}-{}.loom", step.pass);
        let mut text = format!(
            "// loom-compile trace: the module after {} (pass {order} of {count})\n\n",
            step.pass
        )
        .into_bytes();
        text.extend(session.print(module, Format::Text));
        self.dumps.push((file.clone(), text));
        self.entries
            .push(json!({"order": order, "pass": step.pass, "file": file}));
        Ok(())
    }

    /// Stage the dumps and the index (`input` is the compiled file).
    fn stage(&self, outputs: &mut Outputs, input: &str) -> Result<(), Failure> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| usage(format!("cannot create {}: {e}", self.dir)))?;
        for (file, text) in &self.dumps {
            outputs.stage(&format!("{}/{file}", self.dir), text)?;
        }
        let index = json!({"input": input, "dumps": self.entries});
        let text = serde_json::to_string_pretty(&index).expect("JSON values serialize") + "\n";
        outputs.stage(&format!("{}/index.json", self.dir), text.as_bytes())
    }
}

fn counts_json(counts: &BTreeMap<String, usize>) -> Value {
    json!({
        "total": counts.values().sum::<usize>(),
        "by_name": counts,
    })
}

fn report(
    args: &Args,
    level: ReportLevel,
    config: &[(String, String)],
    resumed: bool,
    records: &[Record],
    seconds: f64,
    final_counts: &BTreeMap<String, usize>,
) -> Value {
    let passes: Vec<Value> = records
        .iter()
        .map(|r| {
            let mut entry = json!({"pass": r.pass, "options": r.options, "seconds": r.seconds});
            if level == ReportLevel::Full {
                entry["ops"] = counts_json(&r.ops);
            }
            entry
        })
        .collect();
    let count = |name: &str| final_counts.get(name).copied().unwrap_or(0);
    json!({
        "tool": "loom-compile",
        "version": env!("CARGO_PKG_VERSION"),
        "input": args.input,
        "root": format!("@{}", args.root.trim_start_matches('@')),
        "target": args.target,
        "config": config.iter().cloned().collect::<BTreeMap<_, _>>(),
        "output": {"file": args.output, "format": format!("{:?}", args.format).to_lowercase()},
        "resumed": resumed,
        "passes": passes,
        "seconds": seconds,
        "module": {
            "ops": counts_json(final_counts),
            "pipelines": count(names::pipeline::DEF),
            "strands": count(names::pipeline::STRAND),
            "functions": count(names::func::DEF),
            "target_contexts": count(names::aie2p::TARGET),
        },
    })
}

fn run(args: &Args) -> Result<(), Failure> {
    let config = check_flags(args)?;
    let started = Instant::now();
    let bytes = read_input(&args.input)?;
    let name = if args.input == "-" {
        "<stdin>"
    } else {
        &args.input
    };
    let session = Session::new();
    let mut source = session.parse(&bytes, name)?;
    let request = Request {
        root: &args.root,
        target: args.target.as_deref(),
        config: &config,
        lower: args.target.is_some()
            || matches!(args.format, OutputFormat::Xdna | OutputFormat::TxnText),
    };
    let stage = compile::Stage::of(&source.module);
    let steps = compile::plan(&request, &source.module, stage).map_err(usage)?;
    let resumed = steps.is_empty();
    // A resumed module's configuration was specialized when it was
    // compiled: a value given now would change nothing.
    if let (Some(already), Some(item)) = (
        match stage {
            compile::Stage::Native => Some("a native realization"),
            compile::Stage::Outlined => Some("outlined"),
            compile::Stage::Source => None,
        },
        args.config.first(),
    ) {
        return Err(usage(format!(
            "--config={item}: the module is already {already}, so its configuration was specialized when it was compiled; give --config when compiling the source"
        )));
    }
    for pass in &args.dump_ir_after {
        if !steps.iter().any(|s| s.pass == pass) {
            return Err(usage(format!(
                "--dump-ir-after={pass}: the pass does not run in this compilation ({})",
                if resumed {
                    "the module is already past it".to_string()
                } else if pass == "aie2p-lower-pipeline" {
                    "aie2p-lower-pipeline runs only with --target or --format=xdna|txn-text"
                        .to_string()
                } else {
                    "loom-resolve-target runs only with --target".to_string()
                }
            )));
        }
    }
    let mut trace = args.dump_ir_output.as_ref().map(|dir| Trace {
        dir: dir.clone(),
        wanted: args.dump_ir_after.clone(),
        entries: Vec::new(),
        dumps: Vec::new(),
    });
    let count = steps.len();
    let mut order = 0;
    let records = compile::run(&session, &mut source.module, &steps, &mut |step, module| {
        order += 1;
        match trace.as_mut() {
            Some(trace) => trace.dump(&session, order, count, step, module),
            None => Ok(()),
        }
    })?;
    // The artifact and the report's target section come from the native
    // realization alone.
    let options = loom_xdna_backend::Options {
        worker_code: match args.worker_code {
            WorkerCode::Lowir => loom_xdna_backend::WorkerCode::LowIr,
            WorkerCode::Machine => loom_xdna_backend::WorkerCode::Machine,
        },
    };
    let built = if compile::is_native(&source.module) {
        Some(
            loom_xdna_backend::emit(source.module.as_operation().to_raw(), &args.root, &options)
                .map_err(Failure::from)?,
        )
    } else {
        None
    };
    let bytes = match (args.format, &built) {
        (OutputFormat::Loom, _) => session.print(&source.module, Format::Text),
        (OutputFormat::Mlir, _) => session.print(&source.module, Format::Generic),
        (OutputFormat::Bc, _) => session.print(&source.module, Format::Bytecode),
        (OutputFormat::Xdna, Some(built)) => built
            .elf()
            .map_err(|e| error("loom-compile", format!("writing the .xdna ELF: {e}")))?,
        (OutputFormat::TxnText, Some(built)) => built.txn.disassemble(built.profile).into_bytes(),
        (OutputFormat::Xdna | OutputFormat::TxnText, None) => {
            return Err(usage(
                "--format=xdna needs a native realization; the module was not lowered".into(),
            ))
        }
    };
    // Every output of the run appears together, or none does.
    let mut outputs = Outputs::default();
    outputs.stage(&args.output, &bytes)?;
    if let Some(trace) = &trace {
        trace.stage(&mut outputs, &args.input)?;
    }
    if let Some(level) = args.compile_report {
        let counts = compile::op_counts(&source.module);
        let mut value = report(
            args,
            level,
            &config,
            resumed,
            &records,
            started.elapsed().as_secs_f64(),
            &counts,
        );
        if let Some(built) = &built {
            value["realization"] = built.report.clone();
        }
        let text = serde_json::to_string_pretty(&value).expect("JSON values serialize") + "\n";
        let path = args.compile_report_output.as_deref().unwrap_or("-");
        outputs.stage(path, text.as_bytes())?;
    }
    outputs.commit()
}

fn main() -> ExitCode {
    loom_passes::register_all();
    let args: Args = loom_driver::command_line(std::env::args_os());
    loom_driver::exit_with(move || run(&args).map(|()| ExitCode::SUCCESS))
}
