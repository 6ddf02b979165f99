//! loom-opt: parse, verify, run passes and print a Loom module, the way
//! mlir-opt does for MLIR. Passes are named by their flags (`--canonicalize`,
//! `--loom-specialize-config=values=k=512`) or given as a textual pipeline.

#![deny(unsafe_code)]

use clap::Parser;
use loom_driver::{output, read_input, split, Failure, Format, PipelineOptions, Session};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "loom-opt",
    version,
    about = "Parse, verify, transform and print Loom modules",
    after_help = "Any registered pass is also a flag: --NAME or --NAME='key=value ...' \
                  (see --list-passes); passes given as flags run in command-line order."
)]
struct Args {
    /// Input: Loom text, generic MLIR or MLIR bytecode (detected); `-` for stdin.
    #[arg(default_value = "-")]
    input: String,
    /// Output file (`-` for stdout).
    #[arg(short = 'o', long = "output", default_value = "-")]
    output: String,
    /// Output form.
    #[arg(long = "emit", value_enum, default_value = "text")]
    emit: Format,
    /// Treat each `// -----` separated chunk of the input as its own module.
    #[arg(long = "split-input-file")]
    split_input_file: bool,
    /// List the registered passes and exit.
    #[arg(long = "list-passes")]
    list_passes: bool,
    /// A textual pass pipeline, e.g. `builtin.module(canonicalize,cse)`.
    #[arg(long = "pass-pipeline")]
    pass_pipeline: Option<String>,
    /// Print the IR after every pass (to stderr).
    #[arg(long = "mlir-print-ir-after-all")]
    print_ir_after_all: bool,
    /// Print the IR after the named pass (to stderr).
    #[arg(long = "mlir-print-ir-after")]
    print_ir_after: Option<String>,
    /// With the IR printing flags: only when the pass changed the IR.
    #[arg(long = "mlir-print-ir-after-change")]
    print_ir_after_change: bool,
    /// Report the time each pass took (to stderr).
    #[arg(long = "mlir-timing")]
    timing: bool,
    /// Verify the IR after each pass.
    #[arg(long = "verify-each", default_value_t = true, action = clap::ArgAction::Set)]
    verify_each: bool,
    /// Passes named by their flags, in order (filled from the command line).
    #[arg(skip)]
    passes: Vec<String>,
}

/// Split pass flags (`--NAME[=options]` for registered passes) from the
/// tool's own flags.
fn parse_args() -> Args {
    loom_passes::register_all();
    let mut passes = Vec::new();
    let mut rest = Vec::new();
    for arg in std::env::args() {
        let pass = arg.strip_prefix("--").and_then(|flag| {
            let (name, options) = flag.split_once('=').unwrap_or((flag, ""));
            let tool_flag = Args::command_has(name);
            (!tool_flag && loom_passes::is_registered(name)).then(|| {
                if options.is_empty() {
                    name.to_string()
                } else {
                    format!("{name}{{{options}}}")
                }
            })
        });
        match pass {
            Some(pass) => passes.push(pass),
            None => rest.push(arg),
        }
    }
    let mut args: Args = loom_driver::command_line(rest);
    args.passes = passes;
    args
}

impl Args {
    fn command_has(name: &str) -> bool {
        use clap::CommandFactory;
        Args::command()
            .get_arguments()
            .any(|arg| arg.get_long() == Some(name))
    }
}

fn run(args: &Args) -> Result<(), Failure> {
    if args.list_passes {
        loom_passes::ffi::list_passes();
        return Ok(());
    }
    let pipeline = match (&args.pass_pipeline, args.passes.is_empty()) {
        (Some(_), false) => {
            return Err(Failure(
                "error: give passes either as flags or with --pass-pipeline, not both".into(),
            ))
        }
        (Some(pipeline), true) => Some(pipeline.clone()),
        (None, false) => Some(format!("builtin.module({})", args.passes.join(","))),
        (None, true) => None,
    };
    let options = PipelineOptions {
        verify_each: args.verify_each,
        print_after_all: args.print_ir_after_all,
        print_after_pass: args.print_ir_after.clone(),
        print_after_only_on_change: args.print_ir_after_change,
        timing: args.timing,
    };
    let bytes = read_input(&args.input)?;
    let name = if args.input == "-" {
        "<stdin>"
    } else {
        &args.input
    };
    let chunks = if args.split_input_file {
        split::split_input(&bytes)
    } else {
        vec![bytes]
    };
    let mut out = Vec::new();
    let mut failures = String::new();
    let mut printed_any = false;
    for chunk in &chunks {
        // A fresh session per chunk: chunks are independent modules.
        let session = Session::new();
        let printed = session.parse(chunk, name).and_then(|mut source| {
            if let Some(pipeline) = &pipeline {
                session.run_pipeline(&mut source.module, pipeline, &options, &mut |text| {
                    eprint!("{text}")
                })?;
            }
            Ok(session.print(&source.module, args.emit))
        });
        match printed {
            Ok(text) => {
                if printed_any {
                    out.extend_from_slice(b"// -----\n\n");
                }
                printed_any = true;
                out.extend(text);
            }
            Err(failure) => failures.push_str(&failure.0),
        }
    }
    // Standard output shows what did parse; a file is written only whole.
    if failures.is_empty() || args.output == "-" {
        output::write_atomically(&args.output, &out)?;
    }
    if !failures.is_empty() {
        return Err(Failure(failures));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = parse_args();
    loom_driver::exit_with(move || run(&args).map(|()| ExitCode::SUCCESS))
}
