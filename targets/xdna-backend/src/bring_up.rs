//! The bring-up of a core tile and the register writes around it, as
//! mlir-aie's generated configuration makes them (lib/Targets/AIERT.cpp
//! `addAieElf`, `addCoreEnable`; aie-rt xaie_core.c, xaie_dma.c): the core
//! disabled, every DMA channel of the tile held in reset (MM2S then S2MM,
//! as `XAie_DmaChannelResetAll`), the program written, the channels let go;
//! the core enabled only once the whole array is configured. Each is a
//! MASKWRITE of its one field, so the register's other bits stay.

use loom_targets::xdna::regs::{Direction, Field, RegisterError, TileKind};
use loom_targets::xdna::txn::TxnOp;
use loom_targets::{DeviceProfile, Tile};

fn field_write(
    profile: &DeviceProfile,
    tile: Tile,
    offset: u32,
    field: Field,
    value: u32,
) -> TxnOp {
    TxnOp::MaskWrite {
        address: profile.tile_address(tile.column, tile.row, offset) as u32,
        value: field.place(value),
        mask: field.mask(),
    }
}

/// Every DMA channel control register of the tile, MM2S first.
fn channels(profile: &DeviceProfile, kind: TileKind) -> Result<Vec<u32>, RegisterError> {
    let budget = profile.budget(kind);
    let mm2s = (0..budget.mm2s).map(|ch| profile.channel_control(kind, Direction::Mm2s, ch));
    let s2mm = (0..budget.s2mm).map(|ch| profile.channel_control(kind, Direction::S2mm, ch));
    mm2s.chain(s2mm).collect()
}

/// The core disabled and its tile's DMA held in reset, then `program`
/// (the program and data memory writes), then the DMA let go.
pub fn core_bring_up(
    profile: &DeviceProfile,
    tile: Tile,
    program: Vec<TxnOp>,
) -> Result<Vec<TxnOp>, RegisterError> {
    let core = &profile.registers.core_module;
    let mut ops = vec![field_write(profile, tile, core.control.0, core.enable, 0)];
    let control = channels(profile, TileKind::Core)?;
    // A core tile's channels all have a reset bit (profile data).
    let reset = profile
        .tile_registers(TileKind::Core)
        .channel_control
        .reset
        .ok_or(RegisterError::NotInTile {
            kind: TileKind::Core,
            what: "DMA channel reset",
        })?;
    ops.extend(
        control
            .iter()
            .map(|&c| field_write(profile, tile, c, reset, 1)),
    );
    ops.extend(program);
    ops.extend(
        control
            .iter()
            .map(|&c| field_write(profile, tile, c, reset, 0)),
    );
    Ok(ops)
}

pub fn core_enable(profile: &DeviceProfile, tile: Tile) -> TxnOp {
    let core = &profile.registers.core_module;
    field_write(profile, tile, core.control.0, core.enable, 1)
}

/// The channel's task-complete tokens carry packet id `id` (mlir-aie
/// AIEDmaToNpu.cpp `PushQueuetoWrite32Pattern` writes it just before a
/// token-issuing queue push).
pub fn controller_id(
    profile: &DeviceProfile,
    kind: TileKind,
    tile: Tile,
    direction: Direction,
    channel: u32,
    id: u32,
) -> Result<TxnOp, RegisterError> {
    let control = profile.channel_control(kind, direction, channel)?;
    let field = profile.tile_registers(kind).channel_control.controller_id;
    Ok(field_write(profile, tile, control, field, id))
}
