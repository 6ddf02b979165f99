//! Device profiles: the hardware facts the compiler admits programs against,
//! read from the JSON files in `xdna/profiles/` (each names its sources).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

include!(concat!(env!("OUT_DIR"), "/profiles.rs"));

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    pub pci_id: String,
    pub pci_revision: String,
    pub npu: String,
    pub description: String,
    pub xrt_name: String,
    pub firmware: String,
    pub aie_generation: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Array {
    pub columns: u32,
    pub rows: u32,
    pub first_column: u32,
    pub shim_rows: Vec<u32>,
    pub memory_tile_rows: Vec<u32>,
    pub core_rows: Vec<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreTile {
    pub data_memory_bytes: u64,
    pub program_memory_bytes: u64,
    pub program_memory_offset: u64,
    pub locks: u32,
    pub buffer_descriptors: u32,
    pub dma_s2mm_channels: u32,
    pub dma_mm2s_channels: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryTile {
    pub data_memory_bytes: u64,
    pub locks: u32,
    pub buffer_descriptors: u32,
    pub dma_s2mm_channels: u32,
    pub dma_mm2s_channels: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShimTile {
    pub locks: u32,
    pub buffer_descriptors: u32,
    pub dma_s2mm_channels: u32,
    pub dma_mm2s_channels: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub lock_value_max: u32,
    pub bd_repeat_count_max: u32,
    pub task_queue_depth: u32,
}

/// A tile-relative register offset, written as a `"0x..."` string in the
/// profile so it reads like the register tables it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct Hex(pub u32);

impl TryFrom<String> for Hex {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        text.strip_prefix("0x")
            .and_then(|digits| u32::from_str_radix(digits, 16).ok())
            .map(Hex)
            .ok_or_else(|| format!("expected a hex offset like \"0x1D000\", found {text:?}"))
    }
}

/// Equally spaced registers: entry `i` is at `base + i * stride`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterArray {
    pub base: Hex,
    pub stride: Hex,
}

/// A bit field of one 32-bit register.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    pub lsb: u32,
    pub width: u32,
}

impl Field {
    /// The field's bits in its register.
    pub fn mask(self) -> u32 {
        let ones = u32::MAX.checked_shr(32 - self.width.min(32)).unwrap_or(0);
        ones.checked_shl(self.lsb).unwrap_or(0)
    }

    /// The field's value in register word `word`.
    pub fn get(self, word: u32) -> u32 {
        (word & self.mask()).checked_shr(self.lsb).unwrap_or(0)
    }

    /// `value` in the field's place (bits beyond its width dropped).
    pub fn place(self, value: u32) -> u32 {
        value.checked_shl(self.lsb).unwrap_or(0) & self.mask()
    }
}

/// A bit field of one word of a buffer descriptor.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BdField {
    pub word: u32,
    pub lsb: u32,
    pub width: u32,
}

/// The start (task) queue register of a DMA channel.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartQueue {
    /// From the channel's control register.
    pub offset: Hex,
    pub start_bd: Field,
    /// Holds the number of runs minus one.
    pub repeat_count: Field,
    pub token_issue: Field,
}

/// A kind of stream switch port (aie-rt's `StrmSwPortType`, mlir-aie's
/// `WireBundle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortKind {
    Core,
    Dma,
    TileCtrl,
    Fifo,
    South,
    West,
    North,
    East,
    Trace,
}

impl PortKind {
    /// The name in switch descriptions, e.g. `South3`, `DMA0`.
    pub fn name(self) -> &'static str {
        match self {
            PortKind::Core => "Core",
            PortKind::Dma => "DMA",
            PortKind::TileCtrl => "TileCtrl",
            PortKind::Fifo => "FIFO",
            PortKind::South => "South",
            PortKind::West => "West",
            PortKind::North => "North",
            PortKind::East => "East",
            PortKind::Trace => "Trace",
        }
    }
}

/// Ports `0..count` of one kind are physical ports `first..first + count`
/// (register `base + physical * stride`); written `[first, count]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(from = "[u32; 2]")]
pub struct PortRange {
    pub first: u32,
    pub count: u32,
}

impl From<[u32; 2]> for PortRange {
    fn from([first, count]: [u32; 2]) -> Self {
        PortRange { first, count }
    }
}

/// Where one shim DMA channel meets the shim stream switch.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShimDmaPort {
    /// The South port index: a slave for MM2S, a master for S2MM.
    pub south: u32,
    /// The field of the mux (MM2S) or demux (S2MM) register that must hold
    /// `select_dma` for the port to carry this channel rather than PL or NoC.
    pub select: Field,
}

/// The shim DMA's channels reach its stream switch through the shim mux
/// (into the switch) and demux (out of it).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShimDma {
    pub select_dma: u32,
    /// By channel.
    pub mm2s: Vec<ShimDmaPort>,
    pub s2mm: Vec<ShimDmaPort>,
}

/// Stream switch configuration registers: master port `k` at
/// `master_base + k * stride`, slave port `k` at `slave_base + k * stride`.
/// A circuit connection writes the master with `master_enable` and the
/// physical slave index in `master_slave_index`, and the slave with
/// `slave_enable`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamSwitch {
    pub master_base: Hex,
    pub slave_base: Hex,
    pub stride: Hex,
    pub masters: u32,
    pub slaves: u32,
    pub master_enable: Field,
    pub master_slave_index: Field,
    pub slave_enable: Field,
    pub master_ports: BTreeMap<PortKind, PortRange>,
    pub slave_ports: BTreeMap<PortKind, PortRange>,
    /// (slave kind, master kind) pairs the switch joins only when both have
    /// the same index (among DMA and the four directions; trace and control
    /// rules are not modelled).
    pub same_index: Vec<(PortKind, PortKind)>,
    /// Shim only: how its DMA channels reach the switch.
    #[serde(default)]
    pub shim_dma: Option<ShimDma>,
    pub packet: PacketSwitch,
    pub sources: Vec<String>,
}

/// The switch's packet mode: a slave with packet enable passes each packet
/// to the first of its slots whose id matches under the slot's mask; the
/// slot names an arbiter and an msel; a master with packet enable takes the
/// packets of its arbiter whose msel its msel-enable mask holds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacketSwitch {
    /// Slot `k` of slave physical index `i` is at
    /// `slot_base + i * slot_port_stride + k * slot_stride`.
    pub slot_base: Hex,
    pub slot_port_stride: Hex,
    pub slot_stride: Hex,
    pub slots: u32,
    pub slave_packet_enable: Field,
    pub master_packet_enable: Field,
    pub master_drop_header: Field,
    pub master_msel_enable: Field,
    pub master_arbiter: Field,
    pub slot_id: Field,
    pub slot_mask: Field,
    pub slot_enable: Field,
    pub slot_msel: Field,
    pub slot_arbiter: Field,
}

/// Fields of a DMA channel's control register.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelControl {
    /// Holds the channel in reset; the shim's channels have none.
    #[serde(default)]
    pub reset: Option<Field>,
    /// The packet id of the channel's task-complete tokens.
    pub controller_id: Field,
}

/// The shim's AXI burst length: field code `i` means `bytes[i]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BurstLength {
    pub field: BdField,
    pub bytes: Vec<u32>,
}

/// A buffer descriptor's iteration dimension: each use of the descriptor
/// moves its address by `stride x index`, the index counting uses up to the
/// wrap. `stride` (in `stride_unit_bytes` units) and `wrap` hold value - 1,
/// `current` the index as is (aie-rt xaie_dma_aieml.c _XAieMl_DmaWriteBd).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BdIteration {
    pub stride_unit_bytes: u32,
    pub stride: BdField,
    pub wrap: BdField,
    pub current: BdField,
}

/// The shim descriptor fields the TXN builder writes beyond a transfer's
/// addressing: the packet header and the AXI cache (aie-rt xaie_dma_aieml.c
/// _XAieMl_ShimDmaWriteBd).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BdExtended {
    pub enable_packet: BdField,
    pub packet_id: BdField,
    pub axcache: BdField,
    /// The AXI cache attributes every shim BD carries unless asked otherwise.
    pub axcache_default: u32,
}

/// A buffer descriptor's addressing dimensions, innermost first: each a
/// step (in `step_unit_bytes` units, held as value - 1) and a wrap (held as
/// is), but the outermost, which has a step only (its extent is the length
/// over the inner wraps). aie-rt xaie_dma_aieml.c _XAieMl_*DmaWriteBd.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BdDimensions {
    pub step_unit_bytes: u32,
    pub list: Vec<BdDimension>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BdDimension {
    pub step: BdField,
    #[serde(default)]
    pub wrap: Option<BdField>,
}

/// Where a buffer descriptor keeps the fields of a plain 1-D transfer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BdLayout {
    pub words: u32,
    pub address_unit_bytes: u32,
    pub length_unit_bytes: u32,
    /// The address in `address_unit_bytes` units, split low bits first.
    pub address: Vec<BdField>,
    /// In `length_unit_bytes` units.
    pub length: BdField,
    pub next_bd: BdField,
    pub use_next_bd: BdField,
    pub valid: BdField,
    /// Signed.
    pub release_value: BdField,
    pub release_id: BdField,
    pub acquire_enable: BdField,
    /// Signed.
    pub acquire_value: BdField,
    pub acquire_id: BdField,
    /// Shim only.
    #[serde(default)]
    pub burst_length: Option<BurstLength>,
    /// None for a tile kind whose descriptors have no iteration dimension.
    #[serde(default)]
    pub iteration: Option<BdIteration>,
    /// None for a tile kind whose descriptors address linearly only.
    #[serde(default)]
    pub dimensions: Option<BdDimensions>,
    /// Modelled for the shim only, the one kind the TXN builder writes.
    #[serde(default)]
    pub extended: Option<BdExtended>,
}

/// The registers every DMA-bearing tile kind has, as tile-relative offsets.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TileRegisters {
    /// Lock value registers.
    pub locks: RegisterArray,
    pub buffer_descriptors: RegisterArray,
    /// Channel control registers, by channel.
    pub dma_s2mm: RegisterArray,
    pub dma_mm2s: RegisterArray,
    pub start_queue: StartQueue,
    pub channel_control: ChannelControl,
    pub stream_switch: StreamSwitch,
    /// Start of the tile's data memory (none in the shim).
    #[serde(default)]
    pub data_memory: Option<Hex>,
    /// How many lock ids a buffer descriptor can name (own and neighbours').
    pub dma_lock_ids: u32,
    /// The lock id a buffer descriptor uses for the tile's own lock 0.
    pub dma_own_lock_id_base: u32,
    /// The address a buffer descriptor uses for the tile's own memory (none in the shim).
    #[serde(default)]
    pub dma_own_memory_address: Option<Hex>,
    pub bd_layout: BdLayout,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreModule {
    pub control: Hex,
    pub status: Hex,
    /// Core_Control fields.
    pub enable: Field,
    pub reset: Field,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShimMux {
    pub mux: Hex,
    pub demux: Hex,
}

/// The register map: full address = column << column_shift | row << row_shift
/// | tile-relative offset. Counts of locks, buffer descriptors and channels
/// come from the tile sections of the profile.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterMap {
    pub column_shift: u32,
    pub row_shift: u32,
    pub core: TileRegisters,
    pub memory: TileRegisters,
    pub shim: TileRegisters,
    pub core_module: CoreModule,
    pub shim_mux: ShimMux,
    pub sources: Vec<String>,
}

/// The figures of the array simulator's cycle-approximate timing model
/// (docs/array-simulator.md): each is a public fact (`sources`) or a stated
/// assumption (`assumptions`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    pub dma_bytes_per_cycle: u64,
    pub stream_switch_latency_cycles: u64,
    pub lock_handoff_cycles: u64,
    pub core_cycles_per_op: u64,
    pub control_cycles_per_word: u64,
    pub sources: Vec<String>,
    pub assumptions: Vec<String>,
}

/// One device profile, e.g. `amd.xdna.strix_halo.17f0_11`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceProfile {
    pub name: String,
    /// The target the profile belongs to, e.g. `amd.xdna.aie2p`.
    pub target: String,
    pub device: Device,
    pub array: Array,
    pub core_tile: CoreTile,
    pub memory_tile: MemoryTile,
    pub shim_tile: ShimTile,
    pub limits: Limits,
    pub timing: Timing,
    pub registers: RegisterMap,
    pub sources: Vec<String>,
    pub notes: Vec<String>,
}

/// Every profile, in file-name order. A malformed profile file is a build
/// defect the unit tests catch, so it panics here with the file's name.
pub fn profiles() -> &'static [DeviceProfile] {
    static PROFILES: OnceLock<Vec<DeviceProfile>> = OnceLock::new();
    PROFILES.get_or_init(|| {
        PROFILE_FILES
            .iter()
            .map(|(file, text)| {
                serde_json::from_str(text)
                    .unwrap_or_else(|e| panic!("targets/xdna/profiles/{file}: {e}"))
            })
            .collect()
    })
}

/// Each target with the names of its profiles.
pub fn targets() -> BTreeMap<&'static str, Vec<&'static str>> {
    let mut map: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for profile in profiles() {
        map.entry(profile.target.as_str())
            .or_default()
            .push(profile.name.as_str());
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_reads_and_is_consistent() {
        let all = profiles();
        assert_eq!(all.len(), PROFILE_FILES.len());
        for (profile, (file, _)) in all.iter().zip(PROFILE_FILES) {
            assert_eq!(
                format!("{}.json", profile.name),
                *file,
                "a profile is named after its file"
            );
            let a = &profile.array;
            let mut rows: Vec<u32> = [&a.shim_rows, &a.memory_tile_rows, &a.core_rows]
                .into_iter()
                .flatten()
                .copied()
                .collect();
            rows.sort();
            assert_eq!(
                rows,
                (0..a.rows).collect::<Vec<_>>(),
                "{}: every row has one kind",
                profile.name
            );
            assert!(
                !profile.sources.is_empty(),
                "{} names its sources",
                profile.name
            );
        }
    }

    /// Each extended field lies inside its descriptor word apart from every
    /// other field: set alone, the plain fields read none of it back.
    #[test]
    fn extended_fields_are_inside_their_words_and_apart() {
        use crate::xdna::regs::{RegisterError, TileKind};
        for p in profiles() {
            for kind in [TileKind::Shim, TileKind::Memory, TileKind::Core] {
                let layout = &p.tile_registers(kind).bd_layout;
                let Some(e) = &layout.extended else { continue };
                let mut taken = vec![0u32; layout.words as usize];
                for f in [e.enable_packet, e.packet_id, e.axcache] {
                    let inside = f.word < layout.words && f.width > 0 && f.lsb + f.width <= 32;
                    assert!(inside, "{} {kind:?} {f:?}", p.name);
                    let bits = (((1u64 << f.width) - 1) << f.lsb) as u32;
                    let mut words = vec![0; layout.words as usize];
                    words[f.word as usize] = bits;
                    // A plain shim BD carries the default cache attributes.
                    let default = (u64::from(e.axcache_default) << e.axcache.lsb) as u32;
                    let plain = if f.word == e.axcache.word { default } else { 0 };
                    let alone = RegisterError::NotPlain {
                        word: f.word,
                        found: bits,
                        plain,
                    };
                    assert_eq!(p.decode_bd(kind, &words), Err(alone), "{kind:?} {f:?}");
                    assert_eq!(taken[f.word as usize] & bits, 0, "{kind:?} {f:?}");
                    taken[f.word as usize] |= bits;
                }
            }
        }
    }

    #[test]
    fn fields_read_and_place_their_bits() {
        let id = Field { lsb: 8, width: 5 };
        assert_eq!(id.mask(), 0x1F00);
        assert_eq!(id.place(3), 0x300);
        assert_eq!(id.place(0x3F), 0x1F00, "bits beyond the width dropped");
        assert_eq!(id.get(0xFFFF_F3FF), 0x13);
        let whole = Field { lsb: 0, width: 32 };
        assert_eq!((whole.mask(), whole.get(7)), (u32::MAX, 7));
    }

    #[test]
    fn the_xdna_target_has_both_strix_profiles() {
        assert_eq!(
            targets()["amd.xdna.aie2p"],
            ["amd.xdna.strix.17f0_10", "amd.xdna.strix_halo.17f0_11"]
        );
    }
}
