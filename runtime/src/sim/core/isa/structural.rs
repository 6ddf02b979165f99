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

/// A bundle's holds merged per cycle, in the cycles' order: what it takes
/// at once when none conflicts with the units already held (`merge`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Merged {
    start: u32,
    required: u64,
    reserved: u64,
}

/// The units held in the cycles ahead of the core, and which bundle issued
/// in each of the last cycles (one a cycle), which names the holder of a
/// unit in a conflict without a record per hold.
#[derive(Debug, Clone)]
pub struct Scoreboard {
    cycles: [Cycle; WINDOW],
    /// Per issue cycle modulo the window, the bundle that took its holds
    /// then: the cycle and the bundle's address.
    issued: [(u64, u32); WINDOW],
}

impl Default for Scoreboard {
    fn default() -> Self {
        Scoreboard {
            cycles: [Cycle::default(); WINDOW],
            issued: [(u64::MAX, 0); WINDOW],
        }
    }
}

/// A conflict: the slot of the bundle being taken that needs the unit, the
/// unit (its name and bit), the cycle, and the slot of the bundle that
/// holds it then, if one of its own does (else a bundle issued before holds
/// it: `Scoreboard::issued`).
#[derive(Debug)]
pub struct Conflict {
    pub slot: usize,
    pub unit: &'static str,
    pub bit: u64,
    pub at: u64,
    pub own: Option<usize>,
}

/// `slots`' holds merged per cycle, or None when they conflict among
/// themselves (or a slot's cannot be checked): such a bundle is taken slot
/// by slot, which names the conflict.
pub fn merge<'a>(
    slots: impl Iterator<Item = &'a Result<Vec<Hold>, String>>,
) -> Option<Vec<Merged>> {
    let slots: Vec<&[Hold]> = slots.map(|h| h.as_deref().ok()).collect::<Option<_>>()?;
    Scoreboard::default()
        .take_slots(0, slots.iter().map(|h| Ok(*h)), 0)
        .ok()?;
    let mut merged: Vec<Merged> = Vec::new();
    for hold in slots.iter().flat_map(|h| h.iter()) {
        let k = match merged.iter().position(|m| m.start == hold.start) {
            Some(k) => k,
            None => {
                merged.push(Merged {
                    start: hold.start,
                    required: 0,
                    reserved: 0,
                });
                merged.len() - 1
            }
        };
        if hold.required {
            merged[k].required |= hold.unit;
        } else {
            merged[k].reserved |= hold.unit;
        }
    }
    merged.sort_by_key(|m| m.start);
    Some(merged)
}

impl Hold {
    /// Whether it holds `unit` `offset` cycles after its instruction's
    /// issue.
    pub fn holds(&self, offset: u64, unit: u64) -> bool {
        u64::from(self.start) == offset && self.unit == unit
    }
}

impl Scoreboard {
    /// The window entry of cycle `at`, emptied if it held an older cycle.
    fn entry(&mut self, at: u64) -> &mut Cycle {
        let entry = &mut self.cycles[(at % WINDOW as u64) as usize];
        if entry.at != at {
            *entry = Cycle {
                at,
                ..Cycle::default()
            };
        }
        entry
    }

    /// Take the merged holds of a bundle issued at `issue` at `address`:
    /// false, taking nothing, if one conflicts with a unit already held.
    pub fn take(&mut self, issue: u64, merged: &[Merged], address: u32) -> bool {
        let free = merged.iter().all(|m| {
            let at = issue + u64::from(m.start);
            let held = self.cycles[(at % WINDOW as u64) as usize];
            let (required, reserved) = if held.at == at {
                (held.required, held.reserved)
            } else {
                (0, 0)
            };
            (m.required & (required | reserved)) | (m.reserved & required) == 0
        });
        if !free {
            return false;
        }
        for m in merged {
            let entry = self.entry(issue + u64::from(m.start));
            entry.required |= m.required;
            entry.reserved |= m.reserved;
        }
        self.issued[(issue % WINDOW as u64) as usize] = (issue, address);
        true
    }

    /// Take the holds of a bundle issued at `issue` at `address` slot by
    /// slot, each slot's holds in order, or the first conflict (with a
    /// unit already held or taken by an earlier hold of the bundle) or the
    /// first slot whose holds cannot be checked.
    pub fn take_slots<'a>(
        &mut self,
        issue: u64,
        slots: impl Iterator<Item = Result<&'a [Hold], String>>,
        address: u32,
    ) -> Result<(), Result<Conflict, String>> {
        // The bundle's own holds taken so far: (cycle, unit, slot).
        let mut own: Vec<(u64, u64, usize)> = Vec::new();
        for (slot, holds) in slots.enumerate() {
            for hold in holds.map_err(Err)? {
                let at = issue + u64::from(hold.start);
                let entry = self.entry(at);
                let busy = if hold.required {
                    entry.required | entry.reserved
                } else {
                    entry.required
                };
                if busy & hold.unit != 0 {
                    let mine = own
                        .iter()
                        .rev()
                        .find(|&&(c, u, _)| c == at && u == hold.unit);
                    return Err(Ok(Conflict {
                        slot,
                        unit: unit_name(hold.unit),
                        bit: hold.unit,
                        at,
                        own: mine.map(|&(_, _, slot)| slot),
                    }));
                }
                if hold.required {
                    entry.required |= hold.unit;
                } else {
                    entry.reserved |= hold.unit;
                }
                own.push((at, hold.unit, slot));
            }
        }
        self.issued[(issue % WINDOW as u64) as usize] = (issue, address);
        Ok(())
    }

    /// The address of the bundle that took its holds at issue cycle
    /// `cycle`, if one did and it is still in the window.
    pub fn issued(&self, cycle: u64) -> Option<u32> {
        let (at, address) = self.issued[(cycle % WINDOW as u64) as usize];
        (at == cycle).then_some(address)
    }

    /// The cycles a bundle holding a unit at `at` may have issued in, the
    /// latest first.
    pub fn issue_cycles(at: u64, before: u64) -> impl Iterator<Item = u64> {
        (at.saturating_sub(WINDOW as u64 - 1)..before).rev()
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

    fn slots<'a>(holds: &'a [&'a [Hold]]) -> impl Iterator<Item = Result<&'a [Hold], String>> {
        holds.iter().map(|h| Ok(*h))
    }

    /// Required meets Required or Reserved; Reserved meets only Required;
    /// other cycles and other units are free; a conflict names the unit,
    /// the cycle, and the bundle's own slot holding it if one does.
    #[test]
    fn required_and_reserved_stages_conflict_as_llvm_has_it() {
        let mut board = Scoreboard::default();
        board
            .take_slots(10, slots(&[&[hold(6, 1, true)]]), 0)
            .unwrap();
        assert!(board
            .take_slots(11, slots(&[&[hold(5, 1, true)]]), 16)
            .is_err());
        assert!(board
            .take_slots(11, slots(&[&[hold(5, 1, false)]]), 16)
            .is_err());
        board
            .take_slots(11, slots(&[&[hold(6, 1, true)]]), 16)
            .unwrap();
        board
            .take_slots(12, slots(&[&[hold(4, 2, true)]]), 32)
            .unwrap();
        let two = [&[hold(0, 4, false)][..], &[hold(0, 4, false)]];
        board.take_slots(20, slots(&two), 48).unwrap();
        let Err(Ok(conflict)) = board.take_slots(20, slots(&[&[hold(0, 4, true)]]), 64) else {
            panic!("a Required hold meets two Reserved ones");
        };
        assert_eq!((conflict.at, conflict.own), (20, None));
        assert_eq!(board.issued(20), Some(48));
        let own = [&[hold(1, 8, true)][..], &[hold(1, 8, false)]];
        let Err(Ok(conflict)) = board.take_slots(30, slots(&own), 80) else {
            panic!("a bundle's own slots meet");
        };
        assert_eq!((conflict.at, conflict.own), (31, Some(0)));
    }

    /// A bundle whose slots do not meet is taken merged, per cycle; one
    /// whose slots meet is not merged (it is taken slot by slot, which names
    /// them); a merged take that meets a held unit takes nothing.
    #[test]
    fn merged_holds_take_a_bundle_at_once() {
        let ok: Vec<Result<Vec<Hold>, String>> = vec![
            Ok(vec![hold(0, 1, true), hold(2, 2, false)]),
            Ok(vec![hold(2, 4, true)]),
        ];
        let merged = merge(ok.iter()).unwrap();
        assert_eq!(
            merged,
            [
                Merged {
                    start: 0,
                    required: 1,
                    reserved: 0
                },
                Merged {
                    start: 2,
                    required: 4,
                    reserved: 2
                },
            ]
        );
        let clash: Vec<Result<Vec<Hold>, String>> =
            vec![Ok(vec![hold(1, 1, true)]), Ok(vec![hold(1, 1, false)])];
        assert!(merge(clash.iter()).is_none());
        let unknown: Vec<Result<Vec<Hold>, String>> = vec![Err("no".into())];
        assert!(merge(unknown.iter()).is_none());
        let mut board = Scoreboard::default();
        assert!(board.take(10, &merged, 0));
        assert!(
            !board.take(10, &merged, 16),
            "the same units in the same cycles"
        );
        assert!(board.take(11, &merged, 16), "a cycle later: free");
        assert_eq!((board.issued(10), board.issued(11)), (Some(0), Some(16)));
    }
}
