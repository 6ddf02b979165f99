//! loom-format: check and format Loom text; convert between Loom text, MLIR
//! bytecode (`.loombc`) and generic MLIR.

#![deny(unsafe_code)]

use clap::Parser;
use loom_driver::{output, read_input, Failure, Format, InputForm, Session};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "loom-format",
    version,
    about = "Check, format and convert Loom modules"
)]
struct Args {
    /// Input: Loom text, generic MLIR or MLIR bytecode (detected); `-` for stdin.
    #[arg(default_value = "-")]
    input: String,
    /// Exit 1 and print a unified diff when the file is not in canonical form.
    #[arg(long, conflicts_with_all = ["in_place", "output", "to"])]
    check: bool,
    /// Rewrite the file in place (atomically) in canonical form.
    #[arg(short = 'i', conflicts_with_all = ["output", "to"])]
    in_place: bool,
    /// Output form.
    #[arg(long = "to", value_enum, default_value = "text")]
    to: Format,
    /// Output file (`-` for stdout).
    #[arg(short = 'o', long = "output", default_value = "-")]
    output: String,
}

fn run(args: &Args) -> Result<ExitCode, Failure> {
    let session = Session::new();
    let bytes = read_input(&args.input)?;
    let name = if args.input == "-" {
        "<stdin>"
    } else {
        &args.input
    };
    let source = session.parse(&bytes, name)?;
    let canonical = session.print(&source.module, args.to);

    if args.check || args.in_place {
        if source.form != InputForm::Text {
            return Err(Failure(format!(
                "{name}: error: --check and -i work on Loom text; this input is {:?}",
                source.form
            )));
        }
        if args.input == "-" && args.in_place {
            return Err(Failure("error: -i needs a file, not standard input".into()));
        }
    }
    if args.check {
        if canonical == bytes {
            return Ok(ExitCode::SUCCESS);
        }
        let original = String::from_utf8_lossy(&bytes);
        let formatted = String::from_utf8_lossy(&canonical);
        let diff = similar::TextDiff::from_lines(original.as_ref(), formatted.as_ref());
        let shown = diff
            .unified_diff()
            .context_radius(3)
            .header(name, &format!("{name} (formatted)"))
            .to_string();
        loom_driver::output::say(shown.as_bytes())?;
        return Ok(ExitCode::from(1));
    }
    let target = if args.in_place {
        &args.input
    } else {
        &args.output
    };
    output::write_atomically(target, &canonical)?;
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let args: Args = loom_driver::command_line(std::env::args_os());
    loom_driver::exit_with(move || run(&args))
}
