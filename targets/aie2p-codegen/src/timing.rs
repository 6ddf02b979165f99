//! The timing of one instruction as the scheduler and the latency checker
//! both read it: the cycle (after issue) each register is read or
//! written, its bypass, the memory access, and the functional units each
//! cycle holds, from the itineraries of `loom_aie2p_isa::schedule`.
//!
//! Registers are taken apart into their leaves (`x0` is `wl0` and `wh0`,
//! `dm0` its four `bm` quarters, `y0` two `x`), so an access to a register
//! meets every access to a register it overlaps.
//!
//! Every opcode but the NOPs has an itinerary giving every register
//! operand a cycle; an instruction whose opcode or operand has none is an
//! `Untimed` error, never a guess.

use loom_aie2p_isa::rules::LOCK_REQUEST_DISTANCE;
use loom_aie2p_isa::schedule::StageKind;
use loom_aie2p_isa::{isa, Instruction, OperandKind, Value};
use std::fmt;
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
    /// `acq`/`rel`: at least 4 bundles from the next (§9).
    pub lock_request: bool,
    /// Lock requests and `done` order the memory accesses around them.
    pub barrier: bool,
}

/// An instruction the itineraries do not time: its opcode has no
/// itinerary, or the itinerary gives one of its operands no cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untimed {
    pub opcode: String,
    /// The operand without a cycle; none when the opcode has no itinerary.
    pub operand: Option<String>,
}

impl fmt::Display for Untimed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.operand {
            Some(o) => write!(f, "{}: the itinerary gives ${o} no cycle", self.opcode),
            None => write!(f, "{} has no itinerary", self.opcode),
        }
    }
}

impl std::error::Error for Untimed {}

/// The earliest cycle after issue at which any itinerary reads or writes
/// an operand: how soon the next block's first bundle can touch what a
/// block leaves behind (`Effects::drain`).
pub fn earliest_cycle() -> u32 {
    static EARLIEST: OnceLock<u32> = OnceLock::new();
    *EARLIEST.get_or_init(|| {
        let isa = isa();
        isa.opcodes
            .iter()
            .filter_map(|o| isa.itinerary(o))
            .flat_map(|i| i.operand_cycles().map(|(_, c)| c).collect::<Vec<_>>())
            .min()
            .unwrap_or(0)
    })
}

pub(crate) fn memory_kind(mnemonic: &str) -> Option<Memory> {
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

/// The leaf registers a value covers: a pair `r1:r0` is both, `x0` its
/// halves.
fn registers(value: &Value) -> Vec<String> {
    match value {
        Value::Register(name) => isa().leaves(name),
        Value::Immediate(_) => vec![],
    }
}

/// The effects of `inst`.
pub fn effects(inst: &Instruction) -> Result<Effects, Untimed> {
    let isa = isa();
    let opcode = inst.opcode;
    let untimed = |operand: Option<&str>| Untimed {
        opcode: opcode.name.clone(),
        operand: operand.map(str::to_string),
    };
    let itinerary = isa.itinerary(opcode).ok_or_else(|| untimed(None))?;
    let window_of = |name: &str| {
        itinerary
            .cycle(name)
            .map(Window::at)
            .ok_or_else(|| untimed(Some(name)))
    };
    let bypass_of = |name: &str| itinerary.bypass(name).map(str::to_string);
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for operand in &opcode.operands {
        if operand.kind == OperandKind::Immediate {
            continue;
        }
        let Some(value) = inst.value(&operand.name) else {
            continue;
        };
        let window = window_of(&operand.name)?;
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
            let asm = isa
                .register(record)
                .map_or_else(|| record.to_lowercase(), |r| r.asm.clone());
            let window = window_of(record)?;
            for register in isa.leaves(&asm) {
                list.push(Access {
                    register,
                    window,
                    bypass: bypass_of(record),
                });
            }
        }
    }
    let memory = match memory_kind(&opcode.mnemonic) {
        Some(kind) => {
            let cycles = &itinerary.memory_cycles;
            match (cycles.iter().min(), cycles.iter().max()) {
                (Some(&early), Some(&late)) => Some((kind, Window { early, late })),
                _ => return Err(untimed(Some("memory access"))),
            }
        }
        None => None,
    };
    let units = itinerary
        .stages
        .iter()
        .flat_map(|s| {
            (s.start..s.start + s.cycles).map(move |cycle| UnitUse {
                cycle,
                units: s.units.clone(),
                required: s.kind == StageKind::Required,
            })
        })
        .collect();
    let lock_request = opcode.mnemonic.starts_with("acq") || opcode.mnemonic.starts_with("rel");
    Ok(Effects {
        reads,
        writes,
        memory,
        units,
        lock_request,
        barrier: lock_request || opcode.mnemonic == "done",
    })
}

impl Effects {
    /// Bundles after issue until the next may hold anything: every write
    /// visible to the earliest read, every read done before the earliest
    /// write, the memory access done, the units free, the lock-request
    /// distance kept. Block exits wait this long (values do not stay in
    /// flight across a block boundary).
    pub fn drain(&self) -> u32 {
        let first = earliest_cycle();
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
        if self.lock_request {
            drain = drain.max(LOCK_REQUEST_DISTANCE as u32);
        }
        drain
    }
}

/// Bundles from a write's issue to a read's that sees it: LLVM's rule,
/// def - use + 1, one less through a shared bypass (as
/// `loom_aie2p_isa::schedule::latency`), over the windows' worst ends.
/// At least one: a read sees the registers as they were before its own
/// bundle's writes (the latency checker's rule), so a write that lands
/// before the read's cycle (`vmov bmll, x` at 2, `vadd.f` reads at 4)
/// still needs the reader in a later bundle.
pub fn read_after_write(write: &Access, read: &Access) -> u32 {
    let latency = (write.window.late + 1).saturating_sub(read.window.early);
    let exact = write.window.early == write.window.late && read.window.early == read.window.late;
    let forwarded = exact && write.bypass.is_some() && write.bypass == read.bypass;
    let latency = if latency > 0 && forwarded {
        latency - 1
    } else {
        latency
    };
    latency.max(1)
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
        effects(&parse_bundle(text).unwrap()[0]).unwrap()
    }

    #[test]
    fn a_scalar_load_result_is_read_seven_bundles_later() {
        let load = of("lda r1, [p0, #4]");
        let add = of("add r2, r1, r1");
        assert_eq!(read_after_write(&load.writes[0], &add.reads[0]), 7);
        assert_eq!(load.memory, Some((Memory::Load, Window::at(5))));
    }

    #[test]
    fn a_store_reads_its_data_at_cycle_one_and_writes_memory_at_five() {
        let store = of("st r1, [p0, #0]");
        assert_eq!(store.reads[0].register, "r1");
        assert_eq!(store.reads[0].window, Window::at(1));
        assert_eq!(store.memory, Some((Memory::Store, Window::at(5))));
    }

    #[test]
    fn an_add_writes_the_carry_implicitly() {
        let add = of("add r2, r1, r1");
        assert!(add.writes.iter().any(|w| w.register == "srcarry"));
    }

    #[test]
    fn a_vector_register_is_its_halves_and_an_accumulator_its_quarters() {
        let mac = of("vmac.f dm1, dm0, x2, x3, r4");
        let written: Vec<&str> = mac.writes.iter().map(|w| w.register.as_str()).collect();
        for quarter in ["bmll1", "bmlh1", "bmhl1", "bmhh1"] {
            assert!(written.contains(&quarter), "{written:?}");
        }
        let read: Vec<&str> = mac.reads.iter().map(|r| r.register.as_str()).collect();
        for half in ["wl2", "wh2", "wl3", "wh3", "bmll0"] {
            assert!(read.contains(&half), "{read:?}");
        }
        // vconv reads half of dm1 (cml1): a read of what the mac writes.
        let conv = of("vconv.bf16.fp32 x5, cml1");
        let read = &conv.reads[0];
        let write = mac
            .writes
            .iter()
            .find(|w| w.register == read.register)
            .unwrap();
        assert_eq!(read_after_write(write, read), 6);
    }

    #[test]
    fn a_nop_has_no_itinerary() {
        let nop = parse_bundle("nop").unwrap();
        assert!(matches!(
            effects(&nop[0]),
            Err(Untimed { operand: None, .. })
        ));
    }
}
