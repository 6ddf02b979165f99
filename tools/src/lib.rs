//! The driver library shared by every Loom tool: an MLIR context with the
//! Loom dialects, reading any input form (Loom text, generic MLIR, bytecode)
//! with MLIR-style diagnostics, printing any output form, and writing output
//! files atomically.

pub mod format;
pub mod generic;
pub mod limits;
pub mod output;
pub mod session;
pub mod split;

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
