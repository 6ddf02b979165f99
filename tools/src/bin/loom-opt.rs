//! loom-opt: parse, verify and print a Loom module, the way mlir-opt does for
//! MLIR. Passes arrive with the pass pipeline; today the tool checks and
//! prints.

use clap::Parser;
use loom_driver::{output, read_input, split, Failure, Format, Session};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "loom-opt",
    version,
    about = "Parse, verify and print Loom modules"
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
}

fn run(args: &Args) -> Result<(), Failure> {
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
        let printed = session
            .parse(chunk, name)
            .map(|source| session.print(&source.module, args.emit));
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
    let args = Args::parse();
    match loom_driver::limits::run_with_stack(move || run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprint!("{failure}");
            if !failure.0.ends_with('\n') {
                eprintln!();
            }
            ExitCode::from(1)
        }
    }
}
