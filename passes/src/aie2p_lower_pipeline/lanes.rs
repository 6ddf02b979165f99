//! Striping: one stream of the command stream split over two shim DMA
//! channels (issue 20). A channel the command stream fills (or drains) is
//! striped in two lanes when its slots are at least `STRIPE_MIN_BYTES`, a
//! worker (not a forward, not the stream) admits its other side, and its
//! tile and the shim have two DMA channels of the direction (and the
//! shim's descriptor can step a lane's halves).
//!
//! Each lane has its own lock pair (free-slot and published-record credits)
//! and half of every slot: its tile-side ring moves that half of each slot,
//! and its shim side that half of each record (for a run of records, a
//! descriptor whose dimensions step one record between halves). The worker
//! takes both lanes' credits at each admission and gives both back. One lock
//! pair for both lanes would not do: credits are anonymous, so one lane
//! could run a round ahead and overwrite a half the worker has not read.
//!
//! The drain of a joined channel (`forward.rs`: one lane per part, filled
//! by forwards) by the command stream is striped the same way when its
//! lanes are even: two transfers, each reading half of the lanes of every
//! slot with one descriptor per lane and half of each record on the shim
//! side (the record's outermost dimension halved: its parts are its leading
//! index). The whole-array GEMM's columns of C leave so on both of a
//! column's shim S2MM channels.
//!
//! The lanes' transfers take the links the schedule gives them; a striped
//! realization that does not fit the profile is dropped for the unstriped
//! one (`Plan::of`).

use super::access::{descriptor_steps, Access, Dim};
use super::realization::{tile_kind, Channel, Command, Held, Plan, Transfer, Way};
use loom_targets::xdna::regs::TileKind;
use loom_targets::xdna::route::{controller_ids, route, token_routes, Endpoint, Used};
use loom_targets::{DeviceProfile, Tile};
use std::collections::BTreeSet;

/// The smallest slot striped. A second lane costs the command processor its
/// descriptors, start and wait (about 20 TXN ops) and the worker two lock
/// ops an admission; it pays back when it halves a long transfer. Measured
/// on the per-operation model: 1 KiB records gain (the walkthrough at
/// K = 512, 1,051 -> 967 cycles; K = 1024, 1,775 -> 1,543), while the
/// small-record programs of examples/ and test/ lose 16-166 cycles, and
/// 4,141 where a worker admits 1,024 records (docs/PERFORMANCE.md, "Data
/// movement").
pub const STRIPE_MIN_BYTES: i64 = 1024;

/// The channels to stripe: `transfers` are the command stream's (rings
/// merged), `shared` the endpoints workers admit, `forwarded` the channels a
/// forward admits and those it reads, `held` the DMA channels the forwards
/// keep.
pub(super) fn striped(
    profile: &DeviceProfile,
    channels: &[Channel],
    transfers: &[Transfer],
    shared: &BTreeSet<(usize, bool)>,
    (forwarded, forwarded_from): (&BTreeSet<usize>, &BTreeSet<usize>),
    held: &Held,
) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for (c, channel) in channels.iter().enumerate() {
        let ours: Vec<&Transfer> = transfers.iter().filter(|t| t.channel == c).collect();
        let Some(first) = ours.first() else {
            continue;
        };
        let ingress = first.way == Way::Ingress;
        // The stream admits one side alone, a worker the other.
        let one_side = ours.iter().all(|t| t.way == first.way);
        let worker_side = shared.contains(&(c, !ingress))
            && !shared.contains(&(c, ingress))
            && !forwarded.contains(&c);
        // A joined channel's drain: forwards fill it, the stream reads it.
        let joined_drain = channel.joined
            && channel.lanes % 2 == 0
            && !ingress
            && !shared.contains(&(c, false))
            && !forwarded_from.contains(&c);
        let large = channel.slot_bytes >= STRIPE_MIN_BYTES && channel.slot_bytes % 8 == 0;
        let room = free_channels(profile, channel.tile, ingress, held) >= 2
            && ours
                .iter()
                .all(|t| free_channels(profile, t.shim, !ingress, held) >= 2);
        let layout = ours
            .iter()
            .all(|t| (0..2).all(|lane| lane_of(profile, channel, t, lane).is_some()));
        if one_side && (worker_side || joined_drain) && large && room && layout {
            out.insert(c);
        }
    }
    out
}

/// DMA channels of one direction (`s2mm`) of `tile` the forwards leave.
fn free_channels(profile: &DeviceProfile, tile: Tile, s2mm: bool, held: &Held) -> i64 {
    let all = tile_kind(profile, tile).map_or(0, |kind| {
        let b = profile.budget(kind);
        i64::from(if s2mm { b.s2mm } else { b.mm2s })
    });
    (0..all)
        .filter(|&c| !held.channels.contains(&(tile, s2mm, c)))
        .count() as i64
}

/// Stripes `channel` (or undoes it): two lanes, or two drains of a joined
/// channel's lanes.
pub(super) fn stripe(channel: &mut Channel, on: bool) {
    let two = if on { 2 } else { 1 };
    if channel.joined {
        channel.drains = two;
    } else {
        channel.lanes = two;
    }
}

/// Lane `lane`'s transfer of `t` (a transfer of `channel`): half of each
/// record, the same records; None when its half does not address (the
/// shim's descriptor cannot step it).
fn lane_of(
    profile: &DeviceProfile,
    channel: &Channel,
    t: &Transfer,
    lane: i64,
) -> Option<Transfer> {
    let x = if channel.joined {
        half_of_parts(t, lane)?
    } else {
        half_of_run(t, lane)?
    };
    let words = x.access().words().ok()?;
    descriptor_steps(&words, profile, TileKind::Shim, true).ok()?;
    Some(x)
}

/// Half `half` of a joined channel's drain `t`: the record's outermost
/// dimension (its parts, or a run of them) halved.
fn half_of_parts(t: &Transfer, half: i64) -> Option<Transfer> {
    let outer = *t.layout.dims.last()?;
    if outer.count % 2 != 0 {
        return None;
    }
    let mut x = t.clone();
    x.lane = half;
    x.bytes = t.bytes / 2;
    let last = x.layout.dims.len() - 1;
    x.layout.dims[last].count = outer.count / 2;
    x.argument_offset = t.argument_offset + half * (outer.count / 2) * outer.step;
    Some(x)
}

/// Half `lane` of each record of `t`, when a record is one run of the
/// caller's bytes (a strided layout keeps one lane).
fn half_of_run(t: &Transfer, lane: i64) -> Option<Transfer> {
    let e = t.layout.element;
    let whole = t.layout.words().ok()?;
    let half = t.bytes / 2;
    if whole
        != [Dim {
            count: t.bytes / 4,
            step: 4,
        }]
        || half % e != 0
        || half % 4 != 0
    {
        return None;
    }
    let mut x = t.clone();
    x.lane = lane;
    x.bytes = half;
    x.layout = Access::of_layout(&[half / e], None, e);
    x.argument_offset = t.argument_offset + lane * half;
    Some(x)
}

/// Whether a scheduled plan's stream routes and task-complete-token routes
/// all find switch ports, routed as the xdna target routes them (more links
/// take more ports, so a striped plan may not route where an unstriped one
/// does).
pub(super) fn routes_fit(plan: &Plan) -> bool {
    let end = |(tile, channel): (Tile, i64)| Endpoint {
        column: tile.column,
        row: tile.row,
        channel: channel as u32,
    };
    let mut used = Used::default();
    let circuits = plan
        .routes()
        .into_iter()
        .all(|(_, from, to)| route(plan.profile, end(from), end(to), &mut used).is_ok());
    // The command stream's shim tasks issue the tokens.
    let issuers: BTreeSet<Tile> = plan.transfers.iter().map(|t| t.shim).collect();
    circuits
        && controller_ids(&issuers)
            .is_ok_and(|ids| token_routes(plan.profile, &ids, &mut used).is_ok())
}

/// `transfers` and `program` with each transfer of a `striped` channel
/// split into its two lanes, lane 0 first, each moving half of every
/// record.
pub(super) fn split(
    profile: &DeviceProfile,
    channels: &[Channel],
    transfers: &[Transfer],
    program: &[Command],
    striped: &BTreeSet<usize>,
) -> (Vec<Transfer>, Vec<Command>) {
    let mut out = Vec::new();
    // Old transfer -> its lanes' transfers.
    let mut lanes: Vec<Vec<usize>> = Vec::new();
    for t in transfers {
        let mut these = Vec::new();
        if striped.contains(&t.channel) {
            for lane in 0..2 {
                let x = lane_of(profile, &channels[t.channel], t, lane)
                    .expect("`striped` checked both lanes");
                these.push(out.len());
                out.push(x);
            }
        } else {
            these.push(out.len());
            out.push(t.clone());
        }
        lanes.push(these);
    }
    let program = program
        .iter()
        .flat_map(|command| match command {
            Command::Start(t) => lanes[*t].iter().map(|&l| Command::Start(l)).collect(),
            Command::Wait(op, members) => vec![Command::Wait(
                *op,
                members.iter().flat_map(|&m| lanes[m].clone()).collect(),
            )],
        })
        .collect();
    (out, program)
}

#[cfg(test)]
mod tests {
    use super::*;
    use loom_targets::Tile;
    use mlir_sys::MlirOperation;

    fn transfer(layout: Access, records: i64) -> Transfer {
        Transfer {
            copy: MlirOperation {
                ptr: std::ptr::null_mut(),
            },
            way: Way::Ingress,
            channel: 0,
            tile: Tile::new(0, 2),
            argument: 0,
            argument_offset: 0,
            bytes: 4096,
            layout,
            outside: vec![Dim {
                count: records,
                step: 4096,
            }],
            addressing: None,
            lane: 0,
            tile_channel: 0,
            tile_bd: 0,
            shim: Tile::new(0, 0),
            shim_channel: 0,
            shim_bd: 0,
        }
    }

    #[test]
    fn a_lane_is_half_of_each_contiguous_record() {
        let t = transfer(Access::of_layout(&[2048], None, 2), 8);
        let second = half_of_run(&t, 1).unwrap();
        assert_eq!((second.argument_offset, second.bytes), (2048, 2048));
        assert_eq!(
            second.access().words().unwrap(),
            [
                Dim {
                    count: 512,
                    step: 4
                },
                Dim {
                    count: 8,
                    step: 4096
                }
            ]
        );
    }

    #[test]
    fn a_strided_record_keeps_one_lane() {
        // The transpose of a 32 x 32 f32 matrix: no half is one run.
        let t = transfer(Access::of_layout(&[32, 32], Some(&[1, 32]), 4), 1);
        assert!(half_of_run(&t, 0).is_none());
    }

    /// A joined column of C, four 16 x 16 i32 blocks of a row-major matrix
    /// with rows of 64: each half is two blocks, 16 rows down for the
    /// second.
    #[test]
    fn a_joined_drain_is_halved_by_its_parts() {
        let t = transfer(
            Access::of_layout(&[4, 16, 16], Some(&[16 * 64, 64, 1]), 4),
            1,
        );
        let second = half_of_parts(&t, 1).unwrap();
        assert_eq!(second.bytes, 2048);
        assert_eq!(second.argument_offset, 2 * 16 * 64 * 4);
        assert_eq!(second.layout.dims.last().unwrap().count, 2);
    }
}
