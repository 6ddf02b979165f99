//! The parts of an xclbin (XRT's axlf container) an NPU run needs: the
//! firmware images (PDIs) of its AIE partition and the names in its IP
//! layout.
//!
//! Layout from XRT `src/runtime_src/core/include/xrt/detail/xclbin.h`
//! (Xilinx/XRT 29c199c2), all little-endian:
//! - `struct axlf`: `m_magic` "xclbin2\0" (8 bytes), `m_signature_length`,
//!   28 reserved bytes, the 256-byte `m_keyBlock`, `m_uniqueId` (u64), then
//!   the 152-byte `struct axlf_header` at 304, whose `m_numSections` (u32)
//!   is at 304 + 144 = 448; the section headers follow the header, at 456.
//! - `struct axlf_section_header` (40 bytes): `m_sectionKind` u32 at 0,
//!   `m_sectionName[16]` at 4, `m_sectionOffset` u64 at 24 and
//!   `m_sectionSize` u64 at 32, both relative to the file.
//! - `IP_LAYOUT` (kind 8): `struct ip_layout`, `m_count` i32 at 0 and
//!   80-byte `struct ip_data` records from 8, each `m_name[64]` at 16.
//! - `AIE_PARTITION` (kind 32): `struct aie_partition`, whose `aie_pdi`
//!   `struct array_offset` (u32 element count, u32 offset from the section's
//!   start) is at 120; each 96-byte `struct aie_pdi` holds its `pdi_image`
//!   array_offset (bytes) at 16.

use std::fmt;

const MAGIC: &[u8; 8] = b"xclbin2\0";
const NUM_SECTIONS_AT: usize = 448;
const SECTIONS_AT: usize = 456;
const SECTION_HEADER_SIZE: usize = 40;
/// xclbin.h `XCLBIN_MAX_NUM_SECTION`.
const MAX_SECTIONS: u32 = 0x10000;
/// `enum axlf_section_kind`.
const IP_LAYOUT: u32 = 8;
const AIE_PARTITION: u32 = 32;
const IP_DATA_AT: usize = 8;
const IP_DATA_SIZE: usize = 80;
const IP_NAME_AT: usize = 16;
const IP_NAME_SIZE: usize = 64;
const AIE_PDI_ARRAY_AT: usize = 120;
const AIE_PDI_SIZE: usize = 96;
const PDI_IMAGE_AT: usize = 16;

/// An xclbin's firmware images and kernel names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Xclbin {
    /// Each AIE partition's PDIs, in file order.
    pub pdis: Vec<Vec<u8>>,
    /// Each IP layout entry's name (e.g. "MLIR_AIE:MLIRAIE", kernel:instance).
    pub kernels: Vec<String>,
}

/// What is wrong with an xclbin, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum XclbinError {
    BadMagic,
    /// `what` (`len` bytes at `at`) runs past the end of the file or section
    /// (`size` bytes).
    Truncated {
        what: &'static str,
        at: u64,
        len: u64,
        size: u64,
    },
    TooManySections(u32),
    NegativeCount(i32),
    /// An IP name that is not UTF-8.
    BadName {
        index: usize,
    },
}

impl fmt::Display for XclbinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            XclbinError::BadMagic => write!(f, "not an xclbin (no \"xclbin2\" magic)"),
            XclbinError::Truncated {
                what,
                at,
                len,
                size,
            } => write!(
                f,
                "{what} ({len} bytes at {at}) runs past the end of its {size} bytes"
            ),
            XclbinError::TooManySections(n) => {
                write!(f, "{n} sections, more than xclbin's {MAX_SECTIONS}")
            }
            XclbinError::NegativeCount(n) => write!(f, "IP layout count {n} is negative"),
            XclbinError::BadName { index } => {
                write!(f, "IP layout entry {index} has a name that is not UTF-8")
            }
        }
    }
}

impl std::error::Error for XclbinError {}

/// `len` bytes of `data` at `at`, or where they run out.
fn slice<'a>(
    data: &'a [u8],
    what: &'static str,
    at: u64,
    len: u64,
) -> Result<&'a [u8], XclbinError> {
    let truncated = || XclbinError::Truncated {
        what,
        at,
        len,
        size: data.len() as u64,
    };
    let start = usize::try_from(at).map_err(|_| truncated())?;
    let end = start
        .checked_add(usize::try_from(len).map_err(|_| truncated())?)
        .ok_or_else(truncated)?;
    data.get(start..end).ok_or_else(truncated)
}

fn u32_at(data: &[u8], what: &'static str, at: usize) -> Result<u32, XclbinError> {
    let b = slice(data, what, at as u64, 4)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn u64_at(data: &[u8], what: &'static str, at: usize) -> Result<u64, XclbinError> {
    let lo = u32_at(data, what, at)?;
    let hi = u32_at(data, what, at + 4)?;
    Ok(u64::from(hi) << 32 | u64::from(lo))
}

/// The elements of a `struct array_offset` at `at` in `section`, each
/// `element` bytes (1 for a byte array).
fn array<'a>(
    section: &'a [u8],
    what: &'static str,
    at: usize,
    element: usize,
) -> Result<&'a [u8], XclbinError> {
    let count = u32_at(section, what, at)?;
    let offset = u32_at(section, what, at + 4)?;
    let len = u64::from(count) * element as u64;
    slice(section, what, offset.into(), len)
}

fn aie_partition(section: &[u8], pdis: &mut Vec<Vec<u8>>) -> Result<(), XclbinError> {
    let records = array(
        section,
        "AIE_PARTITION aie_pdi",
        AIE_PDI_ARRAY_AT,
        AIE_PDI_SIZE,
    )?;
    for record in records.chunks_exact(AIE_PDI_SIZE) {
        // pdi_image's offset is from the start of the section, like the array's.
        let count = u32_at(record, "aie_pdi pdi_image", PDI_IMAGE_AT)?;
        let offset = u32_at(record, "aie_pdi pdi_image", PDI_IMAGE_AT + 4)?;
        let image = slice(section, "aie_pdi pdi_image", offset.into(), count.into())?;
        pdis.push(image.to_vec());
    }
    Ok(())
}

fn ip_layout(section: &[u8], kernels: &mut Vec<String>) -> Result<(), XclbinError> {
    let count = u32_at(section, "IP_LAYOUT m_count", 0)? as i32;
    let count = usize::try_from(count).map_err(|_| XclbinError::NegativeCount(count))?;
    let len = count as u64 * IP_DATA_SIZE as u64;
    let records = slice(section, "IP_LAYOUT m_ip_data", IP_DATA_AT as u64, len)?;
    for record in records.chunks_exact(IP_DATA_SIZE) {
        let name = &record[IP_NAME_AT..IP_NAME_AT + IP_NAME_SIZE];
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        let name = std::str::from_utf8(&name[..end]).map_err(|_| XclbinError::BadName {
            index: kernels.len(),
        })?;
        kernels.push(name.to_string());
    }
    Ok(())
}

/// Parses xclbin `data`; no input makes this panic.
pub fn parse(data: &[u8]) -> Result<Xclbin, XclbinError> {
    if data.get(..MAGIC.len()) != Some(&MAGIC[..]) {
        return Err(XclbinError::BadMagic);
    }
    let count = u32_at(data, "m_numSections", NUM_SECTIONS_AT)?;
    if count > MAX_SECTIONS {
        return Err(XclbinError::TooManySections(count));
    }
    let mut out = Xclbin::default();
    for i in 0..count as usize {
        let at = SECTIONS_AT + i * SECTION_HEADER_SIZE;
        let header = slice(
            data,
            "section header",
            at as u64,
            SECTION_HEADER_SIZE as u64,
        )?;
        let kind = u32_at(header, "m_sectionKind", 0)?;
        if kind != AIE_PARTITION && kind != IP_LAYOUT {
            continue;
        }
        let offset = u64_at(header, "m_sectionOffset", 24)?;
        let size = u64_at(header, "m_sectionSize", 32)?;
        let section = slice(data, "section", offset, size)?;
        match kind {
            AIE_PARTITION => aie_partition(section, &mut out.pdis)?,
            _ => ip_layout(section, &mut out.kernels)?,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(buf: &mut Vec<u8>, at: usize, bytes: &[u8]) {
        if buf.len() < at + bytes.len() {
            buf.resize(at + bytes.len(), 0);
        }
        buf[at..at + bytes.len()].copy_from_slice(bytes);
    }

    /// An AIE_PARTITION section with two PDIs, laid out by xclbin.h's
    /// structs: the 184-byte `aie_partition`, two 96-byte `aie_pdi`
    /// records at 184, the images after them.
    fn partition(images: &[&[u8]]) -> Vec<u8> {
        let mut s = vec![0u8; 184];
        put(&mut s, 8, &2048u32.to_le_bytes()); // operations_per_cycle
        put(&mut s, 32, &4u16.to_le_bytes()); // info.column_width
        put(&mut s, 120, &(images.len() as u32).to_le_bytes());
        put(&mut s, 124, &184u32.to_le_bytes());
        let mut image_at = 184 + 96 * images.len();
        for (i, image) in images.iter().enumerate() {
            let record = 184 + 96 * i;
            put(&mut s, record, &[0xAB; 16]); // uuid
            put(&mut s, record + 16, &(image.len() as u32).to_le_bytes());
            put(&mut s, record + 20, &(image_at as u32).to_le_bytes());
            put(&mut s, image_at, image);
            image_at += image.len();
        }
        s
    }

    /// An IP_LAYOUT section: m_count, padding to 8, 80-byte `ip_data`s.
    fn layout(names: &[&str]) -> Vec<u8> {
        let mut s = vec![0u8; 8];
        put(&mut s, 0, &(names.len() as i32).to_le_bytes());
        for (i, name) in names.iter().enumerate() {
            let record = 8 + 80 * i;
            put(&mut s, record, &7u32.to_le_bytes()); // m_type IP_PS_KERNEL
            put(&mut s, record + 8, &0u64.to_le_bytes()); // m_base_address
            put(&mut s, record + 16, name.as_bytes());
            put(&mut s, record + 80 - 1, &[0]);
        }
        s
    }

    /// A whole axlf: magic, header (m_numSections at 448), 40-byte section
    /// headers from 456, then each section 8-byte aligned.
    fn axlf(sections: &[(u32, &str, Vec<u8>)]) -> Vec<u8> {
        let mut f = vec![0u8; SECTIONS_AT + 40 * sections.len()];
        put(&mut f, 0, b"xclbin2\0");
        put(&mut f, 8, &(-1i32).to_le_bytes()); // no signature
        put(&mut f, 12, &[0xFF; 28]); // reserved
        put(&mut f, 330, &[2, 1]); // version 2.1
        put(&mut f, 448, &(sections.len() as u32).to_le_bytes());
        for (i, (kind, name, body)) in sections.iter().enumerate() {
            let offset = f.len().div_ceil(8) * 8;
            let header = SECTIONS_AT + 40 * i;
            put(&mut f, header, &kind.to_le_bytes());
            put(&mut f, header + 4, name.as_bytes());
            put(&mut f, header + 24, &(offset as u64).to_le_bytes());
            put(&mut f, header + 32, &(body.len() as u64).to_le_bytes());
            put(&mut f, offset, body);
        }
        let total = f.len() as u64;
        put(&mut f, 304, &total.to_le_bytes()); // m_header.m_length
        f
    }

    #[test]
    fn pdis_and_kernel_names_come_out() {
        let data = axlf(&[
            (6, "MEM_TOPOLOGY", vec![0; 48]),
            (32, "AIE_PARTITION", partition(&[b"first pdi", b"second"])),
            (8, "IP_LAYOUT", layout(&["MLIR_AIE:MLIRAIE", "other"])),
        ]);
        // Hand-checked offsets: the count at 448, the first header at 456
        // names MEM_TOPOLOGY (kind 6), the second AIE_PARTITION (32).
        assert_eq!(&data[448..452], &[3, 0, 0, 0]);
        assert_eq!(&data[456..460], &[6, 0, 0, 0]);
        assert_eq!(&data[496..500], &[32, 0, 0, 0]);
        assert_eq!(&data[500..513], b"AIE_PARTITION");
        let x = parse(&data).unwrap();
        assert_eq!(x.pdis, [b"first pdi".to_vec(), b"second".to_vec()]);
        assert_eq!(x.kernels, ["MLIR_AIE:MLIRAIE", "other"]);
    }

    #[test]
    fn an_xclbin_without_those_sections_is_empty() {
        let x = parse(&axlf(&[(6, "MEM_TOPOLOGY", vec![0; 8])])).unwrap();
        assert_eq!(x, Xclbin::default());
    }

    #[test]
    fn a_full_length_name_needs_no_terminator() {
        let long = "k".repeat(64);
        let mut section = layout(&["x"]);
        put(&mut section, 8 + 16, long.as_bytes());
        let x = parse(&axlf(&[(8, "IP_LAYOUT", section)])).unwrap();
        assert_eq!(x.kernels, [long]);
    }

    #[test]
    fn bad_files_are_typed_errors() {
        assert_eq!(parse(b"xclbin1\0"), Err(XclbinError::BadMagic));
        assert_eq!(parse(&[]), Err(XclbinError::BadMagic));
        let good = axlf(&[(32, "AIE_PARTITION", partition(&[b"pdi"]))]);
        // Cut anywhere, the file fails without panicking.
        for cut in 8..good.len() {
            assert!(
                matches!(parse(&good[..cut]), Err(XclbinError::Truncated { .. })),
                "cut at {cut}"
            );
        }
        let mut many = good.clone();
        put(&mut many, 448, &0x10001u32.to_le_bytes());
        assert_eq!(parse(&many), Err(XclbinError::TooManySections(0x10001)));

        // A PDI image pointing past its section.
        let mut section = partition(&[b"pdi"]);
        put(&mut section, 184 + 20, &0xFFFF_FFF0u32.to_le_bytes());
        let e = parse(&axlf(&[(32, "AIE_PARTITION", section)])).unwrap_err();
        assert_eq!(
            e,
            XclbinError::Truncated {
                what: "aie_pdi pdi_image",
                at: 0xFFFF_FFF0,
                len: 3,
                size: 184 + 96 + 3
            }
        );
        assert!(e.to_string().contains("aie_pdi pdi_image"), "{e}");

        let mut section = layout(&["a"]);
        put(&mut section, 0, &(-2i32).to_le_bytes());
        assert_eq!(
            parse(&axlf(&[(8, "IP_LAYOUT", section)])),
            Err(XclbinError::NegativeCount(-2))
        );
        let mut section = layout(&["a"]);
        put(&mut section, 8 + 16, &[0xFF, 0xFE]);
        assert_eq!(
            parse(&axlf(&[(8, "IP_LAYOUT", section)])),
            Err(XclbinError::BadName { index: 0 })
        );
        // A section header whose offset and size overflow.
        let mut wild = axlf(&[(8, "IP_LAYOUT", layout(&[]))]);
        put(&mut wild, 456 + 24, &u64::MAX.to_le_bytes());
        assert!(matches!(
            parse(&wild),
            Err(XclbinError::Truncated {
                what: "section",
                ..
            })
        ));
    }
}
