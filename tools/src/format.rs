//! Input and output forms of a Loom module.

/// What a tool writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Loom text, as the walkthrough writes it.
    #[value(name = "text", alias = "loom")]
    Text,
    /// MLIR bytecode (`.loombc`).
    #[value(name = "bc")]
    Bytecode,
    /// MLIR's generic form, readable by stock MLIR tools.
    #[value(name = "mlir")]
    Generic,
}

/// What a tool was given, detected from the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputForm {
    Text,
    Bytecode,
    Generic,
}

/// MLIR bytecode starts with "ML\xefR".
const BYTECODE_MAGIC: &[u8] = b"ML\xefR";

impl InputForm {
    pub fn detect(bytes: &[u8]) -> InputForm {
        if bytes.starts_with(BYTECODE_MAGIC) {
            return InputForm::Bytecode;
        }
        // Generic MLIR starts with a quoted op name or an alias definition;
        // Loom text starts with an op name (`module {..}` included) or a
        // comment.
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
        let first = text
            .lines()
            .map(str::trim_start)
            .find(|line| !line.is_empty() && !line.starts_with("//"));
        match first {
            Some(line)
                if line.starts_with('"') || line.starts_with('#') || line.starts_with('!') =>
            {
                InputForm::Generic
            }
            _ => InputForm::Text,
        }
    }
}
