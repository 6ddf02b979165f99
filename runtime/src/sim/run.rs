//! Running a `.xdna` artifact on the array model: a command processor
//! executes the TXN control code op by op (stopping at each SYNC until its
//! token arrives), the array's DMA engines move data, and each enabled core
//! runs its tile image's worker on a core model (`super::core`). A state where nothing can
//! move while the control code waits, or cores have not finished, is a hang,
//! reported with every blocked engine and core.

use super::array::{Array, Effect, TokenKey};
use super::core::lowir::LowIrCores;
use super::core::Cores;
use super::error::SimError;
use super::memory::{argument_address, tile_memory_bytes, Memory};
use super::trace::Trace;
use crate::interp::program::Program;
use loom_diagnostic::Diagnostic;
use loom_targets::xdna::elf::Artifact;
use loom_targets::xdna::txn::Txn;
use loom_targets::{DeviceProfile, Tile};

/// The memories of one run: the caller's buffers and the cores' tile
/// memories.
struct Memories<'m> {
    callers: &'m mut [Vec<u8>],
    cores: &'m mut dyn Cores,
    profile: &'static DeviceProfile,
}

impl Memory for Memories<'_> {
    fn tile(&mut self, tile: Tile) -> &mut [u8] {
        let bytes = tile_memory_bytes(self.profile, tile);
        self.cores.tile_memory(tile, bytes)
    }

    fn ddr(&mut self, address: u64, len: usize) -> Result<&mut [u8], String> {
        let argument = (address >> 32) as usize;
        let offset = (address & 0xFFFF_FFFF) as usize;
        if argument == 0 || argument > self.callers.len() {
            return Err(format!(
                "DDR address {address:#x} is in none of the {} caller buffers",
                self.callers.len()
            ));
        }
        let buffer = &mut self.callers[argument - 1];
        let size = buffer.len();
        match offset.checked_add(len) {
            Some(end) if end <= size => Ok(&mut buffer[offset..end]),
            _ => Err(format!(
                "DDR bytes [{offset}, {}) of argument {} are outside its {size} bytes",
                offset.saturating_add(len),
                argument - 1
            )),
        }
    }
}

/// What a run produced.
pub struct Outcome {
    /// The caller's buffers after the invocation.
    pub buffers: Vec<Vec<u8>>,
    /// TXN ops the command processor executed.
    pub txn_ops: usize,
    /// Cores started, and the ops they executed.
    pub cores: usize,
    pub core_steps: u64,
    pub timing: Timing,
}

/// The timing model's figures for one invocation (docs/array-simulator.md).
pub struct Timing {
    /// Modelled cycles from the first control word to the last completion.
    pub cycles: u64,
    /// Records the invocation sent back (buffer descriptors completed by the
    /// MM2S channels of core and memory tiles; the lowering sends every one
    /// of them to the caller).
    pub records: u64,
    /// What limits it: the busiest resource and its busy cycles, or a lock
    /// chain when no resource is busy half the time.
    pub bound: String,
}

/// Why a run failed: located at worker code, or at "" (the artifact).
fn failure(message: String) -> Diagnostic {
    Diagnostic::error("", message)
}

impl From<SimError> for Diagnostic {
    fn from(e: SimError) -> Diagnostic {
        failure(e.to_string())
    }
}

/// Core ops after which a run stops as runaway unless told otherwise:
/// about 300 times what the largest program in the repository runs.
pub const DEFAULT_MAX_CORE_STEPS: u64 = 1 << 22;

/// The device profile `artifact` is admitted for.
pub fn profile_of(artifact: &Artifact) -> Result<&'static DeviceProfile, Diagnostic> {
    loom_targets::profiles()
        .iter()
        .find(|p| p.name == artifact.profile)
        .ok_or_else(|| {
            failure(format!(
                "the artifact is for device profile `{}`, which no profile file describes",
                artifact.profile
            ))
        })
}

/// Run `artifact` with the caller's buffers `args`; `program` holds the
/// translated worker functions of its tile images, whose cores (the Low IR
/// model) stop as runaway after `max_core_steps` ops in all.
pub fn run(
    artifact: &Artifact,
    program: &Program,
    args: Vec<Vec<u8>>,
    max_core_steps: u64,
) -> Result<Outcome, Diagnostic> {
    let profile = profile_of(artifact)?;
    let mut low_ir = LowIrCores::new(program, profile.timing.core_cycles_per_op, max_core_steps);
    invoke(artifact, &mut low_ir, args, false).0
}

/// [`run`], recording its timeline: the trace of what ran, also when the
/// run fails (a hang's trace shows what waited; it is empty when the
/// artifact could not start).
pub fn run_traced(
    artifact: &Artifact,
    program: &Program,
    args: Vec<Vec<u8>>,
    max_core_steps: u64,
) -> (Result<Outcome, Diagnostic>, Trace) {
    let profile = match profile_of(artifact) {
        Ok(profile) => profile,
        Err(e) => return (Err(e), Trace::new(&artifact.profile)),
    };
    let mut low_ir = LowIrCores::new(program, profile.timing.core_cycles_per_op, max_core_steps);
    let (outcome, trace) = invoke(artifact, &mut low_ir, args, true);
    let trace = trace.unwrap_or_else(|| Trace::new(&artifact.profile));
    (outcome, trace)
}

/// Run `artifact` with the caller's buffers `args`, its cores on the core
/// model `cores`.
pub fn run_with(
    artifact: &Artifact,
    cores: &mut dyn Cores,
    args: Vec<Vec<u8>>,
) -> Result<Outcome, Diagnostic> {
    invoke(artifact, cores, args, false).0
}

/// [`run_with`], recording its timeline (see [`run_traced`]).
pub fn run_with_traced(
    artifact: &Artifact,
    cores: &mut dyn Cores,
    args: Vec<Vec<u8>>,
) -> (Result<Outcome, Diagnostic>, Trace) {
    let (outcome, trace) = invoke(artifact, cores, args, true);
    let trace = trace.unwrap_or_else(|| Trace::new(&artifact.profile));
    (outcome, trace)
}

/// The run on `cores`, and its trace if `record`.
fn invoke(
    artifact: &Artifact,
    cores: &mut dyn Cores,
    args: Vec<Vec<u8>>,
    record: bool,
) -> (Result<Outcome, Diagnostic>, Option<Trace>) {
    let profile = match profile_of(artifact) {
        Ok(profile) => profile,
        Err(e) => return (Err(e), None),
    };
    let txn = match Txn::decode(&artifact.ctrltext) {
        Ok(txn) => txn,
        Err(e) => return (Err(failure(format!("the artifact's .ctrltext: {e}"))), None),
    };
    let mut array = Array::new(profile);
    array.carry_pdis(&artifact.pdis);
    if record {
        array.record();
        cores.record_stalls();
    }
    let outcome = drive(artifact, &txn, &mut array, cores, args);
    let trace = array.take_trace().map(|mut trace| {
        trace.cores(&cores.timelines());
        trace.cycles = match &outcome {
            Ok(outcome) => outcome.timing.cycles,
            Err(_) => trace.last_end(),
        };
        trace
    });
    (outcome, trace)
}

/// The command processor, the array and the cores through the artifact's
/// control code.
fn drive(
    artifact: &Artifact,
    txn: &Txn,
    array: &mut Array,
    cores: &mut dyn Cores,
    mut args: Vec<Vec<u8>>,
) -> Result<Outcome, Diagnostic> {
    let profile = array.profile();
    let arguments: Vec<u64> = (0..args.len()).map(argument_address).collect();
    let mut started = 0;
    let mut next = 0;
    let mut stopped: Option<Stop> = None;
    loop {
        // The command processor runs until it waits or the code ends.
        while stopped.is_none() && next < txn.ops.len() {
            match array.apply(next, &txn.ops[next], &arguments)? {
                Effect::None => {}
                Effect::CoreEnabled(tile) => {
                    cores.start(
                        &image_on(artifact, tile, next)?,
                        tile,
                        array.control_clock(),
                    )?;
                    started += 1;
                }
                Effect::Wait(key) => stopped = Some(Stop::Sync(next, key)),
                Effect::Reset => stopped = Some(Stop::Reset(next)),
            }
            next += 1;
        }
        if let Some(Stop::Sync(op, key)) = &stopped {
            if array.take_token(*op, key)? {
                stopped = None;
                continue;
            }
        }
        let moved = array.step(&mut Memories {
            callers: &mut args,
            cores,
            profile,
        })?;
        let ran = cores.run(array)?;
        let settled = !moved && !ran;
        if let Some(Stop::Reset(op)) = stopped {
            // The engines and cores go on until the reset; work it would
            // cut off is an error, as a hang or lost data would be.
            if settled {
                let why = format!(
                    "TXN op {op}: the LOADPDI resets the partition while its work is unfinished"
                );
                unfinished(array, cores, why)?;
                array.reset();
                stopped = None;
            }
            continue;
        }
        let done = stopped.is_none() && next == txn.ops.len() && !array.busy();
        if done && cores.unfinished().is_empty() {
            let why = "the invocation completed with stream data no DMA channel took";
            unfinished(array, cores, why.into())?;
            break;
        }
        if settled {
            let waiting = match stopped {
                Some(Stop::Sync(op, key)) => Some((op, key)),
                _ => None,
            };
            return Err(hang(array, cores, waiting, done));
        }
    }
    Ok(Outcome {
        txn_ops: txn.ops.len(),
        cores: started,
        core_steps: cores.steps(),
        timing: timing(array, cores),
        buffers: args,
    })
}

/// The invocation's modelled cycles and what bounds them.
fn timing(array: &Array, cores: &dyn Cores) -> Timing {
    let records = array.records_sent();
    let (dma_end, busiest_dma) = array.dma_times();
    let control = array.control_clock();
    let control_busy = array.control_busy();
    let core_clocks = cores.clocks();
    let cycles = core_clocks
        .iter()
        .map(|c| c.1)
        .chain([dma_end, control])
        .max()
        .unwrap_or(0);
    let mut candidates: Vec<(String, u64)> = core_clocks
        .into_iter()
        .map(|(name, _, busy)| (format!("core compute: {name}"), busy))
        .collect();
    if let Some((name, busy)) = busiest_dma {
        candidates.push((format!("DMA bandwidth: {name}"), busy));
    }
    candidates.push(("the command processor".into(), control_busy));
    let (name, busy) = candidates
        .into_iter()
        .max_by_key(|c| c.1)
        .unwrap_or_default();
    let bound = if 2 * busy >= cycles {
        format!("{name} ({busy} busy cycles)")
    } else {
        format!("a lock chain (the busiest resource, {name}, is busy {busy} of {cycles} cycles)")
    };
    Timing {
        cycles,
        records,
        bound,
    }
}

/// Where the command processor stopped: at a SYNC (op, the token it waits
/// for) or at a LOADPDI that resets the partition.
enum Stop {
    Sync(usize, TokenKey),
    Reset(usize),
}

/// The error `message`, with a note for each, if DMA tasks, cores or stream
/// bytes are left over.
fn unfinished(array: &Array, cores: &dyn Cores, message: String) -> Result<(), Diagnostic> {
    let mut notes: Vec<(String, String)> = array
        .pending()
        .into_iter()
        .chain(array.undelivered())
        .map(|why| (String::new(), why))
        .collect();
    notes.extend(cores.unfinished());
    if notes.is_empty() {
        return Ok(());
    }
    Err(notes
        .into_iter()
        .fold(failure(message), |d, (loc, why)| d.with_note(loc, why)))
}

/// The worker function the artifact's tile image for `tile` holds; the
/// core is enabled by TXN op `op`.
fn image_on(artifact: &Artifact, tile: Tile, op: usize) -> Result<String, Diagnostic> {
    artifact
        .tile_images
        .iter()
        .find(|i| Tile::new(i.column, i.row) == tile)
        .map(|i| i.name.clone())
        .ok_or_else(|| {
            failure(format!(
                "TXN op {op}: tile {tile}: enables core {tile}, but the artifact has no tile \
                 image (program) for it"
            ))
        })
}

/// Nothing moves: say what waits for what.
fn hang(
    array: &Array,
    cores: &dyn Cores,
    waiting: Option<(usize, TokenKey)>,
    control_done: bool,
) -> Diagnostic {
    let message = match waiting {
        Some((op, key)) => format!(
            "hang: TXN op {op} (SYNC on tile {} {} channel {}) waits for a task-complete token that no engine can issue",
            key.tile,
            key.direction.name(),
            key.channel
        ),
        None if control_done => {
            "hang: the control code finished, but cores or DMA engines are still blocked".into()
        }
        None => "hang: nothing can move".into(),
    };
    let blocked = array.pending().into_iter().map(|why| (String::new(), why));
    blocked
        .chain(cores.unfinished())
        .fold(failure(message), |d, (loc, why)| d.with_note(loc, why))
}
