//! `loom-check-progress`: decide whether every schedule of a pipeline's
//! strands completes, and refuse the pipeline when one does not.
//!
//! After specialization a strand's control flow over records is finite and
//! fixed: each strand task is one sequence of channel actions
//! (`strands.rs`). The analysis explores the interleavings of those
//! sequences against the channels' bounded slots (`explore.rs`: states
//! hashed, partial-order reduction, shortest schedules first) and decides
//! exactly: either every schedule completes, or some schedule leaves every
//! live strand blocked in a `channel.reserve` or `channel.acquire`. That
//! deadlock is reported at the blocked actions with their cycle of waits
//! (each strand, the channel it waits on, its capacity and slot counts, and
//! the strand that would free or publish a slot there) and the schedule
//! that reaches it. When the actions cannot be known when compiled, or the
//! exploration exceeds its bound, the pass refuses with that reason: it
//! never passes what it did not prove.
//!
//! The compile pipeline runs it before the target realization, so no
//! realization can hide a deadlock the authored schedules allow
//! (docs/semantics.md, "Progress"). Option: `max-states=N` (default
//! 524288), the most states the exploration visits.

mod explore;
mod loops;
mod strands;

use crate::diagnostics::error_with_notes;
use crate::{options, PassInfo};
use explore::{Found, Kind, Problem, Slots};
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;
use std::collections::BTreeMap;
use strands::{Action, Program};

inventory::submit! {
    PassInfo {
        argument: "loom-check-progress",
        description: "Prove that every schedule of each pipeline's strands completes; refuse a possible deadlock with its cycle of waits (option max-states=N)",
        takes_options: true,
        changes_ir: false,
        run,
    }
}

/// The most states the exploration visits by default.
pub const MAX_STATES: usize = 1 << 19;

/// A diagnostic of the analysis: where, what, and notes.
pub struct Report {
    pub at: MlirLocation,
    pub message: String,
    pub notes: Vec<(MlirLocation, String)>,
}

/// What the analysis decided for one pipeline.
pub enum Verdict {
    /// Every schedule completes: the strand tasks and the states visited.
    Completes { tasks: usize, states: usize },
    /// A schedule blocks every live strand. `schedule` names the task of
    /// each of its channel actions in order, numbered as the interpreter
    /// numbers them (the construction code is task 0, strand tasks follow
    /// from 1); the construction code's own actions come first and are
    /// not in it.
    Deadlock {
        report: Report,
        schedule: Vec<usize>,
    },
    /// Not decided, and why.
    Undecided(Report),
}

/// Decide progress for `pipeline` (a `pipeline.def`), visiting at most
/// `max_states` states; `config` gives the values of `config.get`s the
/// module has not specialized.
pub fn decide(
    pipeline: MlirOperation,
    config: &dyn Fn(&str) -> Option<i64>,
    max_states: usize,
) -> Verdict {
    let module = parent_op(pipeline).expect("a pipeline lives in a module");
    let functions: BTreeMap<String, MlirOperation> = symbols(module)
        .into_iter()
        .filter(|(_, op)| op_name(*op) == names::func::DEF)
        .collect();
    let program = match strands::extract(pipeline, &functions, config) {
        Ok(program) => program,
        Err(why) => {
            return Verdict::Undecided(Report {
                at: why.at,
                message: why.message,
                notes: why.notes,
            })
        }
    };
    let name = symbol_name(pipeline).unwrap_or_default();
    let mut slots: Vec<Slots> = program
        .channels
        .iter()
        .map(|c| Slots {
            free: c.capacity,
            ..Slots::default()
        })
        .collect();
    // The construction code runs alone before any strand: a take it cannot
    // make blocks the invocation under every schedule.
    for action in &program.construction {
        if !slots[action.channel].enabled(action.kind) {
            let mut notes = vec![(
                location(action.op),
                format!(
                    "the construction code of @{name} {}",
                    waits(&program, action, &slots[action.channel])
                ),
            )];
            notes.extend(call_notes(action));
            return Verdict::Deadlock {
                report: Report {
                    at: location(action.op),
                    message: "deadlock: the construction code of the pipeline blocks here, under every schedule (its strands run only once it is done)".into(),
                    notes,
                },
                schedule: Vec::new(),
            };
        }
        slots[action.channel].apply(action.kind);
    }
    let traces: Vec<Vec<(Kind, usize)>> = program
        .tasks
        .iter()
        .map(|t| t.actions.iter().map(|a| (a.kind, a.channel)).collect())
        .collect();
    let found = Problem {
        traces: &traces,
        slots: &slots,
        max_states,
    }
    .search();
    match found {
        Found::Completes { states } => Verdict::Completes {
            tasks: program.tasks.len(),
            states,
        },
        Found::Bound { limit } => Verdict::Undecided(Report {
            at: location(pipeline),
            message: format!(
                "progress is not decided: the schedules of @{name}'s {} strand tasks reach more than {limit} states (raise the bound with loom-check-progress{{max-states=N}})",
                program.tasks.len()
            ),
            notes: Vec::new(),
        }),
        Found::Deadlock { schedule, .. } => {
            let report = deadlock(&program, &slots, &schedule);
            Verdict::Deadlock {
                report,
                schedule: schedule.into_iter().map(|t| t + 1).collect(),
            }
        }
    }
}

/// `strand 2 (worker [0, 3])`, as the interpreter names tasks.
fn task_name(program: &Program, task: usize) -> String {
    let (c, r) = program.tasks[task].worker;
    format!("strand {} (worker [{c}, {r}])", task + 1)
}

fn channel_name(program: &Program, channel: usize) -> String {
    let name = &program.channels[channel].name;
    if name.is_empty() {
        format!("channel #{channel}")
    } else {
        format!("%{name}")
    }
}

fn verb(kind: Kind) -> &'static str {
    match kind {
        Kind::Reserve => "reserve",
        Kind::Acquire => "acquire",
        Kind::Publish => "publish",
        Kind::Release => "release",
    }
}

/// `waits in channel.reserve for a free slot of %c (bound at L), which has
/// capacity N: ...`
fn waits(program: &Program, action: &Action, slots: &Slots) -> String {
    let channel = &program.channels[action.channel];
    let wanted = match action.kind {
        Kind::Reserve => "a free slot",
        _ => "a published record",
    };
    format!(
        "waits in channel.{} for {wanted} of {} (bound at {}), which has capacity {}: {} free, {} published, {} reserved, {} acquired",
        verb(action.kind),
        channel_name(program, action.channel),
        location_text(location(channel.bind)),
        channel.capacity,
        slots.free,
        slots.published,
        slots.reserved,
        slots.acquired
    )
}

/// `called from here` for each call the action is in, innermost first
/// (the call of an outlined strand body has no place in the source).
fn call_notes(action: &Action) -> Vec<(MlirLocation, String)> {
    action
        .calls
        .innermost_first()
        .into_iter()
        .filter(|&call| !location_text(location(call)).is_empty())
        .map(|call| (location(call), "called from here".to_string()))
        .collect()
}

/// The report of the deadlock `schedule` reaches: the cycle of waits, the
/// other blocked strands, then the schedule.
fn deadlock(program: &Program, start: &[Slots], schedule: &[usize]) -> Report {
    let tasks = &program.tasks;
    let mut positions = vec![0usize; tasks.len()];
    let mut slots = start.to_vec();
    for &t in schedule {
        let action = &tasks[t].actions[positions[t]];
        slots[action.channel].apply(action.kind);
        positions[t] += 1;
    }
    let blocked: Vec<usize> = (0..tasks.len())
        .filter(|&t| positions[t] < tasks[t].actions.len())
        .collect();
    let next = |t: usize| &tasks[t].actions[positions[t]];
    // Who can end task t's wait: a blocked task that frees a slot of (or
    // publishes a record to) that channel later in its sequence, and the
    // action by which it would.
    let unblocker = |t: usize| -> Option<(usize, &Action)> {
        let wait = next(t);
        let wanted = match wait.kind {
            Kind::Reserve => Kind::Release,
            _ => Kind::Publish,
        };
        let finds = |u: usize| {
            tasks[u].actions[positions[u]..]
                .iter()
                .find(|a| a.channel == wait.channel && a.kind == wanted)
                .map(|a| (u, a))
        };
        blocked
            .iter()
            .copied()
            .filter(|&u| u != t)
            .find_map(finds)
            .or_else(|| finds(t))
    };
    // Follow the waits from the first blocked strand until one repeats
    // (a cycle) or no strand can end one (a starved wait).
    let mut chain: Vec<usize> = Vec::new();
    let mut at = blocked[0];
    let cycle_start = loop {
        if let Some(i) = chain.iter().position(|&c| c == at) {
            break Some(i);
        }
        chain.push(at);
        match unblocker(at) {
            Some((u, _)) => at = u,
            None => break None,
        }
    };
    let members: &[usize] = match cycle_start {
        Some(i) => &chain[i..],
        None => &chain,
    };
    // At the first wait of a cycle, or at the wait nothing can end.
    let first = match cycle_start {
        Some(_) => next(members[0]),
        None => next(*members.last().expect("a chain has a strand")),
    };
    let message = match cycle_start {
        Some(_) => {
            let names: Vec<String> = members
                .iter()
                .chain(std::iter::once(&members[0]))
                .map(|&t| task_name(program, t))
                .collect();
            format!(
                "deadlock: a schedule of the strands blocks every live one; their waits form a cycle: {} waits for {}",
                names[0],
                names[1..].join(", which waits for ")
            )
        }
        None => format!(
            "deadlock: a schedule of the strands blocks every live one; {} waits for what no live strand will provide",
            task_name(program, *members.last().expect("a chain has a strand"))
        ),
    };
    let mut notes = Vec::new();
    for &t in members {
        let wait = next(t);
        let ends = unblocker(t);
        let tail = match ends {
            Some((u, by)) => {
                let who = if u == t {
                    "this strand itself".to_string()
                } else {
                    task_name(program, u)
                };
                let (what, when) = match (by.kind, u == t) {
                    (Kind::Release, false) => ("free one", "after its own wait"),
                    (Kind::Release, true) => ("free one", "after this wait"),
                    (_, false) => ("publish one", "after its own wait"),
                    (_, true) => ("publish one", "after this wait"),
                };
                format!(
                    "; only {who} would {what}, with a channel.{} {when}",
                    verb(by.kind)
                )
            }
            None => format!(
                "; no live strand {} it again",
                if wait.kind == Kind::Reserve {
                    "releases a record of"
                } else {
                    "publishes to"
                }
            ),
        };
        notes.extend(wait_notes(program, t, wait, &slots, "", &tail));
        if let Some((_, by)) = ends {
            notes.push((
                location(by.op),
                format!(
                    "the channel.{} that would end the wait of {}",
                    verb(by.kind),
                    task_name(program, t)
                ),
            ));
        }
    }
    for &t in blocked.iter().filter(|t| !members.contains(t)) {
        notes.extend(wait_notes(
            program,
            t,
            next(t),
            &slots,
            "is blocked too: it ",
            "",
        ));
    }
    notes.extend(schedule_notes(program, schedule));
    Report {
        at: location(first.op),
        message,
        notes,
    }
}

/// The note at `task`'s blocked action (`strand N ... LEAD waits ...TAIL`)
/// and the calls it is in.
fn wait_notes(
    program: &Program,
    task: usize,
    wait: &Action,
    slots: &[Slots],
    lead: &str,
    tail: &str,
) -> Vec<(MlirLocation, String)> {
    let mut notes = vec![(
        location(wait.op),
        format!(
            "{} {lead}{}{tail}",
            task_name(program, task),
            waits(program, wait, &slots[wait.channel])
        ),
    )];
    notes.extend(call_notes(wait));
    notes
}

/// The schedule as notes: each run of actions of one task, at the last of
/// them.
fn schedule_notes(program: &Program, schedule: &[usize]) -> Vec<(MlirLocation, String)> {
    let mut positions = vec![0usize; program.tasks.len()];
    let mut runs: Vec<(usize, Vec<&Action>)> = Vec::new();
    for &t in schedule {
        let action = &program.tasks[t].actions[positions[t]];
        positions[t] += 1;
        match runs.last_mut() {
            Some((task, actions)) if *task == t => actions.push(action),
            _ => runs.push((t, vec![action])),
        }
    }
    let mut notes = vec![(
        location(program.tasks[0].strand),
        format!(
            "the shortest schedule that reaches it: {} channel actions in {} runs of one strand:",
            schedule.len(),
            runs.len()
        ),
    )];
    for (i, (task, actions)) in runs.iter().enumerate() {
        let words: Vec<String> = actions
            .iter()
            .map(|a| format!("{} {}", verb(a.kind), channel_name(program, a.channel)))
            .collect();
        notes.push((
            location(actions.last().expect("a run has an action").op),
            format!(
                "{}. {} runs to here: {}",
                i + 1,
                task_name(program, *task),
                compress(&words)
            ),
        ));
    }
    notes
}

/// `a, b, a, b, a, b, c` as `(a, b) x3, c`: repeated runs of up to four
/// words written once with their count.
fn compress(words: &[String]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let mut best = (1, 1);
        for unit in 1..=4.min(words.len() - i) {
            let mut count = 1;
            while i + (count + 1) * unit <= words.len()
                && words[i + count * unit..i + (count + 1) * unit] == words[i..i + unit]
            {
                count += 1;
            }
            if count > 1 && unit * count > best.0 * best.1 {
                best = (unit, count);
            }
        }
        let (unit, count) = best;
        if count > 1 {
            let group = words[i..i + unit].join(", ");
            out.push(if unit == 1 {
                format!("{group} x{count}")
            } else {
                format!("({group}) x{count}")
            });
        } else {
            out.push(words[i].clone());
        }
        i += unit * count;
    }
    out.join(", ")
}

fn parse_max_states(text: &str) -> Result<usize, String> {
    let mut parsed = options::parse(text)?;
    let bound = parsed.remove("max-states");
    if let Some(unknown) = parsed.keys().next() {
        return Err(format!(
            "unknown option `{unknown}`; the only option is `max-states`"
        ));
    }
    match bound {
        None => Ok(MAX_STATES),
        Some(n) => n
            .parse::<usize>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| format!("max-states={n}: not a positive number of states")),
    }
}

fn run(module: MlirOperation, options: &str) -> Result<(), ()> {
    let max_states = parse_max_states(options).map_err(|why| {
        crate::diagnostics::error(location(module), &format!("loom-check-progress: {why}"))
    })?;
    let pipelines: Vec<MlirOperation> = top_level_ops(module)
        .into_iter()
        .filter(|&op| op_name(op) == names::pipeline::DEF)
        .collect();
    let mut failed = false;
    for pipeline in pipelines {
        match decide(pipeline, &|_| None, max_states) {
            Verdict::Completes { .. } => {}
            Verdict::Deadlock { report, .. } | Verdict::Undecided(report) => {
                error_with_notes(report.at, &report.message, &report.notes);
                failed = true;
            }
        }
    }
    if failed {
        Err(())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_actions_are_written_once_with_their_count() {
        let words: Vec<String> = ["r", "p", "r", "p", "r", "p", "a"]
            .iter()
            .map(|w| w.to_string())
            .collect();
        assert_eq!(compress(&words), "(r, p) x3, a");
        let words: Vec<String> = ["a", "a", "b"].iter().map(|w| w.to_string()).collect();
        assert_eq!(compress(&words), "a x2, b");
        assert_eq!(compress(&[]), "");
    }

    #[test]
    fn the_bound_option_is_checked() {
        assert_eq!(parse_max_states(""), Ok(MAX_STATES));
        assert_eq!(parse_max_states("max-states=10"), Ok(10));
        assert!(parse_max_states("max-states=0").is_err());
        assert!(parse_max_states("states=10").is_err());
    }
}
