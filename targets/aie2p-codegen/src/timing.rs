//! The timing of one instruction as the scheduler and the latency checker
//! both read it: the cycle (after issue) each register is read or
//! written, its bypass, the memory access, and the functional units each
//! cycle holds, from the itineraries of `loom_aie2p_isa::schedule`.
//!
//! An opcode whose itinerary is not transcribed yet (today: `st`, `rel`,
//! `sub`, `padd*` and the vector classes), or an operand its itinerary
//! gives no cycle, is timed by one stated assumption, here and nowhere
//! else: each of its register reads, writes and memory accesses may happen
//! at any cycle of the window the transcribed itineraries span (the
//! earliest to the latest cycle any of them names), and it holds every
//! functional unit over that window. Scheduling against the whole window
//! is safe whatever the real cycle inside it; it costs bundles, which the
//! transcription gives back.

use loom_aie2p_isa::rules::LOCK_REQUEST_DISTANCE;
use loom_aie2p_isa::schedule::StageKind;
use loom_aie2p_isa::{isa, Instruction, OperandKind, Value};
use std::sync::OnceLock;

/// The cycles (after issue) an effect may happen at, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub early: u32,
    pub late: u32,
}

impl Window {
    fn at(cycle: u32) -> Window {
        Window {
            early: cycle,
            late: cycle,
        }
    }
}

/// A register read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    pub register: String,
    pub window: Window,
    pub bypass: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memory {
    Load,
    Store,
}

/// A functional unit held at a cycle after issue: one of `units`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitUse {
    pub cycle: u32,
    pub units: Vec<String>,
    /// LLVM's Required (conflicts with any holder) or Reserved (only with
    /// Required holders).
    pub required: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effects {
    pub reads: Vec<Access>,
    pub writes: Vec<Access>,
    pub memory: Option<(Memory, Window)>,
    pub units: Vec<UnitUse>,
    /// Holds every functional unit over these cycles (the assumption).
    pub every_unit: Option<Window>,
    /// `acq`/`rel`: at least 4 bundles from the next (§9).
    pub lock_request: bool,
    /// Lock requests and `done` order the memory accesses around them.
    pub barrier: bool,
    /// Some of this was timed by the assumption.
    pub assumed: bool,
}

/// The assumption's window: the earliest and latest cycle the transcribed
/// itineraries name.
pub fn assumed_window() -> Window {
    static WINDOW: OnceLock<Window> = OnceLock::new();
    *WINDOW.get_or_init(|| {
        let isa = isa();
        let cycles: Vec<u32> = isa
            .opcodes
            .iter()
            .filter_map(|o| isa.schedule.itinerary(o))
            .flat_map(|i| {
                i.operand_cycles()
                    .map(|(_, c)| c)
                    .chain(i.memory_cycles.iter().copied())
                    .collect::<Vec<_>>()
            })
            .collect();
        Window {
            early: cycles.iter().copied().min().unwrap_or(0),
            late: cycles.iter().copied().max().unwrap_or(0),
        }
    })
}

fn memory_kind(mnemonic: &str) -> Option<Memory> {
    if ["lda", "vlda", "vldb"]
        .iter()
        .any(|p| mnemonic.starts_with(p))
    {
        Some(Memory::Load)
    } else if mnemonic.starts_with("st") || mnemonic.starts_with("vst") {
        Some(Memory::Store)
    } else {
        None
    }
}

/// Register names a value covers: a pair `r1:r0` is both.
fn registers(value: &Value) -> Vec<String> {
    match value {
        Value::Register(name) => name.split(':').map(str::to_string).collect(),
        Value::Immediate(_) => vec![],
    }
}

/// The effects of `inst`.
pub fn effects(inst: &Instruction) -> Effects {
    let isa = isa();
    let opcode = inst.opcode;
    let itinerary = isa.schedule.itinerary(opcode);
    let assumption = assumed_window();
    let mut assumed = itinerary.is_none();
    let mut window_of = |name: &str| match itinerary.and_then(|i| i.cycle(name)) {
        Some(c) => Window::at(c),
        None => {
            assumed = true;
            assumption
        }
    };
    let bypass_of = |name: &str| itinerary.and_then(|i| i.bypass(name)).map(str::to_string);
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for operand in &opcode.operands {
        if operand.kind == OperandKind::Immediate {
            continue;
        }
        let Some(value) = inst.value(&operand.name) else {
            continue;
        };
        let window = window_of(&operand.name);
        for register in registers(&value) {
            let access = Access {
                register,
                window,
                bypass: bypass_of(&operand.name),
            };
            if operand.output {
                writes.push(access);
            } else {
                reads.push(access);
            }
        }
    }
    for (list, names) in [
        (&mut writes, &opcode.implicit_defs),
        (&mut reads, &opcode.implicit_uses),
    ] {
        for record in names {
            let register = isa
                .register(record)
                .map_or_else(|| record.to_lowercase(), |r| r.asm.clone());
            list.push(Access {
                register,
                window: window_of(record),
                bypass: bypass_of(record),
            });
        }
    }
    let memory = memory_kind(&opcode.mnemonic).map(|kind| {
        let cycles = itinerary.map_or(&[][..], |i| i.memory_cycles.as_slice());
        match (cycles.iter().min(), cycles.iter().max()) {
            (Some(&early), Some(&late)) => (kind, Window { early, late }),
            _ => {
                assumed = true;
                (kind, assumption)
            }
        }
    });
    let units = itinerary
        .map(|i| {
            i.stages
                .iter()
                .flat_map(|s| {
                    (s.start..s.start + s.cycles).map(move |cycle| UnitUse {
                        cycle,
                        units: s.units.clone(),
                        required: s.kind == StageKind::Required,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let lock_request = opcode.mnemonic.starts_with("acq") || opcode.mnemonic.starts_with("rel");
    Effects {
        reads,
        writes,
        memory,
        units,
        every_unit: itinerary.is_none().then_some(Window {
            early: 0,
            late: assumption.late,
        }),
        lock_request,
        barrier: lock_request || opcode.mnemonic == "done",
        assumed,
    }
}

impl Effects {
    /// Bundles after issue until the next may hold anything: every write
    /// visible to the earliest read, every read done before the earliest
    /// write, the memory access done, the units free, the lock-request
    /// distance kept. Block exits wait this long (values do not stay in
    /// flight across a block boundary).
    pub fn drain(&self) -> u32 {
        let first = assumed_window().early;
        let after = |late: u32| (late + 1).saturating_sub(first);
        let mut drain = 1;
        for w in &self.writes {
            drain = drain.max(after(w.window.late));
        }
        for r in &self.reads {
            drain = drain.max(r.window.late.saturating_sub(first));
        }
        if let Some((_, window)) = self.memory {
            drain = drain.max(after(window.late));
        }
        for u in &self.units {
            drain = drain.max(u.cycle + 1);
        }
        if let Some(window) = self.every_unit {
            drain = drain.max(window.late + 1);
        }
        if self.lock_request {
            drain = drain.max(LOCK_REQUEST_DISTANCE as u32);
        }
        drain
    }
}

/// Bundles from a write's issue to a read's that sees it: LLVM's rule,
/// def - use + 1, one less through a shared bypass (as
/// `loom_aie2p_isa::schedule::latency`), over the windows' worst ends.
pub fn read_after_write(write: &Access, read: &Access) -> u32 {
    let latency = (write.window.late + 1).saturating_sub(read.window.early);
    let exact = write.window.early == write.window.late && read.window.early == read.window.late;
    let forwarded = exact && write.bypass.is_some() && write.bypass == read.bypass;
    if latency > 0 && forwarded {
        latency - 1
    } else {
        latency
    }
}

/// Bundles from a write's issue to a later write of the same register,
/// so that the later lands last.
pub fn write_after_write(first: &Access, second: &Access) -> u32 {
    (first.window.late + 1)
        .saturating_sub(second.window.early)
        .max(1)
}

/// Bundles from a read's issue to a later write of the same register, so
/// that the read still sees the old value.
pub fn write_after_read(read: &Access, write: &Access) -> u32 {
    read.window.late.saturating_sub(write.window.early)
}

/// Bundles between two memory accesses, at least one a store, so that
/// they happen in program order.
pub fn memory_order(first: (Memory, Window), second: (Memory, Window)) -> Option<u32> {
    match (first.0, second.0) {
        (Memory::Load, Memory::Load) => None,
        (Memory::Load, Memory::Store) => Some(first.1.late.saturating_sub(second.1.early)),
        _ => Some((first.1.late + 1).saturating_sub(second.1.early).max(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loom_aie2p_isa::parse_bundle;

    fn of(text: &str) -> Effects {
        effects(&parse_bundle(text).unwrap()[0])
    }

    #[test]
    fn a_scalar_load_result_is_read_seven_bundles_later() {
        let load = of("lda r1, [p0, #4]");
        let add = of("add r2, r1, r1");
        assert_eq!(read_after_write(&load.writes[0], &add.reads[0]), 7);
        assert!(!load.assumed);
        assert_eq!(load.memory, Some((Memory::Load, Window::at(5))));
    }

    #[test]
    fn an_untranscribed_store_is_timed_by_the_assumption() {
        let store = of("st r1, [p0, #0]");
        assert!(store.assumed);
        assert_eq!(store.reads[0].window, assumed_window());
        assert!(store.every_unit.is_some());
        assert_eq!(assumed_window(), Window { early: 1, late: 8 });
    }

    #[test]
    fn an_add_writes_the_carry_implicitly() {
        let add = of("add r2, r1, r1");
        assert!(add.writes.iter().any(|w| w.register == "srcarry"));
    }
}
