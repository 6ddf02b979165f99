//! Worker planning: each compute strand becomes a worker on its core, with
//! the channels it reaches directly, its private buffers, its slot cursors
//! and its stack placed in its tile.

use super::cycles::in_cycle;
use super::placement::placed_alloca;
use super::realization::{
    refuse, tile_at, tile_kind, Placed, Plan, Refusal, Worker, CURSOR_BYTES, STACK_ALIGNMENT,
    WORKER_STACK_BYTES,
};
use loom_dialects::ir::*;
use loom_dialects::names;
use loom_targets::xdna::regs::TileKind;
use loom_targets::Tile;
use mlir_sys::*;
use std::collections::BTreeMap;

impl Plan<'_> {
    /// Every worker the strand's selection names must be a tile of the
    /// profile's array, whichever way the strand is realized (a transfer
    /// strand on the command stream keeps its selection too); the refusal
    /// points at the `workers(...)` clause.
    pub(super) fn check_selection(&self, strand: MlirOperation) -> Result<(), Refusal> {
        let (origins, counts, strides) = selection(strand);
        let ([c0, r0], [nc, nr], [sc, sr]) =
            (origins.as_slice(), counts.as_slice(), strides.as_slice())
        else {
            return Ok(());
        };
        // Strides are at least 1, so a selection leaves the array (and the
        // loops end) within the array's size.
        let coordinate = |o: i64, i: i64, s: i64| i.checked_mul(s).and_then(|d| o.checked_add(d));
        for i in 0..*nc {
            for j in 0..*nr {
                let at = (
                    coordinate(*c0, i, *sc).unwrap_or(i64::MAX),
                    coordinate(*r0, j, *sr).unwrap_or(i64::MAX),
                );
                if let Err(why) = tile_at(self.profile, at) {
                    // An expanded SPMD strand names the selection as written.
                    let written = attribute(strand, loom_dialects::instance::SELECTION)
                        .map(dense_i64_values)
                        .filter(|v| v.len() == 6);
                    let (o, n, s) = match &written {
                        Some(v) => (&v[0..2], &v[2..4], &v[4..6]),
                        None => (&origins[..], &counts[..], &strides[..]),
                    };
                    return Err(Refusal {
                        at: clause_location(strand, "loom.workers"),
                        message: format!(
                            "workers({o:?}, {n:?}, {s:?}) selects worker [{}, {}]: {why}",
                            at.0, at.1
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// The strand's single worker.
    pub(super) fn worker_tile(&self, strand: MlirOperation) -> Result<(i64, i64), Refusal> {
        let (origins, counts, _) = selection(strand);
        if origins.len() != 2 || counts != [1, 1] {
            return Err(Refusal {
                at: clause_location(strand, "loom.workers"),
                message: format!("aie2p-lower-pipeline needs an explicit singleton worker selection workers([c, r], [1, 1], [1, 1]); got counts {counts:?} (loom-expand-instances, which loom-compile runs before outlining, makes one strand per worker)"),
            });
        }
        Ok((origins[0], origins[1]))
    }

    pub(super) fn plan_worker(
        &mut self,
        strand: MlirOperation,
        function: MlirOperation,
        at: (i64, i64),
        arguments: Vec<MlirValue>,
    ) -> Result<(), Refusal> {
        let tile = match tile_at(self.profile, at) {
            Err(why) => return refuse(strand, why),
            Ok((tile, TileKind::Core)) => tile,
            Ok((tile, kind)) => {
                return refuse(
                    strand,
                    format!(
                        "the strand moves none of the caller's buffers, so it is not the command stream, and does more than forward records between channels, so it is not DMA: it runs as tile code and needs a core; its worker [{}, {}] is a {} tile",
                        tile.column,
                        tile.row,
                        kind.name()
                    ),
                )
            }
        };
        let mut channels = BTreeMap::new();
        for (i, &value) in arguments.iter().enumerate() {
            let Some(channel) = self.channel_of(value) else {
                continue;
            };
            let storage = self.channels[channel].tile;
            if !reaches(tile, storage) || tile_kind(self.profile, storage) != Ok(TileKind::Core) {
                return refuse(strand, format!(
                    "the strand's core [{}, {}] cannot access channel %{}'s storage in tile [{}, {}] directly: a core reaches the data memory of its own tile and of its south, west and north core-tile neighbours only (a strand that only forwards records between channels runs as DMA between any two tiles)",
                    tile.column, tile.row, value_name(value), storage.column, storage.row
                ));
            }
            channels.insert(i, channel);
        }
        refuse_strided_views(function)?;
        let mut private = Vec::new();
        for op in walk(function) {
            if op_name(op) == names::buffer::ALLOCA {
                self.placed.push(placed_alloca(op, tile, "private")?);
                private.push((op, self.placed.len() - 1));
            }
        }
        // Endpoints admitted repeatedly rotate through their slots with a
        // cursor the worker keeps in its tile (reset when it starts).
        let entry = body(function);
        let params = loom_dialects::ir::arguments(entry);
        let mut admissions: BTreeMap<(usize, bool), (usize, bool)> = BTreeMap::new();
        for op in walk(function) {
            let name = op_name(op);
            if name != names::channel::RESERVE && name != names::channel::ACQUIRE {
                continue;
            }
            let Some(&channel) = params
                .iter()
                .position(|&p| same_value(p, operands(op)[0]))
                .and_then(|i| channels.get(&i))
            else {
                return refuse(op, "the channel must be a parameter of the strand".into());
            };
            let looped = in_cycle(parent_block(op));
            let seen = admissions
                .entry((channel, name == names::channel::RESERVE))
                .or_insert((0, false));
            seen.0 += 1;
            seen.1 |= looped;
        }
        let mut cursors = BTreeMap::new();
        for (&key, &(count, looped)) in &admissions {
            if (count > 1 || looped) && self.channels[key.0].capacity > 1 {
                self.placed.push(Placed {
                    op: function,
                    tile,
                    role: "cursor",
                    align: CURSOR_BYTES,
                    offset: 0,
                    size: CURSOR_BYTES,
                });
                cursors.insert(key, self.placed.len() - 1);
            }
        }
        self.placed.push(Placed {
            op: function,
            tile,
            role: "stack",
            align: STACK_ALIGNMENT,
            offset: 0,
            size: WORKER_STACK_BYTES,
        });
        self.workers.push(Worker {
            strand,
            function,
            tile,
            arguments,
            channels,
            private,
            cursors,
            endpoints: admissions.keys().copied().collect(),
        });
        Ok(())
    }
}

/// Tile code addresses row-major views only: the code generator and the
/// cores compute an element's address from the shape. A `view.reinterpret`
/// between row-major views is a reshape of the same bytes.
fn refuse_strided_views(function: MlirOperation) -> Result<(), Refusal> {
    for op in walk(function) {
        // A row-major view of the same bytes is another buffer.view of
        // them (rewrite::reshape_reinterprets); anything else needs a layout.
        if op_name(op) == names::view::REINTERPRET && operands(op).len() != 1 {
            return refuse(
                op,
                "tile code reinterprets a view only into a view of static shape".into(),
            );
        }
        for value in results(op) {
            if view_type_strides(value_type(value)).is_some() {
                return refuse(op, format!(
                    "tile code addresses row-major views only, and this {} has a strided layout; strided layouts are realized by the descriptors of the command stream's transfers",
                    type_text(value_type(value)).trim_start_matches("!view.")
                ));
            }
        }
    }
    Ok(())
}

/// A strand's `workers(origins, counts, strides)`.
fn selection(strand: MlirOperation) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    let list = |name| {
        attribute(strand, name)
            .map(dense_i64_values)
            .unwrap_or_default()
    };
    (list("origins"), list("counts"), list("strides"))
}

/// Whether a core at `core` reaches `storage`'s data memory directly: its
/// own tile, south, west and north (facts: the core's view of data memory).
fn reaches(core: Tile, storage: Tile) -> bool {
    let (c, r) = (core.column, core.row);
    storage == core
        || (storage.column == c && (storage.row + 1 == r || storage.row == r + 1))
        || (storage.row == r && storage.column + 1 == c)
}
