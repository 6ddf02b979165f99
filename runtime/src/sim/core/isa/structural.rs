//! Functional-unit (structural) hazards, from the itineraries' stages
//! (`loom_aie2p_isa::schedule::Stage`): an instruction issued at t holds
//! each stage's unit in cycles t + start .. t + start + cycles. Two holds
//! of one unit in one cycle conflict as LLVM's ScoreboardHazardRecognizer
//! has it: a Required stage conflicts with a Required or a Reserved one, a
//! Reserved stage only with a Required one. Stages of zero cycles (the
//! itineraries' EMPTY_FU placeholders) hold nothing.

use loom_aie2p_isa::schedule::StageKind;
use loom_aie2p_isa::Itinerary;
use std::collections::HashMap;
use std::sync::OnceLock;

/// One cycle of a stage's hold, with its unit as a bit (a stage of several
/// cycles is one per cycle, so that taking a hold is one step).
#[derive(Debug, Clone, Copy)]
pub struct Hold {
    start: u32,
    unit: u64,
    required: bool,
}

/// The functional units the stages name, each a bit (60 in AIE2P's
/// schedule, fewer than 64).
fn unit_bits() -> &'static HashMap<&'static str, u64> {
    static BITS: OnceLock<HashMap<&'static str, u64>> = OnceLock::new();
    BITS.get_or_init(|| {
        let isa = loom_aie2p_isa::isa();
        let mut names: Vec<&'static str> = isa
            .opcodes
            .iter()
            .filter_map(|o| isa.itinerary(o))
            .flat_map(|i| i.stages.iter())
            .flat_map(|s| s.units.iter().map(String::as_str))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
            .into_iter()
            .zip(0..64)
            .map(|(name, bit)| (name, 1u64 << bit))
            .collect()
    })
}

fn unit_name(bit: u64) -> &'static str {
    unit_bits()
        .iter()
        .find(|(_, &b)| b == bit)
        .map_or("?", |(name, _)| name)
}

/// The holds of an itinerary's stages, or why they cannot be checked (a
/// stage naming more than one unit, which AIE2P's schedule has none of, or
/// a unit past the 64 bits).
pub fn holds(itinerary: &Itinerary) -> Result<Vec<Hold>, String> {
    let mut out = Vec::new();
    for stage in itinerary.stages.iter().filter(|s| s.cycles > 0) {
        let [unit] = stage.units.as_slice() else {
            return Err(format!(
                "itinerary {} has a stage of {} alternative units, which the isa core does \
                 not check",
                itinerary.name,
                stage.units.len()
            ));
        };
        let unit = *unit_bits()
            .get(unit.as_str())
            .ok_or_else(|| format!("unit {unit} is past the 64 the isa core tracks"))?;
        out.extend((0..stage.cycles).map(|c| Hold {
            start: stage.start + c,
            unit,
            required: stage.kind == StageKind::Required,
        }));
    }
    Ok(out)
}

/// Cycles ahead a hold can reach (the schedule's stages end by 9).
const WINDOW: usize = 16;

#[derive(Debug, Clone, Copy, Default)]
struct Cycle {
    at: u64,
    required: u64,
    reserved: u64,
}

/// Who holds a unit in a cycle: the bundle's address and the slot there.
pub type Holder = (u32, usize);

/// The units held in the cycles ahead of the core.
#[derive(Debug, Clone)]
pub struct Scoreboard {
    cycles: [Cycle; WINDOW],
    /// Per cycle of the window, per unit bit, its holder.
    holders: Vec<[Holder; 64]>,
}

impl Default for Scoreboard {
    fn default() -> Self {
        Scoreboard {
            cycles: [Cycle::default(); WINDOW],
            holders: vec![[(0, 0); 64]; WINDOW],
        }
    }
}

/// A conflict: the unit, the cycle, the other holder.
#[derive(Debug)]
pub struct Conflict {
    pub unit: &'static str,
    pub at: u64,
    pub holder: Holder,
}

impl Scoreboard {
    /// Take the holds of an instruction issued at `issue` by `holder`, or
    /// the first conflict with a unit already held.
    pub fn take(&mut self, issue: u64, holds: &[Hold], holder: Holder) -> Result<(), Conflict> {
        for hold in holds {
            let at = issue + u64::from(hold.start);
            let k = (at % WINDOW as u64) as usize;
            let entry = &mut self.cycles[k];
            if entry.at != at {
                *entry = Cycle {
                    at,
                    ..Cycle::default()
                };
            }
            let busy = if hold.required {
                entry.required | entry.reserved
            } else {
                entry.required
            };
            if busy & hold.unit != 0 {
                let bit = hold.unit.trailing_zeros() as usize;
                return Err(Conflict {
                    unit: unit_name(hold.unit),
                    at,
                    holder: self.holders[k][bit],
                });
            }
            if hold.required {
                entry.required |= hold.unit;
            } else {
                entry.reserved |= hold.unit;
            }
            self.holders[k][hold.unit.trailing_zeros() as usize] = holder;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hold(start: u32, unit: u64, required: bool) -> Hold {
        Hold {
            start,
            unit,
            required,
        }
    }

    /// Required meets Required or Reserved; Reserved meets only Required;
    /// other cycles and other units are free.
    #[test]
    fn required_and_reserved_stages_conflict_as_llvm_has_it() {
        let mut board = Scoreboard::default();
        board.take(10, &[hold(6, 1, true)], (0, 0)).unwrap();
        assert!(board.take(11, &[hold(5, 1, true)], (16, 0)).is_err());
        assert!(board.take(11, &[hold(5, 1, false)], (16, 0)).is_err());
        board.take(11, &[hold(6, 1, true)], (16, 0)).unwrap();
        board.take(11, &[hold(5, 2, true)], (16, 0)).unwrap();
        board.take(20, &[hold(0, 4, false)], (32, 0)).unwrap();
        board.take(20, &[hold(0, 4, false)], (32, 1)).unwrap();
        let conflict = board.take(20, &[hold(0, 4, true)], (48, 0)).err().unwrap();
        assert_eq!((conflict.at, conflict.holder), (20, (32, 1)));
    }
}
