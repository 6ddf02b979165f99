//! The register files: TXN writes and reads by full address, decoded by the
//! profile's register map into lock values, buffer descriptors, start
//! queues, stream switch settings and core enables; DDR_PATCH of shim
//! buffer descriptors.

use super::switch::port_at;
use super::Array;
use crate::sim::error::SimError;
use loom_targets::xdna::regs::{name_of, Field, Register, StreamSwitch, TileKind};
use loom_targets::Tile;

fn ones(width: u32) -> u64 {
    1u64.checked_shl(width).map_or(u64::MAX, |bit| bit - 1)
}

/// Check a master setting: a circuit (enable, slave index) that joins
/// ports the switch may join, or a packet-mode master (enable, packet
/// enable, drop header, msel mask, arbiter).
fn master_setting(s: &StreamSwitch, master: u32, merged: u32) -> Result<(), String> {
    let enable = s.master_enable.mask();
    let p = &s.packet;
    if p.master_packet_enable.get(merged) == 1 {
        let fields = [
            p.master_packet_enable,
            p.master_drop_header,
            p.master_msel_enable,
            p.master_arbiter,
        ];
        let fields = fields.iter().fold(enable, |m, &f| m | f.mask());
        let extra = merged & !fields;
        if extra != 0 {
            return Err(format!(
                "packet master setting {merged:#x} has bits {extra:#x} set outside its fields"
            ));
        }
        return Ok(());
    }
    let extra = merged & !(enable | s.master_slave_index.mask());
    if extra != 0 {
        return Err(format!(
            "master setting {merged:#x} has bits {extra:#x} set, which no circuit or packet \
             setting the model follows has"
        ));
    }
    if s.master_enable.get(merged) != 1 {
        return Ok(());
    }
    let slave = s.master_slave_index.get(merged);
    if slave >= s.slaves {
        return Err(format!(
            "selects slave port {slave}, but the switch has {} slave ports",
            s.slaves
        ));
    }
    // aie-rt refuses these circuits (xaie_ss_aieml.c PortVerify, e.g.
    // _XAieMl_MemTile_StrmSwCheckPortValidity); the profile lists them.
    if let (Some(from), Some(to)) = (
        port_at(&s.slave_ports, slave),
        port_at(&s.master_ports, master),
    ) {
        if s.same_index.contains(&(from.kind, to.kind)) && from.index != to.index {
            return Err(format!(
                "a circuit from slave {from} to master {to} changes lane: the switch joins \
                 {} and {} ports only at equal indices",
                from.kind.name(),
                to.kind.name()
            ));
        }
    }
    Ok(())
}

impl Array {
    /// Write `value` under `mask` to a full address; returns the tile whose
    /// core this write enabled.
    pub(super) fn write(
        &mut self,
        op: usize,
        address: u64,
        value: u32,
        mask: u32,
    ) -> Result<Option<Tile>, SimError> {
        let profile = self.profile;
        let (column, row, offset) = profile.split_address(address);
        let Some(name) = name_of(profile, address) else {
            let error = SimError::new(format!(
                "write to {address:#010x}, which names no register or memory the model knows"
            ))
            .op(op);
            return Err(match u32::try_from(column) {
                Ok(column) if profile.tile_kind(column, row).is_some() => error
                    .tile(Tile::new(column, row))
                    .register(format!("offset {offset:#x}")),
                _ => error,
            });
        };
        let tile = Tile::new(name.column, name.row);
        let register = name.to_string();
        let fail = |message: String| {
            SimError::new(message)
                .op(op)
                .tile(tile)
                .register(register.clone())
        };
        let Some(held) = self.state(tile).map(|state| state.register(offset)) else {
            return Err(fail("no such tile in the array".into()));
        };
        let merged = held & !mask | value & mask;
        match name.register {
            // The start queue is a FIFO, not storage: a write pushes a task.
            Register::StartQueue(direction, channel) => {
                return self
                    .enqueue(op, tile, name.kind, direction, channel, value & mask)
                    .map(|()| None)
            }
            Register::ChannelControl(direction, channel) => {
                return self
                    .channel_control(tile, direction, channel, merged, fail)
                    .map(|()| None)
            }
            Register::CoreControl => {
                let started = self.core_control(tile, merged, fail)?;
                if let Some(state) = self.tiles.get_mut(&tile) {
                    state.registers.insert(offset, merged);
                }
                return Ok(started);
            }
            _ => {}
        }
        let max = profile.limits.lock_value_max;
        let Some(state) = self.tiles.get_mut(&tile) else {
            return Err(fail("no such tile in the array".into()));
        };
        let s = &profile.tile_registers(state.kind).stream_switch;
        match name.register {
            Register::LockValue(id) => {
                let Some(lock) = state.locks.get_mut(id as usize) else {
                    return Err(fail("no such lock".into()));
                };
                let new = *lock & !mask | value & mask;
                if new > max {
                    return Err(fail(format!("lock value {new} is above the maximum {max}")));
                }
                *lock = new;
            }
            Register::BdWord { .. } | Register::ShimMux | Register::ShimDemux => {
                state.registers.insert(offset, merged);
            }
            Register::StreamSwitchMaster(master) => {
                master_setting(s, master, merged).map_err(fail)?;
                state.registers.insert(offset, merged);
            }
            Register::StreamSwitchSlave(_) => {
                let fields = s.slave_enable.mask() | s.packet.slave_packet_enable.mask();
                let extra = merged & !fields;
                if extra != 0 {
                    return Err(fail(format!(
                        "slave setting {merged:#x} has bits {extra:#x} set, which are not \
                         modelled (only enable and packet enable)"
                    )));
                }
                state.registers.insert(offset, merged);
            }
            Register::StreamSwitchSlot { .. } => {
                let p = &s.packet;
                let fields = [
                    p.slot_id,
                    p.slot_mask,
                    p.slot_enable,
                    p.slot_msel,
                    p.slot_arbiter,
                ];
                let extra = merged & !fields.iter().fold(0, |m, &f| m | f.mask());
                if extra != 0 {
                    return Err(fail(format!(
                        "slot setting {merged:#x} has bits {extra:#x} set outside its fields"
                    )));
                }
                state.registers.insert(offset, merged);
            }
            Register::CoreStatus => return Err(fail("core status is read-only".into())),
            // The core's program, as BLOCKWRITEs during bring-up carry it
            // (mlir-aie's order): the instruction-level core runs these bytes.
            Register::ProgramMemory(at) => {
                if mask != u32::MAX {
                    return Err(fail("a masked write of program memory".into()));
                }
                let bytes = profile.core_tile.program_memory_bytes as usize;
                let memory = &mut state.program_memory;
                memory.resize(bytes, 0);
                let at = at as usize;
                if !at.is_multiple_of(4) || at + 4 > bytes {
                    return Err(fail(
                        "a program memory word out of line or out of range".into(),
                    ));
                }
                memory[at..at + 4].copy_from_slice(&value.to_le_bytes());
            }
            Register::DataMemory(_) => {
                return Err(fail(
                    "the control code writes data memory, which the array model does not \
                     load (the simulator loads the tile images' data itself)"
                        .into(),
                ))
            }
            Register::StartQueue(..) | Register::ChannelControl(..) | Register::CoreControl => {}
        }
        Ok(None)
    }

    /// The value MASKPOLL sees at a full address, and the register's name.
    pub(super) fn read(&self, op: usize, address: u64) -> Result<(u32, String), SimError> {
        let Some(name) = name_of(self.profile, address) else {
            return Err(SimError::new(format!(
                "MASKPOLL of {address:#010x}, which names no register the model knows"
            ))
            .op(op));
        };
        let tile = Tile::new(name.column, name.row);
        let register = name.to_string();
        let fail = |message: &str| {
            SimError::new(message)
                .op(op)
                .tile(tile)
                .register(register.clone())
        };
        let Some(state) = self.state(tile) else {
            return Err(fail("no such tile in the array"));
        };
        let (_, _, offset) = self.profile.split_address(address);
        let value = match name.register {
            Register::LockValue(id) => state.locks.get(id as usize).copied().unwrap_or(0),
            Register::StartQueue(..) => return Err(fail("a start queue cannot be read")),
            Register::CoreStatus => return Err(fail("core status is not modelled")),
            Register::ProgramMemory(_) | Register::DataMemory(_) => {
                return Err(fail(
                    "the array model does not read tile memory for MASKPOLL",
                ))
            }
            _ => state.register(offset),
        };
        Ok((value, register))
    }

    pub(super) fn ddr_patch(
        &mut self,
        op: usize,
        address: u32,
        arg_index: u32,
        arg_offset: u64,
        arguments: &[u64],
    ) -> Result<(), SimError> {
        let profile = self.profile;
        let layout = &profile.registers.shim.bd_layout;
        let first_word = layout.address.first().map(|piece| piece.word);
        let name = name_of(profile, address.into());
        let (tile, bd) = match name {
            Some(n) => match n.register {
                Register::BdWord { bd, word }
                    if n.kind == TileKind::Shim && Some(word) == first_word =>
                {
                    (Tile::new(n.column, n.row), bd)
                }
                _ => {
                    return Err(SimError::new(format!(
                        "DDR_PATCH must name the address word of a shim buffer descriptor, \
                         not {n}"
                    ))
                    .op(op)
                    .tile(Tile::new(n.column, n.row)))
                }
            },
            None => {
                return Err(SimError::new(format!(
                    "DDR_PATCH of {address:#010x}, which names no register the model knows"
                ))
                .op(op))
            }
        };
        let register = format!("shim.bd[{bd}]");
        let fail = |message: String| {
            SimError::new(message)
                .op(op)
                .tile(tile)
                .register(register.clone())
        };
        // The plain 0-based index of the runtime buffer, as mlir-aie and
        // the firmware read it; an index past the invocation's arguments
        // would patch garbage into the descriptor on silicon.
        let Some(base) = arguments.get(arg_index as usize) else {
            return Err(fail(format!(
                "DDR_PATCH names argument {arg_index}, but the invocation passes {} arguments",
                arguments.len()
            )));
        };
        let bd_base = profile
            .bd(TileKind::Shim, bd)
            .map_err(|e| fail(e.to_string()))?;
        let Some(state) = self.tiles.get_mut(&tile) else {
            return Err(fail("no such tile in the array".into()));
        };
        // aiebu requires the patched descriptor to have been written first.
        let offsets: Vec<u32> = layout
            .address
            .iter()
            .map(|piece| bd_base + 4 * piece.word)
            .collect();
        if offsets.iter().any(|o| !state.registers.contains_key(o)) {
            return Err(fail(
                "DDR_PATCH of a buffer descriptor whose address words were never written".into(),
            ));
        }
        let mut units = 0u64;
        let mut shift = 0;
        for (piece, offset) in layout.address.iter().zip(&offsets) {
            let field = Field {
                lsb: piece.lsb,
                width: piece.width,
            };
            units |= u64::from(field.get(state.register(*offset))) << shift;
            shift += piece.width;
        }
        let unit = u64::from(layout.address_unit_bytes);
        let patched = (units * unit)
            .checked_add(*base)
            .and_then(|a| a.checked_add(arg_offset));
        let Some(patched) = patched.filter(|a| a % unit == 0 && a / unit <= ones(shift)) else {
            return Err(fail(format!(
                "address {:#x} + argument {:#x} + offset {arg_offset:#x} does not fit the \
                 descriptor's {shift}-bit address in {unit}-byte units",
                units * unit,
                base
            )));
        };
        let mut rest = patched / unit;
        for (piece, offset) in layout.address.iter().zip(&offsets) {
            let field = Field {
                lsb: piece.lsb,
                width: piece.width,
            };
            let bits = (rest & ones(piece.width)) as u32;
            rest >>= piece.width;
            let word = state.register(*offset) & !field.mask() | bits << piece.lsb;
            state.registers.insert(*offset, word);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::array::dma::ChannelId;
    use crate::sim::array::testing::*;
    use crate::sim::array::Effect;
    use loom_targets::xdna::regs::Direction;
    use loom_targets::xdna::route::PortKind;
    use loom_targets::xdna::txn::TxnOp;

    #[test]
    fn writes_the_model_cannot_name_are_errors() {
        let mut array = array();
        let write = |offset: u32| TxnOp::Write {
            address: address(CORE, offset),
            value: 1,
        };
        let error = array.apply(4, &write(0x1F024), &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 4: tile [0, 3] offset 0x1f024: write to 0x0031f024, which names no \
             register or memory the model knows"
        );
        let outside = TxnOp::Write {
            address: 0x1001_F000,
            value: 1,
        };
        assert_eq!(array.apply(5, &outside, &[]).unwrap_err().tile, None);
        let error = array.apply(6, &write(0x100), &[]).unwrap_err();
        assert!(error.message.contains("writes data memory"), "{error}");
    }

    /// The program BLOCKWRITEs of bring-up are kept for the core, word by
    /// word at their offsets; a stray half-word offset is refused.
    #[test]
    fn program_memory_writes_are_kept_for_the_core() {
        let mut array = array();
        assert!(array.program_memory(CORE).is_none());
        let program = TxnOp::BlockWrite {
            address: address(CORE, 0x20000),
            words: vec![0x1023_f818, 0x1008_0018],
        };
        array.apply(0, &program, &[]).unwrap();
        let memory = array.program_memory(CORE).unwrap();
        assert_eq!(memory.len(), 16384);
        assert_eq!(
            memory[..8],
            [0x18, 0xf8, 0x23, 0x10, 0x18, 0x00, 0x08, 0x10]
        );
        let odd = TxnOp::Write {
            address: address(CORE, 0x20002),
            value: 0,
        };
        let error = array.apply(1, &odd, &[]).unwrap_err();
        assert!(error.message.contains("out of line"), "{error}");
    }

    #[test]
    fn core_enable_is_an_effect_once() {
        let mut array = array();
        for (i, op) in bring_up(CORE).iter().enumerate() {
            assert_eq!(array.apply(i, op, &[]), Ok(Effect::None));
        }
        let enable = TxnOp::Write {
            address: address(CORE, strix().core_control()),
            value: 1,
        };
        assert_eq!(array.apply(9, &enable, &[]), Ok(Effect::CoreEnabled(CORE)));
        assert_eq!(
            array.apply(10, &enable, &[]),
            Ok(Effect::None),
            "already running"
        );
        let reset = TxnOp::Write {
            address: address(CORE, strix().core_control()),
            value: 3,
        };
        assert!(array.apply(11, &reset, &[]).is_err());
    }

    #[test]
    fn a_memory_tile_circuit_that_changes_lane_is_an_error() {
        let mut array = array();
        let s = &strix().registers.memory.stream_switch;
        let north = |i| s.slave_ports[&PortKind::North].first + i;
        let south = |i| s.master_ports[&PortKind::South].first + i;
        let circuit = |master, slave| TxnOp::Write {
            address: address(
                MEM,
                strix()
                    .stream_switch_master(TileKind::Memory, master)
                    .unwrap(),
            ),
            value: 1 << 31 | slave,
        };
        assert_eq!(
            array.apply(1, &circuit(south(1), north(1)), &[]),
            Ok(Effect::None)
        );
        let error = array
            .apply(2, &circuit(south(0), north(1)), &[])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "TXN op 2: tile [0, 1] mem.stream_switch.master[{}]: a circuit from slave North1 \
                 to master South0 changes lane: the switch joins North and South ports only at \
                 equal indices",
                south(0)
            )
        );
    }

    #[test]
    fn packet_settings_outside_their_fields_are_errors() {
        let mut array = array();
        let write = |offset, value| TxnOp::Write {
            address: address(SHIM, offset),
            value,
        };
        // Master South 0 in packet mode: bit 8 is no packet field.
        let error = array
            .apply(1, &write(0x3F008, 0xC000_0108), &[])
            .unwrap_err();
        assert!(error.message.contains("bits 0x100"), "{error}");
        let error = array
            .apply(2, &write(0x3F200, 0x8000_0000), &[])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "TXN op 2: tile [0, 0] shim.stream_switch.slave[0].slot[0]: slot setting \
             0x80000000 has bits 0x80000000 set outside its fields"
        );
        let error = array
            .apply(3, &write(0x3F100, 0x2000_0000), &[])
            .unwrap_err();
        assert!(error.message.contains("not modelled"), "{error}");
    }

    #[test]
    fn ddr_patch_checks_its_argument_and_descriptor() {
        let mut array = array();
        let error = array.apply(0, &patch(0, 0, 0), &[ARG0]).unwrap_err();
        assert!(error.message.contains("never written"), "{error}");
        array.apply(1, &bd(SHIM, 0, &shim_bd(16)), &[ARG0]).unwrap();
        let error = array.apply(2, &patch(0, 1, 0), &[ARG0]).unwrap_err();
        assert!(error.message.contains("passes 1 arguments"), "{error}");
        let error = array.apply(3, &patch(0, 0, 2), &[ARG0]).unwrap_err();
        assert!(error.message.contains("does not fit"), "{error}");
        // Two patches add up, as the firmware's add does.
        array.apply(4, &patch(0, 0, 8), &[ARG0]).unwrap();
        array.apply(5, &patch(0, 0, 8), &[ARG0]).unwrap();
        let words = array.bd_words(
            ChannelId {
                tile: SHIM,
                kind: TileKind::Shim,
                direction: Direction::Mm2s,
                channel: 0,
            },
            0,
        );
        let descriptor = strix().decode_bd(TileKind::Shim, &words.unwrap()).unwrap();
        assert_eq!(descriptor.address, 2 * ARG0 + 16);
    }

    #[test]
    fn maskpoll_holds_or_fails_at_once() {
        let mut array = array();
        array.apply(0, &lock_init(CORE, 2, 5), &[]).unwrap();
        let poll = |value| TxnOp::MaskPoll {
            address: address(CORE, strix().lock_value(TileKind::Core, 2).unwrap()),
            value,
            mask: 0x3F,
        };
        assert_eq!(array.apply(1, &poll(5), &[]), Ok(Effect::None));
        let error = array.apply(2, &poll(4), &[]).unwrap_err();
        assert!(error
            .to_string()
            .starts_with("TXN op 2: tile [0, 3] core.lock[2].value: MASKPOLL"));
    }
}
