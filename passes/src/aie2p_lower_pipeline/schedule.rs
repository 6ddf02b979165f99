//! The command stream's schedule: which DMA channels carry each transfer,
//! which buffer descriptors describe it, and where its waits go.
//!
//! A transfer runs on a link: a shim DMA channel routed to a tile DMA
//! channel for the whole invocation (a stream route is a fixed circuit), so
//! a link serves one tile and one direction, one transfer at a time.
//!
//! A program's `kernel.async.wait` throttles the command stream only: the
//! record is handed on by the lock release of the tile's buffer descriptor
//! when its transfer completes, not by the wait. So the schedule first tries
//! to put each wait as late as it may go:
//! - before a later transfer that needs its link, when the tile has no free
//!   DMA channel left for a new link, or when a new link would take the
//!   last shim channel that a later transfer to another tile of the column
//!   needs;
//! - before a later transfer that touches the same bytes of the same
//!   caller's buffer, when either of them writes there;
//! - at the end of the stream.
//!
//! A wait never moves before the program reaches it: that could deadlock a
//! stream whose earlier transfer waits for a worker that waits for a later
//! transfer. And a transfer at a channel endpoint a worker also admits (both
//! reserve, or both acquire) starts only after every wait the program made
//! before it: its buffer descriptor's lock acquire is the admission, so
//! starting it early could take a slot or record before the worker does. Transfers then run side by side on as many links as the tiles
//! have channels; the walkthrough's weights and input start together on the
//! shim's two MM2S channels. A program that keeps more transfers of a tile
//! in flight than the tile (or its column's shim) has channels is refused
//! by the plan, naming the resource, unless another column's shim has a
//! channel free: then the link is to the nearest such shim, its route
//! crossing columns.
//!
//! Buffer descriptors are numbered in start order and never reused within
//! an invocation; a memory tile's even channels take BDs 0-23 and its odd
//! ones 24-47 (aie-rt `_XAieMl_MemTileDmaCheckBdChValidity`).

use super::realization::{tile_kind, Channel, Command, Held, Refusal, Transfer, Way};
use loom_dialects::ir::location;
use loom_targets::xdna::regs::TileKind;
use loom_targets::DeviceProfile;
use loom_targets::Tile;
use mlir_sys::MlirOperation;
use std::collections::{BTreeMap, BTreeSet};

/// A shim channel routed to a tile channel, and the transfer on it not
/// waited for yet.
struct Link {
    tile: Tile,
    ingress: bool,
    tile_channel: i64,
    shim: Tile,
    shim_channel: i64,
    outstanding: Option<usize>,
}

/// Orders `program` (the command stream's starts and waits in program
/// order) and gives every transfer its channels and buffer descriptors.
/// `shared`: the channel endpoints (channel, reserve side) workers admit;
/// `held`: the DMA channels and descriptors the forwards keep.
pub(super) fn schedule(
    profile: &DeviceProfile,
    channels: &[Channel],
    transfers: &mut [Transfer],
    program: &[Command],
    shared: &BTreeSet<(usize, bool)>,
    held: &Held,
) -> Result<Vec<Command>, Refusal> {
    let commands = order(profile, transfers, program, shared, held);
    number_descriptors(profile, channels, transfers, &commands, held)?;
    Ok(commands)
}

/// The DMA channels of one direction a tile has.
fn channels(profile: &DeviceProfile, tile: Tile, s2mm: bool) -> i64 {
    tile_kind(profile, tile).map_or(0, |kind| {
        let b = profile.budget(kind);
        i64::from(if s2mm { b.s2mm } else { b.mm2s })
    })
}

/// The shims of the other columns, nearest to `shim`'s first (the lower
/// column on a tie).
fn nearest_shims(profile: &DeviceProfile, shim: Tile) -> impl Iterator<Item = Tile> {
    let mut columns: Vec<u32> = (0..profile.array.columns)
        .filter(|&c| c != shim.column)
        .collect();
    columns.sort_by_key(|&c| (c.abs_diff(shim.column), c));
    columns.into_iter().map(move |c| Tile::new(c, shim.row))
}

/// Whether two transfers touch the same caller bytes, one of them writing
/// (the two lanes of one transfer touch different halves of its records).
pub(super) fn conflict(a: &Transfer, b: &Transfer) -> bool {
    let writes = a.way == Way::Egress || b.way == Way::Egress;
    // Between each one's first and farthest byte (a strided one may leave
    // gaps: they count as touched).
    let span = |x: &Transfer| x.argument_offset + x.access().span();
    let overlap = a.argument_offset < span(b) && b.argument_offset < span(a);
    let lanes = a.copy.ptr == b.copy.ptr && a.lane != b.lane;
    writes && a.argument == b.argument && overlap && !lanes
}

/// The commands with each wait as late as it may go, each transfer on its
/// link (a link past a tile's channels is the plan's to refuse).
fn order(
    profile: &DeviceProfile,
    transfers: &mut [Transfer],
    program: &[Command],
    shared: &BTreeSet<(usize, bool)>,
    held: &Held,
) -> Vec<Command> {
    let mut links: Vec<Link> = Vec::new();
    let mut out = Vec::new();
    // Program waits not emitted yet, in order; and the transfers the
    // program has waited for.
    let mut deferred: Vec<(MlirOperation, Vec<usize>)> = Vec::new();
    let mut waitable: BTreeSet<usize> = BTreeSet::new();
    // Emits the wait for the transfer on `link`, under its program wait.
    let flush = |link: &mut Link,
                 deferred: &mut Vec<(MlirOperation, Vec<usize>)>,
                 out: &mut Vec<Command>| {
        let Some(t) = link.outstanding.take() else {
            return;
        };
        for (op, members) in deferred.iter_mut() {
            if let Some(i) = members.iter().position(|&m| m == t) {
                members.remove(i);
                out.push(Command::Wait(*op, vec![t]));
                return;
            }
        }
    };
    for command in program {
        match command {
            Command::Wait(op, members) => {
                waitable.extend(members);
                deferred.push((*op, members.clone()));
            }
            Command::Start(t) => {
                let t = *t;
                let (tile, shim) = (transfers[t].tile, transfers[t].shim);
                let ingress = transfers[t].way == Way::Ingress;
                // An endpoint a worker also admits: every wait the program
                // made so far comes first. Otherwise, the caller's bytes: a
                // later transfer waits for an earlier one that touches them
                // (once the program waited for it).
                let endpoint = shared.contains(&(transfers[t].channel, ingress));
                let mut waiting: Vec<(usize, usize)> = links
                    .iter()
                    .enumerate()
                    .filter_map(|(i, l)| Some((l.outstanding?, i)))
                    .filter(|&(u, _)| {
                        waitable.contains(&u)
                            && (endpoint || conflict(&transfers[u], &transfers[t]))
                    })
                    .collect();
                waiting.sort_unstable();
                for (_, link) in waiting {
                    flush(&mut links[link], &mut deferred, &mut out);
                }
                let ours = |l: &Link| l.tile == tile && l.ingress == ingress;
                let lowest = |links: &[Link], at: Tile, s2mm: bool| -> i64 {
                    (0..)
                        .find(|&c| {
                            !held.channels.contains(&(at, s2mm, c))
                                && !links.iter().any(|l| {
                                    (l.tile == at && l.ingress == s2mm && l.tile_channel == c)
                                        || (l.shim == at
                                            && l.ingress != s2mm
                                            && l.shim_channel == c)
                                })
                        })
                        .unwrap_or(i64::MAX)
                };
                let idle = links
                    .iter()
                    .position(|l| ours(l) && l.outstanding.is_none());
                let link = match idle {
                    Some(link) => link,
                    None => {
                        let tile_channel = lowest(&links, tile, ingress);
                        let shim_channel = lowest(&links, shim, !ingress);
                        // A new link leaves the shim a channel for each
                        // later tile of its column that has none yet (a
                        // shim channel cannot move to another tile).
                        let shim_used = links
                            .iter()
                            .filter(|l| l.shim == shim && l.ingress == ingress)
                            .count() as i64;
                        let waiting_tiles = transfers[t + 1..]
                            .iter()
                            .filter(|u| u.shim == shim && (u.way == Way::Ingress) == ingress)
                            .map(|u| u.tile)
                            .filter(|&other| {
                                other != tile
                                    && !links
                                        .iter()
                                        .any(|l| l.tile == other && l.ingress == ingress)
                            })
                            .collect::<BTreeSet<Tile>>()
                            .len() as i64;
                        let spare = channels(profile, shim, !ingress) - shim_used - 1;
                        let has_link = links.iter().any(ours);
                        let fits = tile_channel < channels(profile, tile, ingress)
                            && shim_channel < channels(profile, shim, !ingress)
                            && (!has_link || spare >= waiting_tiles);
                        let waited = links
                            .iter()
                            .enumerate()
                            .filter(|(_, l)| {
                                ours(l) && l.outstanding.is_some_and(|u| waitable.contains(&u))
                            })
                            .min_by_key(|(_, l)| l.outstanding)
                            .map(|(i, _)| i);
                        match (fits, waited) {
                            (false, Some(link)) => {
                                flush(&mut links[link], &mut deferred, &mut out);
                                link
                            }
                            (fits, _) => {
                                // When the column's shim has no channel to
                                // spare, the nearest column's shim that has
                                // one (the route crosses to it).
                                let tile_fits = tile_channel < channels(profile, tile, ingress);
                                let other = (!fits && tile_fits)
                                    .then(|| {
                                        nearest_shims(profile, shim).find_map(|other| {
                                            let c = lowest(&links, other, !ingress);
                                            (c < channels(profile, other, !ingress))
                                                .then_some((other, c))
                                        })
                                    })
                                    .flatten();
                                let (shim, shim_channel) = other.unwrap_or((shim, shim_channel));
                                links.push(Link {
                                    tile,
                                    ingress,
                                    tile_channel,
                                    shim,
                                    shim_channel,
                                    outstanding: None,
                                });
                                links.len() - 1
                            }
                        }
                    }
                };
                links[link].outstanding = Some(t);
                transfers[t].shim = links[link].shim;
                transfers[t].tile_channel = links[link].tile_channel;
                transfers[t].shim_channel = links[link].shim_channel;
                out.push(Command::Start(t));
            }
        }
    }
    for (op, members) in deferred {
        if !members.is_empty() {
            out.push(Command::Wait(op, members));
        }
    }
    out
}

/// Gives each transfer its tile and shim buffer descriptors, in start
/// order (a ring takes its chains' descriptors, consecutive), after the
/// ones the forwards hold.
fn number_descriptors(
    profile: &DeviceProfile,
    channels: &[Channel],
    transfers: &mut [Transfer],
    commands: &[Command],
    held: &Held,
) -> Result<(), Refusal> {
    let mut shim_next: BTreeMap<Tile, i64> = BTreeMap::new();
    let mut tile_next = held.descriptors.clone();
    for command in commands {
        let Command::Start(t) = command else {
            continue;
        };
        let t = &mut transfers[*t];
        let ring = t.tile_descriptors(&channels[t.channel], profile);
        t.tile_bd = take_descriptors(profile, &mut tile_next, t.tile, t.tile_channel, ring)
            .map_err(|message| Refusal {
                at: location(t.copy),
                message,
            })?;
        let shim = shim_next.entry(t.shim).or_insert(0);
        t.shim_bd = *shim;
        *shim += 1;
    }
    Ok(())
}

/// Takes `count` consecutive buffer descriptors of `tile` for its DMA
/// channel `channel`, `next` holding the next free one per tile and half: a
/// memory tile's even channels use the lower half, its odd ones the upper
/// (a core tile's overflow is `check_resources`' to refuse, with the rest).
pub(super) fn take_descriptors(
    profile: &DeviceProfile,
    next: &mut BTreeMap<(Tile, i64), i64>,
    tile: Tile,
    channel: i64,
    count: i64,
) -> Result<i64, String> {
    let (half, half_size) = if tile_kind(profile, tile) == Ok(TileKind::Memory) {
        let half_size = i64::from(profile.memory_tile.buffer_descriptors / 2);
        (channel % 2, half_size)
    } else {
        (0, i64::MAX)
    };
    let next = next.entry((tile, half)).or_insert(0);
    if *next + count > half_size {
        return Err(format!(
            "tile [{}, {}] (memory tile) runs out of buffer descriptors for its {} channels: its DMA transfers need {}; those channels have {half_size}",
            tile.column, tile.row, if half == 0 { "even" } else { "odd" }, *next + count
        ));
    }
    let first = if half == 1 { half_size + *next } else { *next };
    *next += count;
    Ok(first)
}
