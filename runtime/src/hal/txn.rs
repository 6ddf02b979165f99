//! The reference's TXN builder (`Txn.write`, `copy`, `strided`, `wait`,
//! `code`). Its format is the one `loom_targets::xdna::txn` already encodes
//! (the 4-word header for the whole array, then ops), so this only turns the
//! reference's calls into `TxnOp`s on a `loom_targets` `Txn` and lets it
//! encode them; the register addresses and every buffer-descriptor field
//! come from the device profile: the plain ones through
//! `DeviceProfile::encode_bd`, the dimension, packet and cache ones from the
//! shim layout's `extended` section.
//!
//! A shim transfer is what mlir-aie's `AIEDmaToNpu.cpp` lowers
//! `npu.dma_memcpy_nd` to: a BLOCKWRITE of the 8-word shim descriptor, a
//! DDR_PATCH of its address word (word 1) with the argument's address plus
//! the byte offset, and a WRITE of the start-queue entry (start BD, repeat
//! count, token); a wait is a TCT sync. Sizes and strides are turned into
//! descriptor fields as mlir-aie's `getHardwareStridesWraps`
//! (AIEXDialect.cpp) does: everything in 32-bit words, strides held as
//! value - 1, the outermost dimension as the iteration (when its stride is
//! not 0) and as the repeat count.

use loom_targets::xdna::regs::{
    BdField, BufferDescriptor, Dimension, Direction, Iteration, RegisterError, StartQueueEntry,
    TileKind,
};
use loom_targets::xdna::txn::{shim_descriptor, Txn, TxnError, TxnOp};
use loom_targets::DeviceProfile;
use std::fmt;

/// The DMA directions, in the reference's names: S2MM (0) moves a stream
/// into memory (the NPU writes the buffer), MM2S (1) the other way.
pub const S2MM: Direction = Direction::S2mm;
pub const MM2S: Direction = Direction::Mm2s;

/// The AXI cache attributes of a shim DMA's reads and writes (BD word 5).
pub const NO_CACHE: u8 = 0x0;
/// Normal cacheable memory; mlir-aie writes 2 "to enable upsizing in NoC".
pub const NORMAL_CACHE: u8 = 0x2;
pub const AGGRESSIVE_CACHE: u8 = 0xE;

/// Why a builder call cannot be encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxnBuildError {
    /// `tile` packs a row and a column of 4 bits each.
    TileOutOfRange {
        row: u32,
        column: u32,
    },
    /// The packed tile is not in the profile's array.
    NoSuchTile(u32),
    /// A DMA call on a tile that is not a shim tile.
    NotAShim {
        row: u32,
        column: u32,
    },
    /// A register offset outside the tile's address range.
    OffsetOutOfTile(u32),
    /// A size, stride or option the descriptor cannot hold.
    Layout {
        what: &'static str,
        value: u64,
    },
    Register(RegisterError),
    Header(TxnError),
}

impl fmt::Display for TxnBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TxnBuildError::TileOutOfRange { row, column } => {
                write!(f, "tile row {row} column {column} does not fit 4 bits each")
            }
            TxnBuildError::NoSuchTile(t) => write!(
                f,
                "tile {t:#x} (row {}, column {}) is not in the array",
                t >> 4,
                t & 0xF
            ),
            TxnBuildError::NotAShim { row, column } => {
                write!(f, "tile row {row} column {column} is not a shim tile")
            }
            TxnBuildError::OffsetOutOfTile(offset) => {
                write!(f, "offset {offset:#x} is outside a tile's address range")
            }
            TxnBuildError::Layout { what, value } => {
                write!(f, "{what} {value} cannot be encoded in a shim descriptor")
            }
            TxnBuildError::Register(e) => write!(f, "{e}"),
            TxnBuildError::Header(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TxnBuildError {}

impl From<RegisterError> for TxnBuildError {
    fn from(e: RegisterError) -> Self {
        TxnBuildError::Register(e)
    }
}

/// The tile at `row` and `column`: `(row << 4) | column`.
pub fn tile(row: u32, column: u32) -> Result<u32, TxnBuildError> {
    if row > 0xF || column > 0xF {
        return Err(TxnBuildError::TileOutOfRange { row, column });
    }
    Ok(row << 4 | column)
}

/// Which shim DMA a transfer uses, and for which kernel argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShimDma {
    /// Written as is as the DDR_PATCH argument index. mlir-aie writes the
    /// runtime sequence's argument index; Loom's compiler adds 3 for the
    /// xclbin flow (xdna-hardware-facts §4). Which the firmware expects is
    /// not verified on hardware.
    pub arg: u32,
    pub direction: Direction,
    /// A packed tile (`tile`), a shim tile.
    pub tile: u32,
    pub bd: u32,
    pub channel: u32,
}

/// The reference's optional arguments of `copy` and `strided`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaOptions {
    /// Send the data as packets with this id (0 to 31).
    pub packet: Option<u8>,
    /// Ask for a task-complete token on an MM2S (an S2MM always issues one).
    pub token: bool,
    /// AXI cache attributes (0 to 15).
    pub cache: u8,
}

impl Default for DmaOptions {
    fn default() -> Self {
        DmaOptions {
            packet: None,
            token: false,
            cache: NORMAL_CACHE,
        }
    }
}

/// A transfer's shape: four sizes and strides, outermost first, in elements
/// of `unit` bytes. The first size repeats the other three (stepping by the
/// first stride, or in place when it is 0); the innermost stride is 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strides {
    pub sizes: [u32; 4],
    pub strides: [u32; 4],
    pub unit: u32,
}

/// A TXN stream under construction, with the reference's `count`.
#[derive(Debug)]
pub struct TxnBuilder<'p> {
    profile: &'p DeviceProfile,
    txn: Txn,
}

fn layout(what: &'static str, value: impl Into<u64>) -> TxnBuildError {
    TxnBuildError::Layout {
        what,
        value: value.into(),
    }
}

/// ORs `value` into `field` of `words`, if it fits. A field that is not
/// inside one of the words (a profile defect) is refused as its word.
fn put(
    words: &mut [u32],
    field: BdField,
    what: &'static str,
    value: u32,
) -> Result<(), TxnBuildError> {
    let end = field.lsb.checked_add(field.width);
    let in_word = field.width > 0 && end.is_some_and(|end| end <= 32);
    let word = words
        .get_mut(field.word as usize)
        .filter(|_| in_word)
        .ok_or(layout("descriptor word", field.word))?;
    if u64::from(value) >> field.width != 0 {
        return Err(layout(what, value));
    }
    // Replaces what the encoder wrote there (the default cache attributes).
    let mask = ((1u64 << field.width) - 1) as u32;
    *word = *word & !(mask << field.lsb) | value << field.lsb;
    Ok(())
}

impl<'p> TxnBuilder<'p> {
    /// An empty transaction whose header describes the profile's whole
    /// array (the reference's transactions address any column).
    pub fn new(profile: &'p DeviceProfile) -> Result<TxnBuilder<'p>, TxnBuildError> {
        let txn = Txn::new(profile, profile.array.columns).map_err(TxnBuildError::Header)?;
        Ok(TxnBuilder { profile, txn })
    }

    /// The operations so far.
    pub fn count(&self) -> usize {
        self.txn.ops.len()
    }

    pub fn ops(&self) -> &[TxnOp] {
        &self.txn.ops
    }

    /// The control code: the header, then the operations.
    pub fn code(&self) -> Vec<u8> {
        self.txn.encode()
    }

    /// (column, row, kind) of a packed tile of the array.
    fn place(&self, t: u32) -> Result<(u32, u32, TileKind), TxnBuildError> {
        let (row, column) = (t >> 4, t & 0xF);
        let kind = self
            .profile
            .tile_kind(column, row)
            .ok_or(TxnBuildError::NoSuchTile(t))?;
        Ok((column, row, kind))
    }

    fn shim(&self, t: u32) -> Result<(u32, u32), TxnBuildError> {
        match self.place(t)? {
            (column, row, TileKind::Shim) => Ok((column, row)),
            (column, row, _) => Err(TxnBuildError::NotAShim { row, column }),
        }
    }

    /// The array address of `offset` in tile (column, row), as TXN holds it.
    fn address(&self, column: u32, row: u32, offset: u32) -> Result<u32, TxnBuildError> {
        let full = self.profile.tile_address(column, row, offset);
        if self.profile.split_address(full) != (column.into(), row, offset) {
            return Err(TxnBuildError::OffsetOutOfTile(offset));
        }
        u32::try_from(full).map_err(|_| TxnBuildError::OffsetOutOfTile(offset))
    }

    /// Writes `value` to the register (or core memory word) at `address` of
    /// tile `t`, as a run-time parameter.
    pub fn write(&mut self, t: u32, address: u32, value: u32) -> Result<(), TxnBuildError> {
        let (column, row, _) = self.place(t)?;
        let address = self.address(column, row, address)?;
        self.txn.ops.push(TxnOp::Write { address, value });
        Ok(())
    }

    /// A linear transfer of `length` bytes of the argument from byte
    /// `offset` (`strided` with one dimension).
    pub fn copy(
        &mut self,
        dma: &ShimDma,
        offset: u64,
        length: u32,
        options: &DmaOptions,
    ) -> Result<(), TxnBuildError> {
        let shape = Strides {
            sizes: [1, 1, 1, length],
            strides: [0, 0, 0, 1],
            unit: 1,
        };
        self.strided(dma, offset, &shape, options)
    }

    /// A shim transfer of the argument from byte `offset` in `shape`: the
    /// descriptor, the patch of its address, and the push to the channel's
    /// queue (with a token on every S2MM, and on an MM2S that asks).
    pub fn strided(
        &mut self,
        dma: &ShimDma,
        offset: u64,
        shape: &Strides,
        options: &DmaOptions,
    ) -> Result<(), TxnBuildError> {
        let (column, row) = self.shim(dma.tile)?;
        let unit = u64::from(shape.unit);
        if unit == 0 {
            return Err(layout("element size", 0u32));
        }
        let [repeats, d2, d1, d0] = shape.sizes;
        let [repeat_stride, s2, s1, s0] = shape.strides;
        if let Some(&zero) = shape.sizes.iter().find(|&&s| s == 0) {
            return Err(layout("size", zero));
        }
        if s0 != 1 {
            return Err(layout("innermost stride", s0));
        }
        // The DMA moves whole 32-bit words.
        let words = |what, elements: u32| -> Result<u32, TxnBuildError> {
            let bytes = u64::from(elements) * unit;
            if !bytes.is_multiple_of(4) {
                return Err(layout(what, bytes));
            }
            u32::try_from(bytes / 4).map_err(|_| layout(what, bytes))
        };
        let d0_words = words("innermost size in bytes", d0)?;
        let length = u64::from(d0_words) * 4 * u64::from(d1) * u64::from(d2);
        let length = u32::try_from(length).map_err(|_| layout("length in bytes", length))?;
        let iteration = if repeats > 1 && repeat_stride > 0 {
            let stride = u64::from(repeat_stride) * unit;
            Some(Iteration {
                stride: u32::try_from(stride).map_err(|_| layout("first stride", stride))?,
                wrap: repeats,
                current: 0,
            })
        } else {
            None
        };
        let shim_layout = &self.profile.tile_registers(TileKind::Shim).bd_layout;
        // mlir-aie's default burst: the longest the shim offers.
        let burst_length = shim_layout
            .burst_length
            .as_ref()
            .and_then(|b| b.bytes.iter().copied().max());
        // Middle sizes of 1 are a linear transfer, which needs no dimensions.
        let dimensions = if d1 > 1 || d2 > 1 {
            let fields = shim_layout
                .dimensions
                .as_ref()
                .filter(|d| d.list.len() == 3)
                .ok_or(RegisterError::NotInTile {
                    kind: TileKind::Shim,
                    what: "three addressing dimensions",
                })?;
            // Each size must fit its wrap field.
            let wrap = |what, size: u32, dimension: usize| {
                let field = fields.list[dimension].wrap;
                match field {
                    Some(f) if u64::from(size) >> f.width == 0 => Ok(size),
                    _ => Err(layout(what, size)),
                }
            };
            let step = |what, size: u32, stride: u32| -> Result<u32, TxnBuildError> {
                if size == 1 {
                    return Ok(4);
                }
                match words(what, stride)? {
                    0 => Err(layout(what, 0u32)),
                    w => Ok(w * 4),
                }
            };
            vec![
                Dimension {
                    step: 4,
                    wrap: Some(wrap("innermost size in words", d0_words, 0)?),
                },
                Dimension {
                    step: step("second stride in bytes", d1, s1)?,
                    wrap: Some(wrap("second size", d1, 1)?),
                },
                Dimension {
                    step: step("third stride in bytes", d2, s2)?,
                    wrap: None,
                },
            ]
        } else {
            Vec::new()
        };
        let descriptor = BufferDescriptor {
            // The firmware adds the argument's address (DDR_PATCH).
            address: 0,
            length,
            next_bd: None,
            valid: true,
            acquire: None,
            release: None,
            burst_length,
            iteration,
            dimensions,
        };
        let mut bd_words = self.profile.encode_bd(TileKind::Shim, &descriptor)?;
        let fields = shim_layout
            .extended
            .as_ref()
            .ok_or(RegisterError::NotInTile {
                kind: TileKind::Shim,
                what: "packet and cache descriptor fields",
            })?;
        let mut set = |field, what, value| put(&mut bd_words, field, what, value);
        set(fields.axcache, "cache", options.cache.into())?;
        if let Some(id) = options.packet {
            set(fields.packet_id, "packet id", id.into())?;
            set(fields.enable_packet, "enable packet", 1)?;
        }
        let profile = self.profile;
        let bd = self.address(column, row, profile.bd(TileKind::Shim, dma.bd)?)?;
        let queue_offset = profile.start_queue(TileKind::Shim, dma.direction, dma.channel)?;
        let queue = self.address(column, row, queue_offset)?;
        let entry = StartQueueEntry {
            start_bd: dma.bd,
            runs: repeats,
            token_issue: options.token || dma.direction == Direction::S2mm,
        };
        let value = profile.encode_start_queue(TileKind::Shim, &entry)?;
        self.txn
            .ops
            .extend(shim_descriptor(bd, bd_words, dma.arg, offset));
        self.txn.ops.push(TxnOp::Write {
            address: queue,
            value,
        });
        Ok(())
    }

    /// Waits for the task-complete token of `channel` in `direction` on
    /// shim tile `t`.
    pub fn wait(
        &mut self,
        t: u32,
        direction: Direction,
        channel: u32,
    ) -> Result<(), TxnBuildError> {
        let (column, row) = self.shim(t)?;
        self.profile
            .channel_control(TileKind::Shim, direction, channel)?;
        // The array and its channels are far below 256 (checked above).
        self.txn.ops.push(TxnOp::Sync {
            column: column as u8,
            row: row as u8,
            direction,
            channel: channel as u8,
            column_count: 1,
            row_count: 1,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strix() -> &'static DeviceProfile {
        &loom_targets::profiles()[0]
    }

    fn words(bytes: &[u8]) -> Vec<u32> {
        bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    }

    #[test]
    fn tiles_pack_row_over_column() {
        assert_eq!(tile(0, 3), Ok(0x03));
        assert_eq!(tile(2, 7), Ok(0x27));
        assert_eq!(
            tile(16, 0),
            Err(TxnBuildError::TileOutOfRange { row: 16, column: 0 })
        );
        assert!(tile(0, 16).is_err());
    }

    #[test]
    fn an_empty_transaction_is_the_npu2_header() {
        let b = TxnBuilder::new(strix()).unwrap();
        assert_eq!(b.count(), 0);
        // version 0.1, generation 4 (AIE2P), 6 rows, 8 columns, 1 memory-tile
        // row, 0 ops, 16 bytes.
        assert_eq!(b.code(), [0, 1, 4, 6, 8, 1, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0]);
    }

    #[test]
    fn write_puts_the_tile_in_the_address() {
        let mut b = TxnBuilder::new(strix()).unwrap();
        b.write(tile(2, 1).unwrap(), 0x1F020, 7).unwrap();
        assert_eq!(
            b.ops(),
            [TxnOp::Write {
                address: 1 << 25 | 2 << 20 | 0x1F020,
                value: 7
            }]
        );
        // The op's words: WRITE, 0, address, 0, value, size 24.
        assert_eq!(words(&b.code())[4..], [0, 0, 0x0221_F020, 0, 7, 24]);
        assert_eq!(
            b.write(tile(2, 1).unwrap(), 0x10_0000, 0),
            Err(TxnBuildError::OffsetOutOfTile(0x10_0000))
        );
        assert_eq!(
            b.write(tile(6, 0).unwrap(), 0, 0),
            Err(TxnBuildError::NoSuchTile(0x60))
        );
        assert_eq!(b.count(), 1);
    }

    /// mlir-aie's lowering of a 4-D transfer of i32 elements, by hand:
    /// sizes [2, 3, 4, 8], strides [96, 32, 16, 1].
    #[test]
    fn strided_writes_the_descriptor_patch_and_push() {
        let mut b = TxnBuilder::new(strix()).unwrap();
        let dma = ShimDma {
            arg: 4,
            direction: MM2S,
            tile: tile(0, 1).unwrap(),
            bd: 1,
            channel: 0,
        };
        let shape = Strides {
            sizes: [2, 3, 4, 8],
            strides: [96, 32, 16, 1],
            unit: 4,
        };
        b.strided(&dma, 0x40, &shape, &DmaOptions::default())
            .unwrap();
        let bd = 1 << 25 | 0x1D020;
        assert_eq!(
            b.ops(),
            [
                TxnOp::BlockWrite {
                    address: bd,
                    words: vec![
                        96,                     // 8 x 4 x 3 words
                        0,                      // address: patched
                        0,                      // no packet
                        8 << 20,                // d0: 8 words, stride 1
                        3 << 30 | 4 << 20 | 15, // burst 512, d1: 4 by 16 words
                        2 << 24 | 31,           // cache 2, d2 stride 32 words
                        1 << 20 | 95,           // iteration: wrap 2, 96 words
                        1 << 25,                // valid
                    ],
                },
                TxnOp::DdrPatch {
                    address: bd + 4,
                    arg_index: 4,
                    arg_offset: 0x40,
                },
                // mm2s channel 0's task queue: start BD 1, 2 runs, no token.
                TxnOp::Write {
                    address: 1 << 25 | 0x1D214,
                    value: 1 | 1 << 16,
                },
            ]
        );
        assert_eq!(b.count(), 3);
        b.wait(dma.tile, MM2S, 0).unwrap();
        let code = words(&b.code());
        // The header counts four ops; the sync is direction | row << 8 |
        // column << 16, then row count << 8 | column count << 16 | channel.
        assert_eq!(code[2], 4);
        assert_eq!(
            code[code.len() - 4..],
            [0x80, 16, 1 | 1 << 16, 1 << 8 | 1 << 16]
        );
        assert_eq!(code[3] as usize, 4 * code.len());
    }

    #[test]
    fn copy_is_linear_and_s2mm_always_issues_a_token() {
        let mut b = TxnBuilder::new(strix()).unwrap();
        let dma = ShimDma {
            arg: 0,
            direction: S2MM,
            tile: tile(0, 0).unwrap(),
            bd: 0,
            channel: 1,
        };
        let options = DmaOptions {
            packet: Some(5),
            token: false,
            cache: AGGRESSIVE_CACHE,
        };
        b.copy(&dma, 0, 1024, &options).unwrap();
        let TxnOp::BlockWrite { words: bd, .. } = &b.ops()[0] else {
            panic!("{:?}", b.ops());
        };
        assert_eq!(
            *bd,
            [
                256, // words
                0,
                1 << 30 | 5 << 19, // packet 5
                0,                 // linear: no dimensions
                3 << 30,           // burst 512
                0xE << 24,         // cache
                0,                 // no iteration
                1 << 25,
            ]
        );
        // s2mm channel 1's queue, 0x1D200 + 8 + 4: BD 0, one run, token.
        assert_eq!(
            b.ops()[2],
            TxnOp::Write {
                address: 0x1D20C,
                value: 1 << 31
            }
        );
        // An MM2S that asks gets its token too; NO_CACHE clears word 5.
        let mm2s = ShimDma {
            direction: MM2S,
            ..dma
        };
        let asks = DmaOptions {
            token: true,
            cache: NO_CACHE,
            packet: None,
        };
        b.copy(&mm2s, 8, 64, &asks).unwrap();
        let TxnOp::BlockWrite { words: bd, .. } = &b.ops()[3] else {
            panic!();
        };
        assert_eq!(bd[5], 0);
        assert_eq!(
            b.ops()[5],
            TxnOp::Write {
                address: 0x1D21C,
                value: 1 << 31
            }
        );
    }

    #[test]
    fn a_repeat_with_stride_zero_repeats_in_place() {
        let mut b = TxnBuilder::new(strix()).unwrap();
        let dma = ShimDma {
            arg: 1,
            direction: MM2S,
            tile: 0,
            bd: 2,
            channel: 0,
        };
        let shape = Strides {
            sizes: [4, 1, 1, 16],
            strides: [0, 0, 0, 1],
            unit: 2,
        };
        b.strided(&dma, 0, &shape, &DmaOptions::default()).unwrap();
        let TxnOp::BlockWrite { words: bd, .. } = &b.ops()[0] else {
            panic!();
        };
        assert_eq!((bd[0], bd[3], bd[6]), (8, 0, 0));
        assert_eq!(
            b.ops()[2],
            TxnOp::Write {
                address: 0x1D214,
                value: 2 | 3 << 16
            }
        );
    }

    /// A profile field outside the descriptor is refused, not a panic.
    #[test]
    fn a_field_outside_the_descriptor_is_refused() {
        let mut words = [0u32; 8];
        for (word, lsb, width) in [(8, 0, 1), (5, 30, 4), (5, 32, 0), (0, u32::MAX, 2)] {
            let field = BdField { word, lsb, width };
            assert_eq!(
                put(&mut words, field, "cache", 0),
                Err(layout("descriptor word", word))
            );
        }
        assert_eq!(words, [0; 8]);
    }

    #[test]
    fn shapes_the_descriptor_cannot_hold_are_refused() {
        let mut b = TxnBuilder::new(strix()).unwrap();
        let dma = ShimDma {
            arg: 0,
            direction: MM2S,
            tile: 0,
            bd: 0,
            channel: 0,
        };
        let o = DmaOptions::default();
        let shape = |sizes, strides, unit| Strides {
            sizes,
            strides,
            unit,
        };
        let cases: [(Strides, &str, u64); 7] = [
            (
                shape([1, 1, 1, 6], [0, 0, 0, 1], 1),
                "innermost size in bytes",
                6,
            ),
            (shape([1, 1, 2, 4], [0, 0, 2, 2], 4), "innermost stride", 2),
            (shape([1, 1, 0, 4], [0, 0, 1, 1], 4), "size", 0),
            (shape([1, 1, 1, 4], [0, 0, 0, 1], 0), "element size", 0),
            (
                shape([1, 1, 2, 4], [0, 0, 3, 1], 2),
                "second stride in bytes",
                6,
            ),
            (
                shape([1, 1, 2, 2048], [0, 0, 2048, 1], 4),
                "innermost size in words",
                2048,
            ),
            (shape([1, 1, 1024, 4], [0, 0, 4, 1], 4), "second size", 1024),
        ];
        for (s, what, value) in cases {
            assert_eq!(
                b.strided(&dma, 0, &s, &o),
                Err(TxnBuildError::Layout { what, value }),
                "{s:?}"
            );
        }
        let wide = DmaOptions { cache: 16, ..o };
        assert_eq!(
            b.copy(&dma, 0, 4, &wide),
            Err(TxnBuildError::Layout {
                what: "cache",
                value: 16
            })
        );
        let packet = DmaOptions {
            packet: Some(32),
            ..o
        };
        assert!(b.copy(&dma, 0, 4, &packet).is_err());
        // Limits the profile knows: BDs, channels, repeats.
        let bad_bd = ShimDma { bd: 16, ..dma };
        assert!(matches!(
            b.copy(&bad_bd, 0, 4, &o),
            Err(TxnBuildError::Register(_))
        ));
        let bad_channel = ShimDma { channel: 2, ..dma };
        assert!(b.copy(&bad_channel, 0, 4, &o).is_err());
        assert!(b.wait(0, S2MM, 2).is_err());
        let core = ShimDma {
            tile: tile(2, 0).unwrap(),
            ..dma
        };
        assert_eq!(
            b.copy(&core, 0, 4, &o),
            Err(TxnBuildError::NotAShim { row: 2, column: 0 })
        );
        assert!(b.wait(core.tile, S2MM, 0).is_err());
        // Nothing half-written: every refusal left the stream empty.
        assert_eq!(b.count(), 0);
        let e = TxnBuildError::NotAShim { row: 2, column: 0 };
        assert_eq!(e.to_string(), "tile row 2 column 0 is not a shim tile");
    }
}
