//! The AIE2P core ELF: a core's program and data as aie-rt's loader reads
//! them (driver/src/core/xaie_elfloader.c): ELF32 little-endian, EM_AIE
//! (264, llvm-aie's ELF.h), its PT_LOAD segments placed by p_paddr: below
//! the program memory's 16 KiB into program memory (tile offset 0x20000 +
//! p_paddr), else into data memory, p_paddr / 64 KiB naming the view (4
//! south, 5 west, 6 north, 7 the core's own tile); p_memsz beyond p_filesz
//! is zero-filled (.bss). e_flags for AIE2P are not in a public source;
//! Loom writes 0 (unverified on hardware). A non-allocated `.loom.lines`
//! section may carry the line table (`write_with_lines`, `lines`): per
//! entry a u32 program address, a u32 byte count and the location text
//! `file:line:col`; a loader skips sections no segment covers.

use object::elf;
use object::endian::{Endianness, LittleEndian};
use object::read::elf::{FileHeader as _, ProgramHeader as _, SectionHeader as _};
use object::write::elf::{FileHeader, ProgramHeader, SectionHeader, Writer};
use std::fmt;

/// llvm-aie's EM_AIE.
pub const EM_AIE: u16 = 264;
/// The core's program memory.
pub const PROGRAM_MEMORY_BYTES: u32 = 16 * 1024;
/// Where the core sees its own tile's data memory.
pub const OWN_DATA_VIEW: u32 = 0x7_0000;
const VIEW_BYTES: u32 = 0x1_0000;
/// The data views a core has: south, west, north, its own.
const DATA_VIEWS: std::ops::RangeInclusive<u32> = 4..=7;

/// One data segment: bytes at a data address, then `zeroed` bytes of zeros.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataSegment {
    pub address: u32,
    pub bytes: Vec<u8>,
    pub zeroed: u32,
}

/// What a core ELF loads: the program at program-memory address 0, data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreImage {
    pub program: Vec<u8>,
    pub data: Vec<DataSegment>,
    pub entry: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreElfError {
    /// The image cannot be written as asked.
    Invalid(String),
    /// The bytes are not a core ELF Loom can load, and why.
    Malformed(String),
}

impl fmt::Display for CoreElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreElfError::Invalid(m) => write!(f, "cannot write this core image: {m}"),
            CoreElfError::Malformed(m) => write!(f, "not a loadable AIE2P core ELF: {m}"),
        }
    }
}

impl std::error::Error for CoreElfError {}

fn malformed(m: impl fmt::Display) -> CoreElfError {
    CoreElfError::Malformed(m.to_string())
}

/// Where a segment at `address` of `size` bytes goes, if anywhere.
fn check_data(address: u32, size: u64) -> Result<(), String> {
    let view = address / VIEW_BYTES;
    let end = u64::from(address) + size;
    if !DATA_VIEWS.contains(&view) || end > u64::from((view + 1) * VIEW_BYTES) {
        return Err(format!(
            "data [{address:#x}, {end:#x}) is not inside one of the core's data views 0x40000-0x7ffff"
        ));
    }
    Ok(())
}

fn validate(image: &CoreImage) -> Result<(), CoreElfError> {
    let invalid = |m: String| CoreElfError::Invalid(m);
    if image.program.len() > PROGRAM_MEMORY_BYTES as usize {
        return Err(invalid(format!(
            "the program is {} bytes; program memory holds {PROGRAM_MEMORY_BYTES}",
            image.program.len()
        )));
    }
    if image.entry as usize >= image.program.len().max(1) {
        return Err(invalid(format!(
            "entry {:#x} is outside the program",
            image.entry
        )));
    }
    for d in &image.data {
        check_data(d.address, d.bytes.len() as u64 + u64::from(d.zeroed)).map_err(invalid)?;
    }
    Ok(())
}

/// The ELF bytes of `image`.
pub fn write(image: &CoreImage) -> Result<Vec<u8>, CoreElfError> {
    write_with_lines(image, &[])
}

/// The source location of the program from `address` on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineRecord {
    pub address: u32,
    /// `file:line:col`.
    pub location: String,
}

const LINES_SECTION: &[u8] = b".loom.lines";

fn encode_lines(lines: &[LineRecord]) -> Result<Vec<u8>, CoreElfError> {
    let mut out = Vec::new();
    for l in lines {
        let len = u32::try_from(l.location.len())
            .map_err(|_| CoreElfError::Invalid("a location is over 4 GiB".into()))?;
        out.extend_from_slice(&l.address.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(l.location.as_bytes());
        out.resize(out.len().next_multiple_of(4), 0);
    }
    Ok(out)
}

/// The line table a core ELF carries in `.loom.lines` (none without it).
pub fn lines(bytes: &[u8]) -> Result<Vec<LineRecord>, CoreElfError> {
    read(bytes)?;
    let header = Header::parse(bytes).map_err(malformed)?;
    let sections = header.sections(LE, bytes).map_err(malformed)?;
    let Some((_, section)) = sections.section_by_name(LE, LINES_SECTION) else {
        return Ok(Vec::new());
    };
    let data = section.data(LE, bytes).map_err(malformed)?;
    let mut out = Vec::new();
    let mut at = 0;
    let word = |at: usize| {
        data.get(at..at + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .ok_or_else(|| malformed(".loom.lines ends inside an entry"))
    };
    while at < data.len() {
        let (address, len) = (word(at)?, word(at + 4)? as usize);
        let text = data
            .get(at + 8..at + 8 + len)
            .ok_or_else(|| malformed(".loom.lines ends inside a location"))?;
        let location = String::from_utf8(text.to_vec())
            .map_err(|_| malformed(".loom.lines holds a location that is not UTF-8"))?;
        out.push(LineRecord { address, location });
        at = (at + 8 + len).next_multiple_of(4);
    }
    Ok(out)
}

/// `write`, with the line table in `.loom.lines` when there is one.
pub fn write_with_lines(image: &CoreImage, lines: &[LineRecord]) -> Result<Vec<u8>, CoreElfError> {
    validate(image)?;
    let line_bytes = encode_lines(lines)?;
    let encode = |e: object::write::Error| CoreElfError::Invalid(e.to_string());
    let data_section_names: Vec<String> = (0..image.data.len())
        .map(|i| format!(".data.{i}"))
        .collect();
    let mut out = Vec::new();
    let mut w = Writer::new(Endianness::Little, false, &mut out);
    w.reserve_file_header();
    w.reserve_program_headers(1 + image.data.len() as u32);
    let text_name = w.add_section_name(b".text");
    w.reserve_section_index();
    let data_names: Vec<_> = data_section_names
        .iter()
        .map(|n| {
            let name = w.add_section_name(n.as_bytes());
            w.reserve_section_index();
            name
        })
        .collect();
    let lines_name = (!line_bytes.is_empty()).then(|| {
        let name = w.add_section_name(LINES_SECTION);
        w.reserve_section_index();
        name
    });
    w.reserve_shstrtab_section_index();
    let text_offset = w.reserve(image.program.len() as u64, 16);
    let data_offsets: Vec<u64> = image
        .data
        .iter()
        .map(|d| w.reserve(d.bytes.len() as u64, 4))
        .collect();
    let lines_offset = w.reserve(line_bytes.len() as u64, 4);
    w.reserve_shstrtab().map_err(encode)?;
    w.reserve_section_headers();

    w.write_file_header(&FileHeader {
        os_abi: elf::ELFOSABI_NONE,
        abi_version: 0,
        e_type: elf::ET_EXEC,
        e_machine: elf::Machine(EM_AIE),
        e_entry: image.entry.into(),
        e_flags: elf::FileFlags(0),
    })
    .map_err(encode)?;
    w.write_align_program_headers();
    let program = image.program.len() as u64;
    w.write_program_header(&ProgramHeader {
        p_type: elf::PT_LOAD,
        p_flags: elf::PF_R | elf::PF_X,
        p_offset: text_offset,
        p_vaddr: 0,
        p_paddr: 0,
        p_filesz: program,
        p_memsz: program,
        p_align: 16,
    });
    for (d, &offset) in image.data.iter().zip(&data_offsets) {
        let address = u64::from(d.address);
        w.write_program_header(&ProgramHeader {
            p_type: elf::PT_LOAD,
            p_flags: elf::PF_R | elf::PF_W,
            p_offset: offset,
            p_vaddr: address,
            p_paddr: address,
            p_filesz: d.bytes.len() as u64,
            p_memsz: d.bytes.len() as u64 + u64::from(d.zeroed),
            p_align: 4,
        });
    }
    w.pad_until(text_offset);
    w.write(&image.program);
    for (d, &offset) in image.data.iter().zip(&data_offsets) {
        w.pad_until(offset);
        w.write(&d.bytes);
    }
    w.pad_until(lines_offset);
    w.write(&line_bytes);
    w.write_shstrtab();
    w.write_null_section_header();
    w.write_section_header(&SectionHeader {
        sh_name: w.section_name_offset(Some(text_name)),
        sh_type: elf::SHT_PROGBITS,
        sh_flags: elf::SHF_ALLOC | elf::SHF_EXECINSTR,
        sh_offset: text_offset,
        sh_size: program,
        sh_addralign: 16,
        ..SectionHeader::default()
    });
    for ((d, &offset), name) in image.data.iter().zip(&data_offsets).zip(data_names) {
        w.write_section_header(&SectionHeader {
            sh_name: w.section_name_offset(Some(name)),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: elf::SHF_ALLOC | elf::SHF_WRITE,
            sh_addr: d.address.into(),
            sh_offset: offset,
            sh_size: d.bytes.len() as u64,
            sh_addralign: 4,
            ..SectionHeader::default()
        });
    }
    if let Some(name) = lines_name {
        w.write_section_header(&SectionHeader {
            sh_name: w.section_name_offset(Some(name)),
            sh_type: elf::SHT_PROGBITS,
            sh_offset: lines_offset,
            sh_size: line_bytes.len() as u64,
            sh_addralign: 4,
            ..SectionHeader::default()
        });
    }
    w.write_shstrtab_section_header();
    drop(w);
    Ok(out)
}

type Header = elf::FileHeader32<LittleEndian>;
const LE: LittleEndian = LittleEndian;

/// Read a core ELF as aie-rt's loader would load it.
pub fn read(bytes: &[u8]) -> Result<CoreImage, CoreElfError> {
    if bytes.get(..4) != Some(&elf::ELFMAG[..]) {
        return Err(malformed("not an ELF file"));
    }
    match (bytes.get(4), bytes.get(5)) {
        (Some(&c), Some(&d)) if c == elf::ELFCLASS32.0 && d == elf::ELFDATA2LSB.0 => {}
        _ => return Err(malformed("not a 32-bit little-endian ELF")),
    }
    let header = Header::parse(bytes).map_err(malformed)?;
    let machine = header.e_machine(LE).0;
    if machine != EM_AIE {
        return Err(malformed(format!(
            "e_machine is {machine}, not EM_AIE ({EM_AIE})"
        )));
    }
    // The section table too must lie inside the file: a cut file is refused
    // even where the loader would not look.
    header.sections(LE, bytes).map_err(malformed)?;
    let mut program: Option<Vec<u8>> = None;
    let mut data = Vec::new();
    for (i, segment) in header
        .program_headers(LE, bytes)
        .map_err(malformed)?
        .iter()
        .enumerate()
    {
        if segment.p_type(LE) != elf::PT_LOAD {
            continue;
        }
        let contents = segment
            .data(LE, bytes)
            .map_err(|_| malformed(format!("segment {i} lies outside the file")))?;
        let (address, filesz, memsz) = (
            segment.p_paddr(LE),
            segment.p_filesz(LE),
            segment.p_memsz(LE),
        );
        if memsz < filesz {
            return Err(malformed(format!("segment {i}: p_memsz is below p_filesz")));
        }
        if address < PROGRAM_MEMORY_BYTES {
            if address != 0 || memsz != filesz || program.is_some() {
                return Err(malformed(format!(
                    "segment {i}: the program must be one segment at program-memory address 0 without zero fill"
                )));
            }
            if filesz > PROGRAM_MEMORY_BYTES {
                return Err(malformed(format!(
                    "segment {i}: the program is {filesz} bytes; program memory holds {PROGRAM_MEMORY_BYTES}"
                )));
            }
            program = Some(contents.to_vec());
        } else {
            check_data(address, u64::from(memsz))
                .map_err(|m| malformed(format!("segment {i}: {m}")))?;
            data.push(DataSegment {
                address,
                bytes: contents.to_vec(),
                zeroed: memsz - filesz,
            });
        }
    }
    let image = CoreImage {
        program: program.ok_or_else(|| malformed("no program segment"))?,
        data,
        entry: header.e_entry(LE),
    };
    if image.entry as usize >= image.program.len().max(1) {
        return Err(malformed(format!(
            "entry {:#x} is outside the program",
            image.entry
        )));
    }
    Ok(image)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CoreImage {
        CoreImage {
            program: vec![0x18, 0x00, 0x08, 0x10, 0x00, 0x00],
            data: vec![DataSegment {
                address: OWN_DATA_VIEW + 0x400,
                bytes: vec![1, 2, 3, 4],
                zeroed: 60,
            }],
            entry: 0,
        }
    }

    #[test]
    fn a_line_table_rides_along_and_changes_nothing_loaded() {
        let lines = vec![
            LineRecord {
                address: 0,
                location: "worker.loom:3:5".into(),
            },
            LineRecord {
                address: 4,
                location: "w.loom:10:1".into(),
            },
        ];
        let bytes = write_with_lines(&sample(), &lines).unwrap();
        assert_eq!(read(&bytes), Ok(sample()));
        assert_eq!(super::lines(&bytes), Ok(lines));
        let plain = write(&sample()).unwrap();
        assert_eq!(super::lines(&plain), Ok(vec![]));
    }

    #[test]
    fn a_core_image_round_trips() {
        let bytes = write(&sample()).unwrap();
        assert_eq!(read(&bytes), Ok(sample()));
        assert_eq!(u16::from_le_bytes([bytes[18], bytes[19]]), EM_AIE);
        assert_eq!(
            bytes,
            write(&read(&bytes).unwrap()).unwrap(),
            "deterministic"
        );
    }

    #[test]
    fn llvm_readelf_reads_it_without_warnings() {
        let dir = std::env::temp_dir().join(format!("loom-core-elf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("core.elf");
        std::fs::write(&path, write(&sample()).unwrap()).unwrap();
        let readelf = [
            "llvm-readelf",
            "llvm-readelf-22",
            "/usr/lib/llvm-22/bin/llvm-readelf",
        ]
        .iter()
        .find_map(|tool| {
            std::process::Command::new(tool)
                .args(["-a", "--wide"])
                .arg(&path)
                .output()
                .ok()
        });
        std::fs::remove_dir_all(&dir).unwrap();
        let output = readelf.expect("llvm-readelf is installed (make deps)");
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{text}");
        assert!(!text.contains("warning"), "{text}");
        assert!(text.contains("LOAD"), "{text}");
    }

    #[test]
    fn bad_images_and_bad_files_are_refused() {
        let too_big = CoreImage {
            program: vec![0; PROGRAM_MEMORY_BYTES as usize + 2],
            ..sample()
        };
        assert!(matches!(write(&too_big), Err(CoreElfError::Invalid(_))));
        let stray = CoreImage {
            data: vec![DataSegment {
                address: 0x1_0000,
                bytes: vec![0],
                zeroed: 0,
            }],
            ..sample()
        };
        assert!(matches!(write(&stray), Err(CoreElfError::Invalid(_))));
        let bytes = write(&sample()).unwrap();
        for cut in [0, 3, 20, 52, bytes.len() - 1] {
            assert!(read(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut other = bytes.clone();
        other[18] = 3;
        assert_eq!(
            read(&other),
            Err(CoreElfError::Malformed(
                "e_machine is 259, not EM_AIE (264)".into()
            ))
        );
    }
}
