//! The driver library shared by every Loom tool: an MLIR context with the
//! Loom dialects, reading any input form (Loom text, generic MLIR, bytecode)
//! with MLIR-style diagnostics, printing any output form, and writing output
//! files atomically.

#![deny(unsafe_code)]

pub mod compile;
pub mod format;
pub mod generic;
pub mod limits;
pub mod npy;
pub mod output;
pub mod scenario;
// The one audited FFI module: the MLIR session over Loom's C API.
#[allow(unsafe_code)]
pub mod session;
pub mod split;
pub mod xdna;

pub use format::{Format, InputForm};
pub use loom_diagnostic::Diagnostic;
pub use session::{PipelineOptions, Session, SourceModule};

/// Why a tool stops: its diagnostics, rendered as MLIR renders them
/// (Loom's own come as `Diagnostic`s, MLIR's already rendered by its
/// handler), printed once by `exit_with`.
#[derive(Debug)]
pub struct Failure(pub String);

impl From<Diagnostic> for Failure {
    fn from(diagnostic: Diagnostic) -> Failure {
        Failure(diagnostic.render())
    }
}

/// The running tool's name (`loom-test`), where an error has no better
/// place than the tool itself.
pub fn tool_name() -> String {
    std::env::args()
        .next()
        .as_deref()
        .map(std::path::Path::new)
        .and_then(|p| p.file_name())
        .map_or_else(|| "loom".to_string(), |n| n.to_string_lossy().into_owned())
}

/// The tool stops with an error at `location` (a file, a flag, the tool).
pub fn error(location: impl Into<String>, message: impl Into<String>) -> Failure {
    Diagnostic::error(location, message).into()
}

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

/// The command line parsed from `args` (the program name first). A usage
/// error (an unknown flag, a bad value, a missing option) is printed and
/// exits 1, as every other failure and as LLVM's tools do; `--help` and
/// `--version` exit 0.
pub fn command_line<T, A>(args: impl IntoIterator<Item = A>) -> T
where
    T: clap::Parser,
    A: Into<std::ffi::OsString> + Clone,
{
    T::try_parse_from(args).unwrap_or_else(|e| {
        let _ = e.print();
        std::process::exit(if e.use_stderr() { 1 } else { 0 })
    })
}

/// Read a whole input: a path, or `-` for standard input.
pub fn read_input(path: &str) -> Result<Vec<u8>, Failure> {
    use std::io::Read;
    if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| error("<stdin>", format!("cannot read: {e}")))?;
        return Ok(bytes);
    }
    std::fs::read(path).map_err(|e| error(path, format!("cannot read: {e}")))
}
