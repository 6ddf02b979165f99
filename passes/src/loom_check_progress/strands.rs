//! The channel actions of each strand task, found by running the pipeline
//! at compile time on what decides its control flow: index arithmetic,
//! constants, branches and loops, calls, channel identities and the
//! obligations that name them. Nothing else is evaluated (views, buffers,
//! floating point and copies have no say in control flow unless a branch
//! reads them, and then progress is not decided).
//!
//! A task's control flow depends only on its own values, never on what a
//! channel holds or on another task, so each task is one fixed sequence of
//! actions whatever the schedule; `explore.rs` interleaves the sequences.
//! The construction region runs first, alone, as it does at run time: it
//! binds the channels, may take channel actions itself, and records one task
//! per worker each `pipeline.strand` selects, with the values it captures.

use super::explore::Kind;
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// The most operations the analysis runs to find the actions of every task.
pub const MAX_STEPS: u64 = 1 << 22;
/// Calls nest at most this deep (deeper is taken for unbounded recursion).
const MAX_CALL_DEPTH: usize = 256;
/// The most strand tasks (workers of all strands) the analysis follows.
pub const MAX_TASKS: usize = 4096;

/// A channel instance: the `channel.bind` that made it, its name and its
/// capacity.
pub struct Channel {
    pub bind: MlirOperation,
    pub name: String,
    pub capacity: u32,
}

/// One channel action of a task: what, on which channel, the op, and the
/// calls it was in (outermost first).
pub struct Action {
    pub kind: Kind,
    pub channel: usize,
    pub op: MlirOperation,
    pub calls: Rc<[MlirOperation]>,
}

/// One worker of a strand: the strand, its worker and its actions.
pub struct Task {
    pub strand: MlirOperation,
    pub worker: (i64, i64),
    pub actions: Vec<Action>,
}

/// The pipeline's channels, the construction region's own actions and the
/// strand tasks in creation order (strands in program order, then workers).
pub struct Program {
    pub channels: Vec<Channel>,
    pub construction: Vec<Action>,
    pub tasks: Vec<Task>,
}

/// Why the actions could not be found: where, why, and notes.
pub struct Undecided {
    pub at: MlirLocation,
    pub message: String,
    pub notes: Vec<(MlirLocation, String)>,
}

/// Where a value the analysis does not know comes from.
#[derive(Clone, Copy)]
enum Origin {
    Op(MlirOperation),
    Argument(MlirValue),
}

#[derive(Clone, Copy)]
enum Value {
    Int(i64),
    Channel(usize),
    Write(usize),
    Read(usize),
    Unknown(Origin),
}

type Env = HashMap<usize, Value>;

fn key(v: MlirValue) -> usize {
    v.ptr as usize
}

/// How a region was left.
enum Exit {
    /// Off the end of a body without a terminator (a strand, a pipeline).
    Fell,
    Yield(Vec<Value>),
    Return(Vec<Value>),
}

struct Run<'a> {
    functions: &'a BTreeMap<String, MlirOperation>,
    /// Values of the `config.get`s a module has not specialized.
    config: &'a dyn Fn(&str) -> Option<i64>,
    channels: Vec<Channel>,
    steps: u64,
    /// Strands the construction region has reached, with what they capture.
    strands: Vec<(MlirOperation, Env)>,
}

/// Where actions go while a body runs, and the calls it is in.
struct Ctx<'c> {
    actions: &'c mut Vec<Action>,
    calls: Rc<[MlirOperation]>,
}

/// The channel actions of `pipeline`'s construction region and of every
/// strand task, or why they are not known when compiled. `config` gives
/// the values of `config.get`s not specialized yet.
pub fn extract(
    pipeline: MlirOperation,
    functions: &BTreeMap<String, MlirOperation>,
    config: &dyn Fn(&str) -> Option<i64>,
) -> Result<Program, Undecided> {
    let mut run = Run {
        functions,
        config,
        channels: Vec::new(),
        steps: 0,
        strands: Vec::new(),
    };
    let mut env = Env::new();
    let entry = body(pipeline);
    let parameters: Vec<Value> = arguments(entry)
        .into_iter()
        .map(|a| Value::Unknown(Origin::Argument(a)))
        .collect();
    let mut construction = Vec::new();
    let mut ctx = Ctx {
        actions: &mut construction,
        calls: Rc::from(Vec::new()),
    };
    run.region(region(pipeline, 0), &parameters, &mut env, &mut ctx)?;
    let mut tasks = Vec::new();
    for (strand, captured) in std::mem::take(&mut run.strands) {
        let selected = workers(strand).filter(|w| tasks.len() + w.len() <= MAX_TASKS);
        let Some(selected) = selected else {
            return Err(undecided(
                location(strand),
                format!("progress is not decided: the strands have more than {MAX_TASKS} workers"),
            ));
        };
        for worker in selected {
            let mut actions = Vec::new();
            let mut env = captured.clone();
            let mut ctx = Ctx {
                actions: &mut actions,
                calls: Rc::from(Vec::new()),
            };
            run.region(region(strand, 0), &[], &mut env, &mut ctx)?;
            tasks.push(Task {
                strand,
                worker,
                actions,
            });
        }
    }
    Ok(Program {
        channels: run.channels,
        construction,
        tasks,
    })
}

/// The workers a strand selects, `i` outer (docs/semantics.md), or None
/// when there are more than `MAX_TASKS`.
fn workers(strand: MlirOperation) -> Option<Vec<(i64, i64)>> {
    let list = |name| {
        attribute(strand, name)
            .map(dense_i64_values)
            .unwrap_or_default()
    };
    let (origins, counts, strides) = (list("origins"), list("counts"), list("strides"));
    let ([c0, r0], [nc, nr], [sc, sr]) =
        (origins.as_slice(), counts.as_slice(), strides.as_slice())
    else {
        return Some(Vec::new());
    };
    if nc.checked_mul(*nr).is_none_or(|n| n > MAX_TASKS as i64) {
        return None;
    }
    let mut all = Vec::new();
    for i in 0..*nc {
        for j in 0..*nr {
            all.push((
                c0.wrapping_add(i.wrapping_mul(*sc)),
                r0.wrapping_add(j.wrapping_mul(*sr)),
            ));
        }
    }
    Some(all)
}

fn undecided(at: MlirLocation, message: String) -> Undecided {
    Undecided {
        at,
        message,
        notes: Vec::new(),
    }
}

/// `what` of `op` is not known when compiled: say where it comes from.
fn unknown(op: MlirOperation, what: &str, origin: Origin) -> Undecided {
    let mut refusal = undecided(
        location(op),
        format!("progress is not decided: {what} is not known when the pipeline is compiled"),
    );
    match origin {
        Origin::Op(source) if op_name(source) == names::config::GET => {
            let name = symbol_ref(source, "name").unwrap_or_default();
            refusal.notes.push((
                location(source),
                format!("it depends on @{name}, which has no value; specialize the pipeline first (loom-specialize-config)"),
            ));
        }
        Origin::Op(source) => refusal.notes.push((
            location(source),
            format!(
                "it depends on the result of this {}, which the analysis does not evaluate",
                op_name(source)
            ),
        )),
        Origin::Argument(value) => {
            let name = value_name(value);
            let name = if name.is_empty() {
                "an argument".to_string()
            } else {
                format!("the argument %{name}")
            };
            refusal.notes.push((
                location(block_parent_op(argument_block(value))),
                format!("it depends on {name} of this op, whose value is not known"),
            ));
        }
    }
    refusal
}

/// `index.cmp`: signed predicates on the values, unsigned on their bits.
fn compare(predicate: &str, a: i64, b: i64) -> Option<bool> {
    let (ua, ub) = (a as u64, b as u64);
    Some(match predicate {
        "eq" => a == b,
        "ne" => a != b,
        "slt" => a < b,
        "sle" => a <= b,
        "sgt" => a > b,
        "sge" => a >= b,
        "ult" => ua < ub,
        "ule" => ua <= ub,
        "ugt" => ua > ub,
        "uge" => ua >= ub,
        _ => return None,
    })
}

impl Run<'_> {
    fn get(&self, env: &Env, v: MlirValue) -> Value {
        env.get(&key(v))
            .copied()
            .unwrap_or(Value::Unknown(if is_op_result(v) {
                Origin::Op(owner_op(v))
            } else {
                Origin::Argument(v)
            }))
    }

    fn int(
        &self,
        env: &Env,
        op: MlirOperation,
        v: MlirValue,
        what: &str,
    ) -> Result<i64, Undecided> {
        match self.get(env, v) {
            Value::Int(i) => Ok(i),
            Value::Unknown(origin) => Err(unknown(op, what, origin)),
            _ => Err(undecided(
                location(op),
                format!("progress is not decided: {what} is not an integer"),
            )),
        }
    }

    /// Run `region` from its entry block with `args` bound to its
    /// arguments.
    fn region(
        &mut self,
        region: MlirRegion,
        args: &[Value],
        env: &mut Env,
        ctx: &mut Ctx,
    ) -> Result<Exit, Undecided> {
        let Some(&entry) = blocks(region).first() else {
            return Ok(Exit::Fell);
        };
        let mut block = entry;
        let mut incoming = args.to_vec();
        loop {
            for (parameter, value) in arguments(block).into_iter().zip(&incoming) {
                env.insert(key(parameter), *value);
            }
            let mut next = None;
            for op in ops_of(block) {
                self.steps += 1;
                if self.steps > MAX_STEPS {
                    return Err(undecided(
                        location(op),
                        format!("progress is not decided: the strands run more than {MAX_STEPS} operations before their channel actions are all known (a loop that does not end?)"),
                    ));
                }
                match self.op(op, env, ctx)? {
                    Step::Next => {}
                    Step::Branch(target, values) => {
                        next = Some((target, values));
                        break;
                    }
                    Step::Exit(exit) => return Ok(exit),
                }
            }
            let Some((target, values)) = next else {
                return Ok(Exit::Fell);
            };
            block = target;
            incoming = values;
        }
    }

    fn op(&mut self, op: MlirOperation, env: &mut Env, ctx: &mut Ctx) -> Result<Step, Undecided> {
        let name = op_name(op);
        let ins = operands(op);
        let outs = results(op);
        let value = |run: &Self, env: &Env, i: usize| run.get(env, ins[i]);
        let set = |env: &mut Env, i: usize, v: Value| {
            env.insert(key(outs[i]), v);
        };
        match name.as_str() {
            names::index::CONSTANT => {
                let v =
                    int_attribute(op, "value").map_or(Value::Unknown(Origin::Op(op)), Value::Int);
                set(env, 0, v);
            }
            names::config::GET => {
                let name = symbol_ref(op, "name").unwrap_or_default();
                let v = (self.config)(&name).map_or(Value::Unknown(Origin::Op(op)), Value::Int);
                set(env, 0, v);
            }
            names::index::CAST | names::index::ASSUME => {
                let v = value(self, env, 0);
                set(env, 0, v);
            }
            names::index::ADD
            | names::index::SUB
            | names::index::MUL
            | names::index::MIN
            | names::index::MAX
            | names::index::CMP => {
                let v = match (value(self, env, 0), value(self, env, 1)) {
                    (Value::Int(a), Value::Int(b)) => match name.as_str() {
                        names::index::ADD => Value::Int(a.wrapping_add(b)),
                        names::index::SUB => Value::Int(a.wrapping_sub(b)),
                        names::index::MUL => Value::Int(a.wrapping_mul(b)),
                        // Unsigned, as docs/semantics.md defines them.
                        names::index::MIN => Value::Int((a as u64).min(b as u64) as i64),
                        names::index::MAX => Value::Int((a as u64).max(b as u64) as i64),
                        _ => {
                            let predicate = string_attribute(op, "predicate").unwrap_or_default();
                            compare(&predicate, a, b)
                                .map_or(Value::Unknown(Origin::Op(op)), |c| Value::Int(c.into()))
                        }
                    },
                    (Value::Unknown(origin), _) | (_, Value::Unknown(origin)) => {
                        Value::Unknown(origin)
                    }
                    _ => Value::Unknown(Origin::Op(op)),
                };
                set(env, 0, v);
            }
            names::scf::SELECT => {
                let v = match value(self, env, 0) {
                    Value::Int(c) => value(self, env, if c != 0 { 1 } else { 2 }),
                    Value::Unknown(origin) => Value::Unknown(origin),
                    _ => Value::Unknown(Origin::Op(op)),
                };
                set(env, 0, v);
            }
            names::cfg::BR => {
                let values = ins.iter().map(|&v| self.get(env, v)).collect();
                return Ok(Step::Branch(successors(op)[0], values));
            }
            names::cfg::COND_BR => {
                let condition = self.int(env, op, ins[0], "the branch condition")?;
                let sizes =
                    attribute(op, "operandSegmentSizes").expect("cond_br has operand segments");
                let taken = dense_i32_element(sizes, 1) as usize;
                let (target, range) = if condition != 0 {
                    (0, 1..1 + taken)
                } else {
                    (1, 1 + taken..ins.len())
                };
                let values = ins[range].iter().map(|&v| self.get(env, v)).collect();
                return Ok(Step::Branch(successors(op)[target], values));
            }
            names::func::RETURN => {
                let values = ins.iter().map(|&v| self.get(env, v)).collect();
                return Ok(Step::Exit(Exit::Return(values)));
            }
            names::scf::YIELD => {
                let values = ins.iter().map(|&v| self.get(env, v)).collect();
                return Ok(Step::Exit(Exit::Yield(values)));
            }
            names::scf::IF => {
                let condition = self.int(env, op, ins[0], "the condition of this scf.if")?;
                let taken = region(op, if condition != 0 { 0 } else { 1 });
                if let Exit::Yield(values) = self.region(taken, &[], env, ctx)? {
                    for (i, v) in values.into_iter().enumerate().take(outs.len()) {
                        set(env, i, v);
                    }
                }
            }
            names::scf::FOR => {
                let low = self.int(env, op, ins[0], "the loop's lower bound")?;
                let high = self.int(env, op, ins[1], "the loop's upper bound")?;
                let step = self.int(env, op, ins[2], "the loop's step")?;
                if step <= 0 {
                    return Err(undecided(
                        location(op),
                        format!("progress is not decided: the loop's step is {step}, and a run stops here with an error"),
                    ));
                }
                let mut carried: Vec<Value> = ins[3..].iter().map(|&v| self.get(env, v)).collect();
                let mut induction = low;
                while induction < high {
                    let mut args = vec![Value::Int(induction)];
                    args.extend(carried.iter().copied());
                    if let Exit::Yield(values) = self.region(region(op, 0), &args, env, ctx)? {
                        carried = values;
                    }
                    induction = induction.wrapping_add(step);
                    if induction < low {
                        break; // wrapped past the end of index
                    }
                }
                for (i, v) in carried.into_iter().enumerate().take(outs.len()) {
                    set(env, i, v);
                }
            }
            names::func::CALL => self.call(op, &ins, &outs, env, ctx)?,
            names::pipeline::STRAND => self.strands.push((op, env.clone())),
            names::channel::BIND => {
                let capacity = self.int(env, op, ins[1], "the channel's capacity")?;
                let Some(capacity) = u32::try_from(capacity).ok().filter(|&c| c >= 1) else {
                    return Err(undecided(
                        location(op),
                        format!("progress is not decided: a capacity of {capacity} slots, and a run stops here with an error"),
                    ));
                };
                self.channels.push(Channel {
                    bind: op,
                    name: value_name(outs[0]),
                    capacity,
                });
                set(env, 0, Value::Channel(self.channels.len() - 1));
            }
            names::channel::RESERVE | names::channel::ACQUIRE => {
                let reserve = name == names::channel::RESERVE;
                let channel = match value(self, env, 0) {
                    Value::Channel(c) => c,
                    Value::Unknown(origin) => return Err(unknown(op, "the channel", origin)),
                    _ => unreachable!("the verifier types the operand as a channel"),
                };
                ctx.actions.push(Action {
                    kind: if reserve {
                        Kind::Reserve
                    } else {
                        Kind::Acquire
                    },
                    channel,
                    op,
                    calls: ctx.calls.clone(),
                });
                set(
                    env,
                    0,
                    if reserve {
                        Value::Write(channel)
                    } else {
                        Value::Read(channel)
                    },
                );
                set(env, 1, Value::Unknown(Origin::Op(op)));
            }
            names::channel::PUBLISH | names::channel::RELEASE => {
                let (kind, channel) = match value(self, env, 0) {
                    Value::Write(c) => (Kind::Publish, c),
                    Value::Read(c) => (Kind::Release, c),
                    Value::Unknown(origin) => return Err(unknown(op, "the obligation", origin)),
                    _ => unreachable!("the verifier types the operand as an obligation"),
                };
                ctx.actions.push(Action {
                    kind,
                    channel,
                    op,
                    calls: ctx.calls.clone(),
                });
            }
            _ => {
                for i in 0..outs.len() {
                    set(env, i, Value::Unknown(Origin::Op(op)));
                }
            }
        }
        Ok(Step::Next)
    }

    fn call(
        &mut self,
        op: MlirOperation,
        ins: &[MlirValue],
        outs: &[MlirValue],
        env: &mut Env,
        ctx: &mut Ctx,
    ) -> Result<(), Undecided> {
        let callee = symbol_ref(op, "callee").unwrap_or_default();
        let Some(&function) = self.functions.get(&callee) else {
            return Err(undecided(
                location(op),
                format!("progress is not decided: @{callee} is not defined"),
            ));
        };
        let Some(&entry) = blocks(region(function, 0)).first() else {
            return Err(undecided(
                location(op),
                format!("progress is not decided: @{callee} is a declaration, so its channel actions are not known"),
            ));
        };
        if ctx.calls.len() == MAX_CALL_DEPTH {
            return Err(undecided(
                location(op),
                format!("progress is not decided: calls nest more than {MAX_CALL_DEPTH} deep here (unbounded recursion?)"),
            ));
        }
        let args: Vec<Value> = ins
            .iter()
            .take(arguments(entry).len())
            .map(|&v| self.get(env, v))
            .collect();
        let mut calls = ctx.calls.to_vec();
        calls.push(op);
        let mut inner = Ctx {
            actions: ctx.actions,
            calls: calls.into(),
        };
        let mut callee_env = Env::new();
        if let Exit::Return(values) =
            self.region(region(function, 0), &args, &mut callee_env, &mut inner)?
        {
            for (&result, v) in outs.iter().zip(values) {
                env.insert(key(result), v);
            }
        }
        Ok(())
    }
}

/// What running one op leads to.
enum Step {
    Next,
    Branch(MlirBlock, Vec<Value>),
    Exit(Exit),
}
