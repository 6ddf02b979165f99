//! A run's timeline, recorded for a trace (docs/array-simulator.md,
//! "Traces"): slices of modelled cycles on tracks, one track for the
//! command processor, one per core and one per DMA channel. The array
//! records its slices as its engines move (when [`Array::record`] was
//! called; an untraced run checks one `Option` per event), the cores their
//! stalls, and the run turns the cores' timelines into compute and lock-wait
//! slices at the end. `json` writes traces as Trace Event Format JSON.
//!
//! [`Array::record`]: super::array::Array::record

pub mod json;

// The core model interface's timeline (`super::core` re-exports it), named
// at its source: the array records into a trace, so a trace must not
// depend on the core interface, which depends on the array.
use crate::interp::timeline::Timeline;
use loom_targets::xdna::regs::Direction;
use loom_targets::Tile;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Where a slice happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Track {
    /// The command processor executing the TXN control code.
    Control,
    /// The core of a tile, running its tile image: its first start (0),
    /// or a later one after a partition reset, which the model may start
    /// before the earlier run's modelled end, so it gets a track of its own.
    Core(Tile, u32),
    /// A DMA channel (not a Loom channel) of a tile.
    Dma(Tile, Direction, u32),
}

impl Track {
    /// The order tracks are listed in: the command processor, the cores,
    /// then the DMA channels, each by tile.
    fn key(&self) -> (u8, Tile, u8, u32) {
        match *self {
            Track::Control => (0, Tile::new(0, 0), 0, 0),
            Track::Core(tile, start) => (1, tile, 0, start),
            Track::Dma(tile, direction, channel) => (
                2,
                tile,
                matches!(direction, Direction::Mm2s).into(),
                channel,
            ),
        }
    }
}

impl Ord for Track {
    fn cmp(&self, other: &Track) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl PartialOrd for Track {
    fn partial_cmp(&self, other: &Track) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// What a slice shows; its name is the trace's category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A buffer descriptor moving its bytes.
    Transfer,
    /// A core or DMA channel stalled on a lock until it got its credit.
    LockWait,
    /// An S2MM channel's descriptor waiting for its stream's bytes.
    StreamWait,
    /// A core executing its worker.
    Compute,
    /// The command processor writing registers (one TXN op).
    Control,
    /// The command processor at a SYNC, waiting for a task-complete token.
    TokenWait,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Transfer => "transfer",
            Kind::LockWait => "lock wait",
            Kind::StreamWait => "stream wait",
            Kind::Compute => "compute",
            Kind::Control => "control",
            Kind::TokenWait => "token wait",
        }
    }
}

/// A value shown with a slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    Int(u64),
    Text(String),
}

/// From `begin` to `end` (modelled cycles), `track` was doing `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice {
    pub track: Track,
    pub kind: Kind,
    pub name: String,
    pub begin: u64,
    pub end: u64,
    pub args: Vec<(&'static str, Arg)>,
}

/// The slices of one run, and the names of the tracks they are on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    /// The device profile the array followed.
    pub profile: String,
    /// The run's modelled cycles (the invocation's end; for a failed run,
    /// the last slice's end).
    pub cycles: u64,
    pub tracks: BTreeMap<Track, String>,
    pub slices: Vec<Slice>,
}

impl Trace {
    pub fn new(profile: &str) -> Trace {
        Trace {
            profile: profile.into(),
            ..Trace::default()
        }
    }

    /// Add a slice on `track`, named `track_name()` if it is new.
    pub(super) fn slice(&mut self, slice: Slice, track_name: impl FnOnce() -> String) {
        self.tracks.entry(slice.track).or_insert_with(track_name);
        self.slices.push(slice);
    }

    /// Each core's compute and lock-wait slices: it executed from its
    /// start to its end except while it stalled.
    pub(super) fn cores(&mut self, timelines: &[Timeline]) {
        let mut starts: BTreeMap<Tile, u32> = BTreeMap::new();
        for timeline in timelines {
            let start = starts.entry(timeline.tile).or_default();
            let track = Track::Core(timeline.tile, *start);
            *start += 1;
            let name = || match track {
                Track::Core(tile, n) if n > 0 => format!("tile {tile} core (start {})", n + 1),
                _ => format!("tile {} core", timeline.tile),
            };
            let mut at = timeline.started;
            let compute = |begin: u64, end: u64| Slice {
                track,
                kind: Kind::Compute,
                name: "compute".into(),
                begin,
                end,
                args: vec![("worker", Arg::Text(timeline.name.clone()))],
            };
            for stall in &timeline.stalls {
                if stall.begin > at {
                    self.slice(compute(at, stall.begin), name);
                }
                self.slice(
                    Slice {
                        track,
                        kind: Kind::LockWait,
                        name: format!("lock wait: tile {} lock {}", stall.tile, stall.lock),
                        begin: stall.begin,
                        end: stall.end,
                        args: vec![
                            (
                                "lock",
                                Arg::Text(format!("tile {} lock[{}]", stall.tile, stall.lock)),
                            ),
                            ("acquire", Arg::Text(format!(">= {}", stall.value))),
                        ],
                    },
                    name,
                );
                at = at.max(stall.end);
            }
            if timeline.end > at || at == timeline.started {
                self.slice(compute(at, timeline.end.max(at)), name);
            }
        }
    }

    /// The latest end of any slice.
    pub fn last_end(&self) -> u64 {
        self.slices.iter().map(|s| s.end).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests;
