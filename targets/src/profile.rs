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

    #[test]
    fn the_xdna_target_has_both_strix_profiles() {
        assert_eq!(
            targets()["amd.xdna.aie2p"],
            ["amd.xdna.strix.17f0_10", "amd.xdna.strix_halo.17f0_11"]
        );
    }
}
