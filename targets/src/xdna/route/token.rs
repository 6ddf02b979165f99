//! Task-complete token routes. A DMA task that issues a token makes its
//! tile's TileControl port send a packet whose id is the channel's
//! Controller_ID; the firmware's TCT sync completes only when that packet
//! reaches the shim's South 0 master (mlir-aie
//! test/npu-xrt/core_dmas/dma_configure_task_token/aie.mlir, and the
//! column-control overlay, lib/Dialect/AIE/Transforms/
//! AIEGenerateColumnControlOverlay.cpp: "Only using SHIM dest SOUTH 0 for
//! TCT"). A token with no such route is lost and the sync never returns
//! (docs/research/configuration-path/findings.md, Q2).
//!
//! Per column, each tile that issues tokens gets a controller id (1, 2, ...
//! from the shim up, as mlir-aie's `aie-assign-tile-controller-ids` numbers
//! a column), and one packet-switched tree carries them down: the topmost
//! issuer's TileControl slave to a South master, every switch below passing
//! its North slave (and its own TileControl slave, if it issues tokens) to
//! the same South lane, the shim joining them on South 0. One lane serves
//! the whole column, so it lines up through the memory tile's equal-index
//! rule. Each switch uses its arbiter 0 and msel 0; the header is kept, as
//! mlir-aie keeps it for the TCT route (`keep_pkt_header`).

use super::{put, switch, tile_at, tile_name, RouteError, Side, SwitchSetting, Used};
use crate::profile::{PacketSwitch, PortKind, StreamSwitch};
use crate::{DeviceProfile, Tile};
use std::collections::{BTreeMap, BTreeSet};

/// The largest packet id (5 bits).
const MAX_ID: u32 = 0x1F;
/// The shim master the firmware receives tokens on.
const FIRMWARE_LANE: u32 = 0;

/// Controller ids for the tiles that issue tokens, numbered per column from
/// the shim up.
pub fn controller_ids(issuers: &BTreeSet<Tile>) -> Result<BTreeMap<Tile, u32>, RouteError> {
    let mut ids = BTreeMap::new();
    let mut next: BTreeMap<u32, u32> = BTreeMap::new();
    // Tiles order by column, then row.
    for &tile in issuers {
        let id = next.entry(tile.column).or_insert(1);
        if *id > MAX_ID {
            return Err(RouteError::TooManyTokenSources {
                column: tile.column,
            });
        }
        ids.insert(tile, *id);
        *id += 1;
    }
    Ok(ids)
}

/// One switch's part of a column's tree: the slaves that feed its token
/// master, each with the slot rule `(id, mask)` it passes.
struct Join {
    tile: Tile,
    slaves: Vec<(PortKind, u32, u32, u32)>,
    master: (PortKind, u32),
}

/// The settings that carry every issuer's tokens (`ids`, from
/// [`controller_ids`]) to its column's shim, taking their ports in `used`.
/// On error `used` is unchanged.
pub fn token_routes(
    profile: &DeviceProfile,
    ids: &BTreeMap<Tile, u32>,
    used: &mut Used,
) -> Result<Vec<SwitchSetting>, RouteError> {
    let mut columns: BTreeMap<u32, Vec<(Tile, u32)>> = BTreeMap::new();
    for (&tile, &id) in ids {
        tile_at(profile, tile.column, tile.row)?;
        columns.entry(tile.column).or_default().push((tile, id));
    }
    let mut taken = used.clone();
    let mut settings = Vec::new();
    for (column, issuers) in columns {
        let top = issuers.iter().map(|(t, _)| t.row).max().unwrap_or(0);
        let lane = free_lane(profile, column, top, &taken)?;
        for row in (0..=top).rev() {
            let tile = Tile::new(column, row);
            let mut slaves = Vec::new();
            if row < top {
                // Every token from above: mask 0 matches any id.
                slaves.push((PortKind::North, lane, 0, 0));
            }
            if let Some((_, id)) = issuers.iter().find(|(t, _)| *t == tile) {
                slaves.push((PortKind::TileCtrl, 0, *id, MAX_ID));
            }
            let master = if row == 0 {
                (PortKind::South, FIRMWARE_LANE)
            } else {
                (PortKind::South, lane)
            };
            let join = Join {
                tile,
                slaves,
                master,
            };
            settings.extend(join_settings(profile, &join, &mut taken)?);
        }
    }
    *used = taken;
    Ok(settings)
}

/// The lowest South lane free in every switch from row `top` down to the
/// shim (the master of each tile above the shim, the North slave of each
/// tile below the top).
fn free_lane(
    profile: &DeviceProfile,
    column: u32,
    top: u32,
    used: &Used,
) -> Result<u32, RouteError> {
    if top == 0 {
        return Ok(FIRMWARE_LANE);
    }
    let count = |row: u32, side: Side, kind: PortKind| {
        let s = switch(profile, Tile::new(column, row));
        let ports = match side {
            Side::Master => &s.master_ports,
            Side::Slave => &s.slave_ports,
        };
        ports.get(&kind).copied()
    };
    let lanes = (1..=top)
        .filter_map(|row| count(row, Side::Master, PortKind::South))
        .chain((0..top).filter_map(|row| count(row, Side::Slave, PortKind::North)))
        .map(|range| range.count)
        .min()
        .unwrap_or(0);
    (0..lanes)
        .find(|&lane| {
            (1..=top).all(|row| {
                count(row, Side::Master, PortKind::South).is_some_and(|r| {
                    !used.taken(Tile::new(column, row), Side::Master, r.first + lane)
                })
            }) && (0..top).all(|row| {
                count(row, Side::Slave, PortKind::North).is_some_and(|r| {
                    !used.taken(Tile::new(column, row), Side::Slave, r.first + lane)
                })
            })
        })
        .ok_or(RouteError::NoTokenLane { column, top })
}

/// The physical index of port `index` of `kind` on one side of a switch.
fn physical(
    s: &StreamSwitch,
    tile: Tile,
    side: Side,
    kind: PortKind,
    index: u32,
) -> Result<u32, RouteError> {
    let ports = match side {
        Side::Master => &s.master_ports,
        Side::Slave => &s.slave_ports,
    };
    match ports.get(&kind) {
        Some(range) if index < range.count => Ok(range.first + index),
        _ => Err(RouteError::NoFreePort {
            column: tile.column,
            row: tile.row,
            side,
            kind,
            in_use: 0,
        }),
    }
}

fn join_settings(
    profile: &DeviceProfile,
    join: &Join,
    used: &mut Used,
) -> Result<Vec<SwitchSetting>, RouteError> {
    let tile = join.tile;
    let s = switch(profile, tile);
    let p: &PacketSwitch = &s.packet;
    let name = tile_name(profile, tile);
    let setting = |offset: u32, value: u32, what: String| SwitchSetting {
        column: tile.column,
        row: tile.row,
        offset,
        value,
        mask: u32::MAX,
        what,
    };
    let in_use = |side, physical: u32, kind| {
        if used.taken(tile, side, physical) {
            Err(RouteError::NoFreePort {
                column: tile.column,
                row: tile.row,
                side,
                kind,
                in_use: 1,
            })
        } else {
            Ok(physical)
        }
    };
    let (master_kind, master_index) = join.master;
    let master = in_use(
        Side::Master,
        physical(s, tile, Side::Master, master_kind, master_index)?,
        master_kind,
    )?;
    let mut out = Vec::new();
    let mut slaves = Vec::new();
    for &(kind, index, id, mask) in &join.slaves {
        let slave = in_use(
            Side::Slave,
            physical(s, tile, Side::Slave, kind, index)?,
            kind,
        )?;
        let port = format!("{}{index}", kind.name());
        out.push(setting(
            s.slave_base.0 + slave * s.stride.0,
            put(s.slave_enable, 1) | put(p.slave_packet_enable, 1),
            format!("{name} slave {port} enable, packet mode"),
        ));
        // Slot 0 of the slave; msel 0 and arbiter 0 are the token tree's.
        out.push(setting(
            p.slot_base.0 + slave * p.slot_port_stride.0,
            put(p.slot_id, id) | put(p.slot_mask, mask) | put(p.slot_enable, 1),
            format!(
                "{name} slave {port} slot 0: packet id {id} mask {mask:#x} -> arbiter 0 msel 0"
            ),
        ));
        slaves.push(slave);
    }
    out.push(setting(
        s.master_base.0 + master * s.stride.0,
        put(s.master_enable, 1) | put(p.master_packet_enable, 1) | put(p.master_msel_enable, 1),
        format!(
            "{name} master {}{master_index} <- arbiter 0 msel 0, packet mode, header kept",
            master_kind.name()
        ),
    ));
    used.take(tile, Side::Master, master);
    for slave in slaves {
        used.take(tile, Side::Slave, slave);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles;

    fn strix() -> &'static DeviceProfile {
        &profiles()[0]
    }

    fn words(settings: &[SwitchSetting]) -> Vec<(u32, u32, u32)> {
        settings
            .iter()
            .map(|s| (s.row, s.offset, s.value))
            .collect()
    }

    /// The shim's own tokens: the three writes of findings.md Q2 for id 1,
    /// arbiter 0, msel 0 (aie-rt xaie_ss.c register layouts).
    #[test]
    fn a_shim_token_route_is_tile_control_to_south_0() {
        let ids = controller_ids(&[Tile::new(0, 0)].into()).unwrap();
        assert_eq!(ids[&Tile::new(0, 0)], 1);
        let mut used = Used::default();
        let settings = token_routes(strix(), &ids, &mut used).unwrap();
        assert_eq!(
            words(&settings),
            [
                (0, 0x3F100, 0xC000_0000),
                (0, 0x3F200, 0x011F_0100),
                (0, 0x3F008, 0xC000_0008),
            ]
        );
        // South 0 and TileControl are taken now.
        assert!(token_routes(strix(), &ids, &mut used).is_err());
    }

    /// A core's tokens come down one lane, through the memory tile on the
    /// same index, and join the shim's own on South 0.
    #[test]
    fn a_core_token_route_shares_the_column_tree() {
        let issuers = [Tile::new(0, 0), Tile::new(0, 3)].into();
        let ids = controller_ids(&issuers).unwrap();
        assert_eq!((ids[&Tile::new(0, 0)], ids[&Tile::new(0, 3)]), (1, 2));
        let mut used = Used::default();
        let settings = token_routes(strix(), &ids, &mut used).unwrap();
        let rows: Vec<u32> = settings.iter().map(|s| s.row).collect();
        assert_eq!(rows, [3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0]);
        // Core [0,3]: TileControl (slave 3) slot at 0x3F230, id 2 mask 0x1F;
        // master South 0 (physical 5).
        assert_eq!(
            words(&settings[..3]),
            [
                (3, 0x3F10C, 0xC000_0000),
                (3, 0x3F230, 0x021F_0100),
                (3, 0x3F014, 0xC000_0008),
            ]
        );
        // The memory tile passes North 0 (slave 13) to South 0 (master 7)
        // with a slot that matches every id.
        assert_eq!(
            words(&settings[6..9]),
            [
                (1, 0xB0134, 0xC000_0000),
                (1, 0xB02D0, 0x0000_0100),
                (1, 0xB001C, 0xC000_0008),
            ]
        );
        // The shim: North 0 (slave 14) and its TileControl both to South 0.
        assert_eq!(settings.last().unwrap().offset, 0x3F008);
    }

    #[test]
    fn a_lane_taken_by_a_circuit_moves_the_tree() {
        let mut used = Used::default();
        // A circuit already on master South 0 of the memory tile.
        used.take(Tile::new(0, 1), Side::Master, 7);
        let ids = controller_ids(&[Tile::new(0, 2)].into()).unwrap();
        let settings = token_routes(strix(), &ids, &mut used).unwrap();
        // Core [0,2] master South 1 (physical 6) and on.
        assert_eq!(settings[2].offset, 0x3F018);
    }
}
