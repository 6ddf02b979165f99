//! What loom-mc and loom-objdump share: reading their input (a file or
//! `-` for standard input) and reporting errors as LLVM's tools do,
//! `FILE:LINE:COL: error: message` with the source line and a caret, exit
//! status 1 and nothing on standard output.

#![deny(unsafe_code)]

use std::io::Read;
use std::io::Write;
use std::process::ExitCode;

/// A failure to report: the rendered text.
pub struct Failure(pub String);

/// The tool's name as invoked.
pub fn tool_name() -> String {
    std::env::args()
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "loom".into())
}

/// `TOOL: error: message`.
pub fn error(message: impl std::fmt::Display) -> Failure {
    Failure(format!("{}: error: {message}\n", tool_name()))
}

/// `NAME:LINE:COL: error: message`, the line and a caret under column `col`
/// (both 1-based).
pub fn located(
    name: &str,
    text: &str,
    line: usize,
    col: usize,
    message: impl std::fmt::Display,
) -> Failure {
    let source = text.lines().nth(line - 1).unwrap_or("");
    Failure(format!(
        "{name}:{line}:{col}: error: {message}\n{source}\n{}^\n",
        " ".repeat(col.saturating_sub(1))
    ))
}

/// The input's display name and bytes.
pub fn read_input(path: &str) -> Result<(String, Vec<u8>), Failure> {
    if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| error(format!("cannot read standard input: {e}")))?;
        Ok(("<stdin>".into(), bytes))
    } else {
        std::fs::read(path)
            .map(|bytes| (path.to_string(), bytes))
            .map_err(|e| error(format!("cannot read {path}: {e}")))
    }
}

/// Parse the flags and run: help and version print and exit 0; a bad flag
/// exits 1, as the other Loom tools do; then the output or the failure.
pub fn main_with<C: clap::Parser>(run: impl FnOnce(C) -> Result<String, Failure>) -> ExitCode {
    match C::try_parse() {
        Ok(cli) => finish(run(cli)),
        Err(e) => {
            let _ = e.print();
            if e.use_stderr() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
    }
}

/// Print the output whole, or the failure and exit 1. A reader that went
/// away (a closed pipe, as under `| head`) ends the tool quietly with
/// status 141, as SIGPIPE ends a C tool and as the other Loom tools do.
pub fn finish(result: Result<String, Failure>) -> ExitCode {
    match result {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(out.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(141),
                Err(e) => {
                    eprintln!("error: cannot write to standard output: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(Failure(text)) => {
            eprint!("{text}");
            ExitCode::FAILURE
        }
    }
}
