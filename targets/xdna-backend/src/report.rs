//! The realization section of the compile report: per tile, the storage
//! placed in its data memory (authored channel storage, private buffers,
//! what the lowering added), the locks, buffer descriptors and DMA channels
//! used against the profile's budget, the stream-switch connections of the
//! routes through it, and the worker image; then the
//! command stream, the TXN's size, the argument patches and the admission.

use crate::attributes::{int, tile};
use loom_dialects::ir::*;
use loom_targets::xdna::elf::Artifact;
use loom_targets::xdna::regs::TileKind;
use loom_targets::xdna::txn::Txn;
use loom_targets::{DeviceProfile, Tile};
use mlir_sys::MlirOperation;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Per-tile accounting for the report.
#[derive(Default)]
pub(crate) struct TileUse {
    pub storage: BTreeMap<(i64, i64), (String, String)>, // (offset, size) -> (role, name)
    pub locks: Vec<i64>,
    pub bds: Vec<i64>,
    pub s2mm: Vec<i64>,
    pub mm2s: Vec<i64>,
    /// The stream-switch connections routes made in the tile, e.g. `core
    /// [0,3] master North0 <- slave South0` (a tile a route only passes
    /// through has these alone).
    pub switch: Vec<String>,
    pub image: Option<(String, usize)>,
    /// The SPMD strand instance the worker runs, when it runs one: the
    /// authored selection (origins, counts, strides) and its coordinates.
    pub instance: Option<(Vec<i64>, Vec<i64>)>,
    /// The worker's machine code, when it was compiled to it.
    pub machine: Option<MachineCode>,
}

/// What the report says of a worker's machine code.
pub(crate) struct MachineCode {
    pub bytes: usize,
    pub bundles: usize,
    pub nop_bundles: usize,
    pub frame_bytes: u32,
}

/// Record an `aie2p.tile.buffer` in its tile's storage (once per range).
pub(crate) fn place(tiles: &mut BTreeMap<Tile, TileUse>, op: MlirOperation) {
    let role = string_attribute(op, "role").unwrap_or_default();
    tiles.entry(tile(op, "tile")).or_default().storage.insert(
        (int(op, "offset"), int(op, "size")),
        (role, value_name(results(op)[0])),
    );
}

pub(crate) fn report(
    profile: &DeviceProfile,
    tiles: &BTreeMap<Tile, TileUse>,
    command_stream: Vec<Value>,
    txn: &Txn,
    artifact: &Artifact,
) -> Value {
    let per_tile: Vec<Value> = tiles
        .iter()
        .map(|(&at, usage)| {
            let kind = profile.tile_kind(at.column, at.row).unwrap_or(TileKind::Core);
            let budget = profile.budget(kind);
            let bytes = |role: &str| -> i64 {
                usage.storage.iter().filter(|(_, (r, _))| r == role).map(|((_, size), _)| size).sum()
            };
            let end = usage.storage.keys().map(|(offset, size)| offset + size).max().unwrap_or(0);
            let placed: i64 = usage.storage.keys().map(|(_, size)| size).sum();
            let storage: Vec<Value> = usage
                .storage
                .iter()
                .map(|((offset, size), (role, name))| json!({"name": format!("%{name}"), "role": role, "offset": offset, "bytes": size}))
                .collect();
            let distinct = |v: &Vec<i64>| {
                let mut v = v.clone();
                v.sort();
                v.dedup();
                v.len()
            };
            let mut tile = json!({
                "tile": [at.column, at.row],
                "kind": kind.name(),
                "storage": storage,
                "authored_channel_storage_bytes": bytes("channel"),
                "private_bytes": bytes("private"),
                "added_by_lowering": {"stack_bytes": bytes("stack"), "slot_cursor_bytes": bytes("cursor"), "alignment_bytes": end - placed},
                "data_memory": {"used_bytes": end, "available_bytes": budget.memory},
                "locks": {"used": distinct(&usage.locks), "available": budget.locks},
                "buffer_descriptors": {"used": distinct(&usage.bds), "available": budget.bds},
                "dma_channels": {"s2mm_used": distinct(&usage.s2mm), "s2mm_available": budget.s2mm, "mm2s_used": distinct(&usage.mm2s), "mm2s_available": budget.mm2s},
                "stream_switch": usage.switch.iter().filter(|what| what.contains(" master ")).collect::<Vec<_>>(),
            });
            if let Some((selection, coordinates)) = &usage.instance {
                tile["strand_instance"] = json!({
                    "selection": {"origins": &selection[0..2], "counts": &selection[2..4], "strides": &selection[4..6]},
                    "coordinates": coordinates,
                });
            }
            match (&usage.image, &usage.machine) {
                (Some((image, elf_bytes)), Some(m)) => {
                    let budget = profile.core_tile.program_memory_bytes;
                    tile["worker_image"] = json!({
                        "symbol": format!("@{image}"),
                        "form": "machine code (core ELF)",
                        "elf_bytes": elf_bytes,
                        "machine_code_bytes": m.bytes,
                        "program_memory_budget_bytes": budget,
                        "fits_budget": m.bytes as u64 <= budget,
                        "bundles": m.bundles,
                        "nop_bundles": m.nop_bundles,
                        "nop_bundle_share": if m.bundles == 0 { 0.0 } else { m.nop_bundles as f64 / m.bundles as f64 },
                        "spill_frame_bytes": m.frame_bytes,
                        "hardware": artifact.caveat,
                    });
                }
                (Some((image, low_ir_bytes)), None) => {
                    tile["worker_image"] = json!({
                        "symbol": format!("@{image}"),
                        "form": "Low aie2p IR",
                        "low_ir_bytes": low_ir_bytes,
                        "machine_code_bytes": Value::Null,
                        "program_memory_budget_bytes": profile.core_tile.program_memory_bytes,
                        "fits_budget": Value::Null,
                        "why_unknown": "compiled with --worker-code=lowir: the image holds Low aie2p IR",
                    });
                }
                _ => {}
            }
            tile
        })
        .collect();
    json!({
        "profile": profile.name,
        "admission": {
            "admitted": true,
            "device_loadable": artifact.device_loadable,
            "reason": artifact.not_loadable_reason,
            "hardware": artifact.caveat,
        },
        "tiles": per_tile,
        "command_stream": command_stream,
        "txn": {"ops": txn.ops.len(), "bytes": artifact.ctrltext.len()},
        "argument_patches": artifact.patches.iter().map(|p| json!({"argument": p.arg_index, "ctrltext_offset": p.ctrltext_offset, "addend": p.addend})).collect::<Vec<_>>(),
    })
}
