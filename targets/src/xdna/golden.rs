//! Golden TXN words: each test builds Loom's op (or register word) for the
//! same register and values as a test in Xilinx/mlir-aie, encodes it with
//! Loom's encoder, and compares it with the words that test checks.
//!
//! Provenance and license. The word arrays below are test vectors copied from
//! the CHECK lines (or the checked attribute values) of Xilinx/mlir-aie test
//! files, which are licensed under the Apache License v2.0 with LLVM
//! Exceptions (SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception). Only
//! the numbers and the parameters of the ops that produce them are taken; no
//! mlir-aie code. Each test names the file and the commit it was read at.
//! Where no mlir-aie test pins an op's words (LOADPDI, MASKPOLL), the vector
//! is built from the struct aie-rt serializes (Xilinx/aie-rt, MIT) and the
//! test says so. Where an mlir-aie test pins a register word but not its TXN
//! op, the op's words follow the layout the TXN tests pin (`write32`,
//! `maskwrite32`).
//!
//! Every stream here is built with the profile of an npu2-class device
//! (`profiles()[0]`, amd.xdna.strix): mlir-aie's `npu2` has 8 columns, 6 rows,
//! 1 memory-tile row, device generation 4; `npu2_1col` is its 1-column
//! partition. Vectors taken from npu1 tests are used only for registers whose
//! layout the two share, and the test says so.
//!
//! What mlir-aie checks and Loom cannot produce (no op, so no test):
//! - PREEMPT (opcode 6): test/Targets/NPU/npu2_instgen.mlir @e6dfd50f623b
//!   ends with `aiex.npu.preempt {level = 3}` = word `00000306`; it also
//!   counts in that stream's header (7 ops, 0xD0 bytes). Loom has no
//!   `TxnOp::Preempt`.
//! - BLOCKSET (opcode 2): no mlir-aie test writes one, and Loom only names it.
//! - Multi-dimensional buffer descriptors (d0/d1/d2 sizes and strides), e.g.
//!   test/Targets/NPU/npu_dma_memcpy.mlir @6dd529e7b736
//!   `dense<[2048, 0, 0, 33554432, -2113929153, 33556479, 0, 33554432]>`:
//!   `BufferDescriptor` is 1-D (plus the iteration dimension).
//!
//! Known difference, kept on purpose: mlir-aie writes a BLOCKWRITE's column
//! and row into word 1 (`col | row << 8`) when the op names its tile; Loom
//! writes 0 there, as mlir-aie does for a flat address (see
//! `blockwrite_with_tile_coordinates`).

use super::regs::{BufferDescriptor, Direction, StartQueueEntry, TileKind};
use super::route::{controller_ids, route, token_routes, Endpoint, Used};
use super::txn::{shim_descriptor, Txn, TxnOp};
use crate::{profiles, DeviceProfile, Tile};
use std::collections::BTreeMap;

fn strix() -> &'static DeviceProfile {
    &profiles()[0]
}

/// Words as a CHECK block lists them: 8-digit hex, whitespace-separated.
fn hex(check: &str) -> Vec<u32> {
    check
        .split_whitespace()
        .map(|word| u32::from_str_radix(word, 16).expect("a hex word"))
        .collect()
}

fn words(txn: &Txn) -> Vec<u32> {
    txn.encode()
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// A stream over a partition `columns` wide.
///
/// needs: `Txn::new(profile, columns)` (in HEAD since cfb1678).
fn txn(columns: u32, ops: Vec<TxnOp>) -> Txn {
    let mut txn = Txn::new(strix(), columns).expect("a TXN header for the profile");
    txn.ops = ops;
    txn
}

/// One op's words as they sit in an 8-column (npu2) stream.
fn op_words(op: TxnOp) -> Vec<u32> {
    words(&txn(8, vec![op]))[4..].to_vec()
}

/// The full address of a tile register, as mlir-aie composes it from an op's
/// column and row (col << 25 | row << 20 | offset).
fn at(column: u32, row: u32, offset: u32) -> u32 {
    u32::try_from(strix().tile_address(column, row, offset)).expect("a 32-bit address")
}

/// Xilinx/mlir-aie test/Targets/NPU/npu2_1col_header.mlir
/// @a27b8f9012b20f76876f2e7b7b3a452ffd8a6b97: an empty `runtime_sequence`
/// on `npu2_1col` gives the header `06040100` (major 0, minor 1, device
/// generation 4, 6 rows), `00000101` (1 column, 1 memory-tile row), 0 ops,
/// 0x10 bytes.
///
/// needs: `Txn::new(profile, columns)` with the partition width (in HEAD
/// since cfb1678).
#[test]
fn header_of_a_one_column_partition() {
    let expected = hex("06040100 00000101 00000000 00000010");
    assert_eq!(words(&txn(1, vec![])), expected);
}

/// Xilinx/mlir-aie test/Targets/NPU/npu2_instgen_multiple_devices.mlir
/// @a0b2a0b65ac3ff9d3ee0375e5f5391b33ac0b2d8: the whole stream of one
/// `aiex.npu.write32 {column = 2, row = 2, address = 0x04040404, value =
/// 0x04040404}` on `npu2`: header (8 columns, 1 op, 0x28 bytes), then WRITE
/// = opcode 0, 0, address (col 2 << 25 | row 2 << 20 | low 20 bits), high
/// address word 0, value, size 0x18.
#[test]
fn whole_stream_of_one_write() {
    let expected = hex("06040100 00000108 00000001 00000028 \
         00000000 00000000 04240404 00000000 04040404 00000018");
    let write = TxnOp::Write {
        address: at(2, 2, 0x4_0404),
        value: 0x0404_0404,
    };
    assert_eq!(words(&txn(8, vec![write])), expected);
}

/// Xilinx/mlir-aie test/Targets/NPU/npu2_instgen.mlir
/// @e6dfd50f623bd8b515a15b9970d9b654fabb8980, its two `aiex.npu.write32`:
/// `{column = 3, row = 4, address = 0xabc00def, value = 0x42}` (the tile's
/// column and row replace the address bits above the low 20) and the flat
/// `{address = 0xabc00def, value = 0x314}`.
#[test]
fn write32() {
    let with_tile = TxnOp::Write {
        address: at(3, 4, 0xabc0_0def & 0xF_FFFF),
        value: 0x42,
    };
    let expected = hex("00000000 00000000 06400DEF 00000000 00000042 00000018");
    assert_eq!(op_words(with_tile), expected);

    let flat = TxnOp::Write {
        address: 0xABC0_0DEF,
        value: 0x314,
    };
    let expected = hex("00000000 00000000 ABC00DEF 00000000 00000314 00000018");
    assert_eq!(op_words(flat), expected);
}

/// Xilinx/mlir-aie test/Targets/NPU/npu2_instgen.mlir
/// @e6dfd50f623bd8b515a15b9970d9b654fabb8980: `aiex.npu.blockwrite` of the
/// global `[100 .. 107]` at the flat address 0x12345679: opcode 1, word 1 0,
/// address, size 0x30 (16 + 4 * 8), then the eight words.
#[test]
fn blockwrite_at_a_flat_address() {
    let op = TxnOp::BlockWrite {
        address: 0x1234_5679,
        words: (100..108).collect(),
    };
    let expected = hex("00000001 00000000 12345679 00000030 \
         00000064 00000065 00000066 00000067 00000068 00000069 0000006A 0000006B");
    assert_eq!(op_words(op), expected);
}

/// Xilinx/mlir-aie test/Targets/NPU/npu2_instgen.mlir
/// @e6dfd50f623bd8b515a15b9970d9b654fabb8980: the same blockwrite with
/// `{column = 1, row = 1, address = 100}` checks `00000001 00000101 02100064
/// 00000030 ...`: mlir-aie also writes `col | row << 8` into word 1 (aie-rt's
/// `XAie_BlockWrite32Hdr` has Col and Row bytes there), Loom writes 0 (the
/// module comment of txn.rs: the tile is carried by the address). Every other
/// word is equal; word 1 is asserted as Loom's documented choice.
#[test]
fn blockwrite_with_tile_coordinates() {
    let op = TxnOp::BlockWrite {
        address: at(1, 1, 100),
        words: (100..108).collect(),
    };
    let mlir_aie = hex("00000001 00000101 02100064 00000030 \
         00000064 00000065 00000066 00000067 00000068 00000069 0000006A 0000006B");
    let loom = op_words(op);
    assert_eq!(loom[0], mlir_aie[0]);
    assert_eq!(loom[2..], mlir_aie[2..]);
    assert_eq!(
        (loom[1], mlir_aie[1]),
        (0, 0x101),
        "the one known difference"
    );
}

/// Xilinx/mlir-aie test/Targets/NPU/npu_blockwrite_data.mlir
/// @4f2d68616091a97225678b70ab19e2b2896df800 (npu2): four blockwrites at
/// tile (0, 2) offsets 0x1000 .. 0x4000 of `[0x12345678, -1]` (twice),
/// `[-2, 7]` and `[0x80000000]`. The CHECK lines pin each op from its address
/// on: address, size (0x18 for two words, 0x14 for one), the data bits.
#[test]
fn blockwrite_data_words() {
    let cases: [(u32, Vec<u32>, &str); 4] = [
        (
            0x1000,
            vec![0x1234_5678, u32::MAX],
            "00201000 00000018 12345678 FFFFFFFF",
        ),
        (
            0x2000,
            vec![0x1234_5678, u32::MAX],
            "00202000 00000018 12345678 FFFFFFFF",
        ),
        (
            0x3000,
            vec![-2i32 as u32, 7],
            "00203000 00000018 FFFFFFFE 00000007",
        ),
        (0x4000, vec![0x8000_0000], "00204000 00000014 80000000"),
    ];
    for (offset, data, check) in cases {
        let op = TxnOp::BlockWrite {
            address: at(0, 2, offset),
            words: data,
        };
        assert_eq!(op_words(op)[2..], hex(check), "offset {offset:#x}");
    }
}

/// Xilinx/mlir-aie test/Targets/NPU/npu2_instgen.mlir
/// @e6dfd50f623bd8b515a15b9970d9b654fabb8980: `aiex.npu.maskwrite32
/// {column = 2, row = 3, address = 0x567A, value = 0x1001, mask =
/// 0xf00ff00f}`: opcode 3, 0, address, 0, value, mask, size 0x1C.
#[test]
fn maskwrite32() {
    let op = TxnOp::MaskWrite {
        address: at(2, 3, 0x567A),
        value: 0x1001,
        mask: 0xF00F_F00F,
    };
    let expected = hex("00000003 00000000 0430567A 00000000 00001001 F00FF00F 0000001C");
    assert_eq!(op_words(op), expected);
}

/// No mlir-aie test checks MASKPOLL words, so this vector is the struct
/// aie-rt serializes: Xilinx/aie-rt release/main_aig
/// @3640b761ded1619ac06478a0985bb4a2fb2b3e26, driver/src/global/xaiegbl.h
/// `XAie_MaskPoll32Hdr` (op header Op, Col, Row; u64 RegOff at byte 8; Value;
/// Mask; Size) written by driver/src/common/xaie_helper.c
/// `_XAie_AppendMaskPoll32` with Size = sizeof = 32 (padded) and the column
/// and row bytes filled. Loom reads that form and writes the unpadded
/// 28-byte form mlir-aie uses for MASKWRITE (`maskwrite32` above) with opcode
/// 4 (XAIE_IO_MASKPOLL, driver/src/common/xaie_txn.h).
#[test]
fn maskpoll32() {
    let op = TxnOp::MaskPoll {
        address: at(2, 3, 0x567A),
        value: 0x1001,
        mask: 0xF00F_F00F,
    };
    // opcode 4 | column 2 << 8 | row 3 << 16, pad, RegOff (2 words), Value,
    // Mask, Size 32, pad.
    let aie_rt = hex("00030204 00000000 0430567A 00000000 00001001 F00FF00F 00000020 00000000");
    let mut stream = hex("06040100 00000108 00000001");
    stream.push(16 + 4 * aie_rt.len() as u32);
    stream.extend(&aie_rt);
    let bytes: Vec<u8> = stream.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(Txn::decode(&bytes).map(|t| t.ops), Ok(vec![op.clone()]));

    let expected = hex("00000004 00000000 0430567A 00000000 00001001 F00FF00F 0000001C");
    assert_eq!(op_words(op), expected);
}

/// Xilinx/mlir-aie test/Targets/NPU/npu2_instgen.mlir
/// @e6dfd50f623bd8b515a15b9970d9b654fabb8980: `aiex.npu.sync {column = 3,
/// row = 4, direction = 1, channel = 5, column_num = 1, row_num = 2}`: TCT
/// opcode 0x80, size 0x10, direction | row << 8 | column << 16, row count
/// << 8 | column count << 16 | channel << 24.
#[test]
fn sync() {
    let op = TxnOp::Sync {
        column: 3,
        row: 4,
        direction: Direction::Mm2s,
        channel: 5,
        column_count: 1,
        row_count: 2,
    };
    assert_eq!(op_words(op), hex("00000080 00000010 00030401 05010200"));
}

/// Xilinx/mlir-aie test/Targets/NPU/npu_address_patch_ddr_offset.mlir
/// @c956393ccb3cbb50d7849e8fa20f701f6b302685, the NOFOLD run (full-ELF
/// flow, Loom's): `aiex.npu.address_patch(256) {addr = 74560, arg_idx = 4}`
/// and the same with `arg_idx = 5`. The CHECK lines pin word 0 (0x81) and,
/// counting on, words 8-10: the plain 0-based argument index, its high word
/// 0, and arg_plus 0x100 with no 0x80000000 folded in for argument 5.
#[test]
fn ddr_patch_argument_index() {
    for (arg_index, check) in [
        (4, "00000004 00000000 00000100"),
        (5, "00000005 00000000 00000100"),
    ] {
        let words = op_words(TxnOp::DdrPatch {
            address: 74560,
            arg_index,
            arg_offset: 0x100,
        });
        assert_eq!(words.len(), 12);
        assert_eq!(words[0], 0x81);
        assert_eq!(words[8..11], hex(check), "argument {arg_index}");
    }
}

/// Xilinx/mlir-aie test/Targets/NPU/npu_address_patch_arg_plus_64bit.mlir
/// @875a349d8229f143adc687dfdd754e1e57e2a9a5: four `aiex.npu.address_patch
/// {addr = 74560, arg_idx = 0}` with arg_plus 0xFFFFFFFF, 2^32, 8 GiB + 0x100
/// and 256; each check anchors on word 6 (the register address 0x12340) and
/// pins words 6-11: address, 0, argument index 0, 0, arg_plus low, high.
#[test]
fn ddr_patch_64_bit_offset() {
    let cases = [
        (
            0xFFFF_FFFF,
            "00012340 00000000 00000000 00000000 FFFFFFFF 00000000",
        ),
        (
            1 << 32,
            "00012340 00000000 00000000 00000000 00000000 00000001",
        ),
        (
            0x2_0000_0100,
            "00012340 00000000 00000000 00000000 00000100 00000002",
        ),
        (256, "00012340 00000000 00000000 00000000 00000100 00000000"),
    ];
    for (arg_offset, check) in cases {
        let words = op_words(TxnOp::DdrPatch {
            address: 74560,
            arg_index: 0,
            arg_offset,
        });
        assert_eq!(words[6..12], hex(check), "arg_plus {arg_offset:#x}");
    }
}

/// Xilinx/mlir-aie test/Targets/NPU/npu_dma_memcpy.mlir
/// @6dd529e7b73676aba3eacd78284159c6d8a793f9 (npu1_1col; the shim BD and
/// queue offsets are the same on npu2): a shim MM2S 0 transfer through BD 0
/// lowers to `blockwrite {address = 118784}` (BD 0 = 0x1D000), `address_patch
/// {addr = 118788, arg_idx = 0, arg_plus = 16384}` (its word 1, argument 0,
/// byte offset 16384) and `write32 {address = 119316, value = 0}` (MM2S 0
/// task queue 0x1D214: BD 0, 1 run, no token). Loom's `shim_descriptor` makes
/// the first two, `start_queue` / `encode_start_queue` the third. (That
/// test's BD words are a 3-D pattern Loom cannot express.)
#[test]
fn shim_transfer_ops_address_the_same_registers() {
    let p = strix();
    let bd = p.bd(TileKind::Shim, 0).unwrap();
    let [write, patch] = shim_descriptor(bd, vec![0; 8], 0, 16384);
    assert!(matches!(
        write,
        TxnOp::BlockWrite {
            address: 118784,
            ..
        }
    ));
    assert_eq!(
        patch,
        TxnOp::DdrPatch {
            address: 118788,
            arg_index: 0,
            arg_offset: 16384
        }
    );
    let start = StartQueueEntry {
        start_bd: 0,
        runs: 1,
        token_issue: false,
    };
    assert_eq!(
        p.start_queue(TileKind::Shim, Direction::Mm2s, 0),
        Ok(119316)
    );
    assert_eq!(p.encode_start_queue(TileKind::Shim, &start), Ok(0));
}

/// No mlir-aie test checks LOADPDI words (its load_pdi tests check IR), so
/// this vector is the layout: Xilinx/aie-rt release/main_aig
/// @3640b761ded1619ac06478a0985bb4a2fb2b3e26 driver/src/global/xaiegbl.h
/// `XAie_LoadPdiHdr` = u8 Op (XAIE_IO_LOADPDI = 8), u8 pad, u16 PdiId, u32
/// PdiSize, u64 PdiAddress, as mlir-aie include/aie/Runtime/TxnEncoding.h
/// @b7144a349a6341c2f02bb2a669c71c3ad721e20f `txn_append_loadpdi` also
/// writes it: `8 | id << 16`, size, address low, address high. The first op
/// is what aie-rt itself appends (size and address 0, patched by the
/// loader); the second a 368-byte PDI above 4 GiB.
///
/// needs: `TxnOp::LoadPdi { id, size, address }` (in HEAD since cfb1678).
#[test]
fn load_pdi() {
    let unpatched = TxnOp::LoadPdi {
        id: 0,
        size: 0,
        address: 0,
    };
    assert_eq!(
        op_words(unpatched),
        hex("00000008 00000000 00000000 00000000")
    );
    let placed = TxnOp::LoadPdi {
        id: 1,
        size: 368,
        address: 0x1_0000_2000,
    };
    assert_eq!(op_words(placed), hex("00010008 00000170 00002000 00000001"));
}

/// Shim BD word 4 [31:30] = burst-length code; npu2's codes are 64, 128, 256,
/// 512 bytes. Xilinx/mlir-aie test/Conversion/DmaToNpu/
/// dma_to_npu_burst_length.mlir @429929e11d48a8548bc5052525795c1d2df2ac83
/// (npu2): `aiex.npu.writebd {burst_length = 512, buffer_length = 4, ...}`
/// and `dma_memcpy_nd(%out[0,0,0,0][1,1,1,32][0,0,0,1]) {burst_length =
/// 512}` both give word 4 = -1073741824 = 0xC0000000 (the strides are 0, so
/// the code is alone in the word); only word 4 is checked there.
#[test]
fn shim_bd_burst_length_code() {
    for length in [16, 128] {
        let bd = BufferDescriptor {
            address: 0,
            length,
            next_bd: None,
            valid: true,
            acquire: None,
            release: None,
            burst_length: Some(512),
            iteration: None,
            dimensions: Vec::new(),
        };
        let words = strix().encode_bd(TileKind::Shim, &bd).unwrap();
        assert_eq!(words[4], -1_073_741_824i32 as u32, "{length} bytes");
    }
}

/// Xilinx/mlir-aie test/dialect/AIEX/axcache_lowering.mlir
/// @8c02d241961a18bd9d16c59f910f64a0d977edd1, `@static_default`: a linear
/// 64-word shim MM2S transfer with no axcache set checks all eight BD words
/// `dense<[64, 0, 0, 0, -2147483648, 33554432, 0, 33554432]>`: length 64
/// words, address 0 (patched later), word 4 burst code 2 (0x80000000), word 5
/// AxCache [27:24] = 2 (0x02000000, "getDefaultAxCache() == 2"), word 7 valid
/// (bit 25). The device there is npu1, whose largest burst (its default) is
/// 256 bytes; the shim BD layout and the 256-byte code are the same on npu2,
/// so the vector is Loom's BD with `burst_length: Some(256)`.
///
/// needs: shim BD encoding with AxCache 2 (word 5 = 0x02000000; in HEAD
/// since 74020fa).
#[test]
fn shim_bd_words_with_default_axcache() {
    let bd = BufferDescriptor {
        address: 0,
        length: 64 * 4,
        next_bd: None,
        valid: true,
        acquire: None,
        release: None,
        burst_length: Some(256),
        iteration: None,
        dimensions: Vec::new(),
    };
    let expected: Vec<u32> = [64, 0, 0, 0, -2_147_483_648, 33_554_432, 0, 33_554_432]
        .iter()
        .map(|&w: &i32| w as u32)
        .collect();
    assert_eq!(strix().encode_bd(TileKind::Shim, &bd), Ok(expected));
}

/// The shim task queue: BD [3:0], repeat count (runs - 1) [23:16], token
/// [31]. Xilinx/mlir-aie test/Conversion/DmaToNpu/push_to_queue.mlir
/// @0ad9ea949e96c6ddfe8cdb759ecdc03fb11c4f0b (device `ipu` = npu1; same
/// queue layout and offsets on npu2): `shimtile_push_queue {bd_id = 3,
/// repeat_count = 0, issue_token = true}` on S2MM 1 of column 0 checks
/// `write32 {address = 119308, column = 0, row = 0, value = 2147483651}`
/// (0x1D20C, 0x80000003), and `{bd_id = 2, repeat_count = 3, issue_token =
/// false}` on MM2S 0 of column 2 checks `{address = 119316, column = 2, row
/// = 0, value = 196610}` (0x1D214, 0x00030002). Also Xilinx/mlir-aie
/// test/Conversion/DmaToNpu/dma_to_npu.mlir (the version the index holds as
/// id 55291456539; the tool reports no commit for it, the listed one,
/// 51a7429cddaf, is an older text): `dma_memcpy_nd {issue_token = true, id =
/// 1}` checks the queue constant -2147483647 = 0x80000001.
#[test]
fn task_queue_words() {
    let p = strix();
    let entry = |start_bd, runs, token_issue| StartQueueEntry {
        start_bd,
        runs,
        token_issue,
    };
    let s2mm1 = p.start_queue(TileKind::Shim, Direction::S2mm, 1).unwrap();
    let token = p.encode_start_queue(TileKind::Shim, &entry(3, 1, true));
    assert_eq!((s2mm1, token), (119308, Ok(2_147_483_651)));

    let mm2s0 = p.start_queue(TileKind::Shim, Direction::Mm2s, 0).unwrap();
    let value = p
        .encode_start_queue(TileKind::Shim, &entry(2, 4, false))
        .unwrap();
    assert_eq!((mm2s0, value), (119316, 196610));
    // As the TXN WRITE of column 2.
    let write = TxnOp::Write {
        address: at(2, 0, mm2s0),
        value,
    };
    let expected = hex("00000000 00000000 0401D214 00000000 00030002 00000018");
    assert_eq!(op_words(write), expected);

    let value = p.encode_start_queue(TileKind::Shim, &entry(1, 1, true));
    assert_eq!(value, Ok(-2_147_483_647i32 as u32));
}

/// A token-issuing start is preceded by a MASKWRITE of the channel's
/// Controller_ID (control register [12:8] in Loom's profiles, the 5-bit
/// packet id); the token's packet carries that id. Xilinx/mlir-aie
/// test/npu-xrt/tile_dmas/writebd_tokens/aie.mlir
/// @309dac7e59a15ade30f723b901663d97fc83b54c (a hardware test on
/// npu1_1col; the channel control and queue offsets are the same on npu2),
/// with `controller_id` pkt_id 2 on the shim and 1 on tile (0, 2):
/// `maskwrite32 {address = 119296, mask = 3840, value = 512}` then `write32
/// {address = 119300, value = 2147483648}` (shim S2MM 0 control 0x1D200 =
/// 2 << 8, queue 0x1D204 = BD 0 + token), and `maskwrite32 {address =
/// 2219520, mask = 3840, value = 256}`, `write32 {address = 2219524, value =
/// 2147483648}` (core (0, 2) S2MM 0, 0x21DE00 / 0x21DE04), then `sync
/// {column = 0, row = 2, direction = 0, channel = 0, column_num = 1,
/// row_num = 1}`; the shim BD 0 patch is `address_patch {addr = 118788,
/// arg_idx = 2, arg_plus = 0}`. Addresses, values and start words are
/// compared with that test; the mask is not: it masks 4 bits (0xF00) by
/// hand, Loom's field is 5 bits (0x1F00), which is compared with mlir-aie's
/// lowering instead (lib/Dialect/AIEX/Transforms/AIEDmaToNpu.cpp, `value =
/// pkt_id << 8, mask = 0x00001F00`; docs/research/configuration-path/
/// findings.md Q2).
#[test]
fn controller_id_maskwrite_then_token_start() {
    let p = strix();
    let token = StartQueueEntry {
        start_bd: 0,
        runs: 1,
        token_issue: true,
    };
    let cases = [
        (TileKind::Shim, 0, 2, (119296, 512, 119300)),
        (TileKind::Core, 2, 1, (2219520, 256, 2219524)),
    ];
    for (kind, row, id, (control, value, queue)) in cases {
        let field = p.tile_registers(kind).channel_control.controller_id;
        let mask = ((1u32 << field.width) - 1) << field.lsb;
        let set_id = TxnOp::MaskWrite {
            address: at(0, row, p.channel_control(kind, Direction::S2mm, 0).unwrap()),
            value: id << field.lsb,
            mask,
        };
        let start = TxnOp::Write {
            address: at(0, row, p.start_queue(kind, Direction::S2mm, 0).unwrap()),
            value: p.encode_start_queue(kind, &token).unwrap(),
        };
        assert_eq!(
            [set_id.clone(), start],
            [
                TxnOp::MaskWrite {
                    address: control,
                    value,
                    mask: 0x1F00,
                },
                TxnOp::Write {
                    address: queue,
                    value: 2_147_483_648,
                },
            ],
            "{kind:?}"
        );
        let mut check = hex("00000003 00000000 00000000 00000000 00000000 00001F00 0000001C");
        (check[2], check[4]) = (control, value);
        assert_eq!(op_words(set_id), check, "{kind:?}");
    }
    let wait = TxnOp::Sync {
        column: 0,
        row: 2,
        direction: Direction::S2mm,
        channel: 0,
        column_count: 1,
        row_count: 1,
    };
    assert_eq!(op_words(wait), hex("00000080 00000010 00000200 00010100"));
    let [_, patch] = shim_descriptor(p.bd(TileKind::Shim, 0).unwrap(), vec![0; 8], 2, 0);
    assert_eq!(
        patch,
        TxnOp::DdrPatch {
            address: 118788,
            arg_index: 2,
            arg_offset: 0
        }
    );
}

/// Core_Control and DMA channel control on npu2. Xilinx/mlir-aie
/// test/Passes/lower-core-reset/core_reset.mlir
/// @904c1cd1d6644fc2d908a55765a3a4f45bccc250 (npu2): `aiex.core_reset` of
/// tile (0, 3) checks `maskwrite32(204800, 2, 2)` then `maskwrite32(204800,
/// 0, 2)` with `{column = 0, row = 3}` (Core_Control 0x32000, reset bit 1),
/// the same for (1, 2). Xilinx/mlir-aie
/// test/Passes/lower-dma-channel-reset/dma_channel_reset.mlir
/// @cd65ceb8f36fdd705563beff56f7f565e17ff8b5 (npu2): channel reset pulses at
/// core S2MM 0 control 122368 (0x1DE00), core MM2S 0 122384 (0x1DE10) and
/// memory-tile S2MM 0 656896 (0xA0600). The TXN words are the MASKWRITE
/// layout of `maskwrite32` above with the tile's column and row in the
/// address.
#[test]
fn core_and_channel_control_registers() {
    let p = strix();
    assert_eq!(p.core_control(), 204800);
    let control = |kind, direction| p.channel_control(kind, direction, 0).unwrap();
    assert_eq!(control(TileKind::Core, Direction::S2mm), 122368);
    assert_eq!(control(TileKind::Core, Direction::Mm2s), 122384);
    assert_eq!(control(TileKind::Memory, Direction::S2mm), 656896);

    for ((column, row), address) in [((0, 3), "00332000"), ((1, 2), "02232000")] {
        for (value, check_value) in [(2, "00000002"), (0, "00000000")] {
            let pulse = TxnOp::MaskWrite {
                address: at(column, row, p.core_control()),
                value,
                mask: 2,
            };
            let check =
                format!("00000003 00000000 {address} 00000000 {check_value} 00000002 0000001C");
            assert_eq!(op_words(pulse), hex(&check), "({column}, {row})");
        }
    }
}

/// Circuit connections. Xilinx/mlir-aie test/Passes/expand-load-pdi/
/// switchbox_config_multiple.mlir @31b545ce7a3824c0617afd871764c699717bb7bf
/// (npu2_1col): `aie.switchbox` of tile (0, 2) with `connect<South : 0, DMA :
/// 0>` expands to `write32 {address = 2355204, value = 2147483653}` (master
/// DMA0 0x23F004 = enable | slave index 5) and `write32 {address = 2355476,
/// value = 2147483648}` (slave South0 0x23F114 = enable). Loom's route from
/// shim MM2S 0 to core (0, 2) S2MM 0 enters that tile on South 0 and must
/// write the same two words there, master first.
#[test]
fn circuit_connection_words() {
    let p = strix();
    let from = Endpoint {
        column: 0,
        row: 0,
        channel: 0,
    };
    let to = Endpoint {
        column: 0,
        row: 2,
        channel: 0,
    };
    let settings = route(p, from, to, &mut Used::default()).unwrap();
    let core: Vec<TxnOp> = settings
        .iter()
        .filter(|s| (s.column, s.row) == (0, 2))
        .map(|s| s.txn_op(p))
        .collect();
    let expected = [
        TxnOp::Write {
            address: 2355204,
            value: 2_147_483_653,
        },
        TxnOp::Write {
            address: 2355476,
            value: 2_147_483_648,
        },
    ];
    assert_eq!(core, expected);
}

/// Packet-mode words. Xilinx/mlir-aie test/Passes/expand-load-pdi/
/// write32-no-overlay.mlir @6cacfc5e0538f88e2d48fc93f33b1882c701826e
/// (npu2_1col): tile (0, 2) with `masterset(Core : 0, amsel<0> (0))` and
/// `packet_rules(South : 0) { rule(31, 0, ...) }` checks master Core0
/// `write32(2355200, -1073741816)` = 0xC0000008 (enable 31, packet enable 30,
/// msel-enable bit 0 << 3, arbiter 0), slave South0 `write32(2355476,
/// -1073741824)` = 0xC0000000 (enable, packet enable) and slot 0 of slave
/// South0 `write32(2355792, 2031872)` = 0x001F0100 (id 0 << 24, mask 0x1F <<
/// 16, enable 8, msel 0 << 4, arbiter 0) at slot base 0x3F200 + 0x10 * slave
/// index 5. Loom's token tree uses the same arbiter 0 and msel 0, so a
/// one-tile tree whose rule is id 0 must write those three words: on the
/// shim, slave TileControl0 (0x3F100), its slot 0 (0x3F200), master South0
/// (0x3F008) (aie-rt release/main_aig xaie2pgbl_params.h PL_MODULE_
/// STREAM_SWITCH_*; findings.md Q2). Loom writes slave, slot, then master;
/// mlir-aie writes the master first.
#[test]
fn packet_switch_words() {
    let p = strix();
    let core = &p.tile_registers(TileKind::Core).stream_switch;
    let south0 = p.stream_switch_slave(TileKind::Core, 5).unwrap();
    let slot = core.packet.slot_base.0 + 5 * core.packet.slot_port_stride.0;
    let master = p.stream_switch_master(TileKind::Core, 0).unwrap();
    assert_eq!(
        [at(0, 2, master), at(0, 2, south0), at(0, 2, slot)],
        [2355200, 2355476, 2355792]
    );

    let ids: BTreeMap<Tile, u32> = [(Tile::new(0, 0), 0)].into();
    let settings = token_routes(p, &ids, &mut Used::default()).unwrap();
    let words: Vec<(u32, u32)> = settings.iter().map(|s| (s.offset, s.value)).collect();
    assert_eq!(
        words,
        [
            (0x3F100, -1_073_741_824i32 as u32),
            (0x3F200, 2_031_872),
            (0x3F008, -1_073_741_816i32 as u32),
        ]
    );
}

/// The task-complete-token route of a shim that issues tokens itself,
/// TileControl0 -> South0 with the header kept, as mlir-aie declares it
/// (Xilinx/mlir-aie test/npu-xrt/core_dmas/dma_configure_task_token/aie.mlir
/// @31b545ce7a38, `packet_flow(0x3) { packet_source<%tile_0_0, "TileControl"
/// : 0> packet_dest<%tile_0_0, "South" : 0> }`; lib/Dialect/AIE/Transforms/
/// AIEGenerateColumnControlOverlay.cpp adds `keep_pkt_header`). No mlir-aie
/// test checks this route's register words; with the fields that
/// `packet_switch_words` pins and Loom's controller id 1 they are slave
/// 0x3F100 = 0xC0000000, slot 0x3F200 = 1 << 24 | 0x1F << 16 | 1 << 8 =
/// 0x011F0100, master 0x3F008 = 0xC0000008 (drop-header bit 7 clear), each a
/// TXN WRITE.
#[test]
fn shim_token_route_words() {
    let p = strix();
    let ids = controller_ids(&[Tile::new(0, 0)].into()).unwrap();
    assert_eq!(ids[&Tile::new(0, 0)], 1);
    let settings = token_routes(p, &ids, &mut Used::default()).unwrap();
    let ops: Vec<Vec<u32>> = settings.iter().map(|s| op_words(s.txn_op(p))).collect();
    assert_eq!(
        ops,
        [
            hex("00000000 00000000 0003F100 00000000 C0000000 00000018"),
            hex("00000000 00000000 0003F200 00000000 011F0100 00000018"),
            hex("00000000 00000000 0003F008 00000000 C0000008 00000018"),
        ]
    );
}
