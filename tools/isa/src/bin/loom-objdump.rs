//! loom-objdump: what an `.xdna` holds, as llvm-objdump shows an object:
//! `-d` disassembles its TXN control code with the register names of its
//! device profile (what `loom-compile --format=txn-text` prints), and lists
//! its tile images and PDIs, disassembling each worker image that is a core
//! ELF (machine code). On an AIE2P core ELF (EM_AIE), `-d`
//! disassembles its program with addresses and bytes, as `llvm-objdump -d`
//! prints a core's code (with the source lines of its line table between), and lists its data segments; `--raw` does the same
//! for a file of bare bundles.

use clap::Parser;
use loom_aie2p_isa::{decode_one, print_bundle};
use loom_isa_tools::{error, read_input, Failure};
use loom_targets::xdna::{elf, txn::Txn};
use std::fmt::Write as _;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "loom-objdump",
    about = "Show the control code, tile images and PDIs of an .xdna, or disassemble AIE2P bundles"
)]
struct Cli {
    /// The file, `-` for standard input.
    input: String,
    /// Disassemble the control code (and list the images).
    #[arg(short = 'd', long = "disassemble")]
    disassemble: bool,
    /// The input is bare AIE2P bundles (a core's program memory).
    #[arg(long)]
    raw: bool,
}

fn raw(name: &str, bytes: &[u8]) -> Result<String, Failure> {
    let mut out = format!("{name}:\tfile format aie2p bundles\n\nDisassembly:\n\n");
    out.push_str(&bundles(name, bytes, &[])?);
    Ok(out)
}

fn core(name: &str, bytes: &[u8], disassemble: bool) -> Result<String, Failure> {
    let image = loom_aie2p_isa::elf::read(bytes).map_err(|e| error(format!("{name}: {e}")))?;
    let mut out = format!(
        "{name}:\tfile format elf32-aie2p\nentry {:#x}, program {} bytes\n",
        image.entry,
        image.program.len()
    );
    for d in &image.data {
        let _ = writeln!(
            out,
            "data [{:#x}, {:#x}): {} bytes, {} zero-filled",
            d.address,
            u64::from(d.address) + d.bytes.len() as u64 + u64::from(d.zeroed),
            d.bytes.len(),
            d.zeroed
        );
    }
    if disassemble {
        let lines = loom_aie2p_isa::elf::lines(bytes).map_err(|e| error(format!("{name}: {e}")))?;
        let _ = writeln!(out, "\nDisassembly of the program:\n");
        out.push_str(&bundles(name, &image.program, &lines)?);
    }
    Ok(out)
}

/// The source line a location names, when its file can be read (as
/// `llvm-objdump -S` shows source beside code).
fn source_line(location: &str) -> Option<String> {
    let mut parts = location.rsplitn(3, ':');
    let (_, line, file) = (parts.next()?, parts.next()?, parts.next()?);
    let line: usize = line.parse().ok()?;
    let text = std::fs::read_to_string(file).ok()?;
    text.lines()
        .nth(line.checked_sub(1)?)
        .map(|l| l.trim().to_string())
}

/// One line per bundle: address, bytes, text; where the line table starts
/// a source location, the location and its source line above.
fn bundles(
    name: &str,
    bytes: &[u8],
    lines: &[loom_aie2p_isa::elf::LineRecord],
) -> Result<String, Failure> {
    let mut out = String::new();
    let mut at = 0;
    while at < bytes.len() {
        for l in lines.iter().filter(|l| l.address as usize == at) {
            match source_line(&l.location) {
                Some(text) => {
                    let _ = writeln!(out, "; {}: {text}", l.location);
                }
                None => {
                    let _ = writeln!(out, "; {}", l.location);
                }
            }
        }
        let (bundle, size) =
            decode_one(&bytes[at..], at).map_err(|e| error(format!("{name}: {e}")))?;
        let hex: Vec<String> = bytes[at..at + size]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let _ = writeln!(
            out,
            "{at:8x}: {:<48}{}",
            hex.join(" "),
            print_bundle(&bundle)
        );
        at += size;
    }
    Ok(out)
}

/// EM_AIE at e_machine of an ELF32 (a core ELF), else the `.xdna` reader.
fn is_core_elf(bytes: &[u8]) -> bool {
    bytes.get(..4) == Some(b"\x7fELF")
        && bytes.get(18..20) == Some(&loom_aie2p_isa::elf::EM_AIE.to_le_bytes()[..])
}

fn xdna(name: &str, bytes: &[u8], disassemble: bool) -> Result<String, Failure> {
    let artifact = elf::read(bytes).map_err(|e| error(format!("{name}: {e}")))?;
    let Some(profile) = loom_targets::profiles()
        .iter()
        .find(|p| p.name == artifact.profile)
    else {
        return Err(error(format!(
            "{name}: unknown device profile `{}`",
            artifact.profile
        )));
    };
    let mut out = format!(
        "{name}:\tfile format xdna (aie2p, {}, {} column{})\n",
        profile.name,
        artifact.columns,
        if artifact.columns == 1 { "" } else { "s" }
    );
    let loadable = match (&artifact.not_loadable_reason, &artifact.caveat) {
        (None, None) => "device-loadable".to_string(),
        (None, Some(caveat)) => format!("device-loadable ({caveat})"),
        (Some(reason), _) => format!("not device-loadable: {reason}"),
    };
    let _ = writeln!(out, "{loadable}\n");
    if disassemble {
        let txn = Txn::decode(&artifact.ctrltext)
            .map_err(|e| error(format!("{name}: .ctrltext: {e}")))?;
        let _ = writeln!(
            out,
            "Disassembly of section .ctrltext:\n{}",
            txn.disassemble(profile)
        );
    }
    for image in &artifact.tile_images {
        let section = elf::tile_section_name(image);
        let form = if image.is_core_elf() {
            "AIE2P core ELF"
        } else {
            "Low aie2p IR, not machine code"
        };
        let _ = writeln!(
            out,
            "Section {section}: tile [{}, {}] image, {} bytes ({form})",
            image.column,
            image.row,
            image.bytes.len()
        );
        if disassemble && image.is_core_elf() {
            // Each worker's program, as `loom-objdump -d` shows a core ELF.
            let shown = core(&format!("{name}, {section}"), &image.bytes, true)?;
            let _ = writeln!(out, "{shown}");
        }
    }
    for pdi in &artifact.pdis {
        let _ = writeln!(
            out,
            "Section {}: PDI, {} bytes, loaded by {} LOADPDI op{}",
            elf::pdi_section_name(pdi),
            pdi.bytes.len(),
            pdi.loads.len(),
            if pdi.loads.len() == 1 { "" } else { "s" }
        );
    }
    Ok(out)
}

fn run(cli: Cli) -> Result<String, Failure> {
    let (name, bytes) = read_input(&cli.input)?;
    if cli.raw {
        raw(&name, &bytes)
    } else if is_core_elf(&bytes) {
        core(&name, &bytes, cli.disassemble)
    } else {
        xdna(&name, &bytes, cli.disassemble)
    }
}

fn main() -> ExitCode {
    loom_isa_tools::main_with(run)
}
