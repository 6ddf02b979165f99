//! TXN control code: the command stream the NPU firmware runs to configure
//! the array and to start and wait for transfers. A 16-byte header (version
//! 0.1, device generation, rows, columns, memory-tile rows, op count, total
//! size) then ops of little-endian words, each carrying its own size.
//!
//! Word layouts follow mlir-aie include/aie/Runtime/TxnEncoding.h and the
//! aie-rt structs they serialize (driver/src/global/xaiegbl.h, XAie_*Hdr).
//! The tile is carried by the address (col << 25 | row << 20 | offset); the
//! redundant column/row bytes some writers add are written as zero, as
//! mlir-aie does for flat addresses, and ignored when reading.
//! Only opcodes numbered alike across aie-rt versions are written; 9 and up
//! differ between versions.

use super::regs::{name_of, Direction, Register, RegisterName};
use crate::DeviceProfile;
use std::fmt::{self, Write as _};

const HEADER_BYTES: usize = 16;
const MAJOR: u8 = 0;
const MINOR: u8 = 1;

// aie-rt driver/src/common/xaie_txn.h (XAie_TxnOpcode).
const WRITE: u8 = 0;
const BLOCKWRITE: u8 = 1;
const MASKWRITE: u8 = 3;
const MASKPOLL: u8 = 4;
const TCT: u8 = 0x80;
const LOADPDI: u8 = 8;
const DDR_PATCH: u8 = 0x81;
/// Stable opcodes this module reads no further than their name.
const UNSUPPORTED: [(u8, &str); 7] = [
    (2, "BLOCKSET"),
    (5, "NOOP"),
    (6, "PREEMPT"),
    (7, "MASKPOLL_BUSY"),
    (0x82, "READ_REGS"),
    (0x83, "RECORD_TIMER"),
    (0x84, "MERGE_SYNC"),
];

// Op sizes in bytes, size word included.
const WRITE_BYTES: usize = 24;
const BLOCKWRITE_HEADER_BYTES: usize = 16;
const MASK_BYTES: usize = 28;
/// aie-rt writes sizeof(XAie_MaskWrite32Hdr), which pads 28 bytes to 32.
const MASK_BYTES_PADDED: usize = 32;
const TCT_BYTES: usize = 16;
/// aie-rt `XAie_LoadPdiHdr`: opcode, pad, u16 id, u32 size, u64 address.
const LOADPDI_BYTES: usize = 16;
const DDR_PATCH_BYTES: usize = 48;

/// One TXN op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnOp {
    Write {
        address: u32,
        value: u32,
    },
    BlockWrite {
        address: u32,
        words: Vec<u32>,
    },
    MaskWrite {
        address: u32,
        value: u32,
        mask: u32,
    },
    /// Wait until `register & mask == value`.
    MaskPoll {
        address: u32,
        value: u32,
        mask: u32,
    },
    /// Add the address of kernel argument `arg_index` plus `arg_offset` to
    /// the shim buffer descriptor address at `address` (its word 1).
    DdrPatch {
        address: u32,
        arg_index: u32,
        arg_offset: u64,
    },
    /// Load the PDI `id` of `size` bytes at device address `address`: the
    /// firmware resets the partition when the address differs from the PDI
    /// it last loaded, then runs the PDI's configuration. The address is 0
    /// in an artifact; the loader writes it (XRT patches `.pdi.<id>`).
    LoadPdi {
        id: u16,
        size: u32,
        address: u64,
    },
    /// Wait for the task-completion tokens of a channel over a range of tiles.
    Sync {
        column: u8,
        row: u8,
        direction: Direction,
        channel: u8,
        column_count: u8,
        row_count: u8,
    },
}

/// The two ops that give a shim DMA channel a buffer descriptor over a
/// caller's buffer: the descriptor's words, written with its address zero
/// (BLOCKWRITE at `bd_address`), then the DDR_PATCH that adds the address of
/// argument `arg_index` plus `arg_offset` to its address (word 1) once the
/// buffer is known. The compiler's command stream and the HAL's transaction
/// builder both hand shim channels their transfers this way.
pub fn shim_descriptor(
    bd_address: u32,
    words: Vec<u32>,
    arg_index: u32,
    arg_offset: u64,
) -> [TxnOp; 2] {
    [
        TxnOp::BlockWrite {
            address: bd_address,
            words,
        },
        TxnOp::DdrPatch {
            address: bd_address + 4,
            arg_index,
            arg_offset,
        },
    ]
}

impl TxnOp {
    fn mnemonic(&self) -> &'static str {
        match self {
            TxnOp::Write { .. } => "WRITE",
            TxnOp::BlockWrite { .. } => "BLOCKWRITE",
            TxnOp::MaskWrite { .. } => "MASKWRITE",
            TxnOp::MaskPoll { .. } => "MASKPOLL",
            TxnOp::DdrPatch { .. } => "DDR_PATCH",
            TxnOp::LoadPdi { .. } => "LOADPDI",
            TxnOp::Sync { .. } => "SYNC",
        }
    }

    fn encode_into(&self, out: &mut Vec<u32>) {
        match self {
            TxnOp::Write { address, value } => {
                out.extend([WRITE.into(), 0, *address, 0, *value, WRITE_BYTES as u32]);
            }
            TxnOp::BlockWrite { address, words } => {
                let size = BLOCKWRITE_HEADER_BYTES + 4 * words.len();
                out.extend([BLOCKWRITE.into(), 0, *address, size as u32]);
                out.extend(words);
            }
            TxnOp::MaskWrite {
                address,
                value,
                mask,
            } => out.extend([
                MASKWRITE.into(),
                0,
                *address,
                0,
                *value,
                *mask,
                MASK_BYTES as u32,
            ]),
            TxnOp::MaskPoll {
                address,
                value,
                mask,
            } => out.extend([
                MASKPOLL.into(),
                0,
                *address,
                0,
                *value,
                *mask,
                MASK_BYTES as u32,
            ]),
            TxnOp::DdrPatch {
                address,
                arg_index,
                arg_offset,
            } => {
                // w2-w3 op_base, w4 action 0 (patch), w5 padding: all zero.
                out.extend([DDR_PATCH.into(), DDR_PATCH_BYTES as u32, 0, 0, 0, 0]);
                out.extend([*address, 0, *arg_index, 0]);
                out.extend([*arg_offset as u32, (*arg_offset >> 32) as u32]);
            }
            TxnOp::LoadPdi { id, size, address } => out.extend([
                u32::from(LOADPDI) | u32::from(*id) << 16,
                *size,
                *address as u32,
                (*address >> 32) as u32,
            ]),
            TxnOp::Sync {
                column,
                row,
                direction,
                channel,
                column_count,
                row_count,
            } => {
                let direction: u8 = match direction {
                    Direction::S2mm => 0,
                    Direction::Mm2s => 1,
                };
                out.extend([
                    TCT.into(),
                    TCT_BYTES as u32,
                    u32::from_le_bytes([direction, *row, *column, 0]),
                    u32::from_le_bytes([0, *row_count, *column_count, *channel]),
                ]);
            }
        }
    }
}

/// A TXN command stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Txn {
    pub major: u8,
    pub minor: u8,
    pub device_generation: u8,
    pub rows: u8,
    pub columns: u8,
    pub memory_tile_rows: u8,
    pub ops: Vec<TxnOp>,
}

/// What is wrong with a TXN stream, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnError {
    /// Byte offset into the stream (for a header built from a profile: the
    /// header byte that cannot hold the value).
    pub offset: usize,
    /// The op being read, counting from 0.
    pub op_index: Option<usize>,
    pub kind: TxnErrorKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnErrorKind {
    HeaderFieldTooWide {
        field: &'static str,
        value: u32,
    },
    /// A partition of no columns, or wider than the array.
    PartitionWidth {
        columns: u32,
        array: u32,
    },
    TruncatedHeader {
        length: usize,
    },
    UnsupportedVersion {
        major: u8,
        minor: u8,
    },
    /// The header's total size disagrees with the stream.
    SizeMismatch {
        header: u32,
        actual: usize,
    },
    /// The header's op count disagrees with the ops the stream holds.
    CountMismatch {
        header: u32,
        found: usize,
    },
    UnknownOpcode(u8),
    /// A stable opcode this reader does not model.
    UnsupportedOpcode {
        opcode: u8,
        name: &'static str,
    },
    /// The op runs past the end of the stream.
    Truncated {
        op: &'static str,
        needed: usize,
        available: usize,
    },
    /// The op's size word disagrees with its layout.
    BadSize {
        op: &'static str,
        size: u32,
        expected: &'static str,
    },
    FieldOutOfRange {
        op: &'static str,
        field: &'static str,
        value: u64,
    },
}

impl fmt::Display for TxnErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TxnErrorKind::HeaderFieldTooWide { field, value } => {
                write!(f, "header {field} {value} does not fit a byte")
            }
            TxnErrorKind::PartitionWidth { columns, array } => write!(
                f,
                "a partition of {columns} columns does not fit the array's {array}"
            ),
            TxnErrorKind::TruncatedHeader { length } => {
                write!(
                    f,
                    "the stream is {length} bytes, shorter than the {HEADER_BYTES}-byte header"
                )
            }
            TxnErrorKind::UnsupportedVersion { major, minor } => {
                write!(f, "version {major}.{minor} is not {MAJOR}.{MINOR}")
            }
            TxnErrorKind::SizeMismatch { header, actual } => {
                write!(f, "the header says {header} bytes, the stream is {actual}")
            }
            TxnErrorKind::CountMismatch { header, found } => {
                write!(f, "the header says {header} ops, the stream holds {found}")
            }
            TxnErrorKind::UnknownOpcode(opcode) => write!(f, "unknown opcode {opcode:#x}"),
            TxnErrorKind::UnsupportedOpcode { opcode, name } => {
                write!(f, "opcode {opcode:#x} ({name}) is not supported")
            }
            TxnErrorKind::Truncated {
                op,
                needed,
                available,
            } => write!(f, "{op} needs {needed} bytes, {available} remain"),
            TxnErrorKind::BadSize { op, size, expected } => {
                write!(f, "{op} size word is {size}, its layout takes {expected}")
            }
            TxnErrorKind::FieldOutOfRange { op, field, value } => {
                write!(f, "{op} {field} {value:#x} is out of range")
            }
        }
    }
}

impl fmt::Display for TxnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TXN byte {}", self.offset)?;
        if let Some(index) = self.op_index {
            write!(f, " (op {index})")?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl std::error::Error for TxnError {}

/// An error inside one op, `at` bytes from its start.
struct OpFault {
    at: usize,
    kind: TxnErrorKind,
}

fn fault(at: usize, kind: TxnErrorKind) -> OpFault {
    OpFault { at, kind }
}

fn words_of(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// The op's first `bytes` bytes as words, if the stream holds them.
fn take(rest: &[u8], op: &'static str, bytes: usize) -> Result<Vec<u32>, OpFault> {
    match rest.get(..bytes) {
        Some(op_bytes) => Ok(words_of(op_bytes)),
        None => Err(fault(
            0,
            TxnErrorKind::Truncated {
                op,
                needed: bytes,
                available: rest.len(),
            },
        )),
    }
}

fn check_size(
    words: &[u32],
    op: &'static str,
    at_word: usize,
    ok: impl Fn(usize) -> bool,
    expected: &'static str,
) -> Result<usize, OpFault> {
    let size = words[at_word];
    if ok(size as usize) {
        Ok(size as usize)
    } else {
        Err(fault(
            4 * at_word,
            TxnErrorKind::BadSize { op, size, expected },
        ))
    }
}

/// A word that must be zero for the value to fit the model (the high half of
/// a 64-bit address or argument index).
fn zero_high(
    words: &[u32],
    op: &'static str,
    field: &'static str,
    low: usize,
) -> Result<u32, OpFault> {
    match words[low + 1] {
        0 => Ok(words[low]),
        high => Err(fault(
            4 * (low + 1),
            TxnErrorKind::FieldOutOfRange {
                op,
                field,
                value: u64::from(high) << 32 | u64::from(words[low]),
            },
        )),
    }
}

/// Reads the op at the start of `rest`: the op and its size in bytes.
fn decode_op(rest: &[u8]) -> Result<(TxnOp, usize), OpFault> {
    let opcode = rest.first().copied().unwrap_or_default();
    match opcode {
        WRITE => {
            let w = take(rest, "WRITE", WRITE_BYTES)?;
            check_size(&w, "WRITE", 5, |s| s == WRITE_BYTES, "24")?;
            let address = zero_high(&w, "WRITE", "address", 2)?;
            Ok((
                TxnOp::Write {
                    address,
                    value: w[4],
                },
                WRITE_BYTES,
            ))
        }
        BLOCKWRITE => {
            let head = take(rest, "BLOCKWRITE", BLOCKWRITE_HEADER_BYTES)?;
            let ok = |s: usize| s >= BLOCKWRITE_HEADER_BYTES && s.is_multiple_of(4);
            let size = check_size(&head, "BLOCKWRITE", 3, ok, "16 + 4 per word")?;
            let w = take(rest, "BLOCKWRITE", size)?;
            let words = w[BLOCKWRITE_HEADER_BYTES / 4..].to_vec();
            Ok((
                TxnOp::BlockWrite {
                    address: w[2],
                    words,
                },
                size,
            ))
        }
        MASKWRITE | MASKPOLL => {
            let op = if opcode == MASKWRITE {
                "MASKWRITE"
            } else {
                "MASKPOLL"
            };
            let w = take(rest, op, MASK_BYTES)?;
            let ok = |s| s == MASK_BYTES || s == MASK_BYTES_PADDED;
            let size = check_size(&w, op, 6, ok, "28 (32 padded)")?;
            take(rest, op, size)?;
            let (address, value, mask) = (zero_high(&w, op, "address", 2)?, w[4], w[5]);
            let op = if opcode == MASKWRITE {
                TxnOp::MaskWrite {
                    address,
                    value,
                    mask,
                }
            } else {
                TxnOp::MaskPoll {
                    address,
                    value,
                    mask,
                }
            };
            Ok((op, size))
        }
        TCT => {
            let w = take(rest, "SYNC", 8)?;
            check_size(&w, "SYNC", 1, |s| s == TCT_BYTES, "16")?;
            let w = take(rest, "SYNC", TCT_BYTES)?;
            let [direction, row, column, _] = w[2].to_le_bytes();
            let [_, row_count, column_count, channel] = w[3].to_le_bytes();
            let direction = match direction {
                0 => Direction::S2mm,
                1 => Direction::Mm2s,
                other => {
                    return Err(fault(
                        8,
                        TxnErrorKind::FieldOutOfRange {
                            op: "SYNC",
                            field: "direction",
                            value: other.into(),
                        },
                    ))
                }
            };
            let op = TxnOp::Sync {
                column,
                row,
                direction,
                channel,
                column_count,
                row_count,
            };
            Ok((op, TCT_BYTES))
        }
        LOADPDI => {
            // The op has no size word: its length is fixed.
            let w = take(rest, "LOADPDI", LOADPDI_BYTES)?;
            let op = TxnOp::LoadPdi {
                id: (w[0] >> 16) as u16,
                size: w[1],
                address: u64::from(w[3]) << 32 | u64::from(w[2]),
            };
            Ok((op, LOADPDI_BYTES))
        }
        DDR_PATCH => {
            let w = take(rest, "DDR_PATCH", 8)?;
            check_size(&w, "DDR_PATCH", 1, |s| s == DDR_PATCH_BYTES, "48")?;
            // aiebu reads only the register address, argument index and
            // offset (w2-w5: op_base, action, padding).
            let w = take(rest, "DDR_PATCH", DDR_PATCH_BYTES)?;
            let op = TxnOp::DdrPatch {
                address: zero_high(&w, "DDR_PATCH", "register address", 6)?,
                arg_index: zero_high(&w, "DDR_PATCH", "argument index", 8)?,
                arg_offset: u64::from(w[11]) << 32 | u64::from(w[10]),
            };
            Ok((op, DDR_PATCH_BYTES))
        }
        _ => Err(fault(
            0,
            match UNSUPPORTED.iter().find(|(code, _)| *code == opcode) {
                Some(&(opcode, name)) => TxnErrorKind::UnsupportedOpcode { opcode, name },
                None => TxnErrorKind::UnknownOpcode(opcode),
            },
        )),
    }
}

fn header_error(offset: usize, kind: TxnErrorKind) -> TxnError {
    TxnError {
        offset,
        op_index: None,
        kind,
    }
}

impl Txn {
    /// An empty stream for a partition `columns` wide on the profile's
    /// array. The header carries the partition's width, not the array's:
    /// mlir-aie writes 1 for a one-column device and aiebu takes the
    /// partition size from it (findings.md Q3).
    pub fn new(profile: &DeviceProfile, columns: u32) -> Result<Txn, TxnError> {
        if columns == 0 || columns > profile.array.columns {
            return Err(header_error(
                4,
                TxnErrorKind::PartitionWidth {
                    columns,
                    array: profile.array.columns,
                },
            ));
        }
        let byte = |offset: usize, field: &'static str, value: u32| {
            u8::try_from(value).map_err(|_| {
                header_error(offset, TxnErrorKind::HeaderFieldTooWide { field, value })
            })
        };
        let memory_tile_rows = profile.array.memory_tile_rows.len() as u32;
        Ok(Txn {
            major: MAJOR,
            minor: MINOR,
            device_generation: byte(2, "device generation", profile.device.aie_generation)?,
            rows: byte(3, "rows", profile.array.rows)?,
            columns: byte(4, "columns", columns)?,
            memory_tile_rows: byte(5, "memory-tile rows", memory_tile_rows)?,
            ops: vec![],
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut words = vec![0u32; HEADER_BYTES / 4];
        for op in &self.ops {
            op.encode_into(&mut words);
        }
        words[0] = u32::from_le_bytes([self.major, self.minor, self.device_generation, self.rows]);
        words[1] = u32::from_le_bytes([self.columns, self.memory_tile_rows, 0, 0]);
        words[2] = self.ops.len() as u32;
        words[3] = (4 * words.len()) as u32;
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// Byte offset of each op in what `encode` writes (where a relocation
    /// finds an op's payload).
    pub fn op_offsets(&self) -> Vec<usize> {
        let mut at = HEADER_BYTES;
        let mut words = Vec::new();
        self.ops
            .iter()
            .map(|op| {
                let offset = at;
                words.clear();
                op.encode_into(&mut words);
                at += 4 * words.len();
                offset
            })
            .collect()
    }

    pub fn decode(bytes: &[u8]) -> Result<Txn, TxnError> {
        let Some(header) = bytes.get(..HEADER_BYTES) else {
            return Err(header_error(
                0,
                TxnErrorKind::TruncatedHeader {
                    length: bytes.len(),
                },
            ));
        };
        let header = words_of(header);
        let [major, minor, device_generation, rows] = header[0].to_le_bytes();
        let [columns, memory_tile_rows, _, _] = header[1].to_le_bytes();
        // Version 1.0 is aie-rt's "optimized" stream, whose ops are laid out differently.
        if (major, minor) != (MAJOR, MINOR) {
            return Err(header_error(
                0,
                TxnErrorKind::UnsupportedVersion { major, minor },
            ));
        }
        let (count, size) = (header[2], header[3]);
        let size_mismatch = header_error(
            12,
            TxnErrorKind::SizeMismatch {
                header: size,
                actual: bytes.len(),
            },
        );
        if (size as usize) < HEADER_BYTES {
            return Err(size_mismatch);
        }
        // Ops past the header's size are not read: they are reported as a
        // size mismatch, while a stream cut short shows up at the cut op.
        let end = bytes.len().min(size as usize);
        let mut ops = vec![];
        let mut starts = vec![];
        let mut offset = HEADER_BYTES;
        while offset < end {
            let (op, length) = decode_op(&bytes[offset..end]).map_err(|f| TxnError {
                offset: offset + f.at,
                op_index: Some(ops.len()),
                kind: f.kind,
            })?;
            ops.push(op);
            starts.push(offset);
            offset += length;
        }
        if size as usize != bytes.len() {
            return Err(size_mismatch);
        }
        if ops.len() != count as usize {
            let index = ops.len().min(count as usize);
            return Err(TxnError {
                offset: starts.get(index).copied().unwrap_or(end),
                op_index: Some(index),
                kind: TxnErrorKind::CountMismatch {
                    header: count,
                    found: ops.len(),
                },
            });
        }
        Ok(Txn {
            major,
            minor,
            device_generation,
            rows,
            columns,
            memory_tile_rows,
            ops,
        })
    }

    /// One line per op after a header line; register names and buffer
    /// descriptor fields come from the profile's register map.
    pub fn disassemble(&self, profile: &DeviceProfile) -> String {
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let mut out = format!(
            "TXN {}.{}  device generation {}  {} x {}  {}  {}  {} bytes\n",
            self.major,
            self.minor,
            self.device_generation,
            plural(self.rows.into(), "row"),
            plural(self.columns.into(), "column"),
            plural(self.memory_tile_rows.into(), "memory-tile row"),
            plural(self.ops.len(), "op"),
            self.encode().len(),
        );
        for (index, op) in self.ops.iter().enumerate() {
            let text = match op {
                TxnOp::Write { address, value } => {
                    let (at, name) = locate(profile, *address);
                    let start = name
                        .and_then(|n| match n.register {
                            Register::StartQueue(..) => {
                                profile.decode_start_queue(n.kind, *value).ok()
                            }
                            _ => None,
                        })
                        .map(|e| {
                            let token = if e.token_issue { ", token" } else { "" };
                            format!(
                                "  (start bd[{}], {}{token})",
                                e.start_bd,
                                plural(e.runs as usize, "run")
                            )
                        })
                        .unwrap_or_default();
                    format!("{at} = {value:#x}{start}")
                }
                TxnOp::BlockWrite { address, words } => block_write(profile, *address, words),
                TxnOp::MaskWrite {
                    address,
                    value,
                    mask,
                } => format!(
                    "{} = {value:#x} mask {mask:#x}",
                    locate(profile, *address).0
                ),
                TxnOp::MaskPoll {
                    address,
                    value,
                    mask,
                } => format!(
                    "{} == {value:#x} mask {mask:#x}",
                    locate(profile, *address).0
                ),
                TxnOp::DdrPatch {
                    address,
                    arg_index,
                    arg_offset,
                } => format!(
                    "{} <- argument {arg_index} + {arg_offset}",
                    locate(profile, *address).0
                ),
                TxnOp::LoadPdi { id, size, address } => {
                    let at = if *address == 0 {
                        "address patched by the loader".to_string()
                    } else {
                        format!("at {address:#x}")
                    };
                    format!(".pdi.{id}  {size} bytes, {at}")
                }
                TxnOp::Sync {
                    column,
                    row,
                    direction,
                    channel,
                    column_count,
                    row_count,
                } => format!(
                    "column {column} row {row} {} channel {channel} ({} x {})",
                    direction.name(),
                    plural((*column_count).into(), "column"),
                    plural((*row_count).into(), "row"),
                ),
            };
            // Writing to a String cannot fail.
            let _ = writeln!(out, "{index:>4}  {:<10}  {text}", op.mnemonic());
        }
        out
    }
}

/// `@address [col,row] name` and the name, if the register map knows it.
fn locate(profile: &DeviceProfile, address: u32) -> (String, Option<RegisterName>) {
    let address = u64::from(address);
    let (column, row, _) = profile.split_address(address);
    let name = name_of(profile, address);
    let text = match name {
        Some(n) => n.to_string(),
        None => "(unnamed)".to_string(),
    };
    (format!("@{address:#010x} [{column},{row}] {text}"), name)
}

const SHOWN_WORDS: usize = 8;

fn block_write(profile: &DeviceProfile, address: u32, words: &[u32]) -> String {
    let hex = |words: &[u32]| {
        let shown: Vec<String> = words
            .iter()
            .take(SHOWN_WORDS)
            .map(|w| format!("{w:#x}"))
            .collect();
        let more = words.len().saturating_sub(SHOWN_WORDS);
        let more = if more > 0 {
            format!(" ... {more} more")
        } else {
            String::new()
        };
        format!("{}{more}", shown.join(" "))
    };
    let (at, name) = locate(profile, address);
    let count = format!(
        "{} word{}",
        words.len(),
        if words.len() == 1 { "" } else { "s" }
    );
    if let Some(n) = name {
        if let Register::BdWord { bd, word: 0 } = n.register {
            if words.len() == profile.tile_registers(n.kind).bd_layout.words as usize {
                let fields = match profile.decode_bd(n.kind, words) {
                    Ok(descriptor) => descriptor.to_string(),
                    Err(e) => format!("{} ({e})", hex(words)),
                };
                let (column, row) = (n.column, n.row);
                return format!(
                    "@{address:#010x} [{column},{row}] {}.bd[{bd}]  {count}: {fields}",
                    n.kind.prefix()
                );
            }
        }
    }
    format!("{at}  {count}: {}", hex(words))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles;
    use crate::xdna::regs::{BufferDescriptor, StartQueueEntry, TileKind};

    fn strix() -> &'static DeviceProfile {
        &profiles()[0]
    }

    fn one_op(op: TxnOp) -> Vec<u32> {
        let mut txn = Txn::new(strix(), 8).unwrap();
        txn.ops.push(op);
        words_of(&txn.encode())[4..].to_vec()
    }

    fn every_op() -> Vec<TxnOp> {
        vec![
            TxnOp::Write {
                address: 0x0031F020,
                value: 2,
            },
            TxnOp::BlockWrite {
                address: 0x0001D000,
                words: vec![1, 2, 3, 4, 5, 6, 7, 8],
            },
            TxnOp::BlockWrite {
                address: 0x00220000,
                words: vec![],
            },
            TxnOp::MaskWrite {
                address: 0x00232000,
                value: 1,
                mask: 3,
            },
            TxnOp::MaskPoll {
                address: 0x00232004,
                value: 0x100000,
                mask: 0x100000,
            },
            TxnOp::DdrPatch {
                address: 0x0001D004,
                arg_index: 4,
                arg_offset: 0x1_0000_0040,
            },
            TxnOp::Sync {
                column: 1,
                row: 0,
                direction: Direction::Mm2s,
                channel: 1,
                column_count: 2,
                row_count: 1,
            },
            TxnOp::LoadPdi {
                id: 1,
                size: 368,
                address: 0x1_2345_6780,
            },
        ]
    }

    #[test]
    fn every_op_round_trips() {
        for profile in profiles() {
            let mut txn = Txn::new(profile, profile.array.columns).unwrap();
            txn.ops = every_op();
            let bytes = txn.encode();
            assert_eq!(Txn::decode(&bytes), Ok(txn));
        }
        for op in every_op() {
            let mut txn = Txn::new(strix(), 8).unwrap();
            txn.ops.push(op);
            assert_eq!(Txn::decode(&txn.encode()), Ok(txn));
        }
    }

    #[test]
    fn op_offsets_point_at_each_encoded_op() {
        let mut txn = Txn::new(strix(), 8).unwrap();
        txn.ops = every_op();
        let bytes = txn.encode();
        let offsets = txn.op_offsets();
        assert_eq!(offsets.len(), txn.ops.len());
        assert_eq!(offsets[0], HEADER_BYTES);
        for (op, &at) in txn.ops.iter().zip(&offsets) {
            // Each op decodes alone from its offset.
            let Ok((decoded, _)) = decode_op(&bytes[at..]) else {
                panic!("no op at byte {at}");
            };
            assert_eq!(&decoded, op);
        }
    }

    // Layouts of mlir-aie include/aie/Runtime/TxnEncoding.h (txn_append_*,
    // txn_prepend_header) and aie-rt driver/src/global/xaiegbl.h
    // (XAie_TxnHeader, XAie_Write32Hdr, XAie_CustomOpHdr, patch_op_t, tct_op_t).
    #[test]
    fn header_bytes_match_the_layout() {
        let txn = Txn::new(strix(), 8).unwrap();
        let bytes = txn.encode();
        assert_eq!(bytes, [0, 1, 4, 6, 8, 1, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0]);
        let mut one = txn.clone();
        one.ops.push(TxnOp::Write {
            address: 0,
            value: 0,
        });
        assert_eq!(words_of(&one.encode())[..4], [0x0604_0100, 0x0108, 1, 40]);
    }

    #[test]
    fn op_words_match_the_layouts() {
        let ops = every_op();
        assert_eq!(one_op(ops[0].clone()), [0, 0, 0x0031F020, 0, 2, 24]);
        assert_eq!(
            one_op(ops[1].clone()),
            [1, 0, 0x0001D000, 48, 1, 2, 3, 4, 5, 6, 7, 8]
        );
        assert_eq!(one_op(ops[2].clone()), [1, 0, 0x00220000, 16]);
        assert_eq!(one_op(ops[3].clone()), [3, 0, 0x00232000, 0, 1, 3, 28]);
        assert_eq!(
            one_op(ops[4].clone()),
            [4, 0, 0x00232004, 0, 0x100000, 0x100000, 28]
        );
        assert_eq!(
            one_op(ops[5].clone()),
            [0x81, 48, 0, 0, 0, 0, 0x0001D004, 0, 4, 0, 0x40, 1]
        );
        // word 2: direction | row << 8 | column << 16; word 3: row count << 8
        // | column count << 16 | channel << 24.
        assert_eq!(
            one_op(ops[6].clone()),
            [0x80, 16, 1 | 1 << 16, 1 << 8 | 2 << 16 | 1 << 24]
        );
        // aie-rt XAie_LoadPdiHdr: opcode | id << 16, size, address low, high.
        assert_eq!(one_op(ops[7].clone()), [8 | 1 << 16, 368, 0x2345_6780, 1]);
    }

    fn stream(ops: &[&[u32]]) -> Vec<u8> {
        let body: Vec<u32> = ops.concat();
        let mut all = vec![
            0x0604_0100,
            0x0108,
            ops.len() as u32,
            (16 + 4 * body.len()) as u32,
        ];
        all.extend(body);
        all.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// aie-rt fills the op header's column and row bytes and pads mask ops to
    /// 32 bytes; both read the same as mlir-aie's layout.
    #[test]
    fn aie_rt_variants_decode() {
        let write = [3 << 16, 0, 0x0031F020, 0, 2, 24]; // row 3 in byte 2
        let mask = [3 | 2 << 16, 0, 0x00232000, 0, 1, 3, 32, 0];
        let txn = Txn::decode(&stream(&[&write, &mask])).unwrap();
        assert_eq!(txn.ops, [every_op()[0].clone(), every_op()[3].clone()]);
    }

    fn error(bytes: &[u8]) -> (usize, Option<usize>, TxnErrorKind) {
        let e = Txn::decode(bytes).unwrap_err();
        (e.offset, e.op_index, e.kind)
    }

    #[test]
    fn decode_errors_say_where_and_what() {
        let write: &[u32] = &[0, 0, 0x0031F020, 0, 2, 24];
        assert_eq!(
            error(&stream(&[write, &[0x42, 0, 0, 0]])),
            (40, Some(1), TxnErrorKind::UnknownOpcode(0x42))
        );
        assert_eq!(
            error(&stream(&[write, write, &[9]])),
            (64, Some(2), TxnErrorKind::UnknownOpcode(9))
        );
        assert_eq!(
            error(&stream(&[&[2, 0, 0, 16]])),
            (
                16,
                Some(0),
                TxnErrorKind::UnsupportedOpcode {
                    opcode: 2,
                    name: "BLOCKSET"
                }
            )
        );
        // a block write claiming 4 more words than the stream holds
        assert_eq!(
            error(&stream(&[write, &[1, 0, 0x0001D000, 32, 7, 7]])),
            (
                40,
                Some(1),
                TxnErrorKind::Truncated {
                    op: "BLOCKWRITE",
                    needed: 32,
                    available: 24
                }
            )
        );
        assert_eq!(
            error(&stream(&[write, &[0, 0, 0x0031F020, 0, 2, 28]])),
            (
                60,
                Some(1),
                TxnErrorKind::BadSize {
                    op: "WRITE",
                    size: 28,
                    expected: "24"
                }
            )
        );
        assert_eq!(
            error(&stream(&[&[0x81, 44, 0, 0, 0, 0, 0, 0, 0, 0, 0]])),
            (
                20,
                Some(0),
                TxnErrorKind::BadSize {
                    op: "DDR_PATCH",
                    size: 44,
                    expected: "48"
                }
            )
        );
        // a WRITE to a 64-bit address
        assert_eq!(
            error(&stream(&[write, &[0, 0, 0x0031F020, 1, 2, 24]])),
            (
                52,
                Some(1),
                TxnErrorKind::FieldOutOfRange {
                    op: "WRITE",
                    field: "address",
                    value: 0x1_0031_F020
                }
            )
        );
        assert_eq!(
            error(&stream(&[&[0x80, 16, 2, 0]])),
            (
                24,
                Some(0),
                TxnErrorKind::FieldOutOfRange {
                    op: "SYNC",
                    field: "direction",
                    value: 2
                }
            )
        );
    }

    #[test]
    fn header_errors_say_where_and_what() {
        let write: &[u32] = &[0, 0, 0x0031F020, 0, 2, 24];
        let mut bytes = stream(&[write, write]);
        bytes[8] = 3; // op count
        assert_eq!(
            error(&bytes),
            (
                64,
                Some(2),
                TxnErrorKind::CountMismatch {
                    header: 3,
                    found: 2
                }
            )
        );
        bytes[8] = 1;
        assert_eq!(
            error(&bytes),
            (
                40,
                Some(1),
                TxnErrorKind::CountMismatch {
                    header: 1,
                    found: 2
                }
            )
        );
        bytes[8] = 2;
        bytes.extend([0; 4]);
        assert_eq!(
            error(&bytes),
            (
                12,
                None,
                TxnErrorKind::SizeMismatch {
                    header: 64,
                    actual: 68
                }
            )
        );
        // cut inside the second op
        assert_eq!(
            error(&bytes[..50]),
            (
                40,
                Some(1),
                TxnErrorKind::Truncated {
                    op: "WRITE",
                    needed: 24,
                    available: 10
                }
            )
        );
        assert_eq!(
            error(&bytes[..10]),
            (0, None, TxnErrorKind::TruncatedHeader { length: 10 })
        );
        bytes[0] = 1;
        bytes[1] = 0;
        assert_eq!(
            error(&bytes),
            (
                0,
                None,
                TxnErrorKind::UnsupportedVersion { major: 1, minor: 0 }
            )
        );
    }

    #[test]
    fn disassembly_names_registers_and_fields() {
        let p = strix();
        let kind = TileKind::Shim;
        let bd = BufferDescriptor {
            address: 0,
            length: 2048,
            next_bd: None,
            valid: true,
            acquire: None,
            release: None,
            burst_length: Some(512),
            iteration: None,
            dimensions: Vec::new(),
        };
        let start = StartQueueEntry {
            start_bd: 0,
            runs: 1,
            token_issue: true,
        };
        let queue = p.start_queue(kind, Direction::Mm2s, 0).unwrap();
        let mut txn = Txn::new(p, p.array.columns).unwrap();
        txn.ops = vec![
            TxnOp::BlockWrite {
                address: p.bd(kind, 0).unwrap(),
                words: p.encode_bd(kind, &bd).unwrap(),
            },
            TxnOp::DdrPatch {
                address: p.bd(kind, 0).unwrap() + 4,
                arg_index: 4,
                arg_offset: 0,
            },
            TxnOp::Write {
                address: queue,
                value: p.encode_start_queue(kind, &start).unwrap(),
            },
            TxnOp::Sync {
                column: 0,
                row: 0,
                direction: Direction::Mm2s,
                channel: 0,
                column_count: 1,
                row_count: 1,
            },
            TxnOp::Write {
                address: p.tile_address(0, 3, p.lock_value(TileKind::Core, 2).unwrap()) as u32,
                value: 2,
            },
            TxnOp::BlockWrite {
                address: 0x0022_0000,
                words: (0..10).collect(),
            },
            TxnOp::MaskPoll {
                address: 0x0023_2004,
                value: 1,
                mask: 1,
            },
            TxnOp::MaskWrite {
                address: 0x1000_0000,
                value: 1,
                mask: 1,
            },
        ];
        let expected = "\
TXN 0.1  device generation 4  6 rows x 8 columns  1 memory-tile row  8 ops  288 bytes
   0  BLOCKWRITE  @0x0001d000 [0,0] shim.bd[0]  8 words: address=0x0 length=2048 next=none valid burst=512
   1  DDR_PATCH   @0x0001d004 [0,0] shim.bd[0].word[1] <- argument 4 + 0
   2  WRITE       @0x0001d214 [0,0] shim.dma.mm2s[0].task_queue = 0x80000000  (start bd[0], 1 run, token)
   3  SYNC        column 0 row 0 mm2s channel 0 (1 column x 1 row)
   4  WRITE       @0x0031f020 [0,3] core.lock[2].value = 0x2
   5  BLOCKWRITE  @0x00220000 [0,2] core.program_memory+0x0  10 words: 0x0 0x1 0x2 0x3 0x4 0x5 0x6 0x7 ... 2 more
   6  MASKPOLL    @0x00232004 [0,2] core.status == 0x1 mask 0x1
   7  MASKWRITE   @0x10000000 [8,0] (unnamed) = 0x1 mask 0x1
";
        assert_eq!(txn.disassemble(p), expected);
    }

    #[test]
    fn a_descriptor_beyond_a_plain_transfer_shows_its_words() {
        let p = strix();
        let mut words = vec![0u32; 8];
        words[2] = 1 << 30;
        let mut txn = Txn::new(p, p.array.columns).unwrap();
        txn.ops.push(TxnOp::BlockWrite {
            address: 0x0001D020,
            words,
        });
        let text = txn.disassemble(p);
        assert!(
            text.contains("shim.bd[1]  8 words: 0x0 0x0 0x40000000 0x0 0x0 0x0 0x0 0x0 (word 2 is"),
            "{text}"
        );
    }

    #[test]
    fn headers_come_from_the_profile() {
        for p in profiles() {
            let txn = Txn::new(p, p.array.columns).unwrap();
            assert_eq!(
                (
                    txn.device_generation,
                    txn.rows,
                    txn.columns,
                    txn.memory_tile_rows
                ),
                (4, 6, 8, 1),
                "{}",
                p.name
            );
        }
    }
}
