//! The AIE2P register map as typed accessors over the profile's `registers`
//! section: tile addresses; lock, buffer-descriptor, DMA channel, start queue
//! and stream-switch offsets; buffer descriptors and start-queue entries to
//! and from register words; and the name of any full address (for the TXN
//! disassembler and a future simulator). Every offset and bit position comes
//! from the profile, so a profile with another layout needs no code change.

pub use crate::profile::{
    BdDimensions, BdField, BdIteration, BdLayout, BurstLength, CoreModule, Field, Hex,
    RegisterArray, RegisterMap, ShimMux, StartQueue, StreamSwitch, TileRegisters,
};
use crate::DeviceProfile;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TileKind {
    Shim,
    Memory,
    Core,
}

impl TileKind {
    /// `core tile`, `memory tile`, `shim tile`: how diagnostics and reports
    /// name the kind.
    pub fn name(self) -> &'static str {
        match self {
            TileKind::Shim => "shim",
            TileKind::Memory => "memory",
            TileKind::Core => "core",
        }
    }

    /// The prefix of register names, e.g. `mem.bd[7].word[2]`.
    pub fn prefix(self) -> &'static str {
        match self {
            TileKind::Shim => "shim",
            TileKind::Memory => "mem",
            TileKind::Core => "core",
        }
    }
}

/// A DMA channel direction: stream to memory or memory to stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    S2mm,
    Mm2s,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::S2mm => "s2mm",
            Direction::Mm2s => "mm2s",
        }
    }
}

/// A value the register map cannot hold, or register words that do not
/// describe what the typed view models.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegisterError {
    OutOfRange {
        what: &'static str,
        value: i64,
        min: i64,
        max: i64,
    },
    Misaligned {
        what: &'static str,
        value: u64,
        unit: u32,
    },
    /// The tile kind has no such register or field.
    NotInTile { kind: TileKind, what: &'static str },
    /// The tile kind needs this field.
    Missing { kind: TileKind, what: &'static str },
    /// Release of lock 0 by 0 reads back as no release at all.
    EmptyRelease,
    /// An iteration whose fields all encode as 0 (one word of stride, wrap
    /// 1, index 0) reads back as no iteration at all.
    EmptyIteration { stride: u32 },
    WordCount {
        kind: TileKind,
        expected: u32,
        found: usize,
    },
    /// Bits outside the modelled fields (multi-dimensional, packet or
    /// compression settings) or fields inconsistent with each other.
    NotPlain { word: u32, found: u32, plain: u32 },
}

impl fmt::Display for RegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegisterError::OutOfRange {
                what,
                value,
                min,
                max,
            } => write!(f, "{what} {value} is outside {min}..={max}"),
            RegisterError::Misaligned { what, value, unit } => {
                write!(f, "{what} {value:#x} is not a multiple of {unit} bytes")
            }
            RegisterError::NotInTile { kind, what } => {
                write!(f, "a {} tile has no {what}", kind.prefix())
            }
            RegisterError::Missing { kind, what } => {
                write!(
                    f,
                    "a {} tile buffer descriptor needs a {what}",
                    kind.prefix()
                )
            }
            RegisterError::EmptyRelease => write!(
                f,
                "release of lock 0 by 0 cannot be told from no release; leave release empty"
            ),
            RegisterError::EmptyIteration { stride } => write!(
                f,
                "an iteration of stride {stride}, wrap 1 from index 0 cannot be told from no \
                 iteration (it never moves the address); leave iteration empty"
            ),
            RegisterError::WordCount {
                kind,
                expected,
                found,
            } => write!(
                f,
                "a {} tile buffer descriptor has {expected} words, not {found}",
                kind.prefix()
            ),
            RegisterError::NotPlain { word, found, plain } => write!(
                f,
                "word {word} is {found:#010x} but the modelled fields give {plain:#010x} \
                 (bits {:#010x} differ)",
                found ^ plain
            ),
        }
    }
}

impl std::error::Error for RegisterError {}

/// A 1-D contiguous transfer as one buffer descriptor holds it, stepped
/// from use to use by its iteration dimension if it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferDescriptor {
    /// Bytes, as the channel's DMA sees it: the DDR address in the shim, an
    /// address in the tile's DMA view elsewhere (see `dma_own_memory_address`).
    pub address: u64,
    /// Bytes.
    pub length: u32,
    pub next_bd: Option<u32>,
    pub valid: bool,
    /// (lock id as the descriptor names it, signed value): acquire-greater-
    /// equal N is -N, acquire-equal N is N.
    pub acquire: Option<(u32, i32)>,
    /// (lock id, signed value added on release).
    pub release: Option<(u32, i32)>,
    /// AXI burst length in bytes; shim only, and required there.
    pub burst_length: Option<u32>,
    /// The iteration dimension, where the tile kind's descriptors have one.
    pub iteration: Option<Iteration>,
    /// The addressing dimensions, innermost first, or none for a linear
    /// transfer: every one the tile kind has, each with its wrap but the
    /// outermost.
    pub dimensions: Vec<Dimension>,
}

/// One addressing dimension of a buffer descriptor: the transfer's 32-bit
/// words are counted innermost first, each inner dimension taking `wrap`
/// steps before the next one steps once; the word at counts (i0, i1, ...)
/// is at `address + i0 * step0 + i1 * step1 + ...` (aie-rt
/// XAie_DmaSetMultiDimAddr: "the stepsize and wrap parameters operate at 32
/// bit granularity").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dimension {
    /// Bytes, a multiple of the layout's unit and at least one unit.
    pub step: u32,
    /// Steps before the next dimension steps; None for the outermost, whose
    /// extent is the length over the inner wraps.
    pub wrap: Option<u32>,
}

impl BufferDescriptor {
    /// The byte offsets from `address` of the transfer's 32-bit words, in
    /// the order the channel moves them; None for a linear transfer.
    pub fn word_offsets(&self) -> Option<Vec<u64>> {
        if self.dimensions.is_empty() {
            return None;
        }
        let words = u64::from(self.length / 4);
        Some(
            (0..words)
                .map(|k| {
                    let mut rest = k;
                    let mut offset = 0u64;
                    for d in &self.dimensions {
                        let (count, next) = match d.wrap {
                            Some(wrap) => (rest % u64::from(wrap), rest / u64::from(wrap)),
                            None => (rest, 0),
                        };
                        offset += count * u64::from(d.step);
                        rest = next;
                    }
                    offset
                })
                .collect(),
        )
    }

    /// The bytes from `address` the transfer touches, to its farthest word.
    /// When the length is whole runs of the inner wraps (as every encodable
    /// descriptor's is), every count reaches its last value and that word is
    /// the farthest (steps are positive), so the words need not be listed.
    pub fn span(&self) -> u64 {
        let words = u64::from(self.length / 4);
        let inner: u64 = self
            .dimensions
            .iter()
            .filter_map(|d| d.wrap)
            .map(u64::from)
            .product();
        if self.dimensions.is_empty() || inner == 0 || words == 0 || words % inner != 0 {
            return match self.word_offsets() {
                Some(offsets) => offsets.iter().max().map_or(0, |&last| last + 4),
                None => self.length.into(),
            };
        }
        let farthest: u64 = self
            .dimensions
            .iter()
            .map(|d| {
                let extent = d.wrap.map_or(words / inner, u64::from);
                (extent - 1) * u64::from(d.step)
            })
            .sum();
        farthest + 4
    }
}

/// A buffer descriptor's iteration dimension: each use of the descriptor
/// transfers at `address + stride * index`; the index starts at `current`,
/// goes up by one per use and returns to 0 when it reaches `wrap` (AMD
/// AM025, DMA_BD*_4 of the memory module: "Iteration_Current ... incremented
/// after BD loaded", "wrap when iteration_current is equal"; aie-rt
/// XAie_DmaSetBdIteration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Iteration {
    /// Bytes, a multiple of the layout's stride unit (the register holds
    /// units - 1, so at least one unit).
    pub stride: u32,
    /// Uses before the index returns to 0, at least 1 (the register holds
    /// wrap - 1).
    pub wrap: u32,
    /// The index the next use takes, below `wrap`.
    pub current: u32,
}

impl fmt::Display for BufferDescriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "address={:#x} length={}", self.address, self.length)?;
        match self.next_bd {
            Some(next) => write!(f, " next=bd[{next}]")?,
            None => write!(f, " next=none")?,
        }
        write!(f, " {}", if self.valid { "valid" } else { "invalid" })?;
        match self.acquire {
            Some((id, value)) if value < 0 => write!(f, " acquire=lock[{id}]>={}", -value)?,
            Some((id, value)) => write!(f, " acquire=lock[{id}]=={value}")?,
            None => {}
        }
        if let Some((id, value)) = self.release {
            write!(f, " release=lock[{id}]{value:+}")?;
        }
        if let Some(bytes) = self.burst_length {
            write!(f, " burst={bytes}")?;
        }
        if let Some(it) = self.iteration {
            write!(
                f,
                " iteration_stride={} iteration_wrap={} iteration_current={}",
                it.stride, it.wrap, it.current
            )?;
        }
        if !self.dimensions.is_empty() {
            let dims: Vec<String> = self
                .dimensions
                .iter()
                .map(|d| match d.wrap {
                    Some(wrap) => format!("{wrap}x{}", d.step),
                    None => format!("*x{}", d.step),
                })
                .collect();
            write!(f, " dims=[{}]", dims.join(", "))?;
        }
        Ok(())
    }
}

/// One entry of a channel's start (task) queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartQueueEntry {
    pub start_bd: u32,
    /// How many times the chain runs (the register holds runs - 1).
    pub runs: u32,
    /// Issue a task-completion token when done (what a TXN sync waits for).
    pub token_issue: bool,
}

/// A register or memory word of one tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Register {
    LockValue(u32),
    BdWord {
        bd: u32,
        word: u32,
    },
    ChannelControl(Direction, u32),
    StartQueue(Direction, u32),
    StreamSwitchMaster(u32),
    StreamSwitchSlave(u32),
    /// A packet rule of a slave port.
    StreamSwitchSlot {
        port: u32,
        slot: u32,
    },
    CoreControl,
    CoreStatus,
    ShimMux,
    ShimDemux,
    /// Byte offset into program memory.
    ProgramMemory(u32),
    /// Byte offset into data memory.
    DataMemory(u32),
}

/// What a full address names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterName {
    pub column: u32,
    pub row: u32,
    pub kind: TileKind,
    pub register: Register,
}

impl fmt::Display for RegisterName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.", self.kind.prefix())?;
        // aie-rt calls the shim's start queue its task queue.
        let queue = match self.kind {
            TileKind::Shim => "task_queue",
            _ => "start_queue",
        };
        match self.register {
            Register::LockValue(id) => write!(f, "lock[{id}].value"),
            Register::BdWord { bd, word } => write!(f, "bd[{bd}].word[{word}]"),
            Register::ChannelControl(dir, ch) => write!(f, "dma.{}[{ch}].control", dir.name()),
            Register::StartQueue(dir, ch) => write!(f, "dma.{}[{ch}].{queue}", dir.name()),
            Register::StreamSwitchMaster(port) => write!(f, "stream_switch.master[{port}]"),
            Register::StreamSwitchSlave(port) => write!(f, "stream_switch.slave[{port}]"),
            Register::StreamSwitchSlot { port, slot } => {
                write!(f, "stream_switch.slave[{port}].slot[{slot}]")
            }
            Register::CoreControl => write!(f, "control"),
            Register::CoreStatus => write!(f, "status"),
            Register::ShimMux => write!(f, "mux"),
            Register::ShimDemux => write!(f, "demux"),
            Register::ProgramMemory(offset) => write!(f, "program_memory+{offset:#x}"),
            Register::DataMemory(offset) => write!(f, "data_memory+{offset:#x}"),
        }
    }
}

/// Counts from the tile sections of the profile.
/// What one tile of a kind has: data memory bytes, locks, buffer
/// descriptors and DMA channels per direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileBudget {
    pub memory: u64,
    pub locks: u32,
    pub bds: u32,
    pub s2mm: u32,
    pub mm2s: u32,
}

fn mask(width: u32) -> u64 {
    1u64.checked_shl(width).map_or(u64::MAX, |bit| bit - 1)
}

fn get(words: &[u32], field: BdField) -> u64 {
    (u64::from(words[field.word as usize]) >> field.lsb) & mask(field.width)
}

/// `value` must already fit the field.
fn put(words: &mut [u32], field: BdField, value: u64) {
    words[field.word as usize] |= (value << field.lsb) as u32;
}

fn wide(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn fits(what: &'static str, value: u64, bits: u32) -> Result<u64, RegisterError> {
    if value <= mask(bits) {
        Ok(value)
    } else {
        Err(RegisterError::OutOfRange {
            what,
            value: wide(value),
            min: 0,
            max: wide(mask(bits)),
        })
    }
}

fn below(what: &'static str, value: u32, count: u32) -> Result<u32, RegisterError> {
    if value < count {
        Ok(value)
    } else {
        Err(RegisterError::OutOfRange {
            what,
            value: value.into(),
            min: 0,
            max: i64::from(count) - 1,
        })
    }
}

/// Two's complement in `width` bits.
fn signed_field(what: &'static str, value: i32, width: u32) -> Result<u64, RegisterError> {
    let (min, max) = (-(1i64 << (width - 1)), (1i64 << (width - 1)) - 1);
    if (min..=max).contains(&i64::from(value)) {
        Ok(i64::from(value) as u64 & mask(width))
    } else {
        Err(RegisterError::OutOfRange {
            what,
            value: value.into(),
            min,
            max,
        })
    }
}

fn signed_value(raw: u64, width: u32) -> i32 {
    if raw >> (width - 1) == 1 {
        (raw as i64 - (1i64 << width)) as i32
    } else {
        raw as i32
    }
}

fn in_units(what: &'static str, bytes: u64, unit: u32, bits: u32) -> Result<u64, RegisterError> {
    if !bytes.is_multiple_of(u64::from(unit)) {
        return Err(RegisterError::Misaligned {
            what,
            value: bytes,
            unit,
        });
    }
    fits(what, bytes / u64::from(unit), bits).map_err(|_| RegisterError::OutOfRange {
        what,
        value: wide(bytes),
        min: 0,
        max: wide(mask(bits).saturating_mul(unit.into())),
    })
}

fn element(
    array: &RegisterArray,
    what: &'static str,
    index: u32,
    count: u32,
) -> Result<u32, RegisterError> {
    below(what, index, count).map(|i| array.base.0 + i * array.stride.0)
}

/// The index of `offset` in `array`, if it is one of its `count` entries.
fn index_in(array: &RegisterArray, offset: u32, count: u32) -> Option<u32> {
    let rel = offset.checked_sub(array.base.0)?;
    let stride = array.stride.0;
    (stride != 0 && rel.is_multiple_of(stride) && rel / stride < count).then(|| rel / stride)
}

fn queue_field(value: u32, field: Field) -> u64 {
    (u64::from(value) >> field.lsb) & mask(field.width)
}

/// The (field, raw value) pairs of an iteration: the stride in units and the
/// wrap each minus one, the current index as is (aie-rt xaie_dma_aieml.c
/// _XAieMl_DmaWriteBd; limits as _XAieMl_DmaSetBdIteration checks them, plus
/// the index below the wrap).
fn iteration_fields(
    fields: &BdIteration,
    it: &Iteration,
) -> Result<[(BdField, u64); 3], RegisterError> {
    let unit = fields.stride_unit_bytes;
    if it.stride == unit && it.wrap == 1 && it.current == 0 {
        return Err(RegisterError::EmptyIteration { stride: it.stride });
    }
    let units = match it.stride.checked_rem(unit) {
        Some(0) => it.stride / unit,
        _ => {
            return Err(RegisterError::Misaligned {
                what: "iteration stride",
                value: it.stride.into(),
                unit,
            })
        }
    };
    // Both fields hold value - 1, so values run from 1 to the field's max + 1.
    let minus_one = |what, value: u32, field: BdField, scale: u32| {
        u64::from(value)
            .checked_sub(1)
            .filter(|&raw| raw <= mask(field.width))
            .ok_or(RegisterError::OutOfRange {
                what,
                value: wide(u64::from(value) * u64::from(scale)),
                min: scale.into(),
                max: wide(
                    mask(field.width)
                        .saturating_add(1)
                        .saturating_mul(scale.into()),
                ),
            })
    };
    let stride = minus_one("iteration stride", units, fields.stride, unit)?;
    let wrap = minus_one("iteration wrap", it.wrap, fields.wrap, 1)?;
    // The hardware wraps when the index equals the wrap; an index past it is
    // not a state the model knows.
    if it.current >= it.wrap {
        return Err(RegisterError::OutOfRange {
            what: "iteration current",
            value: it.current.into(),
            min: 0,
            max: i64::from(it.wrap) - 1,
        });
    }
    let current = fits("iteration current", it.current.into(), fields.current.width)?;
    Ok([
        (fields.stride, stride),
        (fields.wrap, wrap),
        (fields.current, current),
    ])
}

/// The (field, raw value) pairs of the addressing dimensions: every one the
/// layout has, each step in units minus one, each wrap as is and at least 1
/// (aie-rt _XAieMl_DmaSetMultiDim refuses a step of 0), the outermost with a
/// step only; the length must be whole runs of the inner wraps.
fn dimension_fields(
    kind: TileKind,
    fields: &BdDimensions,
    dims: &[Dimension],
    length: u32,
) -> Result<Vec<(BdField, u64)>, RegisterError> {
    if dims.len() != fields.list.len() {
        return Err(RegisterError::OutOfRange {
            what: "addressing dimensions",
            value: dims.len() as i64,
            min: fields.list.len() as i64,
            max: fields.list.len() as i64,
        });
    }
    let unit = fields.step_unit_bytes;
    let mut out = Vec::new();
    let mut inner = 1u64;
    for (field, d) in fields.list.iter().zip(dims) {
        if d.step % unit != 0 {
            return Err(RegisterError::Misaligned {
                what: "dimension step",
                value: d.step.into(),
                unit,
            });
        }
        let step = u64::from(d.step / unit)
            .checked_sub(1)
            .filter(|&raw| raw <= mask(field.step.width))
            .ok_or(RegisterError::OutOfRange {
                what: "dimension step",
                value: d.step.into(),
                min: unit.into(),
                max: wide((mask(field.step.width) + 1) * u64::from(unit)),
            })?;
        out.push((field.step, step));
        match (field.wrap, d.wrap) {
            (Some(wrap_field), Some(wrap)) => {
                let max = mask(wrap_field.width);
                if wrap == 0 || u64::from(wrap) > max {
                    return Err(RegisterError::OutOfRange {
                        what: "dimension wrap",
                        value: wrap.into(),
                        min: 1,
                        max: wide(max),
                    });
                }
                inner *= u64::from(wrap);
                out.push((wrap_field, wrap.into()));
            }
            (None, None) => {}
            (Some(_), None) | (None, Some(_)) => {
                return Err(RegisterError::Missing {
                    kind,
                    what: "wrap on every dimension but the outermost (and none on it)",
                })
            }
        }
    }
    let words = u64::from(length / 4);
    if !words.is_multiple_of(inner) {
        return Err(RegisterError::OutOfRange {
            what: "length in words over the inner wraps' product",
            value: wide(words),
            min: wide(inner),
            max: wide(words - words % inner + inner),
        });
    }
    Ok(out)
}

/// The dimensions the words hold; every field 0 is a linear transfer.
fn read_dimensions(fields: &BdDimensions, words: &[u32]) -> Vec<Dimension> {
    let raw: Vec<(u64, Option<u64>)> = fields
        .list
        .iter()
        .map(|d| (get(words, d.step), d.wrap.map(|w| get(words, w))))
        .collect();
    if raw
        .iter()
        .all(|&(step, wrap)| step == 0 && wrap.unwrap_or(0) == 0)
    {
        return Vec::new();
    }
    let saturate = |value: u64| u32::try_from(value).unwrap_or(u32::MAX);
    raw.into_iter()
        .map(|(step, wrap)| Dimension {
            step: saturate((step + 1) * u64::from(fields.step_unit_bytes)),
            wrap: wrap.map(saturate),
        })
        .collect()
}

/// The iteration the words hold; all three fields 0 is none.
fn read_iteration(fields: &BdIteration, words: &[u32]) -> Option<Iteration> {
    let raw = [fields.stride, fields.wrap, fields.current].map(|field| get(words, field));
    let saturate = |value: u64| u32::try_from(value).unwrap_or(u32::MAX);
    (raw != [0; 3]).then(|| Iteration {
        stride: saturate(
            raw[0]
                .saturating_add(1)
                .saturating_mul(fields.stride_unit_bytes.into()),
        ),
        wrap: saturate(raw[1].saturating_add(1)),
        current: saturate(raw[2]),
    })
}

impl DeviceProfile {
    /// Which kind of tile sits at (col, row), if any.
    pub fn tile_kind(&self, col: u32, row: u32) -> Option<TileKind> {
        let a = &self.array;
        if col < a.first_column || col - a.first_column >= a.columns {
            None
        } else if a.shim_rows.contains(&row) {
            Some(TileKind::Shim)
        } else if a.memory_tile_rows.contains(&row) {
            Some(TileKind::Memory)
        } else if a.core_rows.contains(&row) {
            Some(TileKind::Core)
        } else {
            None
        }
    }

    /// (column, row, tile-relative offset) of a full address.
    pub fn split_address(&self, address: u64) -> (u64, u32, u32) {
        let r = &self.registers;
        let row_bits = r.column_shift.saturating_sub(r.row_shift);
        let row = (address >> r.row_shift) & mask(row_bits);
        let offset = address & mask(r.row_shift);
        (address >> r.column_shift, row as u32, offset as u32)
    }

    /// The full (array) address of a tile-relative offset.
    pub fn tile_address(&self, col: u32, row: u32, offset: u32) -> u64 {
        let r = &self.registers;
        u64::from(col) << r.column_shift | u64::from(row) << r.row_shift | u64::from(offset)
    }

    pub fn tile_registers(&self, kind: TileKind) -> &TileRegisters {
        match kind {
            TileKind::Shim => &self.registers.shim,
            TileKind::Memory => &self.registers.memory,
            TileKind::Core => &self.registers.core,
        }
    }

    pub fn budget(&self, kind: TileKind) -> TileBudget {
        match kind {
            TileKind::Shim => {
                let t = &self.shim_tile;
                TileBudget {
                    memory: 0,
                    locks: t.locks,
                    bds: t.buffer_descriptors,
                    s2mm: t.dma_s2mm_channels,
                    mm2s: t.dma_mm2s_channels,
                }
            }
            TileKind::Memory => {
                let t = &self.memory_tile;
                TileBudget {
                    memory: t.data_memory_bytes,
                    locks: t.locks,
                    bds: t.buffer_descriptors,
                    s2mm: t.dma_s2mm_channels,
                    mm2s: t.dma_mm2s_channels,
                }
            }
            TileKind::Core => {
                let t = &self.core_tile;
                TileBudget {
                    memory: t.data_memory_bytes,
                    locks: t.locks,
                    bds: t.buffer_descriptors,
                    s2mm: t.dma_s2mm_channels,
                    mm2s: t.dma_mm2s_channels,
                }
            }
        }
    }

    /// The value register of the tile's own lock `id`.
    pub fn lock_value(&self, kind: TileKind, id: u32) -> Result<u32, RegisterError> {
        element(
            &self.tile_registers(kind).locks,
            "lock id",
            id,
            self.budget(kind).locks,
        )
    }

    /// Word 0 of buffer descriptor `n`.
    pub fn bd(&self, kind: TileKind, n: u32) -> Result<u32, RegisterError> {
        let regs = self.tile_registers(kind);
        element(
            &regs.buffer_descriptors,
            "buffer descriptor",
            n,
            self.budget(kind).bds,
        )
    }

    pub fn channel_control(
        &self,
        kind: TileKind,
        dir: Direction,
        ch: u32,
    ) -> Result<u32, RegisterError> {
        let (regs, counts) = (self.tile_registers(kind), self.budget(kind));
        match dir {
            Direction::S2mm => element(&regs.dma_s2mm, "s2mm channel", ch, counts.s2mm),
            Direction::Mm2s => element(&regs.dma_mm2s, "mm2s channel", ch, counts.mm2s),
        }
    }

    /// The start (in the shim: task) queue of a channel.
    pub fn start_queue(
        &self,
        kind: TileKind,
        dir: Direction,
        ch: u32,
    ) -> Result<u32, RegisterError> {
        let queue = self.tile_registers(kind).start_queue.offset.0;
        self.channel_control(kind, dir, ch)
            .map(|control| control + queue)
    }

    pub fn stream_switch_master(&self, kind: TileKind, port: u32) -> Result<u32, RegisterError> {
        let s = &self.tile_registers(kind).stream_switch;
        below("stream switch master port", port, s.masters)
            .map(|p| s.master_base.0 + p * s.stride.0)
    }

    pub fn stream_switch_slave(&self, kind: TileKind, port: u32) -> Result<u32, RegisterError> {
        let s = &self.tile_registers(kind).stream_switch;
        below("stream switch slave port", port, s.slaves).map(|p| s.slave_base.0 + p * s.stride.0)
    }

    pub fn core_control(&self) -> u32 {
        self.registers.core_module.control.0
    }

    pub fn core_status(&self) -> u32 {
        self.registers.core_module.status.0
    }

    pub fn shim_mux(&self) -> u32 {
        self.registers.shim_mux.mux.0
    }

    pub fn shim_demux(&self) -> u32 {
        self.registers.shim_mux.demux.0
    }

    /// The register words of a buffer descriptor, word 0 first.
    pub fn encode_bd(
        &self,
        kind: TileKind,
        bd: &BufferDescriptor,
    ) -> Result<Vec<u32>, RegisterError> {
        let regs = self.tile_registers(kind);
        let layout = &regs.bd_layout;
        let mut words = vec![0u32; layout.words as usize];

        let address_bits = layout.address.iter().map(|piece| piece.width).sum();
        let mut address = in_units(
            "address",
            bd.address,
            layout.address_unit_bytes,
            address_bits,
        )?;
        for piece in &layout.address {
            put(&mut words, *piece, address & mask(piece.width));
            address >>= piece.width;
        }
        let length = in_units(
            "length",
            bd.length.into(),
            layout.length_unit_bytes,
            layout.length.width,
        )?;
        put(&mut words, layout.length, length);

        if let Some(next) = bd.next_bd {
            let next = below("next buffer descriptor", next, self.budget(kind).bds)?;
            put(
                &mut words,
                layout.next_bd,
                fits("next buffer descriptor", next.into(), layout.next_bd.width)?,
            );
            put(&mut words, layout.use_next_bd, 1);
        }
        put(&mut words, layout.valid, bd.valid.into());

        let lock_id = |id: u32, field: BdField| -> Result<u64, RegisterError> {
            let id = below("lock id", id, regs.dma_lock_ids)?;
            fits("lock id", id.into(), field.width)
        };
        if let Some((id, value)) = bd.acquire {
            put(
                &mut words,
                layout.acquire_id,
                lock_id(id, layout.acquire_id)?,
            );
            let value = signed_field("acquire value", value, layout.acquire_value.width)?;
            put(&mut words, layout.acquire_value, value);
            put(&mut words, layout.acquire_enable, 1);
        }
        match bd.release {
            Some((0, 0)) => return Err(RegisterError::EmptyRelease),
            Some((id, value)) => {
                put(
                    &mut words,
                    layout.release_id,
                    lock_id(id, layout.release_id)?,
                );
                let value = signed_field("release value", value, layout.release_value.width)?;
                put(&mut words, layout.release_value, value);
            }
            None => {}
        }

        match (&layout.burst_length, bd.burst_length) {
            (Some(burst), Some(bytes)) => {
                let code = burst.bytes.iter().position(|&b| b == bytes).ok_or(
                    RegisterError::OutOfRange {
                        what: "burst length",
                        value: bytes.into(),
                        min: burst.bytes.iter().copied().min().unwrap_or(0).into(),
                        max: burst.bytes.iter().copied().max().unwrap_or(0).into(),
                    },
                )?;
                put(&mut words, burst.field, code as u64);
            }
            (Some(_), None) => {
                return Err(RegisterError::Missing {
                    kind,
                    what: "burst length",
                })
            }
            (None, Some(_)) => {
                return Err(RegisterError::NotInTile {
                    kind,
                    what: "burst length",
                })
            }
            (None, None) => {}
        }

        if let Some(extended) = &layout.extended {
            put(
                &mut words,
                extended.axcache,
                extended.axcache_default.into(),
            );
        }

        if !bd.dimensions.is_empty() {
            let Some(fields) = &layout.dimensions else {
                return Err(RegisterError::NotInTile {
                    kind,
                    what: "addressing dimensions",
                });
            };
            for (field, value) in dimension_fields(kind, fields, &bd.dimensions, bd.length)? {
                put(&mut words, field, value);
            }
        }
        match (&layout.iteration, bd.iteration) {
            (Some(fields), Some(it)) => {
                for (field, value) in iteration_fields(fields, &it)? {
                    put(&mut words, field, value);
                }
            }
            (None, Some(_)) => {
                return Err(RegisterError::NotInTile {
                    kind,
                    what: "iteration dimension",
                })
            }
            (_, None) => {}
        }
        Ok(words)
    }

    /// Reads a buffer descriptor back; words with settings beyond a 1-D
    /// transfer and its iteration are an error rather than silently dropped.
    pub fn decode_bd(
        &self,
        kind: TileKind,
        words: &[u32],
    ) -> Result<BufferDescriptor, RegisterError> {
        let layout = &self.tile_registers(kind).bd_layout;
        if words.len() != layout.words as usize {
            return Err(RegisterError::WordCount {
                kind,
                expected: layout.words,
                found: words.len(),
            });
        }
        let mut address = 0u64;
        let mut shift = 0;
        for piece in &layout.address {
            address |= get(words, *piece) << shift;
            shift += piece.width;
        }
        let acquire_enabled = get(words, layout.acquire_enable) == 1;
        let release = (
            get(words, layout.release_id) as u32,
            signed_value(get(words, layout.release_value), layout.release_value.width),
        );
        let bd = BufferDescriptor {
            address: address * u64::from(layout.address_unit_bytes),
            length: (get(words, layout.length) * u64::from(layout.length_unit_bytes)) as u32,
            next_bd: (get(words, layout.use_next_bd) == 1)
                .then(|| get(words, layout.next_bd) as u32),
            valid: get(words, layout.valid) == 1,
            acquire: acquire_enabled.then(|| {
                (
                    get(words, layout.acquire_id) as u32,
                    signed_value(get(words, layout.acquire_value), layout.acquire_value.width),
                )
            }),
            release: (release != (0, 0)).then_some(release),
            burst_length: match &layout.burst_length {
                Some(burst) => Some(
                    burst
                        .bytes
                        .get(get(words, burst.field) as usize)
                        .copied()
                        .ok_or(RegisterError::OutOfRange {
                            what: "burst length code",
                            value: get(words, burst.field) as i64,
                            min: 0,
                            max: burst.bytes.len() as i64 - 1,
                        })?,
                ),
                None => None,
            },
            iteration: layout
                .iteration
                .as_ref()
                .and_then(|fields| read_iteration(fields, words)),
            dimensions: layout
                .dimensions
                .as_ref()
                .map_or_else(Vec::new, |fields| read_dimensions(fields, words)),
        };
        // Whatever the fields above do not capture shows up as a difference.
        let plain = self.encode_bd(kind, &bd)?;
        match words
            .iter()
            .zip(&plain)
            .position(|(found, plain)| found != plain)
        {
            Some(word) => Err(RegisterError::NotPlain {
                word: word as u32,
                found: words[word],
                plain: plain[word],
            }),
            None => Ok(bd),
        }
    }

    /// The value to write to a channel's start queue.
    pub fn encode_start_queue(
        &self,
        kind: TileKind,
        entry: &StartQueueEntry,
    ) -> Result<u32, RegisterError> {
        let queue: &StartQueue = &self.tile_registers(kind).start_queue;
        let bd = below(
            "start buffer descriptor",
            entry.start_bd,
            self.budget(kind).bds,
        )?;
        let bd = fits("start buffer descriptor", bd.into(), queue.start_bd.width)?;
        let runs = u64::from(entry.runs);
        if runs == 0 || runs > mask(queue.repeat_count.width) + 1 {
            return Err(RegisterError::OutOfRange {
                what: "runs",
                value: runs as i64,
                min: 1,
                max: (mask(queue.repeat_count.width) + 1) as i64,
            });
        }
        Ok((bd << queue.start_bd.lsb
            | (runs - 1) << queue.repeat_count.lsb
            | u64::from(entry.token_issue) << queue.token_issue.lsb) as u32)
    }

    pub fn decode_start_queue(
        &self,
        kind: TileKind,
        value: u32,
    ) -> Result<StartQueueEntry, RegisterError> {
        let queue = &self.tile_registers(kind).start_queue;
        let entry = StartQueueEntry {
            start_bd: queue_field(value, queue.start_bd) as u32,
            runs: queue_field(value, queue.repeat_count) as u32 + 1,
            token_issue: queue_field(value, queue.token_issue) == 1,
        };
        let plain = self.encode_start_queue(kind, &entry)?;
        if plain == value {
            Ok(entry)
        } else {
            Err(RegisterError::NotPlain {
                word: 0,
                found: value,
                plain,
            })
        }
    }
}

/// What a full address names: its tile, and the register or memory word.
pub fn name_of(profile: &DeviceProfile, address: u64) -> Option<RegisterName> {
    let (column, row, offset) = profile.split_address(address);
    let column = u32::try_from(column).ok()?;
    let kind = profile.tile_kind(column, row)?;
    let register = register_at(profile, kind, offset)?;
    Some(RegisterName {
        column,
        row,
        kind,
        register,
    })
}

fn register_at(profile: &DeviceProfile, kind: TileKind, offset: u32) -> Option<Register> {
    let regs = profile.tile_registers(kind);
    let counts = profile.budget(kind);
    if let Some(id) = index_in(&regs.locks, offset, counts.locks) {
        return Some(Register::LockValue(id));
    }
    let bds = &regs.buffer_descriptors;
    if let Some(rel) = offset.checked_sub(bds.base.0).filter(|_| bds.stride.0 > 0) {
        let (bd, within) = (rel / bds.stride.0, rel % bds.stride.0);
        if bd < counts.bds && within.is_multiple_of(4) && within / 4 < regs.bd_layout.words {
            return Some(Register::BdWord {
                bd,
                word: within / 4,
            });
        }
    }
    for (dir, array, count) in [
        (Direction::S2mm, &regs.dma_s2mm, counts.s2mm),
        (Direction::Mm2s, &regs.dma_mm2s, counts.mm2s),
    ] {
        if let Some(ch) = index_in(array, offset, count) {
            return Some(Register::ChannelControl(dir, ch));
        }
        let queue = offset.checked_sub(regs.start_queue.offset.0);
        if let Some(ch) = queue.and_then(|control| index_in(array, control, count)) {
            return Some(Register::StartQueue(dir, ch));
        }
    }
    let switch = &regs.stream_switch;
    let masters = RegisterArray {
        base: switch.master_base,
        stride: switch.stride,
    };
    if let Some(port) = index_in(&masters, offset, switch.masters) {
        return Some(Register::StreamSwitchMaster(port));
    }
    let slaves = RegisterArray {
        base: switch.slave_base,
        stride: switch.stride,
    };
    if let Some(port) = index_in(&slaves, offset, switch.slaves) {
        return Some(Register::StreamSwitchSlave(port));
    }
    let packet = &switch.packet;
    let slots = RegisterArray {
        base: packet.slot_base,
        stride: packet.slot_stride,
    };
    if let Some(n) = index_in(&slots, offset, switch.slaves * packet.slots)
        .filter(|_| packet.slot_port_stride.0 == packet.slot_stride.0 * packet.slots)
    {
        return Some(Register::StreamSwitchSlot {
            port: n / packet.slots,
            slot: n % packet.slots,
        });
    }
    match kind {
        TileKind::Core if offset == profile.core_control() => return Some(Register::CoreControl),
        TileKind::Core if offset == profile.core_status() => return Some(Register::CoreStatus),
        TileKind::Shim if offset == profile.shim_mux() => return Some(Register::ShimMux),
        TileKind::Shim if offset == profile.shim_demux() => return Some(Register::ShimDemux),
        _ => {}
    }
    if kind == TileKind::Core {
        let t = &profile.core_tile;
        let rel = u64::from(offset).checked_sub(t.program_memory_offset);
        if let Some(rel) = rel.filter(|&rel| rel < t.program_memory_bytes) {
            return Some(Register::ProgramMemory(rel as u32));
        }
    }
    let data_bytes = match kind {
        TileKind::Core => profile.core_tile.data_memory_bytes,
        TileKind::Memory => profile.memory_tile.data_memory_bytes,
        TileKind::Shim => 0,
    };
    let base = regs.data_memory?.0;
    let rel = offset.checked_sub(base)?;
    (u64::from(rel) < data_bytes).then_some(Register::DataMemory(rel))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles;

    const KINDS: [TileKind; 3] = [TileKind::Shim, TileKind::Memory, TileKind::Core];

    fn strix() -> &'static DeviceProfile {
        &profiles()[0]
    }

    /// A plain transfer that fits every tile kind.
    fn plain(kind: TileKind) -> BufferDescriptor {
        BufferDescriptor {
            address: 0x400,
            length: 2048,
            next_bd: Some(3),
            valid: true,
            acquire: Some((1, -1)),
            release: Some((2, 1)),
            burst_length: (kind == TileKind::Shim).then_some(512),
            iteration: None,
            dimensions: Vec::new(),
        }
    }

    fn iteration(stride: u32, wrap: u32, current: u32) -> Option<Iteration> {
        Some(Iteration {
            stride,
            wrap,
            current,
        })
    }

    // Offsets of xaie2pgbl_params.h (aie-rt release/main_aig).
    #[test]
    fn offsets_match_aie_rt() {
        for p in profiles() {
            assert_eq!(p.lock_value(TileKind::Core, 3), Ok(0x1F030));
            assert_eq!(p.lock_value(TileKind::Memory, 63), Ok(0xC03F0));
            assert_eq!(p.lock_value(TileKind::Shim, 0), Ok(0x14000));
            assert_eq!(p.bd(TileKind::Core, 15), Ok(0x1D1E0));
            assert_eq!(p.bd(TileKind::Memory, 47), Ok(0xA05E0));
            assert_eq!(p.bd(TileKind::Shim, 1), Ok(0x1D020));
            assert_eq!(
                p.channel_control(TileKind::Core, Direction::Mm2s, 1),
                Ok(0x1DE18)
            );
            assert_eq!(
                p.channel_control(TileKind::Memory, Direction::S2mm, 5),
                Ok(0xA0628)
            );
            assert_eq!(
                p.start_queue(TileKind::Memory, Direction::Mm2s, 5),
                Ok(0xA065C)
            );
            assert_eq!(
                p.start_queue(TileKind::Shim, Direction::Mm2s, 1),
                Ok(0x1D21C)
            );
            assert_eq!(
                p.start_queue(TileKind::Core, Direction::S2mm, 0),
                Ok(0x1DE04)
            );
            assert_eq!(p.stream_switch_master(TileKind::Core, 22), Ok(0x3F058));
            assert_eq!(p.stream_switch_slave(TileKind::Memory, 17), Ok(0xB0144));
            assert_eq!(p.stream_switch_slave(TileKind::Shim, 22), Ok(0x3F158));
            assert_eq!(p.core_control(), 0x32000);
            assert_eq!(p.core_status(), 0x32004);
            assert_eq!(p.tile_address(7, 5, 0x32000), 0x0E53_2000);
        }
    }

    #[test]
    fn indices_past_the_tile_are_errors() {
        let p = strix();
        assert_eq!(
            p.lock_value(TileKind::Core, 16),
            Err(RegisterError::OutOfRange {
                what: "lock id",
                value: 16,
                min: 0,
                max: 15
            })
        );
        assert!(p.bd(TileKind::Memory, 48).is_err());
        assert!(p
            .channel_control(TileKind::Shim, Direction::S2mm, 2)
            .is_err());
        assert!(p.start_queue(TileKind::Memory, Direction::Mm2s, 6).is_err());
        assert!(p.stream_switch_master(TileKind::Memory, 17).is_err());
    }

    #[test]
    fn tile_kinds_follow_the_rows() {
        let p = strix();
        assert_eq!(p.tile_kind(0, 0), Some(TileKind::Shim));
        assert_eq!(p.tile_kind(3, 1), Some(TileKind::Memory));
        assert_eq!(p.tile_kind(7, 5), Some(TileKind::Core));
        assert_eq!(p.tile_kind(8, 2), None);
        assert_eq!(p.tile_kind(0, 6), None);
    }

    // Field positions of xaie2pgbl_params.h: core BD_0 address [27:14] and
    // length [13:0] in words, BD_5 next [30:27], use-next 26, valid 25, release
    // value [24:18], release id [16:13], acquire enable 12, value [11:5], id [3:0].
    #[test]
    fn core_bd_words_match_aie_rt() {
        let words = strix()
            .encode_bd(TileKind::Core, &plain(TileKind::Core))
            .unwrap();
        let acquire = 1 | 0x7F << 5 | 1 << 12; // lock 1, value -1 in 7 bits
        let rest = 2 << 13 | 1 << 18 | 1 << 25 | 1 << 26 | 3 << 27;
        assert_eq!(words, [0x100 << 14 | 512, 0, 0, 0, 0, acquire | rest]);
    }

    // Shim: BD_0 length in words, BD_1 byte address [31:2], BD_2 address
    // [47:32] in [15:0], BD_4 burst code [31:30], BD_5 AxCache [27:24] = 2 as
    // mlir-aie writes it, BD_7 as the core's BD_5.
    #[test]
    fn shim_bd_words_match_aie_rt() {
        let bd = BufferDescriptor {
            address: 0xABCD_1234_5678,
            next_bd: None,
            acquire: None,
            ..plain(TileKind::Shim)
        };
        let words = strix().encode_bd(TileKind::Shim, &bd).unwrap();
        assert_eq!(
            words,
            [
                512,
                0x1234_5678,
                0xABCD,
                0,
                3 << 30,
                2 << 24,
                0,
                1 << 25 | 1 << 18 | 2 << 13
            ]
        );
    }

    // Memory tile: BD_0 length [16:0], BD_1 address [18:0] and next [25:20],
    // use-next 19; BD_7 valid 31, release value [30:24], id [23:16],
    // acquire enable 15, value [14:8], id [7:0].
    #[test]
    fn memory_tile_bd_words_match_aie_rt() {
        let bd = BufferDescriptor {
            address: 0x80000,
            acquire: Some((64, -2)),
            release: Some((65, 1)),
            ..plain(TileKind::Memory)
        };
        let words = strix().encode_bd(TileKind::Memory, &bd).unwrap();
        let word7 = 1 << 31 | 1 << 24 | 65 << 16 | 1 << 15 | 0x7E << 8 | 64;
        assert_eq!(
            words,
            [512, 0x20000 | 3 << 20 | 1 << 19, 0, 0, 0, 0, 0, word7]
        );
    }

    #[test]
    fn buffer_descriptors_round_trip() {
        for p in profiles() {
            for kind in KINDS {
                let variants = [
                    plain(kind),
                    BufferDescriptor {
                        next_bd: None,
                        valid: false,
                        acquire: Some((0, 0)),
                        release: None,
                        ..plain(kind)
                    },
                    BufferDescriptor {
                        acquire: None,
                        release: Some((3, -64)),
                        length: 4,
                        address: 0,
                        ..plain(kind)
                    },
                ];
                for bd in variants {
                    let words = p.encode_bd(kind, &bd).unwrap();
                    assert_eq!(p.decode_bd(kind, &words), Ok(bd), "{kind:?}");
                }
            }
        }
    }

    /// What kind of error, about which field.
    fn subject(error: RegisterError) -> (&'static str, &'static str) {
        match error {
            RegisterError::OutOfRange { what, .. } => ("range", what),
            RegisterError::Misaligned { what, .. } => ("misaligned", what),
            RegisterError::NotInTile { what, .. } => ("not in tile", what),
            RegisterError::Missing { what, .. } => ("missing", what),
            RegisterError::EmptyRelease => ("empty", "release"),
            RegisterError::EmptyIteration { .. } => ("empty", "iteration"),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn out_of_range_fields_are_errors() {
        type Change = fn(&mut BufferDescriptor);
        let every_kind: [(Change, (&str, &str)); 6] = [
            (|bd| bd.length = 6, ("misaligned", "length")),
            (|bd| bd.address = 2, ("misaligned", "address")),
            (|bd| bd.acquire = Some((192, -1)), ("range", "lock id")),
            (|bd| bd.release = Some((1, 64)), ("range", "release value")),
            (
                |bd| bd.next_bd = Some(48),
                ("range", "next buffer descriptor"),
            ),
            (|bd| bd.release = Some((0, 0)), ("empty", "release")),
        ];
        let core: [(Change, (&str, &str)); 4] = [
            (|bd| bd.address = 0x10000, ("range", "address")),
            (|bd| bd.length = 0x10000, ("range", "length")),
            (|bd| bd.acquire = Some((16, -1)), ("range", "lock id")),
            (
                |bd| bd.burst_length = Some(64),
                ("not in tile", "burst length"),
            ),
        ];
        let shim: [(Change, (&str, &str)); 3] = [
            (|bd| bd.burst_length = None, ("missing", "burst length")),
            (|bd| bd.burst_length = Some(100), ("range", "burst length")),
            (|bd| bd.address = 1 << 48, ("range", "address")),
        ];
        let cases = KINDS
            .iter()
            .flat_map(|&kind| every_kind.map(|case| (kind, case)))
            .chain(core.map(|case| (TileKind::Core, case)))
            .chain(shim.map(|case| (TileKind::Shim, case)));
        for (kind, (change, what)) in cases {
            let mut bd = plain(kind);
            change(&mut bd);
            let error = strix().encode_bd(kind, &bd).unwrap_err();
            assert_eq!(subject(error), what, "{kind:?} {bd:?}");
        }
        let core = TileKind::Core;
        let too_far = BufferDescriptor {
            address: 0x10000,
            ..plain(core)
        };
        assert!(matches!(
            strix().encode_bd(core, &too_far),
            Err(RegisterError::OutOfRange { max: 0xFFFC, .. })
        ));
    }

    /// mlir-aie test/Conversion/DmaToNpu/dma_to_npu_width_conversion.mlir
    /// (169809d): `dma_memcpy_nd` of bf16 with sizes [4, 4, 64, 64] and
    /// strides [0, 64, 256] checks `buffer_length = 8192, d0_size = 32,
    /// d0_stride = 0, d1_size = 64, d1_stride = 127, d2_stride = 31`: in
    /// words, 32 words a row, 64 rows 128 words apart, then 32 words on.
    #[test]
    fn shim_dimensions_hold_mlir_aie_fields() {
        let p = strix();
        let layout = &p.tile_registers(TileKind::Shim).bd_layout;
        let dims = layout.dimensions.as_ref().unwrap();
        let bd = BufferDescriptor {
            length: 8192 * 4,
            dimensions: vec![
                Dimension {
                    step: 4,
                    wrap: Some(32),
                },
                Dimension {
                    step: 128 * 4,
                    wrap: Some(64),
                },
                Dimension {
                    step: 32 * 4,
                    wrap: None,
                },
            ],
            ..plain(TileKind::Shim)
        };
        let words = p.encode_bd(TileKind::Shim, &bd).unwrap();
        let field = |f: BdField| get(&words, f);
        assert_eq!(field(layout.length), 8192);
        assert_eq!(field(dims.list[0].wrap.unwrap()), 32);
        assert_eq!(field(dims.list[0].step), 0);
        assert_eq!(field(dims.list[1].wrap.unwrap()), 64);
        assert_eq!(field(dims.list[1].step), 127);
        assert_eq!(field(dims.list[2].step), 31);
        assert_eq!(p.decode_bd(TileKind::Shim, &words), Ok(bd));
    }

    /// The words of a 4 x 4 transpose: word k of the transfer comes from row
    /// k mod 4, column k / 4 of a row-major matrix.
    #[test]
    fn dimensions_order_the_words() {
        let bd = BufferDescriptor {
            length: 64,
            dimensions: vec![
                Dimension {
                    step: 16,
                    wrap: Some(4),
                },
                Dimension {
                    step: 4,
                    wrap: Some(4),
                },
                Dimension {
                    step: 64,
                    wrap: None,
                },
            ],
            ..plain(TileKind::Core)
        };
        let offsets = bd.word_offsets().unwrap();
        assert_eq!(&offsets[..6], &[0, 16, 32, 48, 4, 20]);
        assert_eq!(bd.span(), 64);
        assert_eq!(bd.span(), offsets.iter().max().unwrap() + 4);
        // Rows of 3 words 64 bytes apart, two of them: the farthest word is
        // the last row's last.
        let rows = BufferDescriptor {
            length: 24,
            dimensions: vec![
                Dimension {
                    step: 4,
                    wrap: Some(3),
                },
                Dimension {
                    step: 64,
                    wrap: Some(2),
                },
                Dimension {
                    step: 512,
                    wrap: None,
                },
            ],
            ..plain(TileKind::Core)
        };
        let offsets = rows.word_offsets().unwrap();
        assert_eq!(offsets, [0, 4, 8, 64, 68, 72]);
        assert_eq!(rows.span(), 76);
        assert_eq!(plain(TileKind::Core).word_offsets(), None);
        let p = strix();
        let words = p.encode_bd(TileKind::Core, &bd).unwrap();
        assert_eq!(p.decode_bd(TileKind::Core, &words), Ok(bd));
    }

    #[test]
    fn dimensions_are_checked() {
        let p = strix();
        let with = |dimensions: Vec<Dimension>, length| BufferDescriptor {
            length,
            dimensions,
            ..plain(TileKind::Core)
        };
        let d = |step, wrap| Dimension { step, wrap };
        // Every dimension the kind has; a wrap on all but the outermost.
        assert!(p
            .encode_bd(TileKind::Core, &with(vec![d(4, Some(4))], 16))
            .is_err());
        assert!(matches!(
            p.encode_bd(
                TileKind::Core,
                &with(vec![d(4, Some(4)), d(4, None), d(4, None)], 16)
            ),
            Err(RegisterError::Missing { .. })
        ));
        // Steps in whole words, at least one; wraps at least 1, within the field.
        assert!(matches!(
            p.encode_bd(
                TileKind::Core,
                &with(vec![d(6, Some(4)), d(4, Some(1)), d(4, None)], 16)
            ),
            Err(RegisterError::Misaligned { .. })
        ));
        assert!(matches!(
            p.encode_bd(
                TileKind::Core,
                &with(vec![d(4, Some(0)), d(4, Some(1)), d(4, None)], 16)
            ),
            Err(RegisterError::OutOfRange {
                what: "dimension wrap",
                ..
            })
        ));
        assert!(matches!(
            p.encode_bd(
                TileKind::Core,
                &with(vec![d(4, Some(256)), d(4, Some(1)), d(4, None)], 1024)
            ),
            Err(RegisterError::OutOfRange {
                what: "dimension wrap",
                max: 255,
                ..
            })
        ));
        // The length runs whole rounds of the inner wraps.
        assert!(p
            .encode_bd(
                TileKind::Core,
                &with(vec![d(4, Some(3)), d(4, Some(1)), d(4, None)], 16)
            )
            .is_err());
        // A wrap of 0 beside dimensions in use is not a state the model knows.
        let mut words = p.encode_bd(TileKind::Core, &plain(TileKind::Core)).unwrap();
        let dims = p
            .tile_registers(TileKind::Core)
            .bd_layout
            .dimensions
            .as_ref()
            .unwrap();
        put(&mut words, dims.list[0].wrap.unwrap(), 4);
        assert!(matches!(
            p.decode_bd(TileKind::Core, &words),
            Err(RegisterError::OutOfRange {
                what: "dimension wrap",
                value: 0,
                ..
            })
        ));
    }

    #[test]
    fn words_beyond_a_plain_transfer_are_reported() {
        let p = strix();
        let mut words = p.encode_bd(TileKind::Shim, &plain(TileKind::Shim)).unwrap();
        words[2] = 1 << 30; // the packet header's enable
        assert_eq!(
            p.decode_bd(TileKind::Shim, &words),
            Err(RegisterError::NotPlain {
                word: 2,
                found: 1 << 30,
                plain: 0
            })
        );
        assert!(matches!(
            p.decode_bd(TileKind::Shim, &words[..6]),
            Err(RegisterError::WordCount {
                expected: 8,
                found: 6,
                ..
            })
        ));
        // next BD 5 without use-next set
        let mut core = p
            .encode_bd(
                TileKind::Core,
                &BufferDescriptor {
                    next_bd: None,
                    ..plain(TileKind::Core)
                },
            )
            .unwrap();
        core[5] |= 5 << 27;
        assert!(matches!(
            p.decode_bd(TileKind::Core, &core),
            Err(RegisterError::NotPlain { word: 5, .. })
        ));
    }

    // Iteration fields of xaie2pgbl_params.h, stepsize and wrap as value - 1
    // (xaie_dma_aieml.c _XAieMl_DmaWriteBd): core BD_4 current [24:19], wrap
    // [18:13], stepsize [12:0]; memory tile BD_6 [28:23], [22:17], [16:0];
    // shim BD_6 [31:26], [25:20], [19:0].
    #[test]
    fn iteration_words_match_aie_rt() {
        let p = strix();
        let with = |kind| BufferDescriptor {
            iteration: iteration(64, 3, 2),
            ..plain(kind)
        };
        // The words that differ from the plain descriptor's.
        let fields = |kind| -> Vec<(usize, u32)> {
            let plain = p.encode_bd(kind, &plain(kind)).unwrap();
            let words = p.encode_bd(kind, &with(kind)).unwrap();
            words
                .iter()
                .zip(&plain)
                .enumerate()
                .filter(|(_, (w, p))| w != p)
                .map(|(i, (w, _))| (i, *w))
                .collect()
        };
        assert_eq!(fields(TileKind::Core), [(4, 2 << 19 | 2 << 13 | 15)]);
        assert_eq!(fields(TileKind::Memory), [(6, 2 << 23 | 2 << 17 | 15)]);
        assert_eq!(fields(TileKind::Shim), [(6, 2 << 26 | 2 << 20 | 15)]);
    }

    #[test]
    fn iterations_round_trip_and_show() {
        for p in profiles() {
            for kind in KINDS {
                let stride_max = p
                    .tile_registers(kind)
                    .bd_layout
                    .iteration
                    .as_ref()
                    .map_or(0, |it| (1 << it.stride.width) * it.stride_unit_bytes);
                for it in [
                    iteration(4, 64, 63),
                    iteration(8, 1, 0),
                    iteration(4, 2, 0),
                    iteration(stride_max, 5, 4),
                ] {
                    let bd = BufferDescriptor {
                        iteration: it,
                        ..plain(kind)
                    };
                    let words = p.encode_bd(kind, &bd).unwrap();
                    assert_eq!(p.decode_bd(kind, &words), Ok(bd), "{kind:?} {it:?}");
                }
            }
        }
        let bd = BufferDescriptor {
            iteration: iteration(16, 3, 1),
            ..plain(TileKind::Core)
        };
        assert!(
            bd.to_string()
                .ends_with(" iteration_stride=16 iteration_wrap=3 iteration_current=1"),
            "{bd}"
        );
    }

    #[test]
    fn iteration_out_of_range_is_an_error() {
        let p = strix();
        // Strides run to 8K words in the core (13 bits of value - 1), 1M in the shim.
        let stride = ("range", "iteration stride");
        let wrap = ("range", "iteration wrap");
        let empty = ("empty", "iteration");
        let cases = [
            (TileKind::Shim, (0, 2, 0), stride),
            (
                TileKind::Shim,
                (6, 2, 0),
                ("misaligned", "iteration stride"),
            ),
            (TileKind::Core, ((4 << 13) + 4, 2, 0), stride),
            (TileKind::Shim, ((4 << 20) + 4, 2, 0), stride),
            (TileKind::Memory, (4, 0, 0), wrap),
            (TileKind::Memory, (4, 65, 0), wrap),
            (TileKind::Core, (4, 3, 3), ("range", "iteration current")),
            (TileKind::Core, (4, 1, 0), empty),
            (TileKind::Shim, (4, 1, 0), empty),
        ];
        for (kind, (stride, wrap, current), what) in cases {
            let bd = BufferDescriptor {
                iteration: iteration(stride, wrap, current),
                ..plain(kind)
            };
            let error = p.encode_bd(kind, &bd).unwrap_err();
            assert_eq!(subject(error), what, "{kind:?} {bd:?}");
        }
        let too_long = BufferDescriptor {
            iteration: iteration((4 << 13) + 4, 2, 0),
            ..plain(TileKind::Core)
        };
        assert_eq!(
            p.encode_bd(TileKind::Core, &too_long),
            Err(RegisterError::OutOfRange {
                what: "iteration stride",
                value: (4 << 13) + 4,
                min: 4,
                max: 4 << 13,
            })
        );
        // An index at or past the wrap in the words is refused on reading too.
        let mut words = p.encode_bd(TileKind::Shim, &plain(TileKind::Shim)).unwrap();
        words[6] = 5 << 26 | 2 << 20; // current 5, wrap 3
        assert!(matches!(
            p.decode_bd(TileKind::Shim, &words),
            Err(RegisterError::OutOfRange {
                what: "iteration current",
                value: 5,
                ..
            })
        ));
    }

    /// A profile whose core descriptors have no iteration dimension.
    fn without_core_iteration() -> DeviceProfile {
        let (_, text) = crate::profile::PROFILE_FILES[0];
        let mut json: serde_json::Value = serde_json::from_str(text).unwrap();
        json["registers"]["core"]["bd_layout"]
            .as_object_mut()
            .unwrap()
            .remove("iteration");
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn a_kind_without_iteration_fields_refuses_one() {
        let p = without_core_iteration();
        let bd = BufferDescriptor {
            iteration: iteration(16, 2, 0),
            ..plain(TileKind::Core)
        };
        let error = p.encode_bd(TileKind::Core, &bd).unwrap_err();
        assert_eq!(
            error,
            RegisterError::NotInTile {
                kind: TileKind::Core,
                what: "iteration dimension"
            }
        );
        assert_eq!(error.to_string(), "a core tile has no iteration dimension");
        // Its word 4 is then outside the modelled fields.
        let words = strix().encode_bd(TileKind::Core, &bd).unwrap();
        assert!(matches!(
            p.decode_bd(TileKind::Core, &words),
            Err(RegisterError::NotPlain { word: 4, .. })
        ));
        let plain_words = p.encode_bd(TileKind::Core, &plain(TileKind::Core));
        assert_eq!(
            p.decode_bd(TileKind::Core, &plain_words.unwrap()),
            Ok(plain(TileKind::Core))
        );
    }

    // aie-rt xaie_dma.c XAie_DmaChannelPushBdToQueue: start BD | (repeat - 1) << 16 | token << 31.
    #[test]
    fn start_queue_entries() {
        let p = strix();
        let entry = StartQueueEntry {
            start_bd: 40,
            runs: 256,
            token_issue: true,
        };
        let value = p.encode_start_queue(TileKind::Memory, &entry).unwrap();
        assert_eq!(value, 1 << 31 | 255 << 16 | 40);
        assert_eq!(p.decode_start_queue(TileKind::Memory, value), Ok(entry));
        assert!(
            p.encode_start_queue(TileKind::Core, &entry).is_err(),
            "BD 40 of 16"
        );
        let zero_runs = StartQueueEntry {
            runs: 0,
            start_bd: 1,
            ..entry
        };
        assert!(p.encode_start_queue(TileKind::Shim, &zero_runs).is_err());
        assert!(p.decode_start_queue(TileKind::Shim, 1 << 8).is_err());
    }

    #[test]
    fn names_of_addresses() {
        for p in profiles() {
            let name = |address: u64| name_of(p, address).map(|n| (n.column, n.row, n.to_string()));
            let named = |col, row, text: &str| Some((col, row, text.to_string()));
            assert_eq!(name(0x0031F020), named(0, 3, "core.lock[2].value"));
            assert_eq!(name(0x021A00E8), named(1, 1, "mem.bd[7].word[2]"));
            assert_eq!(name(0x0001D214), named(0, 0, "shim.dma.mm2s[0].task_queue"));
            assert_eq!(name(0x0E232000), named(7, 2, "core.control"));
            assert_eq!(name(0x0E520010), named(7, 5, "core.program_memory+0x10"));
            assert_eq!(
                name(0x0041DE14),
                named(0, 4, "core.dma.mm2s[0].start_queue")
            );
            assert_eq!(name(0x021A0634), named(1, 1, "mem.dma.mm2s[0].start_queue"));
            assert_eq!(name(0x0001F000), named(0, 0, "shim.mux"));
            assert_eq!(name(0x001B0004), named(0, 1, "mem.stream_switch.master[1]"));
            assert_eq!(
                name(0x0023F158),
                named(0, 2, "core.stream_switch.slave[22]")
            );
            assert_eq!(name(0x001B0104), named(0, 1, "mem.stream_switch.slave[1]"));
            assert_eq!(name(0x0017FFFC), named(0, 1, "mem.data_memory+0x7fffc"));
            assert_eq!(name(0x0001D100), named(0, 0, "shim.bd[8].word[0]"));
            assert_eq!(name(0x0001D018), named(0, 0, "shim.bd[0].word[6]"));
            assert_eq!(name(0x0021D018), None, "core BDs have 6 words");
            assert_eq!(name(0x1001F000), None, "column 8 is outside the array");
            assert_eq!(name(0x0031F024), None, "not a register");
            assert_eq!(name(0x00032000), None, "the shim has no core");
        }
    }

    /// Every register the accessors give is named back as itself, so no two
    /// registers of a tile share an offset and every offset fits the tile.
    #[test]
    fn every_register_names_back_to_itself() {
        for p in profiles() {
            for kind in KINDS {
                let col = p.array.first_column + p.array.columns - 1;
                let row = (0..p.array.rows)
                    .find(|&r| p.tile_kind(col, r) == Some(kind))
                    .unwrap();
                let c = p.budget(kind);
                let mut expected = vec![];
                for id in 0..c.locks {
                    expected.push((p.lock_value(kind, id).unwrap(), Register::LockValue(id)));
                }
                let words = p.tile_registers(kind).bd_layout.words;
                for bd in 0..c.bds {
                    for word in 0..words {
                        let offset = p.bd(kind, bd).unwrap() + 4 * word;
                        expected.push((offset, Register::BdWord { bd, word }));
                    }
                }
                for (dir, n) in [(Direction::S2mm, c.s2mm), (Direction::Mm2s, c.mm2s)] {
                    for ch in 0..n {
                        let control = p.channel_control(kind, dir, ch).unwrap();
                        expected.push((control, Register::ChannelControl(dir, ch)));
                        let queue = p.start_queue(kind, dir, ch).unwrap();
                        expected.push((queue, Register::StartQueue(dir, ch)));
                    }
                }
                let switch = &p.tile_registers(kind).stream_switch;
                for port in 0..switch.masters {
                    let offset = p.stream_switch_master(kind, port).unwrap();
                    expected.push((offset, Register::StreamSwitchMaster(port)));
                }
                for port in 0..switch.slaves {
                    let offset = p.stream_switch_slave(kind, port).unwrap();
                    expected.push((offset, Register::StreamSwitchSlave(port)));
                }
                for (offset, register) in expected {
                    assert!(offset < 1 << p.registers.row_shift, "{kind:?} {register:?}");
                    let name = name_of(p, p.tile_address(col, row, offset)).unwrap();
                    assert_eq!((name.column, name.row, name.kind), (col, row, kind));
                    assert_eq!(name.register, register, "{} at {offset:#x}", p.name);
                }
            }
        }
    }

    /// Every field of every layout (dimensions and extended fields too) lies
    /// inside its word, and no two overlap.
    #[test]
    fn field_layouts_are_consistent() {
        for p in profiles() {
            let r = &p.registers;
            assert!(r.row_shift < r.column_shift && r.column_shift < 64);
            for kind in KINDS {
                let regs = p.tile_registers(kind);
                let l = &regs.bd_layout;
                assert!(l.words * 4 <= regs.buffer_descriptors.stride.0, "{kind:?}");
                let mut fields = l.address.clone();
                fields.extend([
                    l.length,
                    l.next_bd,
                    l.use_next_bd,
                    l.valid,
                    l.release_value,
                    l.release_id,
                    l.acquire_enable,
                    l.acquire_value,
                    l.acquire_id,
                ]);
                if let Some(burst) = &l.burst_length {
                    fields.push(burst.field);
                    assert!(burst.bytes.len() as u64 <= 1 << burst.field.width);
                }
                if let Some(it) = &l.iteration {
                    fields.extend([it.stride, it.wrap, it.current]);
                    assert!(it.stride_unit_bytes > 0, "{kind:?}");
                }
                if let Some(d) = &l.dimensions {
                    assert!(d.step_unit_bytes > 0, "{kind:?}");
                    for dim in &d.list {
                        fields.push(dim.step);
                        fields.extend(dim.wrap);
                    }
                    // A wrap on every dimension but the outermost.
                    let wraps: Vec<bool> = d.list.iter().map(|dim| dim.wrap.is_some()).collect();
                    assert!(
                        wraps
                            .split_last()
                            .is_some_and(|(last, inner)| !last && inner.iter().all(|&w| w)),
                        "{kind:?}"
                    );
                }
                if let Some(e) = &l.extended {
                    fields.extend([e.enable_packet, e.packet_id, e.axcache]);
                }
                let mut used = vec![0u64; l.words as usize];
                for f in fields {
                    assert!(
                        f.word < l.words && f.width > 0 && f.lsb + f.width <= 32,
                        "{kind:?} {f:?}"
                    );
                    let bits = mask(f.width) << f.lsb;
                    assert_eq!(used[f.word as usize] & bits, 0, "{kind:?} {f:?} overlaps");
                    used[f.word as usize] |= bits;
                }
                let q = &regs.start_queue;
                let mut used = 0u64;
                for f in [q.start_bd, q.repeat_count, q.token_issue] {
                    assert!(f.width > 0 && f.lsb + f.width <= 32);
                    assert_eq!(used & mask(f.width) << f.lsb, 0, "{kind:?} start queue");
                    used |= mask(f.width) << f.lsb;
                }
                assert!(regs.dma_own_lock_id_base + p.budget(kind).locks <= regs.dma_lock_ids);
            }
        }
    }
}
