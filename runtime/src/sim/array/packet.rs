//! Packet switching, as far as task-complete tokens use it: a channel's
//! token is a packet its tile's TileControl port sends with the channel's
//! Controller_ID as packet ID, and the firmware receives it only on a shim's
//! master South 0 (docs/research/configuration-path/findings.md Q2; the
//! profile's `packet` fields are aie-rt's, xaie_ss.c
//! _XAie_StrmPktSwMstrPortConfig and _XAie_StrmSlaveSlotConfig).

use super::switch::{neighbour, physical, port_at};
use super::{Array, TokenKey};
use loom_targets::xdna::regs::TileKind;
use loom_targets::xdna::route::{Port, PortKind};
use std::collections::BTreeSet;

/// The firmware's port: a shim's master South 0.
const FIRMWARE: Port = Port {
    kind: PortKind::South,
    index: 0,
};

impl Array {
    /// Whether a token of `key` issued now reaches the firmware; if not,
    /// why not. Every branch of the packet's way (a master may fan out) is
    /// followed switch by switch; a circuit-mode port on the way stops it.
    pub(super) fn token_route(&self, key: TokenKey) -> Result<(), String> {
        let profile = self.profile;
        let switch = |kind: TileKind| &profile.tile_registers(kind).stream_switch;
        let state = self.state(key.tile).ok_or("no such tile in the array")?;
        let control = profile
            .channel_control(state.kind, key.direction, key.channel)
            .map_err(|e| e.to_string())?;
        let id = (profile
            .tile_registers(state.kind)
            .channel_control
            .controller_id)
            .get(state.register(control));
        let tile_control = Port {
            kind: PortKind::TileCtrl,
            index: 0,
        };
        let first = physical(&switch(state.kind).slave_ports, tile_control)
            .ok_or("the tile's switch has no TileControl slave")?;
        let mut work = vec![(key.tile, first)];
        let mut seen = BTreeSet::new();
        let mut dead = Vec::new();
        while let Some((tile, slave)) = work.pop() {
            if !seen.insert((tile, slave)) {
                continue;
            }
            let Some(state) = self.state(tile) else {
                dead.push("the way leaves the array".to_string());
                continue;
            };
            let s = switch(state.kind);
            let p = &s.packet;
            let slave_port = port_at(&s.slave_ports, slave).unwrap_or(Port {
                kind: PortKind::Trace,
                index: slave,
            });
            let config = state.register(s.slave_base.0 + slave * s.stride.0);
            if s.slave_enable.get(config) != 1 || p.slave_packet_enable.get(config) != 1 {
                dead.push(format!(
                    "tile {tile} slave {slave_port} is not enabled in packet mode"
                ));
                continue;
            }
            // The first enabled slot whose ID agrees with the packet's on
            // the mask's bits takes the packet.
            let slot = (0..p.slots)
                .map(|k| {
                    let at = p.slot_base.0 + slave * p.slot_port_stride.0 + k * p.slot_stride.0;
                    state.register(at)
                })
                .find(|&v| {
                    let mask = p.slot_mask.get(v);
                    p.slot_enable.get(v) == 1 && p.slot_id.get(v) & mask == id & mask
                });
            let Some(slot) = slot else {
                dead.push(format!(
                    "tile {tile} slave {slave_port} has no enabled slot for id {id}"
                ));
                continue;
            };
            let (msel, arbiter) = (p.slot_msel.get(slot), p.slot_arbiter.get(slot));
            let masters: Vec<u32> = (0..s.masters)
                .filter(|m| {
                    let v = state.register(s.master_base.0 + m * s.stride.0);
                    s.master_enable.get(v) == 1
                        && p.master_packet_enable.get(v) == 1
                        && p.master_arbiter.get(v) == arbiter
                        && p.master_msel_enable.get(v) >> msel & 1 == 1
                })
                .collect();
            if masters.is_empty() {
                dead.push(format!(
                    "tile {tile} has no packet master on arbiter {arbiter} msel {msel}, which \
                     slave {slave_port} selects"
                ));
            }
            for m in masters {
                let Some(master) = port_at(&s.master_ports, m) else {
                    continue;
                };
                let v = state.register(s.master_base.0 + m * s.stride.0);
                if p.master_drop_header.get(v) == 1 {
                    dead.push(format!(
                        "tile {tile} master {master} drops the packet header"
                    ));
                    continue;
                }
                if state.kind == TileKind::Shim && master == FIRMWARE {
                    return Ok(());
                }
                let next = neighbour(tile, master.kind).and_then(|(next, into)| {
                    let state = self.state(next)?;
                    let port = Port {
                        kind: into,
                        index: master.index,
                    };
                    Some((next, physical(&switch(state.kind).slave_ports, port)?))
                });
                match next {
                    Some(next) => work.push(next),
                    None => dead.push(format!(
                        "tile {tile} master {master} leads away from the firmware"
                    )),
                }
            }
        }
        Err(format!(
            "no packet route from the tile's TileControl port to shim South 0 carries \
             controller id {id} ({})",
            dead.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::array::testing::*;
    use loom_targets::xdna::regs::Direction;
    use loom_targets::xdna::route::Used;
    use loom_targets::xdna::txn::TxnOp;
    use loom_targets::Tile;

    /// Core MM2S 0 sends 16 bytes to shim S2MM 0, which writes argument 1;
    /// the channel of `token_tile` issues a token.
    fn core_to_shim(token_tile: Tile, used: &mut Used) -> Vec<TxnOp> {
        let mut ops: Vec<TxnOp> = settings_using((CORE, 0), (SHIM, 0), used)
            .into_iter()
            .map(|(_, _, op)| op)
            .collect();
        ops.extend([
            bd(CORE, 2, &tile_bd(0x1000, 16, None, None)),
            start(CORE, Direction::Mm2s, 0, 2, token_tile == CORE),
            bd(SHIM, 2, &shim_bd(16)),
            patch(2, 1, 0),
            start(SHIM, Direction::S2mm, 0, 2, token_tile == SHIM),
        ]);
        ops
    }

    #[test]
    fn a_sync_whose_token_has_no_route_fails_at_once() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 16]), (ARG1, vec![0; 16])]);
        let mut array = unloaded();
        let mut ops = vec![load_pdi(0)];
        ops.extend(core_to_shim(SHIM, &mut Used::default()));
        ops.extend([
            controller_id(SHIM, Direction::S2mm, 0, 1),
            sync(SHIM, Direction::S2mm, 0),
        ]);
        let sync_op = ops.len() - 1;
        let error = run(&mut array, &ops, &mut memory).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "TXN op {sync_op}: tile [0, 0] shim.dma.s2mm[0]: SYNC waits for the channel's \
                 task-complete token, which cannot reach the firmware: no packet route from \
                 the tile's TileControl port to shim South 0 carries controller id 1 (tile \
                 [0, 0] slave TileCtrl0 is not enabled in packet mode)"
            )
        );
        // With the back end's shim route the same code completes.
        let mut array = unloaded();
        ops.splice(1..1, shim_token_route(1));
        run(&mut array, &ops, &mut memory).unwrap();
    }

    #[test]
    fn a_token_without_its_controller_id_has_no_route() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 16]), (ARG1, vec![0; 16])]);
        let mut array = array();
        let mut ops = core_to_shim(SHIM, &mut Used::default());
        ops.extend([
            controller_id(SHIM, Direction::S2mm, 0, 0),
            sync(SHIM, Direction::S2mm, 0),
        ]);
        let error = run(&mut array, &ops, &mut memory).unwrap_err();
        assert!(
            error.message.ends_with(
                "carries controller id 0 (tile [0, 0] slave TileCtrl0 has no enabled slot for \
                 id 0)"
            ),
            "{error}"
        );
    }

    #[test]
    fn a_token_sent_before_its_route_exists_is_lost() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 16]), (ARG1, vec![0; 16])]);
        let mut array = unloaded();
        let mut ops = vec![load_pdi(0), controller_id(SHIM, Direction::S2mm, 0, 1)];
        ops.extend(core_to_shim(SHIM, &mut Used::default()));
        run(&mut array, &ops, &mut memory).unwrap();
        // The task completed with no route; writing one afterwards is late.
        let mut late = shim_token_route(1);
        late.push(sync(SHIM, Direction::S2mm, 0));
        let error = run(&mut array, &late, &mut memory).unwrap_err();
        assert_eq!(error.txn_op, Some(3));
        assert!(
            error.message.contains("cannot reach the firmware"),
            "{error}"
        );
    }

    #[test]
    fn core_tokens_reach_the_firmware_switch_by_switch() {
        let mut memory = TestMemory::new(vec![(ARG0, vec![0; 16]), (ARG1, vec![0; 16])]);
        let mut used = Used::default();
        let mut ops = core_to_shim(CORE, &mut used);
        let routes = token_route_ops(&[(CORE, 1)], &mut used);
        ops.splice(0..0, routes.clone());
        ops.extend([
            controller_id(CORE, Direction::Mm2s, 0, 1),
            sync(CORE, Direction::Mm2s, 0),
        ]);
        // Controller_ID is written after the start, before the task runs.
        run(&mut array(), &ops, &mut memory).unwrap();
        // Without the memory tile's part the token stops there.
        let mem_base = address(MEM, 0);
        let broken: Vec<TxnOp> = ops
            .iter()
            .filter(|op| {
                let in_mem = |a: &u32| *a >> 20 == mem_base >> 20;
                !matches!(op, TxnOp::Write { address, .. } if in_mem(address)
                    && routes.contains(op))
            })
            .cloned()
            .collect();
        let error = run(&mut array(), &broken, &mut memory).unwrap_err();
        assert!(
            error
                .message
                .contains("tile [0, 1] slave North1 is not enabled in packet mode"),
            "{error}"
        );
    }
}
