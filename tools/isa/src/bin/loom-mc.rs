//! loom-mc: the AIE2P assembler and disassembler on text, as llvm-mc is.
//! Each line of the input is one bundle (its slots' instructions separated
//! by `;`; `//` starts a comment). It prints the canonical text, with
//! `--show-encoding` each bundle's bytes; `--disassemble` reads hex bytes
//! (`0x18 0xf8 0x23 0x10` or `18 f8 23 10`, as llvm-mc takes them) and
//! prints the bundles they hold. `--filetype=obj -o FILE` writes the
//! bundles as a core ELF instead (the program at program-memory address 0,
//! as aie-rt's loader places it).

use clap::Parser;
use loom_aie2p_isa::{decode_one, elf, parse_bundle, print_bundle, Bundle};
use loom_isa_tools::{finish, located, read_input, Failure};
use std::fmt::Write as _;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "loom-mc",
    about = "Assemble and disassemble AIE2P bundles, as llvm-mc does"
)]
struct Cli {
    /// Input file, `-` (the default) for standard input.
    #[arg(default_value = "-")]
    input: String,
    /// Show each bundle's encoding after its text.
    #[arg(long)]
    show_encoding: bool,
    /// Read hex bytes and print the bundles they hold.
    #[arg(long, conflicts_with_all = ["show_encoding", "filetype"])]
    disassemble: bool,
    /// What to write: the text (`asm`) or a core ELF (`obj`, needs -o).
    #[arg(long, value_enum, default_value = "asm")]
    filetype: FileType,
    /// Output file (standard output for text).
    #[arg(short = 'o', value_name = "FILE")]
    output: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FileType {
    Asm,
    Obj,
}

fn without_comment(line: &str) -> &str {
    line.find("//").map_or(line, |at| &line[..at])
}

/// The text (with encodings if asked) and the program's bytes.
fn assemble(name: &str, text: &str, show_encoding: bool) -> Result<(String, Vec<u8>), Failure> {
    let mut out = String::new();
    let mut program = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let source = without_comment(line);
        if source.trim().is_empty() {
            continue;
        }
        let fail = |column: usize, message: String| located(name, text, n + 1, column + 1, message);
        let instructions =
            parse_bundle(source).map_err(|e| fail(e.column().unwrap_or(0), e.to_string()))?;
        let first = source.len() - source.trim_start().len();
        let bundle = Bundle::pack(instructions).map_err(|e| fail(first, e.to_string()))?;
        let bytes = bundle.encode().map_err(|e| fail(first, e.to_string()))?;
        let text = print_bundle(&bundle);
        program.extend(&bytes);
        if show_encoding {
            let hex: Vec<String> = bytes.iter().map(|b| format!("{b:#04x}")).collect();
            let _ = writeln!(out, "\t{text:<40}// encoding: [{}]", hex.join(","));
        } else {
            let _ = writeln!(out, "\t{text}");
        }
    }
    Ok((out, program))
}

/// Write `bytes` to `path` whole or not at all.
fn write_file(path: &str, bytes: &[u8]) -> Result<(), Failure> {
    let staged = format!("{path}.loom-mc-{}", std::process::id());
    std::fs::write(&staged, bytes)
        .and_then(|()| std::fs::rename(&staged, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&staged);
            loom_isa_tools::error(format!("cannot write {path}: {e}"))
        })
}

/// The bytes of one line of hex, each byte with its column.
fn hex_bytes(line: &str) -> Result<Vec<(usize, u8)>, (usize, String)> {
    let mut out = Vec::new();
    let mut at = 0;
    for token in line.split(|c: char| c.is_whitespace() || c == ',') {
        if !token.is_empty() {
            let digits = token
                .strip_prefix("0x")
                .or_else(|| token.strip_prefix("0X"))
                .unwrap_or(token);
            match u8::from_str_radix(digits, 16) {
                Ok(b) if digits.len() <= 2 => out.push((at, b)),
                _ => return Err((at, format!("`{token}` is not a byte in hex"))),
            }
        }
        at += token.len() + 1;
    }
    Ok(out)
}

fn disassemble(name: &str, text: &str) -> Result<String, Failure> {
    let mut out = String::new();
    for (n, line) in text.lines().enumerate() {
        let source = without_comment(line);
        let fail = |column: usize, message: String| located(name, text, n + 1, column + 1, message);
        let bytes = hex_bytes(source).map_err(|(at, message)| fail(at, message))?;
        if bytes.is_empty() {
            continue;
        }
        let values: Vec<u8> = bytes.iter().map(|&(_, b)| b).collect();
        let mut at = 0;
        while at < values.len() {
            // An error points at the byte its bundle starts at.
            let (bundle, size) =
                decode_one(&values[at..], at).map_err(|e| fail(bytes[at].0, e.to_string()))?;
            let _ = writeln!(out, "\t{}", print_bundle(&bundle));
            at += size;
        }
    }
    Ok(out)
}

fn run(cli: Cli) -> Result<String, Failure> {
    let (name, bytes) = read_input(&cli.input)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| loom_isa_tools::error(format!("{name} is not UTF-8 text")))?;
    if cli.disassemble {
        return disassemble(&name, &text);
    }
    let (out, program) = assemble(&name, &text, cli.show_encoding)?;
    match (cli.filetype, &cli.output) {
        (FileType::Asm, None) => Ok(out),
        (FileType::Asm, Some(path)) => write_file(path, out.as_bytes()).map(|()| String::new()),
        (FileType::Obj, Some(path)) => {
            let image = elf::CoreImage {
                program,
                data: vec![],
                entry: 0,
            };
            let bytes =
                elf::write(&image).map_err(|e| loom_isa_tools::error(format!("{name}: {e}")))?;
            write_file(path, &bytes).map(|()| String::new())
        }
        (FileType::Obj, None) => Err(loom_isa_tools::error(
            "--filetype=obj writes a core ELF: give -o FILE",
        )),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help and version are not errors; a bad flag exits 1 as the other tools do.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::FAILURE;
        }
    };
    finish(run(cli))
}
