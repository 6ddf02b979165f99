//! The driver library shared by every Loom tool: an MLIR context with the
//! Loom dialects, reading any input form (Loom text, generic MLIR, bytecode)
//! with MLIR-style diagnostics, printing any output form, and writing output
//! files atomically.

pub mod compile;
pub mod diagnostic;
pub mod format;
pub mod generic;
pub mod limits;
pub mod npy;
pub mod output;
pub mod scenario;
pub mod session;
pub mod split;
pub mod xdna;

pub use format::{Format, InputForm};
pub use session::{PipelineOptions, Session, SourceModule};

/// A failure the tool has already reported (or will report) as text.
#[derive(Debug)]
pub struct Failure(pub String);

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}

/// Run a tool's body on the tool stack and turn its failure into the
/// printed diagnostics and exit status 1.
pub fn exit_with(
    body: impl FnOnce() -> Result<std::process::ExitCode, Failure> + Send + 'static,
) -> std::process::ExitCode {
    match limits::run_with_stack(body) {
        Ok(code) => code,
        Err(failure) => {
            eprint!("{failure}");
            if !failure.0.ends_with('\n') {
                eprintln!();
            }
            std::process::ExitCode::from(1)
        }
    }
}

/// Read a whole input: a path, or `-` for standard input.
pub fn read_input(path: &str) -> Result<Vec<u8>, Failure> {
    use std::io::Read;
    if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Failure(format!("<stdin>: error: cannot read: {e}")))?;
        return Ok(bytes);
    }
    std::fs::read(path).map_err(|e| Failure(format!("{path}: error: cannot read: {e}")))
}
