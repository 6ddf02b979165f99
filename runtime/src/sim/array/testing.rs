//! What the array model's tests share: the Strix profile, a test memory,
//! a partition after its LOADPDI, and TXN ops that set up routes, locks,
//! buffer descriptors, token routes and core bring-ups.

use super::{Array, Effect};
use crate::sim::error::SimError;
use crate::sim::memory::Memory;
use loom_targets::xdna::elf::{Artifact, Pdi, TileImage};
use loom_targets::xdna::pdi::empty;
use loom_targets::xdna::regs::{BufferDescriptor, Direction, StartQueueEntry, TileKind};
use loom_targets::xdna::route::{route, token_routes, Endpoint, Used};
use loom_targets::xdna::txn::{Txn, TxnOp};
use loom_targets::{DeviceProfile, Tile};
use std::collections::BTreeMap;

pub(crate) const SHIM: Tile = Tile::new(0, 0);

pub(crate) const MEM: Tile = Tile::new(0, 1);

pub(crate) const CORE: Tile = Tile::new(0, 3);

pub(crate) const ARG0: u64 = 1 << 32;

pub(crate) const ARG1: u64 = 2 << 32;

pub(crate) fn strix() -> &'static DeviceProfile {
    loom_targets::profiles()
        .iter()
        .find(|p| p.name == "amd.xdna.strix.17f0_10")
        .unwrap()
}

/// The LOADPDI of the artifact's empty `.pdi.<id>`.
pub(crate) fn load_pdi(id: u16) -> TxnOp {
    TxnOp::LoadPdi {
        id,
        size: empty(id).len() as u32,
        address: 0,
    }
}

/// An array that carries the empty PDIs 0 and 1 and has not loaded one.
pub(crate) fn unloaded() -> Array {
    let mut array = Array::new(strix());
    let pdis: Vec<Pdi> = (0..2)
        .map(|id| Pdi {
            id,
            bytes: empty(id),
            loads: vec![],
        })
        .collect();
    array.carry_pdis(&pdis);
    array
}

/// A partition the firmware has just reset (LOADPDI of `.pdi.0`), with the
/// route the back end gives column 0's shim tokens (controller id 1) and
/// every shim channel's Controller_ID set to it.
pub(crate) fn array() -> Array {
    let mut array = unloaded();
    assert_eq!(array.apply(0, &load_pdi(0), &[]), Ok(Effect::Reset));
    array.reset();
    let mut ops = shim_token_route(1);
    for direction in [Direction::S2mm, Direction::Mm2s] {
        ops.extend((0..2).map(|ch| controller_id(SHIM, direction, ch, 1)));
    }
    for op in &ops {
        array.apply(0, op, &[]).unwrap();
    }
    array
}

/// The shim's token route as the back end writes it: slave TileControl in
/// packet mode, its slot 0 for `id` (mask 0x1F, msel 0, arbiter 0), master
/// South 0 in packet mode taking msel 0 on arbiter 0, header kept.
pub(crate) fn shim_token_route(id: u32) -> Vec<TxnOp> {
    let write = |offset, value| TxnOp::Write {
        address: address(SHIM, offset),
        value,
    };
    vec![
        write(0x3F100, 0xC000_0000),
        write(0x3F200, id << 24 | 0x1F << 16 | 1 << 8),
        write(0x3F008, 0xC000_0000 | 1 << 3),
    ]
}

/// The token routes `token_routes` gives for the issuers `ids`, beside the
/// ports `used` holds.
pub(crate) fn token_route_ops(ids: &[(Tile, u32)], used: &mut Used) -> Vec<TxnOp> {
    token_routes(strix(), &ids.iter().copied().collect(), used)
        .unwrap()
        .iter()
        .map(|s| s.txn_op(strix()))
        .collect()
}

/// MASKWRITE of a channel's Controller_ID field, as before a token start.
pub(crate) fn controller_id(tile: Tile, direction: Direction, channel: u32, id: u32) -> TxnOp {
    channel_control(tile, direction, channel, id << 8, 0x1F00)
}

pub(crate) fn channel_control(
    tile: Tile,
    direction: Direction,
    channel: u32,
    value: u32,
    mask: u32,
) -> TxnOp {
    let offset = strix()
        .channel_control(kind(tile), direction, channel)
        .unwrap();
    TxnOp::MaskWrite {
        address: address(tile, offset),
        value,
        mask,
    }
}

/// MASKWRITE of a core's Core_Control enable bit.
pub(crate) fn core_enable(tile: Tile, on: bool) -> TxnOp {
    TxnOp::MaskWrite {
        address: address(tile, strix().core_control()),
        value: u32::from(on),
        mask: 1,
    }
}

/// A core tile's bring-up as the back end writes it: disable the core,
/// reset its MM2S then S2MM channels, (write its program), release them.
pub(crate) fn bring_up(tile: Tile) -> Vec<TxnOp> {
    let channels = [
        (Direction::Mm2s, 0),
        (Direction::Mm2s, 1),
        (Direction::S2mm, 0),
        (Direction::S2mm, 1),
    ];
    let mut ops = vec![core_enable(tile, false)];
    for value in [2, 0] {
        ops.extend(
            channels
                .iter()
                .map(|&(d, ch)| channel_control(tile, d, ch, value, 2)),
        );
    }
    ops
}

/// Zeroed tile memories made at first use, and caller buffers by base.
pub(crate) struct TestMemory {
    pub(crate) tiles: BTreeMap<Tile, Vec<u8>>,
    pub(crate) ddr: Vec<(u64, Vec<u8>)>,
}

impl TestMemory {
    pub(crate) fn new(ddr: Vec<(u64, Vec<u8>)>) -> TestMemory {
        TestMemory {
            tiles: BTreeMap::new(),
            ddr,
        }
    }
}

impl Memory for TestMemory {
    fn tile(&mut self, tile: Tile) -> &mut [u8] {
        let p = strix();
        let size = p
            .tile_kind(tile.column, tile.row)
            .map_or(0, |kind| p.budget(kind).memory);
        self.tiles
            .entry(tile)
            .or_insert_with(|| vec![0; size as usize])
    }

    fn ddr(&mut self, address: u64, len: usize) -> Result<&mut [u8], String> {
        for (base, bytes) in &mut self.ddr {
            if let Some(at) = address.checked_sub(*base) {
                if let Some(slice) = bytes.get_mut(at as usize..at as usize + len) {
                    return Ok(slice);
                }
            }
        }
        Err(format!("DDR {address:#x} + {len} is in no buffer"))
    }
}

pub(crate) fn kind(tile: Tile) -> TileKind {
    strix().tile_kind(tile.column, tile.row).unwrap()
}

pub(crate) fn address(tile: Tile, offset: u32) -> u32 {
    strix().tile_address(tile.column, tile.row, offset) as u32
}

pub(crate) fn lock_init(tile: Tile, lock: u32, value: u32) -> TxnOp {
    let offset = strix().lock_value(kind(tile), lock).unwrap();
    TxnOp::Write {
        address: address(tile, offset),
        value,
    }
}

/// The switch settings `route` gives, as TXN ops.
pub(crate) fn settings(from: (Tile, u32), to: (Tile, u32)) -> Vec<(Tile, u32, TxnOp)> {
    settings_using(from, to, &mut Used::default())
}

/// The same, taking the ports in `used`.
pub(crate) fn settings_using(
    from: (Tile, u32),
    to: (Tile, u32),
    used: &mut Used,
) -> Vec<(Tile, u32, TxnOp)> {
    let end = |(tile, channel): (Tile, u32)| Endpoint {
        column: tile.column,
        row: tile.row,
        channel,
    };
    route(strix(), end(from), end(to), used)
        .unwrap()
        .into_iter()
        .map(|s| (Tile::new(s.column, s.row), s.offset, s.txn_op(strix())))
        .collect()
}

pub(crate) fn route_ops(from: (Tile, u32), to: (Tile, u32)) -> Vec<TxnOp> {
    settings(from, to)
        .into_iter()
        .map(|(_, _, op)| op)
        .collect()
}

pub(crate) fn bd(tile: Tile, n: u32, descriptor: &BufferDescriptor) -> TxnOp {
    let p = strix();
    TxnOp::BlockWrite {
        address: address(tile, p.bd(kind(tile), n).unwrap()),
        words: p.encode_bd(kind(tile), descriptor).unwrap(),
    }
}

pub(crate) fn start_runs(
    tile: Tile,
    direction: Direction,
    channel: u32,
    bd: u32,
    runs: u32,
    token: bool,
) -> TxnOp {
    let p = strix();
    let entry = StartQueueEntry {
        start_bd: bd,
        runs,
        token_issue: token,
    };
    TxnOp::Write {
        address: address(tile, p.start_queue(kind(tile), direction, channel).unwrap()),
        value: p.encode_start_queue(kind(tile), &entry).unwrap(),
    }
}

pub(crate) fn start(tile: Tile, direction: Direction, channel: u32, bd: u32, token: bool) -> TxnOp {
    start_runs(tile, direction, channel, bd, 1, token)
}

pub(crate) fn sync(tile: Tile, direction: Direction, channel: u8) -> TxnOp {
    TxnOp::Sync {
        column: tile.column as u8,
        row: tile.row as u8,
        direction,
        channel,
        column_count: 1,
        row_count: 1,
    }
}

pub(crate) fn tile_bd(
    address: u64,
    length: u32,
    acquire: Option<(u32, i32)>,
    release: Option<(u32, i32)>,
) -> BufferDescriptor {
    BufferDescriptor {
        address,
        length,
        next_bd: None,
        valid: true,
        acquire,
        release,
        burst_length: None,
        iteration: None,
        dimensions: Vec::new(),
    }
}

/// A shim descriptor as Loom writes it: address 0, patched later.
pub(crate) fn shim_bd(length: u32) -> BufferDescriptor {
    BufferDescriptor {
        burst_length: Some(64),
        ..tile_bd(0, length, None, None)
    }
}

pub(crate) fn patch(n: u32, argument: u32, offset: u64) -> TxnOp {
    let bd = strix().bd(TileKind::Shim, n).unwrap();
    TxnOp::DdrPatch {
        address: address(SHIM, bd + 4),
        arg_index: argument,
        arg_offset: offset,
    }
}

/// Apply the ops in order as a command processor does: at a SYNC, step
/// the engines until its token arrives. Then let the engines settle.
pub(crate) fn run(
    array: &mut Array,
    ops: &[TxnOp],
    memory: &mut TestMemory,
) -> Result<Vec<Effect>, SimError> {
    let mut effects = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let effect = array.apply(i, op, &[ARG0, ARG1])?;
        match effect {
            Effect::Wait(key) => {
                while !array.take_token(i, &key)? {
                    if !array.step(memory)? {
                        return Err(SimError::new(format!("hang: {:?}", array.pending())).op(i));
                    }
                }
            }
            Effect::Reset => {
                while array.step(memory)? {}
                array.reset();
            }
            _ => {}
        }
        effects.push(effect);
    }
    array.step(memory)?;
    Ok(effects)
}

pub(crate) fn locks(array: &Array, tile: Tile) -> &[u32] {
    &array.tiles[&tile].locks
}

/// Shim MM2S 0 sends `length` bytes of argument 0 at `offset` to core
/// S2MM 0, whose BD 0 takes lock 0 and publishes lock 1.
pub(crate) fn shim_to_core(core_bd: BufferDescriptor, length: u32, offset: u64) -> Vec<TxnOp> {
    let mut ops = vec![lock_init(CORE, 0, 1), lock_init(CORE, 1, 0)];
    ops.extend(route_ops((SHIM, 0), (CORE, 0)));
    ops.extend([
        bd(CORE, 0, &core_bd),
        start(CORE, Direction::S2mm, 0, 0, false),
        bd(SHIM, 0, &shim_bd(length)),
        patch(0, 0, offset),
        start(SHIM, Direction::Mm2s, 0, 0, true),
        sync(SHIM, Direction::Mm2s, 0),
    ]);
    ops
}

/// A one-column artifact for the Strix profile: `ops` as its control code,
/// `images` its tile images, the empty PDI 0.
pub(crate) fn artifact(ops: Vec<TxnOp>, images: Vec<TileImage>) -> Artifact {
    let mut txn = Txn::new(strix(), 1).unwrap();
    txn.ops = ops;
    Artifact {
        profile: strix().name.clone(),
        columns: 1,
        ctrltext: txn.encode(),
        patches: vec![],
        entries: vec![],
        tile_images: images,
        pdis: vec![Pdi {
            id: 0,
            bytes: empty(0),
            loads: vec![],
        }],
        device_loadable: false,
        not_loadable_reason: None,
        caveat: None,
    }
}
