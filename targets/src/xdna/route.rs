//! Circuit-switched stream routes from an MM2S DMA channel to an S2MM DMA
//! channel: the stream switch register writes, and the shim mux/demux
//! selections, that join them. Port kinds, indices and bits all come from the
//! profile's `stream_switch` sections.
//!
//! The route is deterministic. Within one column it goes straight north or
//! south, through the memory tile (as mlir-aie routes shim DMA to cores).
//! Across columns it runs first along the source row if that row's switches
//! have East and West ports, else along the destination row, else along the
//! nearest row that has them (the lower on a tie; memory tiles have none),
//! then north or south to the destination. Every link takes the lowest index
//! that is free and that the switches' equal-index rules allow along the whole
//! route (a memory tile passes South k on only to North k).
//!
//! A second route from the same MM2S channel is a broadcast: it branches off
//! the earlier routes' circuit where its path leaves theirs (mlir-aie's flows
//! from one source share their switches the same way).
//!
//! A route within one tile is a single connection of its switch: aie-rt and
//! mlir-aie join DMA to DMA only at equal channel numbers, so core or memory
//! tile MM2S k to S2MM k is valid and other pairs are `RouteError::Illegal`;
//! a shim's South ports may loop back, so any shim pair is valid.

use super::regs::{Direction, Field, StreamSwitch, TileKind};
use super::txn::TxnOp;
pub use crate::profile::{PortKind, PortRange, ShimDma, ShimDmaPort};
use crate::{DeviceProfile, Tile};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// A DMA channel of the tile at (column, row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Endpoint {
    pub column: u32,
    pub row: u32,
    pub channel: u32,
}

/// A stream switch port: its kind and its index among the ports of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Port {
    pub kind: PortKind,
    pub index: u32,
}

impl fmt::Display for Port {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.kind.name(), self.index)
    }
}

/// Data leaves a switch through a master port and enters through a slave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    Master,
    Slave,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Master => "master",
            Side::Slave => "slave",
        }
    }
}

/// One register write of a tile. Stream switch ports are written whole
/// (`mask` all ones); a shim mux or demux selection writes only its field, as
/// aie-rt does, so the selections of other channels stay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchSetting {
    pub column: u32,
    pub row: u32,
    /// Tile-relative.
    pub offset: u32,
    pub value: u32,
    pub mask: u32,
    /// e.g. `core [0,3] master DMA0 <- slave South0`.
    pub what: String,
}

impl SwitchSetting {
    /// The TXN op that makes this setting: a WRITE, or a MASKWRITE of the
    /// field when only part of the register is this route's.
    pub fn txn_op(&self, profile: &DeviceProfile) -> TxnOp {
        let address = profile.tile_address(self.column, self.row, self.offset) as u32;
        if self.mask == u32::MAX {
            TxnOp::Write {
                address,
                value: self.value,
            }
        } else {
            TxnOp::MaskWrite {
                address,
                value: self.value,
                mask: self.mask,
            }
        }
    }
}

/// The physical stream switch ports earlier routes took, by tile, so that
/// routes sharing tiles get distinct ports; and the circuits from each
/// source, so that another route from it branches off them (a broadcast).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Used {
    ports: BTreeSet<(u32, u32, Side, u32)>,
    /// Per MM2S source (column, row, channel), the path to each of its
    /// destinations.
    trees: BTreeMap<(u32, u32, u32), Vec<Vec<Passage>>>,
}

/// A route's way through one tile: the slave port it enters by and the
/// master it leaves by (each with its physical index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Passage {
    tile: Tile,
    slave: (Port, u32),
    master: (Port, u32),
}

impl Used {
    fn taken(&self, tile: Tile, side: Side, physical: u32) -> bool {
        self.ports
            .contains(&(tile.column, tile.row, side, physical))
    }

    fn in_use(&self, tile: Tile, side: Side, range: PortRange) -> u32 {
        let ports = range.first..range.first + range.count;
        ports.filter(|&p| self.taken(tile, side, p)).count() as u32
    }

    fn take(&mut self, tile: Tile, side: Side, physical: u32) {
        self.ports.insert((tile.column, tile.row, side, physical));
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteError {
    OutsideArray {
        column: u32,
        row: u32,
    },
    NoSuchChannel {
        column: u32,
        row: u32,
        direction: Direction,
        channel: u32,
        channels: u32,
    },
    /// The channel's own switch port already carries a route.
    ChannelInUse {
        column: u32,
        row: u32,
        direction: Direction,
        channel: u32,
        side: Side,
        port: Port,
    },
    /// The switch joins these two ports only at equal indices.
    Illegal {
        column: u32,
        row: u32,
        slave: Port,
        master: Port,
    },
    /// Every port of the kind a link needs is taken (or the tile has none).
    NoFreePort {
        column: u32,
        row: u32,
        side: Side,
        kind: PortKind,
        in_use: u32,
    },
    /// Every link has free ports, but none on this link lines up with the
    /// rest of the route under the equal-index rules.
    Misaligned {
        from: (u32, u32),
        to: (u32, u32),
    },
    /// No row has the East and West ports to cross between the columns.
    NoCrossing {
        from_column: u32,
        to_column: u32,
    },
    /// More tiles of one column issue tokens than packet ids can tell apart.
    TooManyTokenSources {
        column: u32,
    },
    /// No South lane is free from the topmost token issuer down to the shim.
    NoTokenLane {
        column: u32,
        top: u32,
    },
}

fn upper(direction: Direction) -> &'static str {
    match direction {
        Direction::S2mm => "S2MM",
        Direction::Mm2s => "MM2S",
    }
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteError::OutsideArray { column, row } => {
                write!(f, "tile [{column}, {row}] is outside the array")
            }
            RouteError::NoSuchChannel {
                column,
                row,
                direction,
                channel,
                channels,
            } => write!(
                f,
                "tile [{column}, {row}] has no {} channel {channel} ({channels} channels)",
                upper(*direction)
            ),
            RouteError::ChannelInUse {
                column,
                row,
                direction,
                channel,
                side,
                port,
            } => write!(
                f,
                "tile [{column}, {row}] {} channel {channel} already carries a route \
                 ({} {port} in use)",
                upper(*direction),
                side.name()
            ),
            RouteError::Illegal {
                column,
                row,
                slave,
                master,
            } => write!(
                f,
                "tile [{column}, {row}] cannot join slave {slave} to master {master}: \
                 its switch joins them only at equal indices"
            ),
            RouteError::NoFreePort {
                column,
                row,
                side,
                kind,
                in_use: 0,
            } => write!(
                f,
                "tile [{column}, {row}] has no {} {} port",
                kind.name(),
                side.name()
            ),
            RouteError::NoFreePort {
                column,
                row,
                side,
                kind,
                in_use,
            } => write!(
                f,
                "tile [{column}, {row}] has no free {} {} port: {in_use} in use",
                kind.name(),
                side.name()
            ),
            RouteError::Misaligned { from, to } => write!(
                f,
                "no free port on the link from tile [{}, {}] to tile [{}, {}] lines up with \
                 the rest of the route (some switches pass a port on only at the same index)",
                from.0, from.1, to.0, to.1
            ),
            RouteError::NoCrossing {
                from_column,
                to_column,
            } => write!(
                f,
                "no row has the East and West ports to cross from column {from_column} \
                 to column {to_column}"
            ),
            RouteError::TooManyTokenSources { column } => write!(
                f,
                "more than 31 tiles of column {column} issue task-complete tokens; \
                 packet ids tell 31 apart"
            ),
            RouteError::NoTokenLane { column, top } => write!(
                f,
                "no South lane is free in every switch from tile [{column}, {top}] down to \
                 the shim to carry its task-complete tokens to the firmware"
            ),
        }
    }
}

impl std::error::Error for RouteError {}

/// The tile at `column`, `row`, if the array has one there.
fn tile_at(profile: &DeviceProfile, column: u32, row: u32) -> Result<Tile, RouteError> {
    match profile.tile_kind(column, row) {
        Some(_) => Ok(Tile::new(column, row)),
        None => Err(RouteError::OutsideArray { column, row }),
    }
}

/// The kind of a tile of the array (every tile here passed `tile_at`).
fn kind(profile: &DeviceProfile, tile: Tile) -> TileKind {
    profile
        .tile_kind(tile.column, tile.row)
        .expect("a routed tile is inside the array")
}

/// `core [c,r]`, as a setting's description names its tile.
fn tile_name(profile: &DeviceProfile, tile: Tile) -> String {
    let prefix = kind(profile, tile).prefix();
    format!("{prefix} [{},{}]", tile.column, tile.row)
}

fn switch(profile: &DeviceProfile, tile: Tile) -> &StreamSwitch {
    &profile.tile_registers(kind(profile, tile)).stream_switch
}

/// Whether the tile's switch joins a slave of one kind to a master of the
/// other only at equal indices.
fn joins(profile: &DeviceProfile, tile: Tile, slave: PortKind, master: PortKind) -> bool {
    switch(profile, tile).same_index.contains(&(slave, master))
}

fn bits(field: Field) -> u32 {
    let ones = u32::MAX
        .checked_shr(32u32.saturating_sub(field.width))
        .unwrap_or(0);
    ones.checked_shl(field.lsb).unwrap_or(0)
}

fn put(field: Field, value: u32) -> u32 {
    value.checked_shl(field.lsb).unwrap_or(0) & bits(field)
}

/// A shim mux or demux field and the value that selects DMA.
#[derive(Clone, Copy)]
struct Select {
    field: Field,
    dma: u32,
}

/// An endpoint's channel as a port of its tile's switch.
struct End {
    tile: Tile,
    direction: Direction,
    channel: u32,
    port: Port,
    physical: u32,
    /// Shim only: the mux (MM2S) or demux (S2MM) field to set.
    select: Option<Select>,
}

impl End {
    /// An MM2S channel feeds a slave port; an S2MM channel is fed by a master.
    fn side(&self) -> Side {
        match self.direction {
            Direction::Mm2s => Side::Slave,
            Direction::S2mm => Side::Master,
        }
    }

    fn mux_setting(&self, profile: &DeviceProfile, select: Select) -> SwitchSetting {
        let dma = format!("DMA {}{}", upper(self.direction), self.channel);
        let (offset, what) = match self.direction {
            Direction::Mm2s => (profile.shim_mux(), format!("mux {} <- {dma}", self.port)),
            Direction::S2mm => (
                profile.shim_demux(),
                format!("demux {} -> {dma}", self.port),
            ),
        };
        SwitchSetting {
            column: self.tile.column,
            row: self.tile.row,
            offset,
            value: put(select.field, select.dma),
            mask: bits(select.field),
            what: format!("{} {what}", tile_name(profile, self.tile)),
        }
    }
}

fn resolve(
    profile: &DeviceProfile,
    endpoint: Endpoint,
    direction: Direction,
) -> Result<End, RouteError> {
    let tile = tile_at(profile, endpoint.column, endpoint.row)?;
    let switch = switch(profile, tile);
    let ports = match direction {
        Direction::Mm2s => &switch.slave_ports,
        Direction::S2mm => &switch.master_ports,
    };
    let channel = endpoint.channel;
    let no_channel = |channels: u32| RouteError::NoSuchChannel {
        column: tile.column,
        row: tile.row,
        direction,
        channel,
        channels,
    };
    // A shim DMA reaches its switch on South ports through the mux/demux;
    // other tiles' DMA channels have switch ports of their own.
    let (port, select, channels) = match &switch.shim_dma {
        Some(dma) => {
            let list = match direction {
                Direction::Mm2s => &dma.mm2s,
                Direction::S2mm => &dma.s2mm,
            };
            let channels = list.len() as u32;
            let entry = list
                .get(channel as usize)
                .ok_or_else(|| no_channel(channels))?;
            let port = Port {
                kind: PortKind::South,
                index: entry.south,
            };
            let select = Select {
                field: entry.select,
                dma: dma.select_dma,
            };
            (port, Some(select), channels)
        }
        None => {
            let channels = ports.get(&PortKind::Dma).map_or(0, |range| range.count);
            let port = Port {
                kind: PortKind::Dma,
                index: channel,
            };
            (port, None, channels)
        }
    };
    let physical = ports
        .get(&port.kind)
        .filter(|range| port.index < range.count)
        .map(|range| range.first + port.index)
        .ok_or_else(|| no_channel(channels))?;
    Ok(End {
        tile,
        direction,
        channel,
        port,
        physical,
        select,
    })
}

/// The row a route between columns crosses in: see the module comment.
fn crossing_row(profile: &DeviceProfile, from: Tile, to: Tile) -> Result<u32, RouteError> {
    let (out, into) = if to.column > from.column {
        (PortKind::East, PortKind::West)
    } else {
        (PortKind::West, PortKind::East)
    };
    let mut rows: Vec<u32> = (0..profile.array.rows).collect();
    rows.sort_by_key(|&row| (row != from.row, row != to.row, row.abs_diff(from.row), row));
    let has = |ports: &BTreeMap<PortKind, PortRange>, kind: PortKind| {
        ports.get(&kind).is_some_and(|range| range.count > 0)
    };
    rows.into_iter()
        .find(|&row| {
            profile.tile_kind(from.column, row).is_some_and(|kind| {
                let s = &profile.tile_registers(kind).stream_switch;
                has(&s.master_ports, out) && has(&s.slave_ports, into)
            })
        })
        .ok_or(RouteError::NoCrossing {
            from_column: from.column,
            to_column: to.column,
        })
}

fn step(from: u32, to: u32) -> u32 {
    match from.cmp(&to) {
        std::cmp::Ordering::Less => from + 1,
        std::cmp::Ordering::Equal => from,
        std::cmp::Ordering::Greater => from - 1,
    }
}

/// The tiles the route passes, source first: vertical, horizontal, vertical.
fn tiles(profile: &DeviceProfile, from: Tile, to: Tile) -> Result<Vec<Tile>, RouteError> {
    let row = if from.column == to.column {
        to.row
    } else {
        crossing_row(profile, from, to)?
    };
    let mut at = from;
    let mut tiles = vec![from];
    for (column, row) in [(from.column, row), (to.column, row), (to.column, to.row)] {
        while (at.column, at.row) != (column, row) {
            at = tile_at(profile, step(at.column, column), step(at.row, row))?;
            tiles.push(at);
        }
    }
    Ok(tiles)
}

/// A link between neighbouring switches: master `out` k of `from` feeds slave
/// `into` k of `to`.
struct Hop {
    from: Tile,
    to: Tile,
    out: PortKind,
    into: PortKind,
    master: PortRange,
    slave: PortRange,
}

impl Hop {
    fn new(profile: &DeviceProfile, from: Tile, to: Tile) -> Hop {
        let (out, into) = if to.row > from.row {
            (PortKind::North, PortKind::South)
        } else if to.row < from.row {
            (PortKind::South, PortKind::North)
        } else if to.column > from.column {
            (PortKind::East, PortKind::West)
        } else {
            (PortKind::West, PortKind::East)
        };
        let none = PortRange { first: 0, count: 0 };
        Hop {
            from,
            to,
            out,
            into,
            master: switch(profile, from)
                .master_ports
                .get(&out)
                .copied()
                .unwrap_or(none),
            slave: switch(profile, to)
                .slave_ports
                .get(&into)
                .copied()
                .unwrap_or(none),
        }
    }

    fn indices(&self) -> std::ops::Range<u32> {
        0..self.master.count.min(self.slave.count)
    }

    fn free(&self, used: &Used, index: u32) -> bool {
        !used.taken(self.from, Side::Master, self.master.first + index)
            && !used.taken(self.to, Side::Slave, self.slave.first + index)
    }

    /// Names the side with no free port, if either has none.
    fn exhausted(&self, used: &Used) -> Option<RouteError> {
        let sides = [
            (self.from, Side::Master, self.out, self.master),
            (self.to, Side::Slave, self.into, self.slave),
        ];
        sides.into_iter().find_map(|(tile, side, kind, range)| {
            let free = |i| !used.taken(tile, side, range.first + i);
            (!self.indices().any(free)).then(|| RouteError::NoFreePort {
                column: tile.column,
                row: tile.row,
                side,
                kind,
                in_use: used.in_use(tile, side, range),
            })
        })
    }
}

/// The index of every hop: the lowest free one the equal-index rules allow,
/// found with a backward pass so an early choice never strands a later hop.
fn choose(
    profile: &DeviceProfile,
    source: &End,
    destination: &End,
    hops: &[Hop],
    used: &Used,
) -> Result<Vec<u32>, RouteError> {
    if let Some(error) = hops.iter().find_map(|hop| hop.exhausted(used)) {
        return Err(error);
    }
    // joined[i]: tile i passes the index it receives on to its next hop.
    let n = hops.len();
    let joined: Vec<bool> = (0..=n)
        .map(|i| {
            let (tile, slave) = match i.checked_sub(1).and_then(|h| hops.get(h)) {
                Some(hop) => (hop.to, hop.into),
                None => (source.tile, source.port.kind),
            };
            let master = hops.get(i).map_or(destination.port.kind, |hop| hop.out);
            joins(profile, tile, slave, master)
        })
        .collect();
    if n == 0 && joined[0] && source.port.index != destination.port.index {
        return Err(RouteError::Illegal {
            column: source.tile.column,
            row: source.tile.row,
            slave: source.port,
            master: destination.port,
        });
    }
    let first_ok = |index: u32| !joined[0] || index == source.port.index;
    let last_ok = |index: u32| !joined[n] || index == destination.port.index;

    // ok[h]: the indices of hop h from which the rest of the route completes.
    let mut ok: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (h, hop) in hops.iter().enumerate().rev() {
        let completes = |index: u32| match ok.get(h + 1) {
            None => last_ok(index),
            Some(next) if joined[h + 1] => next.contains(&index),
            Some(next) => !next.is_empty(),
        };
        let indices: Vec<u32> = hop
            .indices()
            .filter(|&i| hop.free(used, i) && (h > 0 || first_ok(i)) && completes(i))
            .collect();
        if indices.is_empty() {
            return Err(RouteError::Misaligned {
                from: (hop.from.column, hop.from.row),
                to: (hop.to.column, hop.to.row),
            });
        }
        ok[h] = indices;
    }
    let mut chosen: Vec<u32> = Vec::with_capacity(n);
    for (h, indices) in ok.iter().enumerate() {
        // Every set is non-empty (checked above) and a joined tile's index
        // is in its set by construction.
        let index = match chosen.last() {
            Some(&previous) if joined[h] => previous,
            _ => indices[0],
        };
        chosen.push(index);
    }
    Ok(chosen)
}

/// The settings that join `source` (an MM2S channel) to `destination` (an
/// S2MM channel) by a circuit through the stream switches, taking its ports
/// in `used`. A source that already has routes broadcasts: the new route
/// follows the longest stretch of an earlier one from the source and
/// branches off at its last shared tile with a new master port on the slave
/// that route enters by (a switch sends a slave's data to every master that
/// selects it). On error `used` is unchanged.
pub fn route(
    profile: &DeviceProfile,
    source: Endpoint,
    destination: Endpoint,
    used: &mut Used,
) -> Result<Vec<SwitchSetting>, RouteError> {
    let key = (source.column, source.row, source.channel);
    let source = resolve(profile, source, Direction::Mm2s)?;
    let destination = resolve(profile, destination, Direction::S2mm)?;
    let earlier = used.trees.get(&key).cloned().unwrap_or_default();
    let ends: &[&End] = if earlier.is_empty() {
        &[&source, &destination]
    } else {
        &[&destination]
    };
    for end in ends {
        if used.taken(end.tile, end.side(), end.physical) {
            return Err(RouteError::ChannelInUse {
                column: end.tile.column,
                row: end.tile.row,
                direction: end.direction,
                channel: end.channel,
                side: end.side(),
                port: end.port,
            });
        }
    }
    let tiles = tiles(profile, source.tile, destination.tile)?;
    // The earlier path that shares the most tiles from the source, and how
    // many (at least the source's own).
    let shared = earlier
        .iter()
        .map(|path| {
            let n = path
                .iter()
                .zip(&tiles)
                .take_while(|(p, &t)| p.tile == t)
                .count();
            (n, path)
        })
        .max_by_key(|&(n, _)| n);
    // The branch starts at the last shared tile, entering by the earlier
    // route's slave there.
    let (start, entry, prefix) = match shared {
        Some((n, path)) => {
            let at = &path[n - 1];
            let entry = End {
                tile: at.tile,
                direction: Direction::Mm2s,
                channel: source.channel,
                port: at.slave.0,
                physical: at.slave.1,
                select: None,
            };
            (n - 1, entry, path[..n - 1].to_vec())
        }
        None => (0, source, Vec::new()),
    };
    let tiles = &tiles[start..];
    let hops: Vec<Hop> = tiles
        .windows(2)
        .map(|pair| Hop::new(profile, pair[0], pair[1]))
        .collect();
    let chosen = choose(profile, &entry, &destination, &hops, used)?;

    // Each tile joins the slave the route enters by to the master it leaves by.
    let enters = std::iter::once((entry.port, entry.physical)).chain(hops.iter().zip(&chosen).map(
        |(hop, &i)| {
            let port = Port {
                kind: hop.into,
                index: i,
            };
            (port, hop.slave.first + i)
        },
    ));
    let leaves = hops
        .iter()
        .zip(&chosen)
        .map(|(hop, &i)| {
            let port = Port {
                kind: hop.out,
                index: i,
            };
            (port, hop.master.first + i)
        })
        .chain(std::iter::once((destination.port, destination.physical)));

    let mut settings = Vec::new();
    if let (Some(select), None) = (entry.select, shared) {
        settings.push(entry.mux_setting(profile, select));
    }
    let mut path = prefix;
    for (k, ((tile, slave), master)) in tiles.iter().zip(enters).zip(leaves).enumerate() {
        let s = switch(profile, *tile);
        let name = tile_name(profile, *tile);
        let (slave, slave_physical) = slave;
        let (master, master_physical) = master;
        settings.push(SwitchSetting {
            column: tile.column,
            row: tile.row,
            offset: s.master_base.0 + master_physical * s.stride.0,
            value: put(s.master_enable, 1) | put(s.master_slave_index, slave_physical),
            mask: u32::MAX,
            what: format!("{name} master {master} <- slave {slave}"),
        });
        // A branch's first slave carries the earlier route already.
        if k > 0 || shared.is_none() {
            settings.push(SwitchSetting {
                column: tile.column,
                row: tile.row,
                offset: s.slave_base.0 + slave_physical * s.stride.0,
                value: put(s.slave_enable, 1),
                mask: u32::MAX,
                what: format!("{name} slave {slave} enable"),
            });
        }
        used.take(*tile, Side::Master, master_physical);
        used.take(*tile, Side::Slave, slave_physical);
        path.push(Passage {
            tile: *tile,
            slave: (slave, slave_physical),
            master: (master, master_physical),
        });
    }
    if let Some(select) = destination.select {
        settings.push(destination.mux_setting(profile, select));
    }
    used.trees.entry(key).or_default().push(path);
    Ok(settings)
}

mod token;
pub use token::{controller_ids, token_routes};

#[cfg(test)]
mod tests;
