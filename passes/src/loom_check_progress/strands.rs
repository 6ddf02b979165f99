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
use super::loops::{self, Loop, Summaries};
use crate::index_semantics::{binary, compare};
use loom_dialects::ir::*;
use loom_dialects::names;
use mlir_sys::*;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

/// The most operations the analysis runs to find the actions of every task.
pub const MAX_STEPS: u64 = 1 << 22;
/// Calls nest at most this deep (deeper is taken for unbounded recursion).
const MAX_CALL_DEPTH: usize = 64;
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
/// calls it was in.
pub struct Action {
    pub kind: Kind,
    pub channel: usize,
    pub op: MlirOperation,
    pub calls: Calls,
}

/// The calls an op runs in, innermost first: shared between the actions
/// of one body, and one node more per call.
#[derive(Clone, Default)]
pub struct Calls(Option<Rc<Call>>);

struct Call {
    op: MlirOperation,
    depth: usize,
    outer: Calls,
}

impl Calls {
    fn depth(&self) -> usize {
        self.0.as_ref().map_or(0, |c| c.depth)
    }

    fn within(&self, op: MlirOperation) -> Calls {
        Calls(Some(Rc::new(Call {
            op,
            depth: self.depth() + 1,
            outer: self.clone(),
        })))
    }

    /// The call ops, innermost first.
    pub fn innermost_first(&self) -> Vec<MlirOperation> {
        let mut all = Vec::new();
        let mut at = self;
        while let Some(call) = &at.0 {
            all.push(call.op);
            at = &call.outer;
        }
        all
    }
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

/// Values by their address: a multiplicative hash of the pointer is enough
/// (and much cheaper than SipHash on the hot path of every op).
#[derive(Default)]
struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_usize(&mut self, address: usize) {
        self.0 = (address as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
}

type Env = HashMap<usize, Value, std::hash::BuildHasherDefault<AddressHasher>>;

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
    /// Each block's ops, decoded at its first run.
    blocks: HashMap<usize, Rc<Block>>,
    /// Each region's loops without channel actions, found at its first run
    /// (by entry block), and the inputs (header block and values) with
    /// which such a loop has run to its exit.
    loops: HashMap<usize, Rc<Summaries>>,
    ended: HashSet<Inputs>,
}

/// Where actions go while a body runs, and the calls it is in.
struct Ctx<'c> {
    actions: &'c mut Vec<Action>,
    calls: Calls,
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
        blocks: HashMap::new(),
        loops: HashMap::new(),
        ended: HashSet::new(),
    };
    let mut env = Env::default();
    let entry = body(pipeline);
    let parameters: Vec<Value> = arguments(entry)
        .into_iter()
        .map(|a| Value::Unknown(Origin::Argument(a)))
        .collect();
    let mut construction = Vec::new();
    let mut ctx = Ctx {
        actions: &mut construction,
        calls: Calls::default(),
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
                calls: Calls::default(),
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

/// What the analysis does with an op, decided once per op.
enum Form {
    Constant(Option<i64>),
    /// `index.cast`, `index.assume`: the operand.
    Forward,
    Arith(fn(i64, i64) -> i64),
    Compare(String),
    Config(String),
    Select,
    Br,
    /// `cfg.cond_br` and how many operands go to the first successor.
    CondBr(usize),
    Return,
    Yield,
    If,
    For,
    /// `func.call` of the symbol.
    Call(String),
    Strand,
    Bind,
    Take(Kind),
    Give,
    /// No say in control flow: its results stay unknown.
    Ignored,
}

struct Decoded {
    op: MlirOperation,
    form: Form,
    ins: Vec<MlirValue>,
    outs: Vec<MlirValue>,
    successors: Vec<MlirBlock>,
}

/// A block's arguments and decoded ops.
struct Block {
    args: Vec<MlirValue>,
    ops: Vec<Decoded>,
}

fn decode(op: MlirOperation) -> Decoded {
    let name = op_name(op);
    let form = match name.as_str() {
        names::index::CONSTANT => Form::Constant(int_attribute(op, "value")),
        names::index::CAST | names::index::ASSUME => Form::Forward,
        arithmetic if binary(arithmetic).is_some() => {
            Form::Arith(binary(arithmetic).expect("checked in the guard"))
        }
        names::index::CMP => Form::Compare(string_attribute(op, "predicate").unwrap_or_default()),
        names::config::GET => Form::Config(symbol_ref(op, "name").unwrap_or_default()),
        names::scf::SELECT => Form::Select,
        names::cfg::BR => Form::Br,
        names::cfg::COND_BR => {
            let sizes = attribute(op, "operandSegmentSizes").expect("cond_br has operand segments");
            Form::CondBr(dense_i32_element(sizes, 1) as usize)
        }
        names::func::RETURN => Form::Return,
        names::scf::YIELD => Form::Yield,
        names::scf::IF => Form::If,
        names::scf::FOR => Form::For,
        names::func::CALL => Form::Call(symbol_ref(op, "callee").unwrap_or_default()),
        names::pipeline::STRAND => Form::Strand,
        names::channel::BIND => Form::Bind,
        names::channel::RESERVE => Form::Take(Kind::Reserve),
        names::channel::ACQUIRE => Form::Take(Kind::Acquire),
        names::channel::PUBLISH | names::channel::RELEASE => Form::Give,
        _ => Form::Ignored,
    };
    let successors = match form {
        Form::Br | Form::CondBr(_) => successors(op),
        _ => Vec::new(),
    };
    Decoded {
        op,
        form,
        ins: operands(op),
        outs: results(op),
        successors,
    }
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

    fn block(&mut self, block: MlirBlock) -> Rc<Block> {
        self.blocks
            .entry(block.ptr as usize)
            .or_insert_with(|| {
                // Ops without a say in control flow are left out: their
                // results read as unknown.
                Rc::new(Block {
                    args: arguments(block),
                    ops: ops_of(block)
                        .into_iter()
                        .map(decode)
                        .filter(|d| !matches!(d.form, Form::Ignored))
                        .collect(),
                })
            })
            .clone()
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
        let Some(entry) = entry_block(region) else {
            return Ok(Exit::Fell);
        };
        let summaries = self
            .loops
            .entry(entry.ptr as usize)
            .or_insert_with(|| {
                Rc::new(loops::find(region, &|op| {
                    !matches!(decode(op).form, Form::Ignored)
                }))
            })
            .clone();
        // The loops being run, innermost last, with their inputs.
        let mut running: Vec<(Rc<Loop>, Inputs)> = Vec::new();
        let mut at = entry;
        let mut block = self.block(entry);
        let mut incoming = args.to_vec();
        loop {
            let here = at.ptr as usize;
            while let Some((l, _)) = running.last() {
                if l.blocks.contains(&here) {
                    break;
                }
                let (_, inputs) = running.pop().expect("just looked at it");
                self.ended.insert(inputs);
            }
            if let Some(l) = summaries.loops.get(&here) {
                let entering = !running.iter().any(|(r, _)| Rc::ptr_eq(r, l));
                if entering {
                    let mut inputs: Vec<(u8, i64)> = l
                        .live_in
                        .iter()
                        .map(|&v| summary(self.get(env, v)))
                        .collect();
                    inputs.extend(incoming.iter().map(|&v| summary(v)));
                    let inputs = (here, inputs);
                    if self.ended.contains(&inputs) {
                        // Its run is known: on to the exit, whose arguments
                        // the analysis does not track.
                        at = l.exit;
                        block = self.block(l.exit);
                        incoming.clear();
                        incoming.extend(
                            block
                                .args
                                .iter()
                                .map(|&a| Value::Unknown(Origin::Argument(a))),
                        );
                        continue;
                    }
                    running.push((l.clone(), inputs));
                }
            }
            for (parameter, value) in block.args.iter().zip(incoming.drain(..)) {
                env.insert(key(*parameter), value);
            }
            let mut next = None;
            for decoded in &block.ops {
                self.steps += 1;
                if self.steps > MAX_STEPS {
                    return Err(undecided(
                        location(decoded.op),
                        format!("progress is not decided: the strands run more than {MAX_STEPS} operations before their channel actions are all known (a loop that does not end?)"),
                    ));
                }
                match self.op(decoded, env, ctx)? {
                    Step::Next => {}
                    Step::Branch(successor, arguments) => {
                        // Read every argument before binding any: a back
                        // edge may pass the block's own parameters.
                        incoming.extend(decoded.ins[arguments].iter().map(|&v| self.get(env, v)));
                        next = Some(decoded.successors[successor]);
                        break;
                    }
                    Step::Unknown(refusal) => {
                        let Some(&join) = summaries.joins.get(&here) else {
                            return Err(refusal);
                        };
                        next = Some(join);
                        incoming.extend(
                            self.block(join)
                                .args
                                .iter()
                                .map(|&a| Value::Unknown(Origin::Argument(a))),
                        );
                        break;
                    }
                    Step::Exit(exit) => return Ok(exit),
                }
            }
            let Some(target) = next else {
                return Ok(Exit::Fell);
            };
            at = target;
            block = self.block(target);
        }
    }

    fn op(&mut self, decoded: &Decoded, env: &mut Env, ctx: &mut Ctx) -> Result<Step, Undecided> {
        let Decoded {
            op,
            form,
            ins,
            outs,
            ..
        } = decoded;
        let op = *op;
        let value = |run: &Self, env: &Env, i: usize| run.get(env, ins[i]);
        let set = |env: &mut Env, i: usize, v: Value| {
            env.insert(key(outs[i]), v);
        };
        let values = |run: &Self, env: &Env, range: &[MlirValue]| -> Vec<Value> {
            range.iter().map(|&v| run.get(env, v)).collect()
        };
        match form {
            Form::Ignored => {}
            Form::Constant(c) => set(env, 0, c.map_or(Value::Unknown(Origin::Op(op)), Value::Int)),
            Form::Config(name) => {
                let v = (self.config)(name).map_or(Value::Unknown(Origin::Op(op)), Value::Int);
                set(env, 0, v);
            }
            Form::Forward => {
                let v = value(self, env, 0);
                set(env, 0, v);
            }
            Form::Arith(_) | Form::Compare(_) => {
                let v = match (value(self, env, 0), value(self, env, 1)) {
                    (Value::Int(a), Value::Int(b)) => match form {
                        Form::Arith(f) => Value::Int(f(a, b)),
                        Form::Compare(predicate) => compare(predicate, a, b)
                            .map_or(Value::Unknown(Origin::Op(op)), |c| Value::Int(c.into())),
                        _ => unreachable!("matched above"),
                    },
                    (Value::Unknown(origin), _) | (_, Value::Unknown(origin)) => {
                        Value::Unknown(origin)
                    }
                    _ => Value::Unknown(Origin::Op(op)),
                };
                set(env, 0, v);
            }
            Form::Select => {
                let v = match value(self, env, 0) {
                    Value::Int(c) => value(self, env, if c != 0 { 1 } else { 2 }),
                    Value::Unknown(origin) => Value::Unknown(origin),
                    _ => Value::Unknown(Origin::Op(op)),
                };
                set(env, 0, v);
            }
            Form::Br => return Ok(Step::Branch(0, 0..ins.len())),
            Form::CondBr(taken) => {
                return Ok(match self.get(env, ins[0]) {
                    Value::Int(0) => Step::Branch(1, 1 + taken..ins.len()),
                    Value::Int(_) => Step::Branch(0, 1..1 + taken),
                    // Refused unless the block's ways meet again (loops.rs).
                    Value::Unknown(origin) => {
                        Step::Unknown(unknown(op, "the branch condition", origin))
                    }
                    _ => Step::Unknown(unknown(op, "the branch condition", Origin::Op(op))),
                });
            }
            Form::Return => return Ok(Step::Exit(Exit::Return(values(self, env, ins)))),
            Form::Yield => return Ok(Step::Exit(Exit::Yield(values(self, env, ins)))),
            Form::If => {
                if let Value::Unknown(_) = self.get(env, ins[0]) {
                    if loops::if_goes_past(op) {
                        // Either way, no channel action and nothing tracked.
                        return Ok(Step::Next);
                    }
                }
                let condition = self.int(env, op, ins[0], "the condition of this scf.if")?;
                let taken = region(op, if condition != 0 { 0 } else { 1 });
                if let Exit::Yield(values) = self.region(taken, &[], env, ctx)? {
                    for (i, v) in values.into_iter().enumerate().take(outs.len()) {
                        set(env, i, v);
                    }
                }
            }
            Form::For => {
                let low = self.int(env, op, ins[0], "the loop's lower bound")?;
                let high = self.int(env, op, ins[1], "the loop's upper bound")?;
                let step = self.int(env, op, ins[2], "the loop's step")?;
                if step <= 0 {
                    return Err(undecided(
                        location(op),
                        format!("progress is not decided: the loop's step is {step}, and a run stops here with an error"),
                    ));
                }
                let mut carried = values(self, env, &ins[3..]);
                let mut induction = low;
                let body = region(op, 0);
                while induction < high {
                    let mut args = vec![Value::Int(induction)];
                    args.extend(carried.iter().copied());
                    if let Exit::Yield(values) = self.region(body, &args, env, ctx)? {
                        carried = values;
                    }
                    let Some(next) = induction.checked_add(step) else {
                        // The induction value wraps and stays below the bound.
                        return Err(undecided(
                            location(op),
                            "progress is not decided: the loop's induction value wraps around before it reaches the upper bound, so the loop does not end".into(),
                        ));
                    };
                    induction = next;
                }
                for (i, v) in carried.into_iter().enumerate().take(outs.len()) {
                    set(env, i, v);
                }
            }
            Form::Call(callee) => self.call(op, callee, ins, outs, env, ctx)?,
            Form::Strand => self.strands.push((op, env.clone())),
            Form::Bind => {
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
            Form::Take(kind) => {
                let channel = match value(self, env, 0) {
                    Value::Channel(c) => c,
                    Value::Unknown(origin) => return Err(unknown(op, "the channel", origin)),
                    // The verifier types the operand as a channel.
                    _ => return Err(unknown(op, "the channel", Origin::Op(op))),
                };
                ctx.actions.push(Action {
                    kind: *kind,
                    channel,
                    op,
                    calls: ctx.calls.clone(),
                });
                let obligation = if *kind == Kind::Reserve {
                    Value::Write(channel)
                } else {
                    Value::Read(channel)
                };
                set(env, 0, obligation);
            }
            Form::Give => {
                let (kind, channel) = match value(self, env, 0) {
                    Value::Write(c) => (Kind::Publish, c),
                    Value::Read(c) => (Kind::Release, c),
                    Value::Unknown(origin) => return Err(unknown(op, "the obligation", origin)),
                    // The verifier types the operand as an obligation.
                    _ => return Err(unknown(op, "the obligation", Origin::Op(op))),
                };
                ctx.actions.push(Action {
                    kind,
                    channel,
                    op,
                    calls: ctx.calls.clone(),
                });
            }
        }
        Ok(Step::Next)
    }

    fn call(
        &mut self,
        op: MlirOperation,
        callee: &str,
        ins: &[MlirValue],
        outs: &[MlirValue],
        env: &mut Env,
        ctx: &mut Ctx,
    ) -> Result<(), Undecided> {
        let Some(&function) = self.functions.get(callee) else {
            return Err(undecided(
                location(op),
                format!("progress is not decided: @{callee} is not defined"),
            ));
        };
        let Some(entry) = entry_block(region(function, 0)) else {
            return Err(undecided(
                location(op),
                format!("progress is not decided: @{callee} is a declaration, so its channel actions are not known"),
            ));
        };
        if ctx.calls.depth() == MAX_CALL_DEPTH {
            return Err(undecided(
                location(op),
                format!("progress is not decided: calls nest more than {MAX_CALL_DEPTH} deep here (unbounded recursion?)"),
            ));
        }
        let params = self.block(entry).args.len();
        let args: Vec<Value> = ins.iter().take(params).map(|&v| self.get(env, v)).collect();
        let mut inner = Ctx {
            actions: ctx.actions,
            calls: ctx.calls.within(op),
        };
        let mut callee_env = Env::default();
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

/// A loop's header block and the values it reads when entered.
type Inputs = (usize, Vec<(u8, i64)>);

/// A value as a loop's input: what it is, not where it came from.
fn summary(v: Value) -> (u8, i64) {
    match v {
        Value::Int(i) => (0, i),
        Value::Channel(c) => (1, c as i64),
        Value::Write(c) => (2, c as i64),
        Value::Read(c) => (3, c as i64),
        Value::Unknown(_) => (4, 0),
    }
}

/// What running one op leads to.
enum Step {
    Next,
    /// To the op's successor, with its operands in the range.
    Branch(usize, std::ops::Range<usize>),
    /// A branch on a value not known: on to the block's join, or refused.
    Unknown(Undecided),
    Exit(Exit),
}
