//! The stream switches in circuit mode: where a DMA channel's stream goes
//! through the masters and slaves the control code enabled, and the
//! streams themselves (FIFOs of bytes per destination S2MM channel).

use super::dma::ChannelId;
use super::Array;
use crate::sim::memory::Memory;
use loom_targets::xdna::regs::{BufferDescriptor, Direction, TileKind};
use loom_targets::xdna::route::{Port, PortKind, PortRange};
use loom_targets::Tile;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The port of a switch side that physical index `physical` is.
pub(super) fn port_at(ports: &BTreeMap<PortKind, PortRange>, physical: u32) -> Option<Port> {
    ports
        .iter()
        .find(|(_, range)| (range.first..range.first + range.count).contains(&physical))
        .map(|(&kind, range)| Port {
            kind,
            index: physical - range.first,
        })
}

pub(super) fn physical(ports: &BTreeMap<PortKind, PortRange>, port: Port) -> Option<u32> {
    ports
        .get(&port.kind)
        .filter(|range| port.index < range.count)
        .map(|range| range.first + port.index)
}

/// The tile a master port of `kind` leads to, and the slave kind it enters by.
pub(super) fn neighbour(tile: Tile, kind: PortKind) -> Option<(Tile, PortKind)> {
    let Tile { column, row } = tile;
    match kind {
        PortKind::North => Some((Tile::new(column, row + 1), PortKind::South)),
        PortKind::South => row
            .checked_sub(1)
            .map(|r| (Tile::new(column, r), PortKind::North)),
        PortKind::East => Some((Tile::new(column + 1, row), PortKind::West)),
        PortKind::West => column
            .checked_sub(1)
            .map(|c| (Tile::new(c, row), PortKind::East)),
        _ => None,
    }
}

/// Bytes of a stream that arrive together: a descriptor's data reaches its
/// destination in chunks of this size, each when its last byte is sent.
const ARRIVAL_CHUNK: usize = 256;

impl Array {
    /// Send the descriptor's bytes along the channel's route, the last
    /// leaving at modelled cycle `end`; returns `end`.
    pub(super) fn send(
        &mut self,
        id: ChannelId,
        descriptor: &BufferDescriptor,
        memory: &mut dyn Memory,
        end: u64,
    ) -> Result<u64, String> {
        let data = self.read_transfer(id, descriptor, memory)?;
        let latency = self.profile.timing.stream_switch_latency_cycles;
        // The bytes leave at the channel's rate from `start`: each chunk
        // arrives when its last byte has been sent (plus the switches), so
        // the head of a long descriptor is there before its tail.
        let rate = self.profile.timing.dma_bytes_per_cycle.max(1);
        let start = end - (data.len() as u64).div_ceil(rate);
        let chunks: Vec<(usize, u64)> = (0..data.len())
            .step_by(ARRIVAL_CHUNK)
            .map(|at| {
                let bytes = ARRIVAL_CHUNK.min(data.len() - at);
                (bytes, start + ((at + bytes) as u64).div_ceil(rate))
            })
            .collect();
        for (tile, channel) in self.trace(id)? {
            // Every stream switch on the way (one per tile) adds its latency.
            let switches =
                u64::from(id.tile.column.abs_diff(tile.column) + id.tile.row.abs_diff(tile.row))
                    + 1;
            let to = self
                .tiles
                .get_mut(&tile)
                .and_then(|state| state.channel_mut(Direction::S2mm, channel))
                .ok_or_else(|| {
                    format!("the route ends at a channel tile {} does not have", tile)
                })?;
            to.incoming.extend(&data);
            to.arrivals.extend(
                chunks
                    .iter()
                    .map(|&(bytes, sent)| (bytes, sent + switches * latency)),
            );
        }
        Ok(end)
    }

    /// Write the descriptor's length from the channel's stream once it has
    /// arrived: the modelled cycle its last byte arrived; None while it has
    /// not.
    pub(super) fn receive(
        &mut self,
        id: ChannelId,
        descriptor: &BufferDescriptor,
        memory: &mut dyn Memory,
    ) -> Result<Option<u64>, String> {
        let length = descriptor.length as usize;
        let arrived = self.channel_mut(id).map_or(0, |c| c.incoming.len());
        if arrived < length {
            return Ok(None);
        }
        let mut last = 0;
        if let Some(c) = self.channel_mut(id) {
            let mut taken = 0;
            while taken < length {
                let Some((bytes, at)) = c.arrivals.pop_front() else {
                    break;
                };
                last = last.max(at);
                let take = bytes.min(length - taken);
                taken += take;
                if take < bytes {
                    c.arrivals.push_front((bytes - take, at));
                }
            }
        }
        let data: Vec<u8> = match self.channel_mut(id) {
            Some(c) => c.incoming.drain(..length).collect(),
            None => return Err("no such channel".into()),
        };
        self.write_transfer(id, descriptor, memory, data.into_iter())?;
        Ok(Some(last))
    }

    /// The S2MM channels an MM2S channel's data reaches through the
    /// configured circuits.
    fn trace(&self, source: ChannelId) -> Result<Vec<(Tile, u32)>, String> {
        let profile = self.profile;
        let switch = |kind: TileKind| &profile.tile_registers(kind).stream_switch;
        let state = self.state(source.tile).ok_or("no such tile in the array")?;
        let s = switch(state.kind);
        let entry = match &s.shim_dma {
            Some(dma) => {
                let port = dma.mm2s.get(source.channel as usize).ok_or_else(|| {
                    format!(
                        "the shim has no MM2S channel {} in the profile",
                        source.channel
                    )
                })?;
                let selected = port.select.get(state.register(profile.shim_mux()));
                if selected != dma.select_dma {
                    return Err(format!(
                        "the shim mux does not pass MM2S{} into the stream switch: its South{} \
                         field holds {selected}, not DMA ({})",
                        source.channel, port.south, dma.select_dma
                    ));
                }
                Port {
                    kind: PortKind::South,
                    index: port.south,
                }
            }
            None => Port {
                kind: PortKind::Dma,
                index: source.channel,
            },
        };
        let first = physical(&s.slave_ports, entry)
            .ok_or_else(|| format!("the switch has no slave {entry} for the channel"))?;
        let mut work = VecDeque::from([(source.tile, first)]);
        let mut seen = BTreeSet::new();
        let mut ends = Vec::new();
        while let Some((tile, slave)) = work.pop_front() {
            let state = self.state(tile).ok_or("the route leaves the array")?;
            let s = switch(state.kind);
            let slave_port = port_at(&s.slave_ports, slave).ok_or_else(|| {
                format!(
                    "tile {} slave port {slave} has no kind in the profile",
                    tile
                )
            })?;
            if !seen.insert((tile, slave)) {
                return Err(format!(
                    "the route loops back to tile {} slave {slave_port}",
                    tile
                ));
            }
            let packet = |v: u32| s.packet.master_packet_enable.get(v) == 1;
            let masters: Vec<u32> = (0..s.masters)
                .filter(|m| {
                    let v = state.register(s.master_base.0 + m * s.stride.0);
                    s.master_enable.get(v) == 1
                        && !packet(v)
                        && s.master_slave_index.get(v) == slave
                })
                .collect();
            if masters.is_empty() {
                return Err(format!(
                    "tile {} has no master connected to slave {slave_port}: data sent to an \
                     unrouted port",
                    tile
                ));
            }
            let enabled = state.register(s.slave_base.0 + slave * s.stride.0);
            if s.slave_enable.get(enabled) != 1 {
                return Err(format!(
                    "tile {} slave {slave_port} is not enabled: data sent to a disabled port",
                    tile
                ));
            }
            if s.packet.slave_packet_enable.get(enabled) == 1 {
                return Err(format!(
                    "tile {} slave {slave_port} is in packet mode: packet-switched data \
                     streams are not modelled",
                    tile
                ));
            }
            for m in masters {
                let master = port_at(&s.master_ports, m).ok_or_else(|| {
                    format!("tile {} master port {m} has no kind in the profile", tile)
                })?;
                match (master.kind, &s.shim_dma) {
                    (PortKind::Dma, _) => ends.push((tile, master.index)),
                    // A shim's South masters leave the array, to its DMA
                    // only through the demux.
                    (PortKind::South, Some(dma)) => {
                        let Some(channel) = dma.s2mm.iter().position(|p| p.south == master.index)
                        else {
                            return Err(format!(
                                "tile {} sends the data out of master {master} to PL or NoC, \
                                 which is not modelled",
                                tile
                            ));
                        };
                        let selected =
                            (dma.s2mm[channel].select).get(state.register(profile.shim_demux()));
                        if selected != dma.select_dma {
                            return Err(format!(
                                "the shim demux does not pass master {master} to S2MM{channel}: \
                                 its field holds {selected}, not DMA ({})",
                                dma.select_dma
                            ));
                        }
                        ends.push((tile, channel as u32));
                    }
                    (PortKind::North | PortKind::South | PortKind::East | PortKind::West, _) => {
                        let next = neighbour(tile, master.kind)
                            .and_then(|(t, into)| Some((t, into, self.state(t)?)));
                        let Some((next, into, next_state)) = next else {
                            return Err(format!(
                                "tile {} master {master} leads out of the array",
                                tile
                            ));
                        };
                        let port = Port {
                            kind: into,
                            index: master.index,
                        };
                        let slave = physical(&switch(next_state.kind).slave_ports, port)
                            .ok_or_else(|| {
                                format!(
                                    "tile {} master {master} leads to tile {}, which has no \
                                     slave {port}",
                                    tile, next
                                )
                            })?;
                        work.push_back((next, slave));
                    }
                    _ => {
                        return Err(format!(
                            "tile {} passes the data to master {master}; only DMA and the four \
                             directions are modelled",
                            tile
                        ))
                    }
                }
            }
        }
        Ok(ends)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::array::testing::*;
    use loom_targets::xdna::txn::TxnOp;

    #[test]
    fn data_sent_to_an_unrouted_port_is_an_error() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 64])]);
        let mut array = array();
        let s = &strix().registers.core.stream_switch;
        // The route without its master connection in tile [0, 2].
        let mut ops: Vec<TxnOp> = settings((SHIM, 0), (CORE, 0))
            .into_iter()
            .filter(|(tile, offset, _)| !(*tile == Tile::new(0, 2) && *offset < s.slave_base.0))
            .map(|(_, _, op)| op)
            .collect();
        let start_op = ops.len() + 2;
        ops.extend([
            bd(SHIM, 0, &shim_bd(16)),
            patch(0, 0, 0),
            start(SHIM, Direction::Mm2s, 0, 0, true),
            sync(SHIM, Direction::Mm2s, 0),
        ]);
        let error = run(&mut array, &ops, &mut memory).unwrap_err();
        assert_eq!(error.txn_op, Some(start_op));
        assert_eq!(
            error.to_string(),
            format!(
                "TXN op {start_op}: tile [0, 0] shim.dma.mm2s[0] bd[0]: tile [0, 2] has no \
                 master connected to slave South0: data sent to an unrouted port"
            )
        );
    }

    #[test]
    fn shim_dma_needs_its_mux_set() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 64])]);
        let mut array = array();
        let mut ops: Vec<TxnOp> = route_ops((SHIM, 0), (CORE, 0))
            .into_iter()
            .filter(|op| !matches!(op, TxnOp::MaskWrite { .. }))
            .collect();
        ops.extend([
            bd(SHIM, 0, &shim_bd(16)),
            patch(0, 0, 0),
            start(SHIM, Direction::Mm2s, 0, 0, true),
            sync(SHIM, Direction::Mm2s, 0),
        ]);
        let error = run(&mut array, &ops, &mut memory).unwrap_err();
        assert!(
            error
                .message
                .contains("the shim mux does not pass MM2S0 into the stream switch"),
            "{error}"
        );
    }
}
