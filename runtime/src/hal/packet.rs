//! The ERT command packets a run writes into its command buffer: the header
//! word, the CU mask, then a payload the driver hands to the firmware
//! (linux `drivers/accel/amdxdna/aie2_message.c` `aie2_execbuf`: START_CU
//! payloads are copied as they are, START_NPU payloads are read as
//! `struct amdxdna_cmd_start_npu`).
//!
//! Two forms, as the reference's `startPacket` and `npuPacket`:
//! - [`start_packet`], for an instruction list (an xclbin's insts.bin): an
//!   ERT_START_CU packet whose payload is the register map of mlir-aie's DPU
//!   kernel (`kernels.json` of mlir-aie `python/compiler/aiecc/main.py`:
//!   opcode u64 at 0x00, instr u64 at 0x08, ninstr u32 at 0x10, bo0..bo4 u64
//!   at 0x14..0x34), always written whole as XRT writes it, so the count is
//!   16 (the CU mask and 15 regmap words). XRT's non-ELF path submits DPU
//!   kernels this way: the NPU operation is argument 0, not the ERT opcode.
//! - [`npu_packet`], for an ELF's control code: ERT_START_NPU with the
//!   `amdxdna_cmd_start_npu` head (the code's device address, its size in
//!   bytes, no properties), then each argument in 64 bits, as XRT's ELF flow
//!   fills it (XRT `module_run_aie_gen2::fill_ert_aie_gen2_non_preempt_data`,
//!   opcode from `get_ert_opcode` of an aie2p ELF without PDIs or preemption).
//! - [`preempt_elf_packet`], for a full ELF that carries PDIs:
//!   ERT_START_NPU_PREEMPT_ELF, which XRT picks for an ELF with `.pdi.*`
//!   sections (Xilinx/XRT @963c58ee `xrt_elf.cpp` `get_ert_opcode`), with
//!   the `ert_npu_preempt_data` head (`xrt_module.cpp`
//!   `fill_ert_aie_gen2_preempt_data`: save and restore buffers 0 and size
//!   0 when the ELF has no preemption sections), then the first argument's
//!   64 bits only (`xrt_kernel.cpp` `run_impl::initialize_command`: "for ELF
//!   flow ... only the first arg ... is sent"; a full ELF's arguments sit at
//!   8-byte offsets from 0, `xrt_elf.cpp` `construct_kernel_args`). The
//!   driver reads none of the arguments: it sends the firmware the code's
//!   address and the save/restore pair only (amd/xdna-driver @856409ca
//!   `aie2_message.c` `aie2_cmdlist_fill_npu_elf`).
//!
//! All are little-endian (the NPU hosts are x86-64) and start in state NEW.

use super::uapi::{ert_op, ErtHeader, ErtState, NpuPreemptData, StartNpu};
use std::fmt;
use std::mem::{offset_of, size_of};

/// The CU mask of CU 0, the only compute unit a loaded context has
/// (`amdxdna_cmd_get_cu_idx` takes the lowest set bit).
pub const CU_MASK_CU0: u32 = 1;
/// Words after the header in every START_CU packet: the CU mask and the
/// 60-byte register map (0x00..0x3c).
pub const START_CU_COUNT: u32 = 16;
/// The buffer arguments the DPU kernel's register map holds (bo0..bo4).
pub const START_CU_BUFFERS: usize = 5;
/// Words of the START_NPU packet before its arguments: the CU mask and the
/// 16-byte `amdxdna_cmd_start_npu` head.
const START_NPU_FIXED_WORDS: u32 = 5;

/// The register map of mlir-aie's DPU kernel. Its 64-bit values are pairs
/// of words, low first: bo0 sits at 0x14, which a `u64` field could not.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DpuRegisterMap {
    /// The NPU operation (argument 0 of a DPU kernel run).
    pub opcode: [u32; 2],
    /// The instruction list's device address.
    pub instr: [u32; 2],
    /// Its length in 32-bit words.
    pub ninstr: u32,
    pub bo: [[u32; 2]; START_CU_BUFFERS],
}
const _: () = assert!(size_of::<DpuRegisterMap>() == 0x3c);
const _: () = assert!(offset_of!(DpuRegisterMap, opcode) == 0x00);
const _: () = assert!(offset_of!(DpuRegisterMap, instr) == 0x08);
const _: () = assert!(offset_of!(DpuRegisterMap, ninstr) == 0x10);
const _: () = assert!(offset_of!(DpuRegisterMap, bo) == 0x14);

/// A whole START_CU packet: the ERT header, the CU mask, the register map.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StartCu {
    pub header: u32,
    pub cu_mask: u32,
    pub regmap: DpuRegisterMap,
}
const _: () = assert!(size_of::<StartCu>() == 4 * (1 + START_CU_COUNT as usize));
const _: () = assert!(offset_of!(StartCu, cu_mask) == 4);
const _: () = assert!(offset_of!(StartCu, regmap) == 8);

impl StartCu {
    /// Its words in field order, which the asserts above pin to the
    /// layout's offsets.
    fn words(&self) -> Vec<u32> {
        let r = &self.regmap;
        let mut words = vec![self.header, self.cu_mask];
        words.extend(r.opcode);
        words.extend(r.instr);
        words.push(r.ninstr);
        words.extend(r.bo.iter().flatten());
        words
    }

    /// The little-endian bytes the driver reads.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        bytes(&self.words())
    }
}

/// A 64-bit value as the register map's pair of words.
fn pair(value: u64) -> [u32; 2] {
    [value as u32, (value >> 32) as u32]
}

/// A packet the arguments cannot be written into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PacketError {
    /// A START_CU packet needs the NPU opcode as argument 0.
    NoOpcode,
    /// More buffers than the register map's bo0..bo4.
    TooManyBuffers { given: usize, max: usize },
    /// The instruction count field counts whole 32-bit words.
    SizeNotWords { size: u64 },
    /// The size does not fit its 32-bit field.
    SizeTooLarge { size: u64 },
    /// More arguments than the driver passes on to the firmware.
    TooManyArguments { given: usize, max: usize },
}

impl fmt::Display for PacketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PacketError::NoOpcode => {
                write!(f, "a START_CU packet needs the NPU opcode as argument 0")
            }
            PacketError::TooManyBuffers { given, max } => write!(
                f,
                "{given} buffer arguments, but the DPU register map holds {max}"
            ),
            PacketError::SizeNotWords { size } => write!(
                f,
                "control code of {size} bytes is not a whole number of 32-bit words"
            ),
            PacketError::SizeTooLarge { size } => {
                write!(f, "control code of {size} bytes does not fit a 32-bit size")
            }
            PacketError::TooManyArguments { given, max } => write!(
                f,
                "{given} arguments, but a START_NPU packet carries at most {max}"
            ),
        }
    }
}

impl std::error::Error for PacketError {}

fn header(count: u32, opcode: u32) -> u32 {
    let header = ErtHeader {
        state: ErtState::New.raw(),
        extra_cu_masks: 0,
        count,
        opcode,
    };
    // Callers bound `count` to the field's 11 bits; the rest are constants.
    header.pack().unwrap_or_default()
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The START_CU packet that runs `size` bytes of control code at device
/// address `ctrl`: `args[0]` is the NPU opcode, the rest (at most five) are
/// the buffers' device addresses, written as bo0.. and zero-filled to bo4.
pub fn start_packet(ctrl: u64, size: u64, args: &[u64]) -> Result<Vec<u8>, PacketError> {
    let (&opcode, buffers) = args.split_first().ok_or(PacketError::NoOpcode)?;
    if buffers.len() > START_CU_BUFFERS {
        return Err(PacketError::TooManyBuffers {
            given: buffers.len(),
            max: START_CU_BUFFERS,
        });
    }
    if !size.is_multiple_of(4) {
        return Err(PacketError::SizeNotWords { size });
    }
    let ninstr = u32::try_from(size / 4).map_err(|_| PacketError::SizeTooLarge { size })?;
    let mut regmap = DpuRegisterMap {
        opcode: pair(opcode),
        instr: pair(ctrl),
        ninstr,
        ..Default::default()
    };
    for (slot, &address) in regmap.bo.iter_mut().zip(buffers) {
        *slot = pair(address);
    }
    let packet = StartCu {
        header: header(START_CU_COUNT, ert_op::START_CU),
        cu_mask: CU_MASK_CU0,
        regmap,
    };
    Ok(packet.to_le_bytes())
}

/// The 32-bit words of properties and arguments the driver passes on.
const DRIVER_PAYLOAD_WORDS: usize = 26;

/// The START_NPU packet that runs `size` bytes of an ELF's control code at
/// device address `ctrl` with the arguments `args`, each in 64 bits.
pub fn npu_packet(ctrl: u64, size: u64, args: &[u64]) -> Result<Vec<u8>, PacketError> {
    // The driver copies the properties and arguments into the firmware's
    // message; by default (force_cmdlist) a command-list slot of at most 26
    // words (xdna-driver aie2_msg_priv.h MAX_NPU_ARGS_SIZE, checked in
    // aie2_message.c `aie2_cmdlist_fill_npu_dpu`; the single-command path
    // takes 27, upstream's 35): 13 arguments of 64 bits.
    let max = DRIVER_PAYLOAD_WORDS / 2;
    if args.len() > max {
        return Err(PacketError::TooManyArguments {
            given: args.len(),
            max,
        });
    }
    let buffer_size = u32::try_from(size).map_err(|_| PacketError::SizeTooLarge { size })?;
    // At most 5 + 2 * 13 words: within the 11-bit count.
    let count = START_NPU_FIXED_WORDS + 2 * args.len() as u32;
    let mut out = bytes(&[header(count, ert_op::START_NPU), CU_MASK_CU0]);
    let head = StartNpu {
        buffer: ctrl,
        buffer_size,
        prop_count: 0,
    };
    out.extend_from_slice(&head.to_le_bytes());
    for &arg in args {
        out.extend_from_slice(&arg.to_le_bytes());
    }
    Ok(out)
}

/// Words of the START_NPU_PREEMPT_ELF packet after the header: the CU
/// mask, the 10-word `ert_npu_preempt_data` and the first argument's two.
const PREEMPT_ELF_COUNT: u32 = 1 + 10 + 2;
const _: () = assert!(size_of::<NpuPreemptData>() == 4 * 10);

/// The START_NPU_PREEMPT_ELF packet that runs `size` bytes of a full ELF's
/// control code at device address `ctrl`, `first_arg` the entry's first
/// argument (its buffer's address; 0 without arguments). The CU mask
/// names CU 0, as for START_NPU; the driver does not read it for this
/// opcode.
pub fn preempt_elf_packet(ctrl: u64, size: u64, first_arg: u64) -> Result<Vec<u8>, PacketError> {
    let instruction_buffer_size =
        u32::try_from(size).map_err(|_| PacketError::SizeTooLarge { size })?;
    let head = NpuPreemptData {
        instruction_buffer: ctrl,
        instruction_buffer_size,
        ..Default::default()
    };
    let mut out = bytes(&[
        header(PREEMPT_ELF_COUNT, ert_op::START_NPU_PREEMPT_ELF),
        CU_MASK_CU0,
    ]);
    out.extend_from_slice(&head.to_le_bytes());
    out.extend_from_slice(&first_arg.to_le_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hal::uapi::payload_word_index;

    fn words(bytes: &[u8]) -> Vec<u32> {
        bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    }

    #[test]
    fn start_packet_bytes_are_the_dpu_register_map() {
        let packet = start_packet(
            0x0000_0001_0000_2000,
            0x180,
            &[3, 0x0000_0001_0000_4000, 0x0000_0001_0000_5000],
        )
        .unwrap();
        #[rustfmt::skip]
        let expected: [u8; 68] = [
            0x01, 0x00, 0x01, 0x00,                         // NEW, count 16, START_CU
            0x01, 0x00, 0x00, 0x00,                         // CU mask: CU 0
            0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x00 opcode 3
            0x00, 0x20, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, // 0x08 instr
            0x60, 0x00, 0x00, 0x00,                         // 0x10 ninstr: 0x180 / 4
            0x00, 0x40, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, // 0x14 bo0
            0x00, 0x50, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, // 0x1c bo1
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x24 bo2
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x2c bo3
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x34 bo4
        ];
        assert_eq!(packet, expected);
        let head = ErtHeader::unpack(words(&packet)[0]);
        assert_eq!(
            (head.state, head.count, head.opcode, head.extra_cu_masks),
            (1, 16, ert_op::START_CU, 0)
        );
        // The count covers exactly the words after the header.
        assert_eq!(packet.len(), 4 * (1 + head.count as usize));
        // The driver's payload starts after the one CU mask.
        assert_eq!(payload_word_index(head), 1);
    }

    #[test]
    fn start_cu_words_sit_at_their_field_offsets() {
        // Distinct values per field: each word of `to_le_bytes` must be at
        // the offset the #[repr(C)] layout gives its field.
        let packet = StartCu {
            header: 0x11,
            cu_mask: 0x22,
            regmap: DpuRegisterMap {
                opcode: [0x31, 0x32],
                instr: [0x41, 0x42],
                ninstr: 0x50,
                bo: [
                    [0x61, 0x62],
                    [0x71, 0x72],
                    [0x81, 0x82],
                    [0x91, 0x92],
                    [0xA1, 0xA2],
                ],
            },
        };
        let w = words(&packet.to_le_bytes());
        assert_eq!(w.len() * 4, size_of::<StartCu>());
        let at = |offset: usize| w[offset / 4];
        let map = offset_of!(StartCu, regmap);
        assert_eq!(at(offset_of!(StartCu, header)), 0x11);
        assert_eq!(at(offset_of!(StartCu, cu_mask)), 0x22);
        assert_eq!(at(map + offset_of!(DpuRegisterMap, opcode) + 4), 0x32);
        assert_eq!(at(map + offset_of!(DpuRegisterMap, instr)), 0x41);
        assert_eq!(at(map + offset_of!(DpuRegisterMap, ninstr)), 0x50);
        assert_eq!(at(map + offset_of!(DpuRegisterMap, bo)), 0x61);
        assert_eq!(at(size_of::<StartCu>() - 4), 0xA2);
    }

    #[test]
    fn start_packets_are_always_the_whole_register_map() {
        let only_opcode = start_packet(0x1000, 4, &[3]).unwrap();
        let five = start_packet(0x1000, 4, &[3, 1, 2, 3, 4, 5]).unwrap();
        assert_eq!((only_opcode.len(), five.len()), (68, 68));
        assert_eq!(words(&five)[7..], [1, 0, 2, 0, 3, 0, 4, 0, 5, 0]);
    }

    #[test]
    fn start_packet_refusals() {
        assert_eq!(start_packet(0, 4, &[]), Err(PacketError::NoOpcode));
        assert_eq!(
            start_packet(0, 4, &[3, 1, 2, 3, 4, 5, 6]),
            Err(PacketError::TooManyBuffers { given: 6, max: 5 })
        );
        assert_eq!(
            start_packet(0, 6, &[3]),
            Err(PacketError::SizeNotWords { size: 6 })
        );
        let huge = 4 * (u64::from(u32::MAX) + 1);
        assert_eq!(
            start_packet(0, huge, &[3]),
            Err(PacketError::SizeTooLarge { size: huge })
        );
    }

    #[test]
    fn npu_packet_bytes_are_the_start_npu_payload() {
        let packet = npu_packet(
            0x0000_0001_0203_4000,
            0x1a4,
            &[0x0000_0001_0000_4000, 0x0000_0001_0000_5000],
        )
        .unwrap();
        #[rustfmt::skip]
        let expected: [u8; 40] = [
            0x01, 0x90, 0x00, 0x0A,                         // NEW, count 9, START_NPU
            0x01, 0x00, 0x00, 0x00,                         // CU mask: CU 0
            0x00, 0x40, 0x03, 0x02, 0x01, 0x00, 0x00, 0x00, // buffer
            0xa4, 0x01, 0x00, 0x00,                         // buffer_size in bytes
            0x00, 0x00, 0x00, 0x00,                         // prop_count
            0x00, 0x40, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, // argument 0
            0x00, 0x50, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, // argument 1
        ];
        assert_eq!(packet, expected);
        let head = ErtHeader::unpack(words(&packet)[0]);
        assert_eq!((head.count, head.opcode), (9, ert_op::START_NPU));
        assert_eq!(packet.len(), 4 * (1 + head.count as usize));
    }

    #[test]
    fn preempt_elf_packet_bytes_are_xrts() {
        let packet = preempt_elf_packet(0x0000_0001_0203_4000, 0x1a4, 0x7f12_3456_7000).unwrap();
        #[rustfmt::skip]
        let expected: [u8; 56] = [
            0x01, 0xD0, 0x00, 0x0B,                         // NEW, count 13, opcode 22
            0x01, 0x00, 0x00, 0x00,                         // CU mask: CU 0
            0x00, 0x40, 0x03, 0x02, 0x01, 0x00, 0x00, 0x00, // instruction_buffer
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // save_buffer
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // restore_buffer
            0xa4, 0x01, 0x00, 0x00,                         // instruction_buffer_size
            0x00, 0x00, 0x00, 0x00,                         // save_buffer_size
            0x00, 0x00, 0x00, 0x00,                         // restore_buffer_size
            0x00, 0x00, 0x00, 0x00,                         // instruction_prop_count
            0x00, 0x70, 0x56, 0x34, 0x12, 0x7f, 0x00, 0x00, // argument 0
        ];
        assert_eq!(packet, expected);
        let head = ErtHeader::unpack(words(&packet)[0]);
        assert_eq!(
            (head.count, head.opcode),
            (13, ert_op::START_NPU_PREEMPT_ELF)
        );
        assert_eq!(packet.len(), 4 * (1 + head.count as usize));
        // More than the preempt head: the CU mask comes first, as XRT's
        // ert.h `ert_valid_opcode` and the driver's fill require.
        assert!(head.count as usize > size_of::<NpuPreemptData>() / 4);
        let huge = u64::from(u32::MAX) + 1;
        assert_eq!(
            preempt_elf_packet(0, huge, 0),
            Err(PacketError::SizeTooLarge { size: huge })
        );
    }

    #[test]
    fn npu_packet_limits() {
        // Sizes in bytes need not be whole words in this form.
        assert_eq!(npu_packet(0, 6, &[]).unwrap().len(), 24);
        // The driver passes at most 13 arguments on (26 payload words).
        let most = vec![0u64; 13];
        let packet = npu_packet(0, 4, &most).unwrap();
        assert_eq!(ErtHeader::unpack(words(&packet)[0]).count, 5 + 2 * 13);
        assert_eq!(
            npu_packet(0, 4, &[0; 14]),
            Err(PacketError::TooManyArguments { given: 14, max: 13 })
        );
        let huge = u64::from(u32::MAX) + 1;
        assert_eq!(
            npu_packet(0, huge, &[]),
            Err(PacketError::SizeTooLarge { size: huge })
        );
        assert!(PacketError::NoOpcode.to_string().contains("opcode"));
    }
}
