//! Placement and resource checks: every placed allocation gets its offset
//! in its tile's data memory, and each tile's memory, locks, buffer
//! descriptors and DMA channels are checked against the profile; a refusal
//! names the tile, the resource, what the placement needs and what exists.

use super::access::Access;
use super::realization::{refuse, tile_kind, Placed, Plan, Refusal, Way};
use super::ring::chain_descriptors;
use loom_dialects::ir::*;
use loom_targets::Tile;
use mlir_sys::*;
use std::collections::BTreeMap;

/// A `buffer.alloca` of constant size in `tile`, not placed yet.
pub(super) fn placed_alloca(
    op: MlirOperation,
    tile: Tile,
    role: &'static str,
) -> Result<Placed, Refusal> {
    let size = operands(op).last().copied();
    let size = match size.and_then(constant_int) {
        Some(size) if size >= 0 => size,
        Some(size) => {
            return refuse(
                op,
                format!("the allocation size is negative ({size} bytes)"),
            )
        }
        None => {
            return refuse(
                op,
                "the allocation size must be a constant once the pipeline is specialized".into(),
            )
        }
    };
    Ok(Placed {
        op,
        tile,
        role,
        align: int_attribute(op, "alignment").unwrap_or(1),
        offset: 0,
        size,
    })
}

/// `value` rounded up to a multiple of `alignment`, unless that overflows.
fn round_up(value: i64, alignment: i64) -> Option<i64> {
    if alignment <= 1 {
        Some(value)
    } else {
        Some(value.checked_add(alignment - 1)? / alignment * alignment)
    }
}

/// Bytes of one element of the type named `name`.
fn element_bytes(name: &str) -> Option<i64> {
    Some(match name {
        "i1" | "i8" => 1,
        "bf16" | "f16" | "i16" => 2,
        "f32" | "i32" => 4,
        "f64" | "i64" | "index" => 8,
        _ => return None,
    })
}

/// Bytes of a view value: `resolve` gives each dynamic dimension's
/// constant.
pub fn view_bytes(
    op: MlirOperation,
    value: MlirValue,
    resolve: &dyn Fn(MlirValue) -> Option<i64>,
) -> Result<i64, Refusal> {
    let unknown = || {
        refuse(
            op,
            "the view's shape must be constant once the pipeline is specialized".into(),
        )
    };
    let Some((shape, element)) = view_type_shape(value_type(value)) else {
        return unknown();
    };
    let Some(mut bytes) = element_bytes(&element) else {
        return unknown();
    };
    let mut dynamic = value_dims(value).unwrap_or_default().into_iter();
    for dim in shape {
        let extent = match dim {
            Some(extent) => extent as i64,
            None => match dynamic.next().and_then(resolve) {
                Some(extent) => extent,
                None => return unknown(),
            },
        };
        let Some(product) = bytes.checked_mul(extent) else {
            return refuse(op, "the view's size in bytes overflows 64 bits".into());
        };
        bytes = product;
    }
    Ok(bytes)
}

impl Plan<'_> {
    /// Give every placed allocation its offset in its tile (in order,
    /// aligned), and check each tile's data memory.
    pub(super) fn place_memory(&mut self) -> Result<(), Refusal> {
        let mut ends: BTreeMap<Tile, i64> = BTreeMap::new();
        for placed in &mut self.placed {
            let end = ends.entry(placed.tile).or_insert(0);
            let placed_end = round_up(*end, placed.align)
                .and_then(|offset| Some((offset, offset.checked_add(placed.size)?)));
            let Some((offset, placed_end)) = placed_end else {
                let kind = tile_kind(self.profile, placed.tile).map_err(|why| Refusal {
                    at: location(placed.op),
                    message: why,
                })?;
                return refuse(placed.op, format!(
                    "tile {} ({} tile) data memory overflows: this allocation of {} bytes ends past byte {}, the largest offset there is; the tile has {}",
                    placed.tile, kind.name(), placed.size, i64::MAX, self.profile.budget(kind).memory
                ));
            };
            placed.offset = offset;
            *end = placed_end;
        }
        for (&tile, &end) in &ends {
            let kind = tile_kind(self.profile, tile).map_err(|why| Refusal {
                at: location(self.pipeline),
                message: why,
            })?;
            let capacity = self.profile.budget(kind).memory as i64;
            if end > capacity {
                let on_tile: Vec<&Placed> = self.placed.iter().filter(|p| p.tile == tile).collect();
                let sum = |role: &str| {
                    on_tile
                        .iter()
                        .filter(|p| p.role == role)
                        .map(|p| p.size)
                        .sum::<i64>()
                };
                let used: i64 = on_tile.iter().map(|p| p.size).sum();
                let first = on_tile
                    .iter()
                    .find(|p| p.offset + p.size > capacity)
                    .map_or(self.pipeline, |p| p.op);
                return refuse(first, format!(
                    "tile [{}, {}] ({} tile) data memory overflows: the placement needs {end} bytes (channel storage {}, private buffers {}, worker stack {}, slot cursors {}, alignment {}); the tile has {capacity}",
                    tile.column, tile.row, kind.name(), sum("channel"), sum("private"), sum("stack"), sum("cursor"), end - used
                ));
            }
        }
        Ok(())
    }

    /// Locks, buffer descriptors and DMA channels per tile.
    pub(super) fn check_resources(&mut self) -> Result<(), Refusal> {
        let mut locks: BTreeMap<Tile, i64> = BTreeMap::new();
        let mut bound: BTreeMap<Tile, i64> = BTreeMap::new();
        for channel in &mut self.channels {
            let next = locks.entry(channel.tile).or_insert(0);
            channel.free_lock = *next;
            channel.published_lock = *next + 1;
            *next += 2 * channel.lanes;
            *bound.entry(channel.tile).or_insert(0) += 1;
        }
        for (&tile, &used) in &locks {
            let kind = tile_kind(self.profile, tile).expect("placed tiles are in the array");
            let available = self.profile.budget(kind).locks as i64;
            if used > available {
                let at = self
                    .channels
                    .iter()
                    .rev()
                    .find(|c| c.tile == tile)
                    .map_or(self.pipeline, |c| c.bind);
                return refuse(at, format!(
                    "tile [{}, {}] ({} tile) runs out of locks: its {} channels need {used} (a free-slot and a published-record lock for each channel, and for each lane of a striped or joined one); the tile has {available}",
                    tile.column, tile.row, kind.name(), bound[&tile]
                ));
            }
        }
        // Each DMA use: (tile, descriptors up to, channel, S2MM, op).
        let mut uses: Vec<(Tile, i64, i64, bool, MlirOperation)> = Vec::new();
        for t in &self.transfers {
            let tile = self.channels[t.channel].tile;
            let ingress = t.way == Way::Ingress;
            let ring = t.tile_descriptors(&self.channels[t.channel], self.profile);
            uses.push((tile, t.tile_bd + ring, t.tile_channel, ingress, t.copy));
            uses.push((t.shim, t.shim_bd + 1, t.shim_channel, !ingress, t.copy));
        }
        for f in &self.forwards {
            let (from, to) = (&self.channels[f.from], &self.channels[f.to]);
            let mm2s = chain_descriptors(f.records, from, f.mm2s_lanes(from), self.profile);
            let s2mm = chain_descriptors(f.records, to, f.s2mm_lanes(to), self.profile);
            uses.push((from.tile, f.mm2s_bd + mm2s, f.mm2s, false, f.copy));
            uses.push((to.tile, f.s2mm_bd + s2mm, f.s2mm, true, f.copy));
        }
        let mut per_tile: BTreeMap<Tile, (i64, i64, i64, MlirOperation)> = BTreeMap::new();
        for (at, bds, channel, s2mm, op) in uses {
            let entry = per_tile.entry(at).or_insert((0, 0, 0, op));
            entry.0 = entry.0.max(bds);
            if s2mm {
                entry.1 = entry.1.max(channel + 1);
            } else {
                entry.2 = entry.2.max(channel + 1);
            }
            entry.3 = op;
        }
        for (&tile, &(bds, s2mm, mm2s, at)) in &per_tile {
            let kind = tile_kind(self.profile, tile).expect("placed tiles are in the array");
            let b = self.profile.budget(kind);
            let what = [
                ("buffer descriptors", bds, b.bds as i64),
                ("S2MM DMA channels", s2mm, b.s2mm as i64),
                ("MM2S DMA channels", mm2s, b.mm2s as i64),
            ];
            for (resource, used, available) in what {
                if used > available {
                    return refuse(at, format!(
                        "tile [{}, {}] ({} tile) runs out of {resource}: its DMA transfers (the command stream's and the forwards') need {used}; the tile has {available}",
                        tile.column, tile.row, kind.name()
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The layout of `view` (a view value `op` copies): its bytes as byte
/// dimensions from its start, each dynamic dimension's extent from
/// `resolve`.
pub(super) fn view_access(
    op: MlirOperation,
    view: MlirValue,
    resolve: &dyn Fn(MlirValue) -> Option<i64>,
) -> Result<Access, Refusal> {
    let ty = value_type(view);
    let shape = view_type_shape(ty).and_then(|(shape, element)| {
        let mut dynamic = value_dims(view).unwrap_or_default().into_iter();
        let shape = shape
            .into_iter()
            .map(|d| match d {
                Some(n) => Some(n as i64),
                None => dynamic.next().and_then(resolve),
            })
            .collect::<Option<Vec<i64>>>()?;
        Some((shape, element_bytes(&element)?))
    });
    let Some((shape, element)) = shape else {
        return refuse(
            op,
            "the view's shape must be constant once the pipeline is specialized".into(),
        );
    };
    let strides = view_type_strides(ty);
    Ok(Access::of_layout(&shape, strides.as_deref(), element))
}
