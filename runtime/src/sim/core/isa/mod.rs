//! The instruction-level core model: each enabled core loads its tile
//! image, a core ELF, as aie-rt's loader does (`load`) and executes its
//! AIE2P bundles (`machine`), one per cycle, with results landing at the
//! cycles llvm-aie's itineraries give (`timing`, `registers`), loads and
//! stores through its four data views (`neighbours`), lock requests on the
//! array's credits, and a hazard checker (`checks`). `semantics` says what
//! each modelled scalar instruction does and `vector` each vector one (with
//! the unit's open semantics in `assumptions`), `addressing` how loads and
//! stores form addresses, `exec` what an instruction may touch,
//! `operands` how its operands resolve, `bundle` a decoded bundle, `slot`
//! one of its slots and what they decide at decode for the checks, `words`
//! a vector value held inline.
//! docs/array-simulator.md, "The isa core", lists the assumptions.

mod addressing;
mod assumptions;
mod bundle;
mod checks;
mod exec;
mod load;
mod machine;
mod neighbours;
mod operands;
mod registers;
mod semantics;
mod slot;
mod structural;
#[cfg(test)]
mod tests;
mod timing;
mod vector;
#[cfg(test)]
mod vector_tests;
mod words;

pub use machine::Options;

use super::{Cores, Timeline};
use crate::sim::array::Array;
use loom_diagnostic::Diagnostic;
use loom_targets::xdna::elf::TileImage;
use loom_targets::{DeviceProfile, Tile};
pub use machine::ProgramSource;
use machine::{lock_name, Core, Fault, Status};
use std::collections::{BTreeMap, HashMap};

/// One core's figures for a run report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreFigures {
    pub name: String,
    pub tile: Tile,
    /// Cycles from its start to its finish (or where it stopped).
    pub cycles: u64,
    pub bundles: u64,
    /// Cycles stalled on each lock, by the lock's name.
    pub stalls: BTreeMap<String, u64>,
    /// Cycles stalled at each waiting acquire, by its source location
    /// (the line table's; the address where the image has none).
    pub stall_sites: BTreeMap<String, u64>,
    /// Bundles that issued an instruction in the vector slot.
    pub vector_bundles: u64,
    /// `event` instructions issued (the tile's event logic is not modelled).
    pub events: u64,
}

pub struct IsaCores {
    profile: &'static DeviceProfile,
    /// Tile image bytes by name.
    images: HashMap<String, Vec<u8>>,
    options: Options,
    cores: Vec<Core>,
    memories: BTreeMap<Tile, Vec<u8>>,
    /// Per tile image, program address -> source location (the code
    /// generator's line table, when it has one).
    lines: HashMap<String, BTreeMap<u32, String>>,
    /// Whether a trace asked for each core's lock waits.
    record: bool,
}

impl IsaCores {
    /// Cores of `profile` that run the artifact's `images`.
    pub fn new(
        profile: &'static DeviceProfile,
        images: &[TileImage],
        options: Options,
    ) -> IsaCores {
        IsaCores {
            profile,
            images: images
                .iter()
                .map(|i| (i.name.clone(), i.bytes.clone()))
                .collect(),
            options,
            cores: Vec::new(),
            memories: BTreeMap::new(),
            lines: HashMap::new(),
            record: false,
        }
    }

    /// Where the code of tile image `image` came from: errors and waits at
    /// an address name the source location of the nearest entry at or
    /// below it.
    pub fn set_line_table(&mut self, image: &str, table: BTreeMap<u32, String>) {
        self.lines.insert(image.to_string(), table);
    }

    fn location(&self, image: &str, address: u32) -> String {
        self.lines
            .get(image)
            .and_then(|t| t.range(..=address).next_back())
            .map_or_else(String::new, |(_, loc)| loc.clone())
    }

    fn failure(&self, core: &Core, fault: Fault) -> Diagnostic {
        Diagnostic::error(self.location(&core.image, fault.address), fault.message)
    }

    /// Per core: cycles, bundles issued, cycles stalled per lock.
    pub fn figures(&self) -> Vec<CoreFigures> {
        self.cores
            .iter()
            .map(|c| CoreFigures {
                name: c.image.clone(),
                tile: c.tile,
                cycles: c.cycle - c.started,
                bundles: c.bundles,
                stalls: c.stalls.clone(),
                stall_sites: c
                    .stall_sites
                    .iter()
                    .fold(BTreeMap::new(), |mut sites, (&pc, &n)| {
                        let at = self.location(&c.image, pc);
                        let at = if at.is_empty() {
                            format!("{pc:#06x}")
                        } else {
                            at
                        };
                        *sites.entry(at).or_insert(0) += n;
                        sites
                    }),
                vector_bundles: c.vector_bundles,
                events: c.events,
            })
            .collect()
    }

    #[cfg(test)]
    fn core(&self, tile: Tile) -> &Core {
        self.cores.iter().find(|c| c.tile == tile).expect("started")
    }
}

impl Cores for IsaCores {
    fn start(&mut self, image: &str, tile: Tile, at: u64) -> Result<(), Diagnostic> {
        let fail = |m: String| Diagnostic::error("", m);
        if let Some(running) = self
            .cores
            .iter()
            .find(|c| c.tile == tile && !matches!(c.status, Status::Done))
        {
            return Err(fail(format!(
                "core {tile} is started again while it still runs tile image `{}`",
                running.image
            )));
        }
        let bytes = self.images.get(image).ok_or_else(|| {
            fail(format!(
                "core {tile}: the artifact has no tile image `{image}`"
            ))
        })?;
        let program =
            load::load(self.profile, image, bytes, tile, &mut self.memories).map_err(fail)?;
        // The code generator's line table, when the image has one, names the
        // source line of a fault or a wait (unless a caller set one).
        if !self.lines.contains_key(image) {
            let lines = loom_aie2p_isa::elf::lines(bytes)
                .map_err(|e| fail(format!("tile image `{image}`: {e}")))?;
            let table = lines.into_iter().map(|l| (l.address, l.location)).collect();
            self.lines.insert(image.to_string(), table);
        }
        self.cores.retain(|c| c.tile != tile);
        self.cores.push(Core::new(
            self.profile,
            tile,
            image,
            program.memory,
            program.entry,
            at,
        ));
        if self.record {
            if let Some(core) = self.cores.last_mut() {
                core.stall_log = Some(Vec::new());
            }
        }
        Ok(())
    }

    fn run(&mut self, array: &mut Array) -> Result<bool, Diagnostic> {
        let mut ran = false;
        for k in 0..self.cores.len() {
            let core = &mut self.cores[k];
            if self.options.program == ProgramSource::ControlCode && !core.program_taken {
                // The core runs what the control code put in its program
                // memory, as on silicon, not what the tile image says.
                let Some(program) = array.program_memory(core.tile) else {
                    return Err(Diagnostic::error(
                        "",
                        format!(
                            "core {} (tile image `{}`) was enabled, but the control code never \
                             wrote its program memory (BLOCKWRITE at {:#x})",
                            core.tile, core.image, self.profile.core_tile.program_memory_offset
                        ),
                    ));
                };
                core.set_program(program.to_vec());
                core.program_taken = true;
            }
            match core.run(array, &mut self.memories, &self.options) {
                Ok(r) => ran |= r,
                Err(fault) => return Err(self.failure(&self.cores[k], fault)),
            }
        }
        Ok(ran)
    }

    fn unfinished(&self) -> Vec<(String, String)> {
        self.cores
            .iter()
            .filter_map(|c| {
                let why = match &c.status {
                    Status::Done => return None,
                    Status::Waiting { request, text } => format!(
                        "core {} (tile image `{}`) waits at {:#06x} `{text}` to acquire {} \
                         ({}) since cycle {}",
                        c.tile,
                        c.image,
                        c.pc,
                        lock_name(request),
                        if request.value < 0 {
                            format!(">= {}", request.value.unsigned_abs())
                        } else {
                            format!("== {}", request.value)
                        },
                        c.cycle
                    ),
                    Status::Running => format!(
                        "core {} (tile image `{}`) has not finished (at {:#06x}, cycle {})",
                        c.tile, c.image, c.pc, c.cycle
                    ),
                };
                Some((self.location(&c.image, c.pc), why))
            })
            .collect()
    }

    fn steps(&self) -> u64 {
        self.cores.iter().map(|c| c.bundles).sum()
    }

    fn clocks(&self) -> Vec<(String, u64, u64)> {
        self.cores
            .iter()
            .map(|c| (c.image.clone(), c.cycle, c.bundles))
            .collect()
    }

    fn record_stalls(&mut self) {
        self.record = true;
        for core in &mut self.cores {
            core.stall_log.get_or_insert_with(Vec::new);
        }
    }

    fn timelines(&self) -> Vec<Timeline> {
        self.cores
            .iter()
            .map(|c| Timeline {
                name: format!("core {} ({})", c.tile, c.image),
                tile: c.tile,
                started: c.started,
                end: c.cycle,
                finished: matches!(c.status, Status::Done),
                stalls: c.stall_log.clone().unwrap_or_default(),
            })
            .collect()
    }

    fn tile_memory(&mut self, tile: Tile, bytes: u64) -> &mut [u8] {
        self.memories
            .entry(tile)
            .or_insert_with(|| vec![0; bytes as usize])
    }
}
