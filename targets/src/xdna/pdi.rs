//! PDIs: the boot images the NPU firmware loads on LOADPDI. A Loom artifact
//! carries only empty ones, whose load makes the firmware reset the
//! partition before the control code configures it with register writes
//! (mlir-aie's `--expand-load-pdis` flow).
//!
//! The layout is what bootgen (`-arch versal`) writes for a BIF of one image
//! holding one CDO partition and no boot loader: the SMAP width words, the
//! image header table, one image header, one partition header, then the
//! partition, a CDO merged from the input CDOs' commands. Field definitions
//! from bootgen's imageheadertable-versal.h and partitionheadertable-versal.h;
//! docs/research/configuration-path/findings.md (Q7) annotates every word.
//! The golden tests compare with bootgen's own output
//! (targets/xdna/fixtures/bootgen).

/// CDO header: 4 more header words, "CDO\0", version 2.0.
const CDO_HEADER_WORDS: u32 = 4;
const CDO_IDENT: u32 = 0x004F_4443;
const CDO_VERSION: u32 = 0x200;
/// A CDO NOP of no payload words (`CDO_CMD_NO_OPERATION`).
pub const CDO_NOP: u32 = 0x111;

/// The SMAP bus-width detection words for the default 32-bit width
/// (bootheader-versal.cpp `SetSmapBusWidthWords`).
const SMAP_WORDS: [u32; 4] = [0x0000_00DD, 0x1122_3344, 0x5566_7788, 0x99AA_BBCC];
// Structure sizes in words (headerSizes of the image header table).
const TABLE_WORDS: usize = 0x20;
const IMAGE_WORDS: usize = 0x10;
const PARTITION_WORDS: usize = 0x20;
/// VERSION_v4_00_VERSAL.
const TABLE_VERSION: u32 = 0x0004_0000;
/// "PPDI" (partial PDI) as bootgen stores it.
const PARTIAL_PDI: u32 = 0x5050_4449;
/// The id codes mlir-aie's BIF gives (aiecc.cpp) and the AIE image's id.
const ID_CODE: u32 = 0x14CA_8093;
const EXTENDED_ID_CODE: u32 = 0x01;
const IMAGE_ID: u32 = 0x1C00_0000;
const IMAGE_NAME: &[u8; 16] = b"aie_image\0\0\0\0\0\0\0";
/// Partition type CONFIG_DATA_OBJ (bits 26:24) at exception level 3 (2:1).
const CDO_PARTITION_ATTRIBUTES: u32 = 0x0200_0006;

/// bootgen's `ComputeWordChecksum`: the complement of the word sum.
fn checksum(words: &[u32]) -> u32 {
    !words.iter().fold(0u32, |sum, w| sum.wrapping_add(*w))
}

/// A CDO file of `commands` (already in the 32-bit forms bootgen writes).
pub fn cdo(commands: &[u32]) -> Vec<u32> {
    let mut words = vec![
        CDO_HEADER_WORDS,
        CDO_IDENT,
        CDO_VERSION,
        commands.len() as u32,
    ];
    words.push(checksum(&words));
    words.extend(commands);
    words
}

/// The PDI bootgen makes of CDO files whose commands are `files`: their
/// commands merged, in order, into one CDO partition.
pub fn pdi(files: &[&[u32]]) -> Vec<u8> {
    let commands: Vec<u32> = files.iter().flat_map(|f| f.iter().copied()).collect();
    let mut partition = cdo(&commands);
    let unpadded = partition.len();
    // The partition is zero-padded to 16 bytes.
    partition.resize(unpadded.next_multiple_of(4), 0);

    let table_at = SMAP_WORDS.len();
    let image_at = table_at + TABLE_WORDS;
    let partition_header_at = image_at + IMAGE_WORDS;
    let partition_at = partition_header_at + PARTITION_WORDS;

    let mut table = vec![0u32; TABLE_WORDS];
    table[..13].copy_from_slice(&[
        TABLE_VERSION,
        1, // images
        image_at as u32,
        1, // partitions
        partition_header_at as u32,
        0, // secondary boot device address
        ID_CODE,
        0, // attributes
        0, // PDI id
        0, // parent id
        PARTIAL_PDI,
        (TABLE_WORDS | IMAGE_WORDS << 8 | PARTITION_WORDS << 16) as u32,
        (partition_at - image_at) as u32, // the headers' total length
    ]);
    table[17] = EXTENDED_ID_CODE;
    seal(&mut table);

    let mut image = vec![0u32; IMAGE_WORDS];
    image[..2].copy_from_slice(&[partition_header_at as u32, 1]);
    for (word, name) in image[4..8].iter_mut().zip(IMAGE_NAME.chunks_exact(4)) {
        *word = u32::from_le_bytes([name[0], name[1], name[2], name[3]]);
    }
    image[8] = IMAGE_ID;
    seal(&mut image);

    let padded = partition.len() as u32;
    let mut header = vec![0u32; PARTITION_WORDS];
    header[..11].copy_from_slice(&[
        padded,          // encrypted length
        unpadded as u32, // unencrypted length
        padded,          // total length
        0,               // next partition header
        0,               // destination execution address (u64)
        0,
        u32::MAX, // destination load address (u64): none
        u32::MAX,
        partition_at as u32,
        CDO_PARTITION_ATTRIBUTES,
        1, // data sections
    ]);
    seal(&mut header);

    [&SMAP_WORDS[..], &table, &image, &header, &partition]
        .concat()
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect()
}

/// The last word of a header is the checksum of the others.
fn seal(words: &mut [u32]) {
    let last = words.len() - 1;
    words[last] = checksum(&words[..last]);
}

/// The empty PDI `.pdi.<id>` of an artifact. Loading a PDI at another
/// address than the resident one makes the firmware reset the partition;
/// control code alternates two, so that each dispatch's first load is a
/// new one. They differ in bytes too, should the firmware compare contents:
/// id 0 is mlir-aie's empty device with core enabling (three NOP-only CDO
/// files), id 1 the same without it (two).
pub fn empty(id: u16) -> Vec<u8> {
    let nop = [CDO_NOP];
    let files: &[&[u32]] = if id.is_multiple_of(2) {
        &[&nop, &nop, &nop]
    } else {
        &[&nop, &nop]
    };
    pdi(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/xdna/fixtures/bootgen");

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!("{FIXTURES}/{name}")).unwrap()
    }

    #[test]
    fn the_empty_cdo_is_what_the_cdo_driver_writes() {
        let bytes: Vec<u8> = cdo(&[CDO_NOP])
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        assert_eq!(bytes, fixture("empty.cdo"));
    }

    #[test]
    fn empty_pdis_are_bootgens_bytes() {
        assert_eq!(empty(0), fixture("empty-3cdo.pdi"));
        assert_eq!(empty(1), fixture("empty-2cdo.pdi"));
        assert_eq!(empty(0).len(), 368);
        assert_ne!(empty(0), empty(1));
    }

    #[test]
    fn a_partition_is_padded_to_sixteen_bytes() {
        // One NOP: a 6-word CDO padded to 8; the header records both.
        let one = pdi(&[&[CDO_NOP]]);
        assert_eq!(one.len(), 0x150 + 32);
        let word = |i: usize| u32::from_le_bytes(one[4 * i..4 * i + 4].try_into().unwrap());
        let header = 0xD0 / 4;
        assert_eq!((word(header), word(header + 1)), (8, 6));
        assert_eq!(word(header + PARTITION_WORDS - 1), {
            let words: Vec<u32> = (header..header + PARTITION_WORDS - 1).map(word).collect();
            checksum(&words)
        });
    }
}
