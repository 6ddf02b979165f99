//! The `.xdna` artifact: one ELF32 file that XRT's full-ELF flow can load
//! (the aie2p "config" flavour that aiebu writes) and that Loom's array
//! simulator and HAL read back with [`read`].
//!
//! Sections, in file order (section indices follow the same order):
//! - `.ctrltext`: the TXN control code; PROGBITS, ALLOC|EXECINSTR, in the first
//!   PT_LOAD (R+X).
//! - `.dynsym`, `.dynstr`, `.rela.dyn`, `.dynamic`: one Elf32_Rela per argument
//!   patch, in the second PT_LOAD (R+W) with PT_DYNAMIC over `.dynamic`.
//! - `.note.xrt.configuration`: owner "XRT", type 6, the u32 partition column
//!   count; its presence is what makes XRT treat the file as a full ELF.
//! - `.note.loom`: owner "Loom"; the profile name, `device_loadable`, the reason
//!   when not loadable, the caveat of a loadable one (unverified on hardware),
//!   and the entry's argument names.
//! - `.tile.<col>_<row>.<name>`: one non-allocated section per tile image
//!   (Loom's convention; XRT ignores them): the worker's Low aie2p IR text, or
//!   its core ELF (`TileImage::is_core_elf`).
//! - `.pdi.<id>`: one non-allocated section per PDI the control code loads
//!   (aiebu's name); XRT copies each into a device buffer and writes its
//!   address into the LOADPDI ops through the `.pdi.<id>` dynamic symbol's
//!   `address_64` relocations, and submits the run as
//!   ERT_START_NPU_PREEMPT_ELF (xrt_elf.cpp `get_ert_opcode`).
//! - `.group.0`: the COMDAT group that binds `.ctrltext` and the PDIs to the
//!   entry's kernel.
//! - `.symtab`, `.strtab`, `.shstrtab`.

use std::fmt;

use object::elf;
use object::endian::{Endianness, LittleEndian};
use object::read::elf::{
    FileHeader as _, ProgramHeader as _, Rela as _, SectionHeader as _, SectionTable, Sym as _,
};
use object::read::{SectionIndex, SymbolIndex};
use object::write::elf::{FileHeader, ProgramHeader, Rel, SectionHeader, Sym, Writer};

/// XRT's `elf::platform::aie2p` (xrt_elf.h) and aiebu's `osabi_aie2p`.
const OSABI_AIE2P: u8 = 0x45;
/// aiebu `elf_version_config` (2.1). XRT reads aie2p ELFs with a major version
/// of 1 or more as group ELFs, the only kind whose kernels it can name; the
/// non-config 0x02 is for the xclbin flow, and with `.note.xrt.configuration`
/// neither flow would take it.
const ABI_VERSION_CONFIG: u8 = 0x21;
/// aiebu's `elf_writer` writes control-code ELFs with EM_M32.
const MACHINE: u16 = elf::EM_M32.0;
/// aiebu `NT_XRT_PARTITION_SIZE`.
const NT_XRT_PARTITION_SIZE: u32 = 6;
// Loom's note types; 1 and 2 would be shown by readelf as NT_VERSION/NT_ARCH.
const NT_LOOM_PROFILE: u32 = 0x10;
const NT_LOOM_LOADABLE: u32 = 0x11;
const NT_LOOM_NOT_LOADABLE_REASON: u32 = 0x12;
const NT_LOOM_ARG_NAMES: u32 = 0x13;
const NT_LOOM_CAVEAT: u32 = 0x14;
const XRT_OWNER: &[u8] = b"XRT";
const LOOM_OWNER: &[u8] = b"Loom";
const TILE_PREFIX: &str = ".tile.";
const PDI_PREFIX: &str = ".pdi.";
const GROUP_NAME: &[u8] = b".group.0";
/// XRT (elf_patcher.h `section_names`) picks sections by substring: a tile
/// section containing one of these would be taken for control code or a PDI.
const XRT_SECTION_PATTERNS: [&str; 8] = [
    ".ctrltext",
    ".ctrldata",
    ".preempt_save",
    ".preempt_restore",
    ".pdi",
    ".ctrlpkt",
    ".pad",
    ".dump",
];
const PROGRAM_HEADERS: u32 = 3;
const DYNAMIC_ENTRIES: usize = 8;
const CTRLTEXT_ALIGN: u64 = 16;
/// sizeof(Elf32_Rela) and sizeof(Elf32_Sym).
const RELA_SIZE: u64 = 12;
const SYM_SIZE: u64 = 16;

/// Everything a compiled Loom program puts in its `.xdna` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// The exact device profile the image is admitted for.
    pub profile: String,
    /// Partition width in columns (`.note.xrt.configuration`).
    pub columns: u32,
    /// The TXN control code.
    pub ctrltext: Vec<u8>,
    pub patches: Vec<Patch>,
    /// Exactly one today: XRT binds one control-code section to one kernel.
    pub entries: Vec<Entry>,
    pub tile_images: Vec<TileImage>,
    /// The PDIs the control code's LOADPDI ops name, by id.
    pub pdis: Vec<Pdi>,
    /// False when the image must not be sent to a device (say, untested
    /// encodings); `not_loadable_reason` then says why.
    pub device_loadable: bool,
    pub not_loadable_reason: Option<String>,
    /// What a user should know of a loadable image (it has not run on
    /// hardware).
    pub caveat: Option<String>,
}

/// Where XRT writes an argument's address into `.ctrltext`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Patch {
    /// Index into the entry's arguments; written as the decimal symbol name.
    pub arg_index: u32,
    /// Byte offset in `.ctrltext` (Elf32_Rela r_offset). For `ShimDma48` this
    /// is the BD's first word: XRT rewrites words 1 and 2 (address low/high)
    /// relative to it (elf_patcher.cpp `patch_shim48`).
    pub ctrltext_offset: u32,
    pub schema: PatchSchema,
    /// Added to the buffer address (r_addend), e.g. an offset into the buffer.
    pub addend: u32,
}

/// XRT's `elf_patcher::symbol_type` values, used as r_type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchSchema {
    /// `scalar_32bit_kind`: one word replaced under the symbol's mask.
    Scalar32 = 3,
    /// `shim_dma_48`: a shim BD's 48-bit address (words 1-2 of the BD);
    /// XRT adds the buffer address, the addend and the 0x8000_0000 DDR offset
    /// to what the words hold.
    ShimDma48 = 5,
    /// `address_64`: two words, low then high, set to the buffer address.
    Address64 = 8,
}

impl PatchSchema {
    fn from_code(code: u32) -> Option<Self> {
        match code {
            3 => Some(Self::Scalar32),
            5 => Some(Self::ShimDma48),
            8 => Some(Self::Address64),
            _ => None,
        }
    }

    /// Bytes XRT touches from the patch offset.
    fn span(self) -> usize {
        match self {
            Self::Scalar32 => 4,
            Self::ShimDma48 => 12,
            Self::Address64 => 8,
        }
    }

    /// XRT uses st_size as the scalar mask (a zero mask patches nothing);
    /// a patch without its own mask replaces the whole word.
    fn symbol_size(self) -> u32 {
        match self {
            Self::Scalar32 => u32::MAX,
            Self::ShimDma48 | Self::Address64 => 0,
        }
    }
}

/// A public pipeline as XRT sees it: a kernel with pointer arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub args: Vec<EntryArg>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryArg {
    pub name: String,
    pub kind: ArgKind,
}

/// XRT's ELF flow only has global (pointer) arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    Buffer,
}

/// A PDI carried as `.pdi.<id>`, and where the control code loads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pdi {
    pub id: u16,
    pub bytes: Vec<u8>,
    /// Byte offsets in `.ctrltext` of the address words (low, high) of each
    /// LOADPDI op of this PDI, which the loader sets to the PDI's buffer.
    pub loads: Vec<u32>,
}

/// The section that holds `pdi` (`.pdi.<id>`, aiebu `get_pdi_name`).
pub fn pdi_section_name(pdi: &Pdi) -> String {
    format!("{PDI_PREFIX}{}", pdi.id)
}

/// A program or data image for one tile, carried for Loom's own loaders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileImage {
    pub column: u32,
    pub row: u32,
    /// `[A-Za-z0-9_]+`, so the section name stays parseable.
    pub name: String,
    pub bytes: Vec<u8>,
}

impl TileImage {
    /// Whether the image is a core ELF (machine code) rather than Low IR
    /// text, which never starts with the ELF magic.
    pub fn is_core_elf(&self) -> bool {
        self.bytes.starts_with(b"\x7fELF")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElfError {
    /// `write` refused an artifact that would give a wrong or unloadable file.
    InvalidArtifact(String),
    /// The ELF encoder failed (e.g. the file would pass 4 GiB).
    Encode(String),
    NotElf,
    WrongClass(u8),
    WrongEndian(u8),
    WrongOsAbi(u8),
    WrongAbiVersion(u8),
    WrongType(u16),
    WrongMachine(u16),
    MissingSection(&'static str),
    BadNote {
        section: &'static str,
        reason: String,
    },
    BadSymbol(String),
    BadRelocation(String),
    BadTileSection(String),
    /// Headers or tables that do not parse, or contents that break the
    /// artifact's invariants.
    Malformed(String),
}

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidArtifact(m) => write!(f, "cannot write this artifact: {m}"),
            Self::Encode(m) => write!(f, "ELF encoding failed: {m}"),
            Self::NotElf => write!(f, "not an ELF file"),
            Self::WrongClass(c) => write!(f, "ELF class {c} is not ELFCLASS32"),
            Self::WrongEndian(d) => write!(f, "ELF data encoding {d} is not little-endian"),
            Self::WrongOsAbi(a) => {
                write!(f, "EI_OSABI {a:#04x} is not aie2p ({OSABI_AIE2P:#04x})")
            }
            Self::WrongAbiVersion(v) => write!(
                f,
                "EI_ABIVERSION {v:#04x} is not the config flavour ({ABI_VERSION_CONFIG:#04x})"
            ),
            Self::WrongType(t) => write!(f, "e_type {t} is not ET_EXEC"),
            Self::WrongMachine(m) => write!(f, "e_machine {m} is not EM_M32 ({MACHINE})"),
            Self::MissingSection(s) => write!(f, "missing section {s}"),
            Self::BadNote { section, reason } => write!(f, "bad note in {section}: {reason}"),
            Self::BadSymbol(m) => write!(f, "bad symbol: {m}"),
            Self::BadRelocation(m) => write!(f, "bad relocation in .rela.dyn: {m}"),
            Self::BadTileSection(m) => write!(f, "bad tile image section: {m}"),
            Self::Malformed(m) => write!(f, "malformed .xdna file: {m}"),
        }
    }
}

impl std::error::Error for ElfError {}

fn malformed(e: impl fmt::Display) -> ElfError {
    ElfError::Malformed(e.to_string())
}

fn encode(e: object::write::Error) -> ElfError {
    ElfError::Encode(e.to_string())
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The section that holds tile image `t` (`.tile.<col>_<row>.<name>`).
pub fn tile_section_name(t: &TileImage) -> String {
    format!("{TILE_PREFIX}{}_{}.{}", t.column, t.row, t.name)
}

/// The invariants both `write` and `read` hold an artifact to; returns its
/// one entry.
fn validate(a: &Artifact) -> Result<&Entry, String> {
    if a.profile.is_empty() {
        return Err("the profile name is empty".into());
    }
    if a.columns == 0 {
        return Err("the partition has no columns".into());
    }
    if a.ctrltext.is_empty() {
        return Err(".ctrltext is empty".into());
    }
    match (a.device_loadable, &a.not_loadable_reason) {
        (true, None) => {}
        (false, Some(r)) if !r.is_empty() => {}
        (true, Some(_)) => return Err("a loadable artifact carries a not-loadable reason".into()),
        (false, _) => return Err("a not-loadable artifact needs a non-empty reason".into()),
    }
    let [entry] = a.entries.as_slice() else {
        return Err(format!(
            "XRT binds one control-code section to one kernel: expected 1 entry, got {}",
            a.entries.len()
        ));
    };
    if !is_identifier(&entry.name) {
        return Err(format!("entry name {:?} is not an identifier", entry.name));
    }
    for arg in &entry.args {
        if arg.name.is_empty() || arg.name.contains('\0') {
            return Err(format!(
                "argument name {:?} of {} is empty or holds NUL",
                arg.name, entry.name
            ));
        }
    }
    let mut schemas = std::collections::BTreeMap::new();
    for p in &a.patches {
        if p.arg_index as usize >= entry.args.len() {
            return Err(format!(
                "patch at {:#x} names argument {} but {} has {}",
                p.ctrltext_offset,
                p.arg_index,
                entry.name,
                entry.args.len()
            ));
        }
        let fits = (p.ctrltext_offset as usize)
            .checked_add(p.schema.span())
            .is_some_and(|end| end <= a.ctrltext.len());
        if !p.ctrltext_offset.is_multiple_of(4) || !fits {
            return Err(format!(
                "{:?} patch at {:#x} is unaligned or overruns .ctrltext ({} bytes)",
                p.schema,
                p.ctrltext_offset,
                a.ctrltext.len()
            ));
        }
        // XRT keeps one schema per symbol name and applies it to all of
        // that symbol's relocations.
        if *schemas.entry(p.arg_index).or_insert(p.schema) != p.schema {
            return Err(format!(
                "argument {} is patched with two schemas",
                p.arg_index
            ));
        }
        // XRT ignores the addend of these schemas and drops the low two bits
        // of a shim address: such an addend would silently be lost.
        let addend_kept = match p.schema {
            PatchSchema::ShimDma48 => p.addend.is_multiple_of(4),
            PatchSchema::Scalar32 | PatchSchema::Address64 => p.addend == 0,
        };
        if !addend_kept {
            return Err(format!(
                "XRT would not apply addend {:#x} of the {:?} patch at {:#x}",
                p.addend, p.schema, p.ctrltext_offset
            ));
        }
    }
    let mut ids = std::collections::BTreeSet::new();
    for pdi in &a.pdis {
        if !ids.insert(pdi.id) {
            return Err(format!("two PDIs are both {}", pdi_section_name(pdi)));
        }
        if pdi.bytes.is_empty() || pdi.loads.is_empty() {
            return Err(format!(
                "{} is empty or loaded by no LOADPDI",
                pdi_section_name(pdi)
            ));
        }
        for &at in &pdi.loads {
            let fits = (at as usize)
                .checked_add(PatchSchema::Address64.span())
                .is_some_and(|end| end <= a.ctrltext.len());
            if !at.is_multiple_of(4) || !fits {
                return Err(format!(
                    "the LOADPDI address of {} at {at:#x} is unaligned or overruns .ctrltext",
                    pdi_section_name(pdi)
                ));
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for t in &a.tile_images {
        let section = tile_section_name(t);
        let charset_ok = !t.name.is_empty()
            && t.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !charset_ok {
            return Err(format!("tile image name {:?} is not [A-Za-z0-9_]+", t.name));
        }
        if let Some(p) = XRT_SECTION_PATTERNS.iter().find(|p| section.contains(*p)) {
            return Err(format!("{section} would be read by XRT as a {p} section"));
        }
        if !seen.insert(section.clone()) {
            return Err(format!("two tile images are both {section}"));
        }
    }
    Ok(entry)
}

/// Itanium-style name XRT demangles (xrt_elf.cpp `demangle`): `_Z<len><name>`
/// then `Pc` (char*) per argument. No arguments gives no parameter codes at
/// all: XRT would read Itanium's `v` as a scalar `void` argument and refuse it.
fn mangle(entry: &Entry) -> String {
    let mut s = format!("_Z{}{}", entry.name.len(), entry.name);
    for arg in &entry.args {
        s.push_str(match arg.kind {
            ArgKind::Buffer => "Pc",
        });
    }
    s
}

/// Inverse of [`mangle`]: the entry name and its argument count.
fn demangle(symbol: &str) -> Option<(String, usize)> {
    let rest = symbol.strip_prefix("_Z")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let len: usize = rest.get(..digits)?.parse().ok()?;
    let rest = &rest[digits..];
    let name = rest.get(..len)?;
    let params = &rest[len..];
    let count = params.len() / 2;
    let canonical = format!("_Z{len}{name}{}", "Pc".repeat(count));
    (canonical == symbol).then(|| (name.to_string(), count))
}

fn push_note(out: &mut Vec<u8>, owner: &[u8], kind: u32, desc: &[u8]) -> Result<(), ElfError> {
    let len32 = |n: usize| {
        u32::try_from(n).map_err(|_| ElfError::InvalidArtifact("a note is over 4 GiB".into()))
    };
    out.extend_from_slice(&len32(owner.len() + 1)?.to_le_bytes());
    out.extend_from_slice(&len32(desc.len())?.to_le_bytes());
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(owner);
    out.push(0);
    out.resize(out.len().next_multiple_of(4), 0);
    out.extend_from_slice(desc);
    out.resize(out.len().next_multiple_of(4), 0);
    Ok(())
}

fn loom_notes(a: &Artifact, entry: &Entry) -> Result<Vec<u8>, ElfError> {
    let mut out = Vec::new();
    push_note(&mut out, LOOM_OWNER, NT_LOOM_PROFILE, a.profile.as_bytes())?;
    let loadable = u32::from(a.device_loadable).to_le_bytes();
    push_note(&mut out, LOOM_OWNER, NT_LOOM_LOADABLE, &loadable)?;
    if let Some(reason) = &a.not_loadable_reason {
        push_note(
            &mut out,
            LOOM_OWNER,
            NT_LOOM_NOT_LOADABLE_REASON,
            reason.as_bytes(),
        )?;
    }
    if let Some(caveat) = &a.caveat {
        push_note(&mut out, LOOM_OWNER, NT_LOOM_CAVEAT, caveat.as_bytes())?;
    }
    let mut names = Vec::new();
    for arg in &entry.args {
        names.extend_from_slice(arg.name.as_bytes());
        names.push(0);
    }
    push_note(&mut out, LOOM_OWNER, NT_LOOM_ARG_NAMES, &names)?;
    Ok(out)
}

/// Encode `artifact` as an `.xdna` ELF. The same artifact always gives the
/// same bytes.
pub fn write(artifact: &Artifact) -> Result<Vec<u8>, ElfError> {
    let entry = validate(artifact).map_err(ElfError::InvalidArtifact)?;

    let mut xrt_note = Vec::new();
    push_note(
        &mut xrt_note,
        XRT_OWNER,
        NT_XRT_PARTITION_SIZE,
        &artifact.columns.to_le_bytes(),
    )?;
    let loom_note = loom_notes(artifact, entry)?;
    let kernel_name = mangle(entry);
    let tile_names: Vec<String> = artifact.tile_images.iter().map(tile_section_name).collect();

    // One dynamic symbol per patched argument, in first-use order; XRT makes
    // one patcher of a symbol's relocations.
    let mut dyn_syms: Vec<&Patch> = Vec::new();
    let mut patch_sym = Vec::with_capacity(artifact.patches.len());
    for p in &artifact.patches {
        let at = match dyn_syms.iter().position(|d| d.arg_index == p.arg_index) {
            Some(i) => i,
            None => {
                dyn_syms.push(p);
                dyn_syms.len() - 1
            }
        };
        patch_sym.push(at);
    }
    let mut dyn_names: Vec<String> = dyn_syms.iter().map(|p| p.arg_index.to_string()).collect();
    // Then one per PDI, which XRT recognises by "pdi" in its name.
    let pdi_names: Vec<String> = artifact.pdis.iter().map(pdi_section_name).collect();
    dyn_names.extend(pdi_names.iter().cloned());
    let relocations =
        artifact.patches.len() + artifact.pdis.iter().map(|p| p.loads.len()).sum::<usize>();

    let mut out = Vec::new();
    let mut w = Writer::new(Endianness::Little, false, &mut out);

    // Phase 1: names, indices and file ranges.
    w.reserve_file_header();
    w.reserve_program_headers(PROGRAM_HEADERS);

    let ctrltext_name = w.add_section_name(b".ctrltext");
    let ctrltext_index = w.reserve_section_index();
    w.reserve_dynsym_section_index();
    w.reserve_dynstr_section_index();
    let rela_name = w.add_section_name(b".rela.dyn");
    w.reserve_section_index();
    w.reserve_dynamic_section_index();
    let xrt_note_name = w.add_section_name(b".note.xrt.configuration");
    w.reserve_section_index();
    let loom_note_name = w.add_section_name(b".note.loom");
    w.reserve_section_index();
    let tile_ids: Vec<_> = tile_names
        .iter()
        .map(|n| {
            let id = w.add_section_name(n.as_bytes());
            w.reserve_section_index();
            id
        })
        .collect();
    let pdi_ids: Vec<_> = pdi_names
        .iter()
        .map(|n| {
            let id = w.add_section_name(n.as_bytes());
            (id, w.reserve_section_index())
        })
        .collect();
    let group_name = w.add_section_name(GROUP_NAME);
    w.reserve_section_index();
    let symtab_index = w.reserve_symtab_section_index();
    w.reserve_strtab_section_index();
    w.reserve_shstrtab_section_index();

    let dyn_ids: Vec<_> = dyn_names
        .iter()
        .map(|n| w.add_dynamic_string(n.as_bytes()))
        .collect();
    w.reserve_null_dynamic_symbol_index();
    let dyn_indices: Vec<_> = dyn_names
        .iter()
        .map(|_| w.reserve_dynamic_symbol_index())
        .collect();

    // XRT finds the kernel through the group's instance symbol, whose
    // st_shndx holds the kernel symbol's index (aiebu `add_symtab_section`).
    let kernel_str = w.add_string(kernel_name.as_bytes());
    let instance_str = w.add_string(entry.name.as_bytes());
    let kernel_sym = w.reserve_symbol_index(None);
    let instance_sym = w.reserve_symbol_index(None);

    let ctrltext_offset = w.reserve(artifact.ctrltext.len() as u64, CTRLTEXT_ALIGN);
    let dynsym_offset = w.reserve_dynsym();
    let dynstr_offset = w.reserve_dynstr().map_err(encode)?;
    let rela_offset = w.reserve_relocations(relocations, true);
    let rela_size = relocations as u64 * RELA_SIZE;
    let dynamic_offset = w.reserve_dynamic(DYNAMIC_ENTRIES);
    let dynamic_end = w.reserved_len();
    let xrt_note_offset = w.reserve(xrt_note.len() as u64, 4);
    let loom_note_offset = w.reserve(loom_note.len() as u64, 4);
    let tile_offsets: Vec<u64> = artifact
        .tile_images
        .iter()
        .map(|t| w.reserve(t.bytes.len() as u64, 4))
        .collect();
    let pdi_offsets: Vec<u64> = artifact
        .pdis
        .iter()
        .map(|p| w.reserve(p.bytes.len() as u64, 4))
        .collect();
    let group_offset = w.reserve_comdat(1 + artifact.pdis.len());
    w.reserve_symtab();
    w.reserve_strtab().map_err(encode)?;
    w.reserve_shstrtab().map_err(encode)?;
    w.reserve_section_headers();

    // Phase 2: bytes, in the reserved order. Loaded sections sit at
    // vaddr = file offset.
    w.write_file_header(&FileHeader {
        os_abi: elf::OsAbi(OSABI_AIE2P),
        abi_version: ABI_VERSION_CONFIG,
        e_type: elf::ET_EXEC,
        e_machine: elf::Machine(MACHINE),
        e_entry: 0,
        e_flags: elf::FileFlags(0),
    })
    .map_err(encode)?;
    w.write_align_program_headers();
    let ctrltext_len = artifact.ctrltext.len() as u64;
    w.write_program_header(&ProgramHeader {
        p_type: elf::PT_LOAD,
        p_flags: elf::PF_R | elf::PF_X,
        p_offset: ctrltext_offset,
        p_vaddr: ctrltext_offset,
        p_paddr: ctrltext_offset,
        p_filesz: ctrltext_len,
        p_memsz: ctrltext_len,
        p_align: CTRLTEXT_ALIGN,
    });
    w.write_program_header(&ProgramHeader {
        p_type: elf::PT_LOAD,
        p_flags: elf::PF_R | elf::PF_W,
        p_offset: dynsym_offset,
        p_vaddr: dynsym_offset,
        p_paddr: dynsym_offset,
        p_filesz: dynamic_end - dynsym_offset,
        p_memsz: dynamic_end - dynsym_offset,
        p_align: 4,
    });
    w.write_program_header(&ProgramHeader {
        p_type: elf::PT_DYNAMIC,
        p_flags: elf::PF_R | elf::PF_W,
        p_offset: dynamic_offset,
        p_vaddr: dynamic_offset,
        p_paddr: dynamic_offset,
        p_filesz: dynamic_end - dynamic_offset,
        p_memsz: dynamic_end - dynamic_offset,
        p_align: 4,
    });

    w.pad_until(ctrltext_offset);
    w.write(&artifact.ctrltext);

    w.write_null_dynamic_symbol();
    for (p, id) in dyn_syms.iter().zip(&dyn_ids) {
        w.write_dynamic_symbol(&Sym {
            // The patched section: XRT resolves r_offset inside it.
            section: Some(ctrltext_index.0),
            st_name: w.dynamic_string_offset(Some(*id)),
            st_info: elf::SymbolInfo::new(elf::STB_GLOBAL, elf::STT_OBJECT),
            st_other: elf::SymbolOther(0),
            st_shndx: elf::SymbolSection(0),
            st_value: 0,
            st_size: p.schema.symbol_size().into(),
        });
    }
    for (pdi, id) in artifact.pdis.iter().zip(&dyn_ids[dyn_syms.len()..]) {
        w.write_dynamic_symbol(&Sym {
            section: Some(ctrltext_index.0),
            st_name: w.dynamic_string_offset(Some(*id)),
            st_info: elf::SymbolInfo::new(elf::STB_GLOBAL, elf::STT_OBJECT),
            st_other: elf::SymbolOther(0),
            st_shndx: elf::SymbolSection(0),
            st_value: 0,
            // aiebu gives a PDI symbol the PDI's size.
            st_size: pdi.bytes.len() as u64,
        });
    }
    w.write_dynstr();

    w.write_align_relocation();
    for (p, &sym) in artifact.patches.iter().zip(&patch_sym) {
        w.write_relocation(
            true,
            &Rel {
                r_offset: p.ctrltext_offset.into(),
                r_sym: dyn_indices[sym].0,
                r_type: elf::RelocationType(p.schema as u32),
                // XRT reads r_addend back as a u32; keep its bits.
                r_addend: i64::from(p.addend as i32),
            },
        );
    }
    for (n, pdi) in artifact.pdis.iter().enumerate() {
        for &at in &pdi.loads {
            w.write_relocation(
                true,
                &Rel {
                    r_offset: at.into(),
                    r_sym: dyn_indices[dyn_syms.len() + n].0,
                    r_type: elf::RelocationType(PatchSchema::Address64 as u32),
                    r_addend: 0,
                },
            );
        }
    }

    w.write_align_dynamic();
    let dynamic = [
        (elf::DT_SYMTAB, dynsym_offset),
        (elf::DT_SYMENT, SYM_SIZE),
        (elf::DT_STRTAB, dynstr_offset),
        (elf::DT_STRSZ, w.dynstr_len().into()),
        (elf::DT_RELA, rela_offset),
        (elf::DT_RELASZ, rela_size),
        (elf::DT_RELAENT, RELA_SIZE),
        (elf::DT_NULL, 0),
    ];
    for (tag, value) in dynamic {
        w.write_dynamic(tag, value).map_err(encode)?;
    }

    w.pad_until(xrt_note_offset);
    w.write(&xrt_note);
    w.pad_until(loom_note_offset);
    w.write(&loom_note);
    for (t, &offset) in artifact.tile_images.iter().zip(&tile_offsets) {
        w.pad_until(offset);
        w.write(&t.bytes);
    }
    for (p, &offset) in artifact.pdis.iter().zip(&pdi_offsets) {
        w.pad_until(offset);
        w.write(&p.bytes);
    }

    w.pad_until(group_offset);
    w.write_comdat_header();
    w.write_comdat_entry(ctrltext_index);
    for (_, index) in &pdi_ids {
        w.write_comdat_entry(*index);
    }

    w.write_null_symbol();
    w.write_symbol(&Sym {
        section: None,
        st_name: w.string_offset(Some(kernel_str)),
        st_info: elf::SymbolInfo::new(elf::STB_WEAK, elf::STT_FUNC),
        st_other: elf::SymbolOther(0),
        st_shndx: elf::SHN_UNDEF,
        st_value: 0,
        st_size: 0,
    });
    w.write_symbol(&Sym {
        section: None,
        st_name: w.string_offset(Some(instance_str)),
        st_info: elf::SymbolInfo::new(elf::STB_WEAK, elf::STT_OBJECT),
        st_other: elf::SymbolOther(0),
        st_shndx: elf::SymbolSection::new(kernel_sym.0),
        st_value: 0,
        st_size: 0,
    });
    w.write_strtab();
    w.write_shstrtab();

    w.write_null_section_header();
    w.write_section_header(&SectionHeader {
        sh_name: w.section_name_offset(Some(ctrltext_name)),
        sh_type: elf::SHT_PROGBITS,
        sh_flags: elf::SHF_ALLOC | elf::SHF_EXECINSTR,
        sh_addr: ctrltext_offset,
        sh_offset: ctrltext_offset,
        sh_size: ctrltext_len,
        sh_addralign: CTRLTEXT_ALIGN,
        ..SectionHeader::default()
    });
    w.write_dynsym_section_header(dynsym_offset, 1);
    w.write_dynstr_section_header(dynstr_offset);
    let dynsym_index = w.dynsym_index();
    w.write_section_header(&SectionHeader {
        sh_name: w.section_name_offset(Some(rela_name)),
        sh_type: elf::SHT_RELA,
        sh_flags: elf::SHF_ALLOC,
        sh_addr: rela_offset,
        sh_offset: rela_offset,
        sh_size: rela_size,
        sh_link: dynsym_index.0,
        sh_addralign: 4,
        sh_entsize: RELA_SIZE,
        ..SectionHeader::default()
    });
    w.write_dynamic_section_header(dynamic_offset);
    for (name, offset, size) in [
        (xrt_note_name, xrt_note_offset, xrt_note.len()),
        (loom_note_name, loom_note_offset, loom_note.len()),
    ] {
        w.write_section_header(&SectionHeader {
            sh_name: w.section_name_offset(Some(name)),
            sh_type: elf::SHT_NOTE,
            sh_offset: offset,
            sh_size: size as u64,
            sh_addralign: 4,
            ..SectionHeader::default()
        });
    }
    for ((t, &offset), id) in artifact.tile_images.iter().zip(&tile_offsets).zip(tile_ids) {
        w.write_section_header(&SectionHeader {
            sh_name: w.section_name_offset(Some(id)),
            sh_type: elf::SHT_PROGBITS,
            sh_offset: offset,
            sh_size: t.bytes.len() as u64,
            sh_addralign: 4,
            ..SectionHeader::default()
        });
    }
    for ((p, &offset), (id, _)) in artifact.pdis.iter().zip(&pdi_offsets).zip(&pdi_ids) {
        w.write_section_header(&SectionHeader {
            sh_name: w.section_name_offset(Some(*id)),
            sh_type: elf::SHT_PROGBITS,
            sh_offset: offset,
            sh_size: p.bytes.len() as u64,
            sh_addralign: 4,
            ..SectionHeader::default()
        });
    }
    w.write_comdat_section_header(
        group_name,
        symtab_index,
        instance_sym,
        group_offset,
        1 + artifact.pdis.len(),
    );
    w.write_symtab_section_header(1);
    w.write_strtab_section_header();
    w.write_shstrtab_section_header();
    drop(w);
    Ok(out)
}

type Header = elf::FileHeader32<LittleEndian>;
type Sections<'d> = SectionTable<'d, Header, &'d [u8]>;
const LE: LittleEndian = LittleEndian;

/// Decode a file made by [`write`]. Anything else is rejected with an error
/// that names the first problem found; no input makes this panic.
pub fn read(bytes: &[u8]) -> Result<Artifact, ElfError> {
    let ident = identification(bytes)?;
    if ident[7] != OSABI_AIE2P {
        return Err(ElfError::WrongOsAbi(ident[7]));
    }
    if ident[8] != ABI_VERSION_CONFIG {
        return Err(ElfError::WrongAbiVersion(ident[8]));
    }
    let header = Header::parse(bytes).map_err(malformed)?;
    if header.e_type(LE) != elf::ET_EXEC {
        return Err(ElfError::WrongType(header.e_type(LE).0));
    }
    if header.e_machine(LE).0 != MACHINE {
        return Err(ElfError::WrongMachine(header.e_machine(LE).0));
    }
    let sections = header.sections(LE, bytes).map_err(malformed)?;
    check_segments(header, bytes)?;

    let (ctrltext_index, ctrltext) = find(&sections, ".ctrltext")?;
    if ctrltext.sh_type(LE) != elf::SHT_PROGBITS
        || ctrltext.sh_flags(LE) != elf::SHF_ALLOC | elf::SHF_EXECINSTR
    {
        return Err(malformed(format!(
            ".ctrltext is not allocated executable code (type {}, flags {:#x}; a .xdna writes SHT_PROGBITS, SHF_ALLOC|SHF_EXECINSTR)",
            ctrltext.sh_type(LE),
            ctrltext.sh_flags(LE)
        )));
    }
    let ctrltext = ctrltext.data(LE, bytes).map_err(malformed)?.to_vec();
    let columns = read_columns(&sections, bytes)?;
    let loom = read_loom_notes(&sections, bytes)?;
    let entry = read_entry(&sections, bytes, ctrltext_index, loom.arg_names)?;
    let (patches, pdi_loads) = read_patches(&sections, bytes, ctrltext_index)?;
    let tile_images = read_tiles(&sections, bytes)?;
    let pdis = read_pdis(&sections, bytes, pdi_loads)?;

    let artifact = Artifact {
        profile: loom.profile,
        columns,
        ctrltext,
        patches,
        entries: vec![entry],
        tile_images,
        pdis,
        device_loadable: loom.loadable,
        not_loadable_reason: loom.reason,
        caveat: loom.caveat,
    };
    validate(&artifact)
        .map_err(|m| ElfError::Malformed(format!("decoded artifact is inconsistent: {m}")))?;
    Ok(artifact)
}

/// The file header's sizes and the program headers as a loader reads them:
/// the header and entry sizes of ELF32, each segment a known type lying
/// inside the file, the PT_LOAD segments the writer makes (two) and one
/// PT_DYNAMIC.
fn check_segments(header: &Header, bytes: &[u8]) -> Result<(), ElfError> {
    let ehsize = header.e_ehsize(LE);
    if usize::from(ehsize) != std::mem::size_of::<Header>() {
        return Err(malformed(format!(
            "e_ehsize is {ehsize}; an ELF32 header has 52 bytes"
        )));
    }
    let phentsize = header.e_phentsize(LE);
    if usize::from(phentsize) != std::mem::size_of::<elf::ProgramHeader32<LittleEndian>>() {
        return Err(malformed(format!(
            "e_phentsize is {phentsize}; an ELF32 program header has 32 bytes"
        )));
    }
    let segments = header.program_headers(LE, bytes).map_err(malformed)?;
    let (mut loads, mut dynamics) = (0, 0);
    for (i, segment) in segments.iter().enumerate() {
        let kind = segment.p_type(LE);
        match kind {
            elf::PT_LOAD => loads += 1,
            elf::PT_DYNAMIC => dynamics += 1,
            _ => return Err(malformed(format!("program header {i} has type {kind:#x}; a .xdna has PT_LOAD and PT_DYNAMIC segments only"))),
        }
        let (offset, size) = (
            u64::from(segment.p_offset(LE)),
            u64::from(segment.p_filesz(LE)),
        );
        if offset
            .checked_add(size)
            .is_none_or(|end| end > bytes.len() as u64)
        {
            return Err(malformed(format!(
                "program header {i}: bytes [{offset}, {}) lie outside the file's {} bytes",
                u128::from(offset) + u128::from(size),
                bytes.len()
            )));
        }
        if segment.p_memsz(LE) < segment.p_filesz(LE) {
            return Err(malformed(format!(
                "program header {i}: p_memsz is below p_filesz"
            )));
        }
    }
    if (loads, dynamics) != (2, 1) {
        return Err(malformed(format!(
            "{loads} PT_LOAD and {dynamics} PT_DYNAMIC segments; a .xdna has 2 and 1"
        )));
    }
    Ok(())
}

/// The identification bytes of a 32-bit little-endian ELF.
fn identification(bytes: &[u8]) -> Result<&[u8], ElfError> {
    if bytes.get(..4) != Some(&elf::ELFMAG[..]) {
        return Err(ElfError::NotElf);
    }
    let ident = bytes
        .get(..16)
        .ok_or_else(|| malformed("truncated ELF identification"))?;
    if ident[4] != elf::ELFCLASS32.0 {
        return Err(ElfError::WrongClass(ident[4]));
    }
    if ident[5] != elf::ELFDATA2LSB.0 {
        return Err(ElfError::WrongEndian(ident[5]));
    }
    Ok(ident)
}

/// A section of any 32-bit little-endian ELF: its name, and its bytes in
/// the file (`None` for SHT_NOBITS).
pub struct AnySection<'d> {
    pub name: &'d [u8],
    pub data: Option<&'d [u8]>,
}

/// The sections of a 32-bit little-endian ELF from any producer, which
/// [`read`] would refuse unless Loom made it: the HAL also loads other
/// ELFs' control code (an XRT kernel's `.ctrltext`).
pub fn sections(bytes: &[u8]) -> Result<Vec<AnySection<'_>>, ElfError> {
    identification(bytes)?;
    let header = Header::parse(bytes).map_err(malformed)?;
    let table = header.sections(LE, bytes).map_err(malformed)?;
    table
        .iter()
        .map(|section| {
            let name = table.section_name(LE, section).map_err(malformed)?;
            let data = match section.sh_type(LE) {
                elf::SHT_NOBITS => None,
                _ => Some(section.data(LE, bytes).map_err(malformed)?),
            };
            Ok(AnySection { name, data })
        })
        .collect()
}

fn find<'d>(
    sections: &Sections<'d>,
    name: &'static str,
) -> Result<(SectionIndex, &'d elf::SectionHeader32<LittleEndian>), ElfError> {
    sections
        .section_by_name(LE, name.as_bytes())
        .ok_or(ElfError::MissingSection(name))
}

/// A note's (owner, type, desc).
type RawNote<'d> = (&'d [u8], u32, &'d [u8]);

/// Every note in the named section.
fn notes<'d>(
    sections: &Sections<'d>,
    bytes: &'d [u8],
    name: &'static str,
) -> Result<Vec<RawNote<'d>>, ElfError> {
    let bad = |reason: String| ElfError::BadNote {
        section: name,
        reason,
    };
    let (_, header) = find(sections, name)?;
    let mut iter = header
        .notes(LE, bytes)
        .map_err(|e| bad(e.to_string()))?
        .ok_or_else(|| bad("not a SHT_NOTE section".into()))?;
    let mut out = Vec::new();
    while let Some(note) = iter.next().map_err(|e| bad(e.to_string()))? {
        out.push((note.name(), note.n_type(LE).0, note.desc()));
    }
    Ok(out)
}

fn read_columns(sections: &Sections<'_>, bytes: &[u8]) -> Result<u32, ElfError> {
    const SECTION: &str = ".note.xrt.configuration";
    match notes(sections, bytes, SECTION)?.as_slice() {
        [(XRT_OWNER, NT_XRT_PARTITION_SIZE, &[a, b, c, d])] => Ok(u32::from_le_bytes([a, b, c, d])),
        found => Err(ElfError::BadNote {
            section: SECTION,
            reason: format!(
                "expected one \"XRT\" note of type {NT_XRT_PARTITION_SIZE} holding a u32, found {} note(s)",
                found.len()
            ),
        }),
    }
}

struct LoomNotes {
    profile: String,
    loadable: bool,
    reason: Option<String>,
    caveat: Option<String>,
    arg_names: Vec<String>,
}

fn read_loom_notes(sections: &Sections<'_>, bytes: &[u8]) -> Result<LoomNotes, ElfError> {
    const SECTION: &str = ".note.loom";
    let bad = |reason: String| ElfError::BadNote {
        section: SECTION,
        reason,
    };
    let text = |desc: &[u8], what: &str| {
        String::from_utf8(desc.to_vec()).map_err(|_| bad(format!("{what} is not UTF-8")))
    };
    let (mut profile, mut loadable, mut reason, mut arg_names) = (None, None, None, None);
    let mut caveat = None;
    for (owner, kind, desc) in notes(sections, bytes, SECTION)? {
        if owner != LOOM_OWNER {
            let owner = String::from_utf8_lossy(owner);
            return Err(bad(format!("note owner {owner:?} is not \"Loom\"")));
        }
        let first = match kind {
            NT_LOOM_PROFILE => profile.replace(text(desc, "the profile")?).is_none(),
            NT_LOOM_LOADABLE => {
                let flag = match desc {
                    [0, 0, 0, 0] => false,
                    [1, 0, 0, 0] => true,
                    _ => return Err(bad("device_loadable is not a u32 0 or 1".into())),
                };
                loadable.replace(flag).is_none()
            }
            NT_LOOM_NOT_LOADABLE_REASON => reason.replace(text(desc, "the reason")?).is_none(),
            NT_LOOM_CAVEAT => caveat.replace(text(desc, "the caveat")?).is_none(),
            NT_LOOM_ARG_NAMES => {
                let names = decode_arg_names(desc)
                    .ok_or_else(|| bad("argument names are not NUL-terminated UTF-8".into()))?;
                arg_names.replace(names).is_none()
            }
            other => return Err(bad(format!("unknown note type {other}"))),
        };
        if !first {
            return Err(bad(format!("note type {kind} appears twice")));
        }
    }
    Ok(LoomNotes {
        profile: profile.ok_or_else(|| bad("no profile note".into()))?,
        loadable: loadable.ok_or_else(|| bad("no device_loadable note".into()))?,
        reason,
        caveat,
        arg_names: arg_names.ok_or_else(|| bad("no argument-names note".into()))?,
    })
}

fn decode_arg_names(desc: &[u8]) -> Option<Vec<String>> {
    if desc.is_empty() {
        return Some(Vec::new());
    }
    desc.strip_suffix(&[0])?
        .split(|b| *b == 0)
        .map(|n| String::from_utf8(n.to_vec()).ok())
        .collect()
}

fn read_entry(
    sections: &Sections<'_>,
    bytes: &[u8],
    ctrltext_index: SectionIndex,
    arg_names: Vec<String>,
) -> Result<Entry, ElfError> {
    let mut groups = Vec::new();
    for section in sections.iter() {
        if let Some(group) = section.group(LE, bytes).map_err(malformed)? {
            groups.push((section, group));
        }
    }
    let [(group, (flags, members))] = groups.as_slice() else {
        return Err(malformed(format!(
            "expected one section group (one entry), found {}",
            groups.len()
        )));
    };
    if *flags != elf::GRP_COMDAT
        || !members
            .iter()
            .any(|m| m.get(LE) as usize == ctrltext_index.0)
    {
        return Err(malformed(
            "the section group is not a COMDAT holding .ctrltext",
        ));
    }
    let symtab = sections
        .symbols(LE, bytes, elf::SHT_SYMTAB)
        .map_err(malformed)?;
    if group.link(LE) != symtab.section() {
        return Err(ElfError::BadSymbol(
            "the section group does not link .symtab".into(),
        ));
    }
    let symbol = |index: usize, kind: elf::SymbolType, what: &str| {
        let bad = || {
            ElfError::BadSymbol(format!(
                "{what} (symbol {index}) is missing or not {kind:?}"
            ))
        };
        let sym = symtab.symbol(SymbolIndex(index)).map_err(|_| bad())?;
        if sym.st_type() != kind {
            return Err(bad());
        }
        symtab
            .symbol_name(LE, sym)
            .ok()
            .and_then(|n| std::str::from_utf8(n).ok())
            .map(|n| (sym, n))
            .ok_or_else(bad)
    };
    let (instance, instance_name) = symbol(
        group.sh_info(LE) as usize,
        elf::STT_OBJECT,
        "the group's instance",
    )?;
    let (_, kernel) = symbol(
        instance.st_shndx(LE).0.into(),
        elf::STT_FUNC,
        "the instance's kernel",
    )?;
    let (name, count) = demangle(kernel)
        .ok_or_else(|| ElfError::BadSymbol(format!("{kernel} is not _Z<len><name>(Pc)*")))?;
    if instance_name != name {
        return Err(ElfError::BadSymbol(format!(
            "instance {instance_name} does not match kernel {name}"
        )));
    }
    if count != arg_names.len() {
        return Err(ElfError::BadSymbol(format!(
            "{kernel} takes {count} arguments but .note.loom names {}",
            arg_names.len()
        )));
    }
    let args = arg_names
        .into_iter()
        .map(|name| EntryArg {
            name,
            kind: ArgKind::Buffer,
        })
        .collect();
    Ok(Entry { name, args })
}

/// Per PDI id, the `.ctrltext` offsets its relocations patch.
type PdiLoads = std::collections::BTreeMap<u16, Vec<u32>>;

/// The argument patches, and the PDI loads (relocations of `.pdi.<id>`
/// symbols).
fn read_patches(
    sections: &Sections<'_>,
    bytes: &[u8],
    ctrltext_index: SectionIndex,
) -> Result<(Vec<Patch>, PdiLoads), ElfError> {
    let dynsym = sections
        .symbols(LE, bytes, elf::SHT_DYNSYM)
        .map_err(malformed)?;
    let (_, rela) = find(sections, ".rela.dyn")?;
    let (relas, link) = rela
        .rela(LE, bytes)
        .map_err(malformed)?
        .ok_or_else(|| ElfError::BadRelocation("the section is not SHT_RELA".into()))?;
    if link != dynsym.section() {
        return Err(ElfError::BadRelocation("it does not link .dynsym".into()));
    }
    let mut patches = Vec::new();
    let mut loads = PdiLoads::new();
    for (i, r) in relas.iter().enumerate() {
        let bad = |m: String| ElfError::BadRelocation(format!("entry {i}: {m}"));
        let sym_index = r.r_sym(LE);
        let sym = dynsym
            .symbol(SymbolIndex(sym_index as usize))
            .map_err(|_| bad(format!("no dynamic symbol {sym_index}")))?;
        let name = dynsym.symbol_name(LE, sym).unwrap_or_default();
        if usize::from(sym.st_shndx(LE).0) != ctrltext_index.0 {
            return Err(bad("its symbol does not point at .ctrltext".into()));
        }
        if let Some(id) = name.strip_prefix(PDI_PREFIX.as_bytes()) {
            let id = decimal(id)
                .and_then(|n| u16::try_from(n).ok())
                .ok_or_else(|| {
                    bad(format!(
                        "symbol {:?} is not .pdi.<id>",
                        String::from_utf8_lossy(name)
                    ))
                })?;
            if r.r_type(LE).0 != PatchSchema::Address64 as u32 || r.r_addend(LE) != 0 {
                return Err(bad(format!(
                    "the load of .pdi.{id} is not an address_64 relocation without addend"
                )));
            }
            loads.entry(id).or_default().push(r.r_offset(LE));
            continue;
        }
        let patch = {
            let arg_index = decimal(name).ok_or_else(|| {
                let name = String::from_utf8_lossy(name);
                bad(format!("symbol {name:?} is not a decimal argument index"))
            })?;
            let code = r.r_type(LE).0;
            let schema = PatchSchema::from_code(code)
                .ok_or_else(|| bad(format!("r_type {code} is not a patch schema Loom writes")))?;
            if sym.st_size(LE) != schema.symbol_size() {
                return Err(bad(format!("st_size is not the {schema:?} mask")));
            }
            Patch {
                arg_index,
                ctrltext_offset: r.r_offset(LE),
                schema,
                addend: r.r_addend(LE) as u32,
            }
        };
        patches.push(patch);
    }
    Ok((patches, loads))
}

/// A decimal number written without leading zeros or sign.
fn decimal(text: &[u8]) -> Option<u32> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse::<u32>().ok().filter(|n| n.to_string() == s))
}

/// The `.pdi.<id>` sections, each with the loads its relocations name.
fn read_pdis(
    sections: &Sections<'_>,
    bytes: &[u8],
    mut loads: PdiLoads,
) -> Result<Vec<Pdi>, ElfError> {
    let mut pdis = Vec::new();
    for section in sections.iter() {
        let name = sections.section_name(LE, section).map_err(malformed)?;
        let Some(id) = name.strip_prefix(PDI_PREFIX.as_bytes()) else {
            continue;
        };
        let name = String::from_utf8_lossy(name);
        let id = decimal(id)
            .and_then(|n| u16::try_from(n).ok())
            .ok_or_else(|| malformed(format!("section {name} is not .pdi.<id>")))?;
        if section.sh_type(LE) != elf::SHT_PROGBITS {
            return Err(malformed(format!("{name} is not SHT_PROGBITS")));
        }
        let data = section.data(LE, bytes).map_err(malformed)?.to_vec();
        pdis.push(Pdi {
            id,
            bytes: data,
            loads: loads.remove(&id).unwrap_or_default(),
        });
    }
    if let Some(id) = loads.keys().next() {
        return Err(ElfError::BadRelocation(format!(
            "a LOADPDI names .pdi.{id}, which the file lacks"
        )));
    }
    Ok(pdis)
}

fn read_tiles(sections: &Sections<'_>, bytes: &[u8]) -> Result<Vec<TileImage>, ElfError> {
    let mut out = Vec::new();
    for section in sections.iter() {
        let name = sections.section_name(LE, section).map_err(malformed)?;
        let Some(rest) = name.strip_prefix(TILE_PREFIX.as_bytes()) else {
            continue;
        };
        let bad = || {
            let name = String::from_utf8_lossy(name);
            ElfError::BadTileSection(format!("{name} is not {TILE_PREFIX}<col>_<row>.<name>"))
        };
        let number = |s: &str| s.parse::<u32>().ok().filter(|n| n.to_string() == s);
        let (place, tile) = std::str::from_utf8(rest)
            .ok()
            .and_then(|r| r.split_once('.'))
            .ok_or_else(bad)?;
        let (column, row) = place.split_once('_').ok_or_else(bad)?;
        out.push(TileImage {
            column: number(column).ok_or_else(bad)?,
            row: number(row).ok_or_else(bad)?,
            name: tile.to_string(),
            bytes: section.data(LE, bytes).map_err(malformed)?.to_vec(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(name: &str) -> EntryArg {
        EntryArg {
            name: name.into(),
            kind: ArgKind::Buffer,
        }
    }

    /// A TXN-shaped control code: 16-byte header, then an 8-word shim BD at
    /// 0x20, then more words.
    fn sample() -> Artifact {
        let ctrltext: Vec<u8> = (0..96u8).collect();
        Artifact {
            profile: "amd.xdna.strix.17f0_10".into(),
            columns: 1,
            ctrltext,
            patches: vec![
                Patch {
                    arg_index: 0,
                    ctrltext_offset: 0x20,
                    schema: PatchSchema::ShimDma48,
                    addend: 0,
                },
                Patch {
                    arg_index: 1,
                    ctrltext_offset: 0x50,
                    schema: PatchSchema::Address64,
                    addend: 0,
                },
                Patch {
                    arg_index: 0,
                    ctrltext_offset: 0x40,
                    schema: PatchSchema::ShimDma48,
                    addend: 0xffff_fff0,
                },
                Patch {
                    arg_index: 2,
                    ctrltext_offset: 0x5c,
                    schema: PatchSchema::Scalar32,
                    addend: 0,
                },
            ],
            entries: vec![Entry {
                name: "vector_add".into(),
                args: vec![buffer("a"), buffer("b"), buffer("out")],
            }],
            tile_images: vec![
                TileImage {
                    column: 0,
                    row: 2,
                    name: "core".into(),
                    bytes: vec![0x18, 0xf8, 0x23, 0x10, 0x01],
                },
                TileImage {
                    column: 0,
                    row: 3,
                    name: "core".into(),
                    bytes: vec![],
                },
            ],
            pdis: vec![
                Pdi {
                    id: 0,
                    bytes: crate::xdna::pdi::empty(0),
                    loads: vec![0x08],
                },
                Pdi {
                    id: 1,
                    bytes: crate::xdna::pdi::empty(1),
                    loads: vec![0x48],
                },
            ],
            device_loadable: true,
            not_loadable_reason: None,
            caveat: Some("unverified on hardware".into()),
        }
    }

    fn not_loadable() -> Artifact {
        Artifact {
            device_loadable: false,
            not_loadable_reason: Some("core code was never run on hardware".into()),
            caveat: None,
            ..sample()
        }
    }

    fn parsed(bytes: &[u8]) -> (&Header, Sections<'_>) {
        let header = Header::parse(bytes).unwrap();
        let sections = header.sections(LE, bytes).unwrap();
        (header, sections)
    }

    #[test]
    fn round_trip() {
        for a in [sample(), not_loadable()] {
            assert_eq!(read(&write(&a).unwrap()).unwrap(), a);
        }
        let mut bare = sample();
        bare.patches.clear();
        bare.tile_images.clear();
        bare.pdis.clear();
        bare.entries[0].args.clear();
        assert_eq!(read(&write(&bare).unwrap()).unwrap(), bare);
    }

    #[test]
    fn deterministic() {
        let first = write(&sample()).unwrap();
        assert_eq!(first, write(&sample()).unwrap());
        assert_eq!(first, write(&read(&first).unwrap()).unwrap());
    }

    #[test]
    fn header_fields() {
        let bytes = write(&sample()).unwrap();
        assert_eq!(&bytes[..4], b"\x7fELF");
        assert_eq!(bytes[4], 1, "ELFCLASS32");
        assert_eq!(bytes[5], 1, "little-endian");
        assert_eq!(bytes[7], 0x45, "EI_OSABI aie2p");
        assert_eq!(bytes[8], 0x21, "EI_ABIVERSION config 2.1");
        assert_eq!(u16::from_le_bytes([bytes[16], bytes[17]]), 2, "ET_EXEC");
        assert_eq!(u16::from_le_bytes([bytes[18], bytes[19]]), 1, "EM_M32");
        let (header, _) = parsed(&bytes);
        assert_eq!(header.e_phnum(LE), 3);
    }

    #[test]
    fn relocations_and_symbols() {
        let a = sample();
        let bytes = write(&a).unwrap();
        let (_, sections) = parsed(&bytes);
        let (ctrltext_index, _) = find(&sections, ".ctrltext").unwrap();
        let dynsym = sections.symbols(LE, &*bytes, elf::SHT_DYNSYM).unwrap();
        let (_, rela) = find(&sections, ".rela.dyn").unwrap();
        let (relas, _) = rela.rela(LE, &*bytes).unwrap().unwrap();
        let seen: Vec<_> = relas
            .iter()
            .map(|r| {
                let sym = dynsym.symbol(SymbolIndex(r.r_sym(LE) as usize)).unwrap();
                assert_eq!(usize::from(sym.st_shndx(LE).0), ctrltext_index.0);
                let name = dynsym.symbol_name(LE, sym).unwrap();
                (
                    std::str::from_utf8(name).unwrap().to_string(),
                    r.r_type(LE).0,
                    r.r_offset(LE),
                    r.r_addend(LE) as u32,
                    sym.st_size(LE),
                )
            })
            .collect();
        let expect = |s: &str, t, o, a, m| (s.to_string(), t, o, a, m);
        assert_eq!(
            seen,
            [
                expect("0", 5, 0x20, 0, 0),
                expect("1", 8, 0x50, 0, 0),
                expect("0", 5, 0x40, 0xffff_fff0, 0),
                expect("2", 3, 0x5c, 0, u32::MAX),
                // aiebu's PDI symbols: address_64 at each LOADPDI's address
                // words, st_size the PDI's size.
                expect(".pdi.0", 8, 0x08, 0, 368),
                expect(".pdi.1", 8, 0x48, 0, 368),
            ]
        );
        // Argument 0 is patched twice: one symbol serves both; then the
        // null symbol and two PDIs.
        assert_eq!(dynsym.len(), 6);

        let symtab = sections.symbols(LE, &*bytes, elf::SHT_SYMTAB).unwrap();
        let kernel = symtab.symbol(SymbolIndex(1)).unwrap();
        assert_eq!(
            symtab.symbol_name(LE, kernel).unwrap(),
            b"_Z10vector_addPcPcPc"
        );
        assert_eq!(kernel.st_type(), elf::STT_FUNC);
        let instance = symtab.symbol(SymbolIndex(2)).unwrap();
        assert_eq!(symtab.symbol_name(LE, instance).unwrap(), b"vector_add");
        assert_eq!(instance.st_type(), elf::STT_OBJECT);
        assert_eq!(instance.st_shndx(LE).0, 1, "points at the kernel symbol");

        let (_, group) = find(&sections, ".group.0").unwrap();
        let (flags, members) = group.group(LE, &*bytes).unwrap().unwrap();
        assert_eq!(flags, elf::GRP_COMDAT);
        let members: Vec<usize> = members.iter().map(|m| m.get(LE) as usize).collect();
        // .ctrltext and the two PDIs (after the tile images).
        let pdi = |name: &'static str| find(&sections, name).unwrap().0 .0;
        assert_eq!(members, [ctrltext_index.0, pdi(".pdi.0"), pdi(".pdi.1")]);
        assert_eq!(group.sh_info(LE), 2, "signature is the instance symbol");
    }

    #[test]
    fn mangled_names_are_what_xrt_demangles() {
        let mut entry = sample().entries.remove(0);
        assert_eq!(mangle(&entry), "_Z10vector_addPcPcPc");
        assert_eq!(
            demangle("_Z10vector_addPcPcPc"),
            Some(("vector_add".into(), 3))
        );
        entry.args.clear();
        assert_eq!(mangle(&entry), "_Z10vector_add");
        for bad in [
            "_Z10vector_addPv",
            "_Z10vector_addv",
            "_Z3ab",
            "_Z010vector_add",
            "Z3abc",
        ] {
            assert_eq!(demangle(bad), None, "{bad}");
        }
    }

    #[test]
    fn note_bytes() {
        let bytes = write(&not_loadable()).unwrap();
        let (_, sections) = parsed(&bytes);
        let data = |name| find(&sections, name).unwrap().1.data(LE, &*bytes).unwrap();
        assert_eq!(
            data(".note.xrt.configuration"),
            [4, 0, 0, 0, 4, 0, 0, 0, 6, 0, 0, 0, b'X', b'R', b'T', 0, 1, 0, 0, 0]
        );
        let mut expect = Vec::new();
        let mut note = |kind: u32, desc: &[u8]| {
            expect.extend_from_slice(&5u32.to_le_bytes());
            expect.extend_from_slice(&(desc.len() as u32).to_le_bytes());
            expect.extend_from_slice(&kind.to_le_bytes());
            expect.extend_from_slice(b"Loom\0\0\0\0");
            expect.extend_from_slice(desc);
            expect.resize(expect.len().next_multiple_of(4), 0);
        };
        note(0x10, b"amd.xdna.strix.17f0_10");
        note(0x11, &[0, 0, 0, 0]);
        note(0x12, b"core code was never run on hardware");
        note(0x13, b"a\0b\0out\0");
        assert_eq!(data(".note.loom"), expect);
        assert_eq!(data(".tile.0_2.core"), [0x18, 0xf8, 0x23, 0x10, 0x01]);
    }

    #[test]
    fn llvm_readelf_reads_it_without_warnings() {
        let path = std::env::temp_dir().join(format!("loom-elf-test-{}.xdna", std::process::id()));
        std::fs::write(&path, write(&sample()).unwrap()).unwrap();
        let run = |tool: &str| {
            std::process::Command::new(tool)
                .args(["-a", "--wide"])
                .arg(&path)
                .output()
        };
        let output = run("llvm-readelf-22")
            .or_else(|_| run("/usr/lib/llvm-22/bin/llvm-readelf"))
            .unwrap_or_else(|e| {
                panic!("llvm-readelf-22 is required (install llvm-22-tools, e.g. `make deps`): {e}")
            });
        std::fs::remove_file(&path).unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}\n{stdout}");
        let all = format!("{stdout}{stderr}").to_lowercase();
        assert!(!all.contains("warning"), "{stderr}\n{stdout}");
        for expected in [
            ".ctrltext",
            ".rela.dyn",
            "_Z10vector_addPcPcPc",
            ".tile.0_2.core",
        ] {
            assert!(
                stdout.contains(expected),
                "{expected} missing from\n{stdout}"
            );
        }
    }

    #[test]
    fn read_rejects_garbage_and_truncation() {
        assert_eq!(read(&[]), Err(ElfError::NotElf));
        assert_eq!(read(b"MZ\x90\0 not an ELF at all"), Err(ElfError::NotElf));
        let bytes = write(&sample()).unwrap();
        for len in 0..bytes.len() {
            assert!(
                read(&bytes[..len]).is_err(),
                "a {len}-byte prefix was accepted"
            );
        }
        // No single corrupted byte makes the reader panic.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0xff;
            let _ = read(&b);
        }
    }

    #[test]
    fn read_names_the_problem() {
        let bytes = write(&sample()).unwrap();
        let with = |at: usize, value: u8| {
            let mut b = bytes.clone();
            b[at] = value;
            read(&b)
        };
        assert_eq!(with(4, 2), Err(ElfError::WrongClass(2)));
        assert_eq!(with(5, 2), Err(ElfError::WrongEndian(2)));
        assert_eq!(with(7, 0x46), Err(ElfError::WrongOsAbi(0x46)));
        assert_eq!(with(8, 0x02), Err(ElfError::WrongAbiVersion(0x02)));
        assert_eq!(with(16, 1), Err(ElfError::WrongType(1)));
        assert_eq!(with(18, 0x08), Err(ElfError::WrongMachine(0x08)));

        let replace = |from: &[u8], to: &[u8]| {
            let at = bytes.windows(from.len()).position(|w| w == from).unwrap();
            let mut b = bytes.clone();
            b[at..at + to.len()].copy_from_slice(to);
            read(&b)
        };
        assert_eq!(
            replace(b".ctrltext\0", b".ctrlxext\0"),
            Err(ElfError::MissingSection(".ctrltext"))
        );
        // The XRT note's type word sits just before its "XRT\0" owner.
        let owner = bytes.windows(4).position(|w| w == b"XRT\0").unwrap();
        assert!(matches!(
            with(owner - 4, 7),
            Err(ElfError::BadNote {
                section: ".note.xrt.configuration",
                ..
            })
        ));
        assert!(matches!(
            replace(b"Loom\0", b"Lo0m\0"),
            Err(ElfError::BadNote {
                section: ".note.loom",
                ..
            })
        ));
    }

    #[test]
    fn write_refuses_what_would_mislead() {
        let refuse = |a: Artifact| assert!(matches!(write(&a), Err(ElfError::InvalidArtifact(_))));
        let mut a = sample();
        a.entries.push(a.entries[0].clone());
        refuse(a);
        let mut a = sample();
        a.entries.clear();
        refuse(a);
        let mut a = sample();
        a.patches[0].ctrltext_offset = 0x58;
        refuse(a);
        let mut a = sample();
        a.patches[0].ctrltext_offset = 0x22;
        refuse(a);
        let mut a = sample();
        a.patches[0].arg_index = 3;
        refuse(a);
        let mut a = sample();
        a.patches[2].schema = PatchSchema::Address64;
        refuse(a);
        let mut a = sample();
        a.patches[0].addend = 2;
        refuse(a);
        let mut a = sample();
        a.patches[1].addend = 8;
        refuse(a);
        let mut a = sample();
        a.tile_images[0].name = "pdi".into();
        refuse(a);
        let mut a = sample();
        a.tile_images[1].row = 2;
        refuse(a);
        let mut a = sample();
        a.tile_images[0].name = "a.b".into();
        refuse(a);
        let mut a = sample();
        a.not_loadable_reason = Some("stale".into());
        refuse(a);
        let mut a = not_loadable();
        a.not_loadable_reason = None;
        refuse(a);
        let mut a = sample();
        a.entries[0].name = "9lives".into();
        refuse(a);
        let mut a = sample();
        a.columns = 0;
        refuse(a);
    }
}
