//! The scheduling facts of llvm-aie's itineraries (`data/schedule.json`,
//! transcribed from AIE2PGenSchedule.td): per itinerary class, the cycle
//! each operand is read or written, its bypass, and the functional units
//! each stage holds. The code generator's scheduler and the simulator's
//! instruction-level core read the same numbers, so a schedule the one
//! builds is the schedule the other checks.

use serde::Deserialize;
use std::collections::HashMap;

/// One stage of an itinerary: `units` held for `cycles` from `start`
/// (the cycle after issue, 0-based).
#[derive(Debug, Clone, Deserialize)]
pub struct Stage {
    pub start: u32,
    pub cycles: u32,
    pub units: Vec<String>,
    /// `Reserved` stages (LLVM's InstrStage::Reserved) take a unit only
    /// when another instruction needs it at the same cycle; `Required` ones
    /// always take it.
    pub kind: StageKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum StageKind {
    Required,
    Reserved,
}

/// One itinerary class.
#[derive(Debug, Clone)]
pub struct Itinerary {
    pub name: String,
    pub stages: Vec<Stage>,
    /// Per operand name (explicit and implicit, as the generator names
    /// them): the cycle it is read (a use) or written (a def).
    cycles: Vec<(String, u32)>,
    /// Per operand name: its bypass, when it has one.
    bypasses: HashMap<String, String>,
    /// The cycle of the memory access (loads and stores).
    pub memory_cycles: Vec<u32>,
}

impl Itinerary {
    /// The cycle operand `name` is read or written, if the itinerary says.
    pub fn cycle(&self, name: &str) -> Option<u32> {
        self.cycles.iter().find(|(n, _)| n == name).map(|&(_, c)| c)
    }

    /// The operands with their cycles, in LLVM's order (explicit defs,
    /// explicit uses, implicit defs, implicit uses).
    pub fn operand_cycles(&self) -> impl Iterator<Item = (&str, u32)> {
        self.cycles.iter().map(|(n, c)| (n.as_str(), *c))
    }

    pub fn bypass(&self, name: &str) -> Option<&str> {
        self.bypasses.get(name).map(String::as_str)
    }
}

/// The bundles that must issue between a def and a use of the same value:
/// LLVM's itinerary latency (MCInstrItineraries.h,
/// InstrItineraryData::getOperandLatency): def cycle - use cycle + 1, one
/// less when both operands name the same bypass. A use issued `latency`
/// bundles after the def reads the new value; an earlier one reads the old.
pub fn latency(
    def: &Itinerary,
    def_operand: &str,
    user: &Itinerary,
    use_operand: &str,
) -> Option<u32> {
    let d = def.cycle(def_operand)?;
    let u = user.cycle(use_operand)?;
    let latency = (d + 1).saturating_sub(u);
    let forwarded = matches!(
        (def.bypass(def_operand), user.bypass(use_operand)),
        (Some(a), Some(b)) if a == b
    );
    Some(if latency > 0 && forwarded {
        latency - 1
    } else {
        latency
    })
}

/// A per-register-class itinerary of an instruction (llvm-aie's
/// ItinRegClassPair): it applies when each named operand's register is in
/// the named register class.
#[derive(Debug, Clone, Deserialize)]
pub struct RegisterClassItinerary {
    pub itinerary: String,
    /// Operand name -> register class (a `registers.json` class).
    pub operands: HashMap<String, String>,
}

/// The schedule tables: itineraries by class name (those instructions name
/// and their per-register-class variants), the delay slots.
#[derive(Debug)]
pub struct Schedule {
    itineraries: HashMap<String, Itinerary>,
    /// Bundles after a control transfer that still execute.
    pub delay_slots: u32,
}

impl Schedule {
    /// The itinerary class `class` (an opcode's `itinerary`).
    pub fn itinerary(&self, class: &str) -> Option<&Itinerary> {
        self.itineraries.get(class)
    }

    pub fn len(&self) -> usize {
        self.itineraries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.itineraries.is_empty()
    }
}

#[derive(Deserialize)]
pub(crate) struct RawItinerary {
    stages: Vec<Stage>,
    operand_cycles: Vec<u32>,
    operand_names: Vec<String>,
    #[serde(default)]
    bypasses: Vec<String>,
    #[serde(default)]
    bypass_operands: Vec<String>,
    #[serde(default)]
    memory_cycles: Vec<u32>,
}

#[derive(Deserialize)]
pub(crate) struct RawDelaySlots {
    count: u32,
}

pub(crate) fn build(
    itineraries: HashMap<String, RawItinerary>,
    variants: HashMap<String, RawItinerary>,
    delay_slots: RawDelaySlots,
) -> Schedule {
    let itineraries = itineraries
        .into_iter()
        .chain(variants)
        .map(|(name, raw)| {
            // A shorter cycle list leaves the remaining operands to LLVM's
            // default, which the tables do not state: they get no cycle.
            let cycles = raw
                .operand_names
                .into_iter()
                .zip(raw.operand_cycles)
                .collect();
            let bypasses = raw
                .bypass_operands
                .into_iter()
                .zip(raw.bypasses)
                .filter(|(_, b)| b != "NoBypass")
                .collect();
            let itinerary = Itinerary {
                name: name.clone(),
                stages: raw.stages,
                cycles,
                bypasses,
                memory_cycles: raw.memory_cycles,
            };
            (name, itinerary)
        })
        .collect();
    Schedule {
        itineraries,
        delay_slots: delay_slots.count,
    }
}
