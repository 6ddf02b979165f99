//! The executor: strands as tasks under a scheduler, channels with bounded
//! slots, asynchronous copies, and the run-time checks of
//! `docs/semantics.md` (deadlock, record ownership, bounds, assume facts).

use super::integers;
use super::matmul;
use super::program::{
    BlockId, Dim, FloatOp, FuncId, Index, Inst, IntOp, Op, Predicate, Program, Reg,
};
use super::tiles::{NoArray, Tiles};
use super::timeline::{LockStall, Timeline};
use super::value::{Elem, Value, View};
use crate::numerics::{bf16_to_f32, f32_to_bf16};
use loom_diagnostic::Diagnostic;
use loom_targets::Tile;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

/// Which runnable strand runs next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// The first runnable strand in creation order, until it blocks or ends;
    /// copies complete at the wait that covers them.
    Deterministic,
    /// A random runnable strand at every blocking point and every 64 ops;
    /// pending copies complete at random steps.
    Random(u64),
    /// The construction code first, then for each entry the strand of that
    /// number (tasks numbered in creation order, the construction code 0)
    /// runs up to and including its next channel action (reserve, acquire,
    /// publish, release); then as `Deterministic`. A schedule the progress
    /// analysis found to deadlock (loom-check-progress) replays this way.
    Replay(Vec<usize>),
}

#[derive(Clone)]
pub struct Options {
    pub schedule: Schedule,
    /// Values for `config.get` that the module has not specialized.
    pub config: HashMap<String, i64>,
    /// Ops after which a run stops as runaway.
    pub max_steps: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            schedule: Schedule::Deterministic,
            config: HashMap::new(),
            max_steps: 1 << 32,
        }
    }
}

/// What an invocation left behind.
pub struct Outcome {
    /// The caller's buffers after the invocation, in `run(...)` order.
    pub buffers: Vec<Vec<u8>>,
    /// Ops executed.
    pub steps: u64,
    /// Strand instances that ran.
    pub strands: usize,
}

/// A failure at run time, located at an op, with notes.
type Result<T> = std::result::Result<T, Diagnostic>;

/// Caller buffers start at multiples of 4096 bytes (docs/semantics.md,
/// "Values and storage").
const CALLER_ALIGNMENT: u64 = 4096;

/// One lane of `vector.dot2f`: ((acc + x0*w0) + x1*w1), each step in F32.
fn dot2f_lane(acc: f32, x: [f32; 2], w: [f32; 2]) -> f32 {
    let first = canonical(canonical(x[0] * w[0]) + acc);
    canonical(first + canonical(x[1] * w[1]))
}

/// Index arithmetic: wrapping at 64 bits; min and max unsigned.
fn integer(op: IntOp, x: i64, y: i64) -> i64 {
    match op {
        IntOp::Add => x.wrapping_add(y),
        IntOp::Sub => x.wrapping_sub(y),
        IntOp::Mul => x.wrapping_mul(y),
        IntOp::MinU => (x as u64).min(y as u64) as i64,
        IntOp::MaxU => (x as u64).max(y as u64) as i64,
    }
}

/// `index.cmp`: signed predicates on the two's complement values, unsigned
/// ones on their bits.
fn compare(p: Predicate, x: i64, y: i64) -> bool {
    let (ux, uy) = (x as u64, y as u64);
    match p {
        Predicate::Eq => x == y,
        Predicate::Ne => x != y,
        Predicate::Slt => x < y,
        Predicate::Sle => x <= y,
        Predicate::Sgt => x > y,
        Predicate::Sge => x >= y,
        Predicate::Ult => ux < uy,
        Predicate::Ule => ux <= uy,
        Predicate::Ugt => ux > uy,
        Predicate::Uge => ux >= uy,
    }
}

/// Arithmetic NaNs are the canonical quiet NaN, so results do not depend on
/// the host's NaN propagation.
fn canonical(v: f32) -> f32 {
    if v.is_nan() {
        f32::from_bits(0x7FC0_0000)
    } else {
        v
    }
}

fn fail<T>(loc: &Rc<str>, message: String) -> Result<T> {
    Err(failure(loc, message))
}

fn failure(loc: &Rc<str>, message: String) -> Diagnostic {
    Diagnostic::error(&**loc, message)
}

fn error(loc: &Rc<str>, message: String, notes: Vec<(Rc<str>, String)>) -> Diagnostic {
    noted(Diagnostic::error(&**loc, message), notes)
}

/// `diagnostic` with `notes` (where, what) after its own.
fn noted(diagnostic: Diagnostic, notes: Vec<(Rc<str>, String)>) -> Diagnostic {
    notes
        .into_iter()
        .fold(diagnostic, |d, (loc, note)| d.with_note(&*loc, note))
}

#[derive(Default)]
struct Frame {
    func: FuncId,
    block: BlockId,
    pc: usize,
    regs: Vec<Value>,
    results: Vec<Reg>,
    /// Reused for the values of block arguments in flight.
    scratch: Vec<Value>,
}

#[derive(PartialEq, Eq)]
enum Status {
    Ready,
    Blocked,
    Done,
}

struct Task {
    name: String,
    /// The `pipeline.strand` (or, for the construction code, the pipeline).
    loc: Rc<str>,
    frames: Vec<Frame>,
    status: Status,
    /// Groups this strand committed, oldest first.
    groups: Vec<u32>,
    /// The core's modelled cycle (array simulator cores only).
    clock: u64,
    /// Its coordinates within its strand's worker selection (none for the
    /// construction code).
    instance: Option<[i64; 2]>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Write,
    Read,
}

struct Record {
    channel: u32,
    slot: usize,
    kind: Kind,
    held: bool,
    /// The task that reserved or acquired it, and the calls it was in.
    task: usize,
    stack: Vec<(Rc<str>, String)>,
    created: Rc<str>,
    ended: Option<Rc<str>>,
}

struct Channel {
    base: View,
    record_shape: Rc<[usize]>,
    capacity: usize,
    free: VecDeque<usize>,
    ready: VecDeque<usize>,
    loc: Rc<str>,
}

impl Channel {
    fn record_bytes(&self) -> usize {
        self.record_shape.iter().product::<usize>() * self.base.elem.size()
    }
}

struct Copy {
    source: Rc<View>,
    destination: Rc<View>,
    /// The bytes have moved (at most once).
    moved: bool,
    /// A wait that covers the copy has returned: it is no longer in flight.
    waited: bool,
    loc: Rc<str>,
    /// The task that started it, and the calls it was in.
    task: usize,
    stack: Vec<(Rc<str>, String)>,
}

struct Group {
    copies: Vec<u32>,
}

/// What running a strand for a while came to.
enum Ran {
    Blocked(u64),
    Done(u64),
    Preempted(u64),
}

pub struct Machine<'p> {
    program: &'p Program,
    options: Options,
    buffers: Vec<Vec<u8>>,
    /// The alignment of each buffer's base address.
    alignments: Vec<u64>,
    /// How many of the buffers are the caller's.
    callers: usize,
    channels: Vec<Channel>,
    records: Vec<Record>,
    copies: Vec<Copy>,
    groups: Vec<Group>,
    tasks: Vec<Task>,
    /// Why each blocked strand is blocked: where, and on which channel.
    blocked_on: HashMap<usize, (Rc<str>, String, u32)>,
    steps: u64,
    rng: u64,
    /// Vector storage of overwritten registers, reused by new vectors of
    /// the same length so a loop body does not allocate.
    spare_f32: Vec<Rc<[f32]>>,
    spare_bf16: Vec<Rc<[u16]>>,
    /// The innermost frame of the running strand, out of its task while it
    /// runs (the task's `frames` then hold only its callers): operands are
    /// read without looking the task up.
    cur: Frame,
    /// The buffer holding each tile's data memory, made at first use.
    tiles: HashMap<Tile, u32>,
    /// Why each blocked worker is blocked: where, and on which lock.
    lock_waits: HashMap<usize, (Rc<str>, String)>,
    /// Modelled cycles per op of an array simulator core.
    op_cycles: u64,
    /// Each worker's lock stalls (task, stall), when a trace asks for them.
    stalls: Option<Vec<(usize, LockStall)>>,
    /// Channel actions taken; a replayed strand stops once they reach
    /// `action_limit`.
    actions: u64,
    action_limit: u64,
}

/// Keep the storage of a vector nothing else holds, for `lanes`.
fn recycle(spare_f32: &mut Vec<Rc<[f32]>>, spare_bf16: &mut Vec<Rc<[u16]>>, old: Value) {
    match old {
        Value::VecF32(rc) if Rc::strong_count(&rc) == 1 && spare_f32.len() < 8 => {
            spare_f32.push(rc)
        }
        Value::VecBF16(rc) if Rc::strong_count(&rc) == 1 && spare_bf16.len() < 8 => {
            spare_bf16.push(rc)
        }
        _ => {}
    }
}

/// Unshared storage for a vector of `len` lanes: spare storage when one
/// fits, otherwise new (zeroed) storage.
fn spare<T: std::marker::Copy + Default>(spare: &mut Vec<Rc<[T]>>, len: usize) -> Rc<[T]> {
    match spare.pop() {
        Some(reused) if reused.len() == len => reused,
        _ => vec![T::default(); len].into(),
    }
}

/// A vector of `len` lanes from `fill`, in `spare` storage when one fits.
fn lanes<T: std::marker::Copy + Default>(
    storage: &mut Vec<Rc<[T]>>,
    len: usize,
    fill: impl ExactSizeIterator<Item = T>,
) -> Rc<[T]> {
    let mut out = spare(storage, len);
    let lanes = Rc::get_mut(&mut out).expect("spare storage is unshared");
    for (lane, value) in lanes.iter_mut().zip(fill) {
        *lane = value;
    }
    out
}

/// Run pipeline `name` of `program` with the caller's buffers `args`. A
/// failure is one error, or every violation the checks at completion found.
pub fn run(
    program: &Program,
    name: &str,
    args: Vec<Vec<u8>>,
    options: Options,
) -> std::result::Result<Outcome, Vec<Diagnostic>> {
    let Some(pipeline) = program.pipelines.get(name) else {
        let mut known: Vec<&String> = program.pipelines.keys().collect();
        known.sort();
        return Err(vec![failure(
            &Rc::from(""),
            format!(
                "no pipeline @{name}; the module has {}",
                known
                    .iter()
                    .map(|k| format!("@{k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )]);
    };
    let body = &program.functions[pipeline.body];
    if let Some((arg, ty)) = pipeline
        .run_args
        .iter()
        .zip(&pipeline.arg_types)
        .find(|(_, ty)| ty.as_str() != "buffer")
    {
        return Err(vec![failure(
            &body.loc,
            format!(
                "@{name} takes %{arg}: {ty}; the interpreter binds buffer arguments only \
                 (specialization arguments and views cannot be bound from a scenario yet)"
            ),
        )]);
    }
    if args.len() != body.params.len() {
        return Err(vec![failure(
            &body.loc,
            format!(
                "@{name} takes {} buffers, the scenario binds {}",
                body.params.len(),
                args.len()
            ),
        )]);
    }
    let seed = match options.schedule {
        Schedule::Random(seed) => seed,
        Schedule::Deterministic | Schedule::Replay(_) => 0,
    };
    let callers = args.len();
    let mut machine = Machine::new(program, options, args);
    machine.rng = seed;
    let mut regs = vec![Value::Undef; body.registers as usize];
    for (i, &param) in body.params.iter().enumerate() {
        regs[param as usize] = Value::Buffer(i as u32);
    }
    machine.tasks.push(Task {
        name: format!("the construction code of @{name}"),
        loc: body.loc.clone(),
        frames: vec![Frame {
            func: pipeline.body,
            block: 0,
            pc: 0,
            regs,
            results: Vec::new(),
            scratch: Vec::new(),
        }],
        status: Status::Ready,
        groups: Vec::new(),
        clock: 0,
        instance: None,
    });
    machine.schedule(&mut NoArray).map_err(|e| vec![e])?;
    machine.finish()?;
    let strands = machine.tasks.len() - 1;
    let steps = machine.steps;
    machine.buffers.truncate(callers);
    Ok(Outcome {
        buffers: machine.buffers,
        steps,
        strands,
    })
}

impl<'p> Machine<'p> {
    /// A machine with the caller's buffers and nothing running yet.
    fn new(program: &'p Program, options: Options, args: Vec<Vec<u8>>) -> Machine<'p> {
        Machine {
            program,
            options,
            alignments: vec![CALLER_ALIGNMENT; args.len()],
            callers: args.len(),
            buffers: args,
            channels: Vec::new(),
            records: Vec::new(),
            copies: Vec::new(),
            groups: Vec::new(),
            tasks: Vec::new(),
            blocked_on: HashMap::new(),
            steps: 0,
            rng: 0,
            spare_f32: Vec::new(),
            spare_bf16: Vec::new(),
            cur: Frame::default(),
            tiles: HashMap::new(),
            lock_waits: HashMap::new(),
            op_cycles: 0,
            stalls: None,
            actions: 0,
            action_limit: u64::MAX,
        }
    }

    fn next_random(&mut self) -> u64 {
        // SplitMix64: cheap, and the same stream for the same seed.
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The buffer holding `tile`'s data memory (made zeroed at first use).
    fn tile_memory(&mut self, tile: Tile, tiles: &dyn Tiles, loc: &Rc<str>) -> Result<u32> {
        let bytes = tiles
            .memory_bytes(tile)
            .map_err(|e| error(loc, e, Vec::new()))?;
        if bytes == 0 {
            return fail(loc, format!("tile {tile} has no data memory"));
        }
        Ok(self.tile_buffer(tile, bytes))
    }

    /// The buffer holding `tile`'s data memory of `bytes`, made zeroed at
    /// first use: the one the cores' views and the DMA engines both address.
    fn tile_buffer(&mut self, tile: Tile, bytes: u64) -> u32 {
        *self.tiles.entry(tile).or_insert_with(|| {
            self.buffers.push(vec![0; bytes as usize]);
            self.alignments.push(CALLER_ALIGNMENT);
            self.buffers.len() as u32 - 1
        })
    }

    fn schedule(&mut self, tiles: &mut dyn Tiles) -> Result<()> {
        let random = matches!(self.options.schedule, Schedule::Random(_));
        if let Schedule::Replay(steps) = &self.options.schedule {
            self.replay(&steps.clone(), tiles)?;
        }
        loop {
            let live: Vec<usize> = (0..self.tasks.len())
                .filter(|&t| self.tasks[t].status != Status::Done)
                .collect();
            if live.is_empty() {
                return Ok(());
            }
            let mut order = live;
            if random {
                // A scheduling point: first the copies, then the shuffle
                // (docs/semantics.md, "Strands and scheduling").
                self.move_some_copies();
                for i in (1..order.len()).rev() {
                    let j = (self.next_random() % (i as u64 + 1)) as usize;
                    order.swap(i, j);
                }
            }
            // The strands run once the construction region is done: until
            // then the construction task (task 0) is the only candidate.
            if self.tasks[0].status != Status::Done {
                order.retain(|&t| t == 0);
            }
            let mut progressed = false;
            for t in order {
                let ran = self.run_task::<false>(t, if random { 64 } else { u64::MAX }, tiles)?;
                let steps = match ran {
                    Ran::Blocked(n) | Ran::Done(n) | Ran::Preempted(n) => n,
                };
                if steps > 0 || matches!(ran, Ran::Done(_)) {
                    progressed = true;
                    break;
                }
            }
            if !progressed {
                return Err(self.deadlock());
            }
        }
    }

    /// The construction code to its end, then one channel action of each
    /// strand `steps` names, in order.
    fn replay(&mut self, steps: &[usize], tiles: &mut dyn Tiles) -> Result<()> {
        while self.tasks[0].status != Status::Done {
            if let Ran::Blocked(_) = self.run_task::<false>(0, u64::MAX, tiles)? {
                return Err(self.deadlock());
            }
        }
        for (i, &t) in steps.iter().enumerate() {
            let live = t < self.tasks.len() && self.tasks[t].status != Status::Done;
            self.action_limit = self.actions + 1;
            if live {
                self.run_task::<false>(t, u64::MAX, tiles)?;
            }
            if self.actions != self.action_limit {
                let loc = self
                    .tasks
                    .get(t)
                    .map_or_else(|| Rc::from(""), |task| task.loc.clone());
                return fail(
                    &loc,
                    format!(
                        "the schedule to replay does not fit this program: its step {} is a channel action of task {t}, which {}",
                        i + 1,
                        if live { "blocks or ends before one" } else { "does not run" }
                    ),
                );
            }
        }
        self.action_limit = u64::MAX;
        Ok(())
    }

    /// Random schedule: each copy whose bytes have not moved yet moves with
    /// probability 1/2 (one draw per copy, in the order they started).
    fn move_some_copies(&mut self) {
        for c in 0..self.copies.len() {
            if !self.copies[c].moved && self.next_random() & 1 == 1 {
                self.move_copy(c);
            }
        }
    }

    /// Notes naming the calls that the parked task `t` is inside, innermost
    /// first (its innermost frame is the last of its `frames`).
    fn call_stack(&self, t: usize) -> Vec<(Rc<str>, String)> {
        self.callers(t, 1)
    }

    /// The same for the running task, whose innermost frame is `cur`.
    fn running_call_stack(&self, t: usize) -> Vec<(Rc<str>, String)> {
        self.callers(t, 0)
    }

    fn callers(&self, t: usize, skip: usize) -> Vec<(Rc<str>, String)> {
        self.tasks[t]
            .frames
            .iter()
            .rev()
            .skip(skip)
            .map(|frame| {
                let call =
                    &self.program.functions[frame.func].blocks[frame.block].insts[frame.pc - 1];
                (call.loc.clone(), "called from here".to_string())
            })
            .collect()
    }

    fn deadlock(&self) -> Diagnostic {
        let mut notes = Vec::new();
        let mut first = None;
        for (t, task) in self.tasks.iter().enumerate() {
            if task.status == Status::Done {
                continue;
            }
            let Some((loc, what, channel)) = self.blocked_on.get(&t) else {
                continue;
            };
            first.get_or_insert_with(|| loc.clone());
            let ch = &self.channels[*channel as usize];
            let held = |kind| {
                self.records
                    .iter()
                    .filter(|r| r.channel == *channel && r.held && r.kind == kind)
                    .count()
            };
            notes.push((
                loc.clone(),
                format!(
                    "{} is blocked in {what}; its channel (bound at {}) has capacity {}: {} free, {} published, {} reserved, {} acquired",
                    task.name,
                    ch.loc,
                    ch.capacity,
                    ch.free.len(),
                    ch.ready.len(),
                    held(Kind::Write),
                    held(Kind::Read)
                ),
            ));
            notes.extend(self.call_stack(t));
        }
        let message = if self.tasks[0].status != Status::Done {
            "deadlock: the construction code of the pipeline is blocked (its strands run only once it is done)"
        } else {
            "deadlock: every live strand is blocked"
        };
        error(
            &first.unwrap_or_else(|| Rc::from("")),
            message.into(),
            notes,
        )
    }

    /// The end of the invocation: nothing may be left in flight or unowned.
    /// Every violation is reported (the first is the error, the others
    /// follow it; docs/semantics.md, "Errors").
    fn finish(&mut self) -> std::result::Result<(), Vec<Diagnostic>> {
        let mut found = Vec::new();
        for copy in self.copies.iter().filter(|c| !c.waited) {
            let task = &self.tasks[copy.task];
            let mut notes = copy.stack.clone();
            notes.push((task.loc.clone(), format!("started by {}", task.name)));
            found.push(error(
                &copy.loc,
                "the invocation completed while this copy was never waited for".into(),
                notes,
            ));
        }
        for record in self.records.iter().filter(|r| r.held) {
            let verb = if record.kind == Kind::Write {
                "published"
            } else {
                "released"
            };
            let task = &self.tasks[record.task];
            let mut notes = record.stack.clone();
            notes.push((task.loc.clone(), format!("held by {}", task.name)));
            found.push(error(
                &record.created,
                format!("the invocation completed while this record was never {verb}"),
                notes,
            ));
        }
        for ch in &self.channels {
            if !ch.ready.is_empty() {
                found.push(error(
                    &ch.loc,
                    format!(
                        "the invocation completed with {} published record(s) of this channel never acquired",
                        ch.ready.len()
                    ),
                    Vec::new(),
                ));
            }
        }
        if found.is_empty() {
            return Ok(());
        }
        Err(found)
    }

    /// The running strand's innermost frame (`t` is the running strand).
    fn frame(&self, _t: usize) -> &Frame {
        &self.cur
    }

    fn frame_mut(&mut self, _t: usize) -> &mut Frame {
        &mut self.cur
    }

    /// Put the running frame back into strand `t` unless the strand ended.
    fn park(&mut self, t: usize) {
        if self.tasks[t].status != Status::Done {
            let frame = std::mem::take(&mut self.cur);
            self.tasks[t].frames.push(frame);
        }
    }

    fn get(&self, t: usize, r: Reg) -> &Value {
        &self.frame(t).regs[r as usize]
    }

    fn set(&mut self, t: usize, r: Reg, v: Value) {
        let old = std::mem::replace(&mut self.frame_mut(t).regs[r as usize], v);
        self.recycle(old);
    }

    fn recycle(&mut self, old: Value) {
        recycle(&mut self.spare_f32, &mut self.spare_bf16, old);
    }

    fn int(&self, t: usize, r: Reg, loc: &Rc<str>) -> Result<i64> {
        match self.get(t, r) {
            Value::Int(v) => Ok(*v),
            Value::Bool(b) => Ok(*b as i64),
            other => fail(loc, format!("expected an integer, got {}", other.kind())),
        }
    }

    fn boolean(&self, t: usize, r: Reg, loc: &Rc<str>) -> Result<bool> {
        match self.get(t, r) {
            Value::Bool(b) => Ok(*b),
            other => fail(loc, format!("expected an i1, got {}", other.kind())),
        }
    }

    fn view(&self, t: usize, r: Reg, loc: &Rc<str>) -> Result<Rc<View>> {
        match self.get(t, r) {
            Value::View(v) => {
                self.check_alive(v, loc)?;
                Ok(v.clone())
            }
            other => fail(loc, format!("expected a view, got {}", other.kind())),
        }
    }

    fn check_alive(&self, view: &View, loc: &Rc<str>) -> Result<()> {
        if let Some(owner) = view.owner {
            let record = &self.records[owner as usize];
            if !record.held {
                let verb = if record.kind == Kind::Write {
                    "published"
                } else {
                    "released"
                };
                return Err(error(
                    loc,
                    format!("uses the payload view of a record after it was {verb}"),
                    vec![
                        (
                            record.ended.clone().unwrap_or_else(|| Rc::from("")),
                            format!("the record was {verb} here"),
                        ),
                        (
                            record.created.clone(),
                            "the record was obtained here".into(),
                        ),
                    ],
                ));
            }
        }
        Ok(())
    }

    /// Any operand that is a payload view must still be valid: every op
    /// that uses one after its record was handed on is an error, including
    /// `scf.select`, calls, branches and returns that only pass it along.
    fn check_operands(&self, t: usize, regs: &[Reg], loc: &Rc<str>) -> Result<()> {
        for &r in regs {
            if let Value::View(v) = self.get(t, r) {
                self.check_alive(v, loc)?;
            }
        }
        Ok(())
    }

    fn record(&self, t: usize, r: Reg, kind: Kind, loc: &Rc<str>) -> Result<u32> {
        match (self.get(t, r), kind) {
            (Value::Write(id), Kind::Write) | (Value::Read(id), Kind::Read) => Ok(*id),
            (other, _) => fail(
                loc,
                format!("expected a record obligation, got {}", other.kind()),
            ),
        }
    }

    fn channel(&self, t: usize, r: Reg, loc: &Rc<str>) -> Result<u32> {
        match self.get(t, r) {
            Value::Channel(id) => Ok(*id),
            other => fail(loc, format!("expected a channel, got {}", other.kind())),
        }
    }

    /// Element offset of an access at `indices` (`lanes` along the last
    /// dimension), checked against the view's shape.
    fn locate(
        &self,
        t: usize,
        view: &View,
        indices: &[Index],
        lanes: usize,
        loc: &Rc<str>,
    ) -> Result<usize> {
        if indices.len() != view.shape.len() {
            return fail(
                loc,
                format!(
                    "indexes a rank-{} view with {} indices",
                    view.shape.len(),
                    indices.len()
                ),
            );
        }
        let position = |index: &Index| -> Result<i64> {
            match index {
                Index::Const(c) => Ok(*c),
                Index::Reg(r) => self.int(t, *r, loc),
            }
        };
        if lanes > 1 && view.strides.as_ref().is_some_and(|s| s.last() != Some(&1)) {
            return fail(
                loc,
                format!(
                    "reads {lanes} consecutive elements of a {}, whose innermost stride is not 1",
                    view.type_text()
                ),
            );
        }
        let mut at = Vec::with_capacity(indices.len());
        for (d, index) in indices.iter().enumerate() {
            let i = position(index)?;
            let extent = view.shape[d];
            let last = d + 1 == indices.len();
            let reach = if last { lanes } else { 1 };
            // Positions are unsigned: a negative one is out of bounds.
            if i < 0 || (i as u64).saturating_add(reach as u64) > extent as u64 {
                let mut at = Vec::new();
                for index in indices {
                    at.push(position(index)?.to_string());
                }
                let what = if reach > 1 {
                    format!("elements {i}..{} are", i as i128 + reach as i128 - 1)
                } else {
                    format!("index {i} is")
                };
                return Err(error(
                    loc,
                    format!(
                        "out-of-bounds access at [{}]: {what} outside dimension {d} (size {extent}) of a {}",
                        at.join(", "),
                        view.type_text()
                    ),
                    vec![self.view_note(view)],
                ));
            }
            at.push(i as usize);
        }
        Ok(view.element_at(&at))
    }

    /// Where `view` was made, its byte range and its buffer's size.
    fn view_note(&self, view: &View) -> (Rc<str>, String) {
        (
            view.origin.clone(),
            format!(
                "the {} was made here: bytes [{}, {}) of a buffer of {} bytes",
                view.type_text(),
                view.offset,
                view.offset + view.span(),
                self.buffers[view.buffer as usize].len()
            ),
        )
    }

    fn unsupported_element(view: &View, loc: &Rc<str>) -> Diagnostic {
        error(
            loc,
            format!(
                "accesses an element of a {}: the interpreter loads and stores f32, bf16, i8, i16, i32 and index elements only",
                view.type_text()
            ),
            Vec::new(),
        )
    }

    /// `count` elements of type `elem` at byte `at` of buffer `buffer`;
    /// the caller has checked the access and the element type.
    fn read_elements(&mut self, buffer: u32, at: usize, elem: Elem, count: usize) -> Value {
        let bytes = &self.buffers[buffer as usize];
        match elem {
            Elem::BF16 if count == 1 => Value::BF16(u16::from_le_bytes([bytes[at], bytes[at + 1]])),
            Elem::BF16 => {
                let words = bytes[at..at + 2 * count]
                    .chunks_exact(2)
                    .map(|b| u16::from_le_bytes([b[0], b[1]]));
                Value::VecBF16(lanes(&mut self.spare_bf16, count, words))
            }
            Elem::F32 if count == 1 => Value::F32(f32::from_le_bytes(
                bytes[at..at + 4].try_into().expect("4 bytes"),
            )),
            Elem::F32 => {
                let words = bytes[at..at + 4 * count]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                Value::VecF32(lanes(&mut self.spare_f32, count, words))
            }
            Elem::Index => Value::Int(i64::from_le_bytes(
                bytes[at..at + 8].try_into().expect("8 bytes"),
            )),
            Elem::I8 | Elem::I16 | Elem::I32 => {
                let size = elem.size();
                let ints: Vec<i32> = bytes[at..at + size * count]
                    .chunks_exact(size)
                    .map(|b| match size {
                        1 => b[0] as i8 as i32,
                        2 => i16::from_le_bytes([b[0], b[1]]) as i32,
                        _ => i32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                    })
                    .collect();
                if count == 1 {
                    Value::Integer(elem, ints[0])
                } else {
                    Value::VecInt(elem, ints.into())
                }
            }
            Elem::Other(..) => unreachable!("the caller refuses other element types"),
        }
    }

    fn write_elements(
        &mut self,
        view: &View,
        start: usize,
        value: &Value,
        loc: &Rc<str>,
    ) -> Result<()> {
        if let Elem::Other(..) = view.elem {
            return Err(Self::unsupported_element(view, loc));
        }
        let at = view.offset + start * view.elem.size();
        let bytes = &mut self.buffers[view.buffer as usize];
        match (view.elem, value) {
            (Elem::BF16, Value::BF16(b)) => bytes[at..at + 2].copy_from_slice(&b.to_le_bytes()),
            (Elem::BF16, Value::VecBF16(v)) => {
                for (k, b) in v.iter().enumerate() {
                    bytes[at + 2 * k..at + 2 * k + 2].copy_from_slice(&b.to_le_bytes());
                }
            }
            (Elem::F32, Value::F32(f)) => bytes[at..at + 4].copy_from_slice(&f.to_le_bytes()),
            (Elem::F32, Value::VecF32(v)) => {
                for (k, f) in v.iter().enumerate() {
                    bytes[at + 4 * k..at + 4 * k + 4].copy_from_slice(&f.to_le_bytes());
                }
            }
            (Elem::Index, Value::Int(i)) => bytes[at..at + 8].copy_from_slice(&i.to_le_bytes()),
            (elem, Value::Integer(of, i)) if *of == elem => {
                let size = elem.size();
                bytes[at..at + size].copy_from_slice(&i.to_le_bytes()[..size]);
            }
            (elem, Value::VecInt(of, lanes)) if *of == elem => {
                let size = elem.size();
                for (k, i) in lanes.iter().enumerate() {
                    bytes[at + size * k..at + size * (k + 1)]
                        .copy_from_slice(&i.to_le_bytes()[..size]);
                }
            }
            (elem, other) => {
                return fail(
                    loc,
                    format!("stores {} into a view of {}", other.kind(), elem.name()),
                )
            }
        }
        Ok(())
    }

    /// Move a copy's bytes (once).
    fn move_copy(&mut self, c: usize) {
        let copy = &self.copies[c];
        let (src, dst) = (copy.source.clone(), copy.destination.clone());
        if src.strides.is_none() && dst.strides.is_none() {
            let data =
                self.buffers[src.buffer as usize][src.offset..src.offset + src.span()].to_vec();
            self.buffers[dst.buffer as usize][dst.offset..dst.offset + dst.span()]
                .copy_from_slice(&data);
        } else {
            // Index by index; the source is read whole first, as a DMA
            // would have read it before it lands.
            let size = src.elem.size();
            let from = &self.buffers[src.buffer as usize];
            let data: Vec<u8> = src
                .element_offsets()
                .into_iter()
                .flat_map(|at| from[at..at + size].iter().copied())
                .collect();
            let to = &mut self.buffers[dst.buffer as usize];
            for (k, at) in dst.element_offsets().into_iter().enumerate() {
                to[at..at + size].copy_from_slice(&data[k * size..(k + 1) * size]);
            }
        }
        self.copies[c].moved = true;
    }

    fn float_op(op: FloatOp, a: f32, b: f32) -> f32 {
        canonical(match op {
            FloatOp::Add => a + b,
            FloatOp::Sub => a - b,
            FloatOp::Mul => a * b,
        })
    }

    fn float_values(&self, op: FloatOp, a: &Value, b: &Value, loc: &Rc<str>) -> Result<Value> {
        Ok(match (a, b) {
            (Value::F32(x), Value::F32(y)) => Value::F32(Self::float_op(op, *x, *y)),
            (Value::BF16(x), Value::BF16(y)) => Value::BF16(f32_to_bf16(Self::float_op(
                op,
                bf16_to_f32(*x),
                bf16_to_f32(*y),
            ))),
            (Value::VecF32(x), Value::VecF32(y)) if x.len() == y.len() => Value::VecF32(
                x.iter()
                    .zip(y.iter())
                    .map(|(a, b)| Self::float_op(op, *a, *b))
                    .collect(),
            ),
            (Value::VecBF16(x), Value::VecBF16(y)) if x.len() == y.len() => Value::VecBF16(
                x.iter()
                    .zip(y.iter())
                    .map(|(a, b)| f32_to_bf16(Self::float_op(op, bf16_to_f32(*a), bf16_to_f32(*b))))
                    .collect(),
            ),
            _ => {
                return fail(
                    loc,
                    format!("float arithmetic on {} and {}", a.kind(), b.kind()),
                )
            }
        })
    }

    fn lanes_f32(v: &Value) -> Option<Vec<f32>> {
        match v {
            Value::VecF32(x) => Some(x.to_vec()),
            Value::VecBF16(x) => Some(x.iter().map(|b| bf16_to_f32(*b)).collect()),
            _ => None,
        }
    }

    /// Run strand `t` for at most `quantum` ops; `TIMED` advances its
    /// modelled cycle per op (array simulator cores).
    fn run_task<const TIMED: bool>(
        &mut self,
        t: usize,
        quantum: u64,
        tiles: &mut dyn Tiles,
    ) -> Result<Ran> {
        if self.tasks[t].status == Status::Done {
            return Ok(Ran::Done(0));
        }
        self.cur = self.tasks[t].frames.pop().expect("a live task has a frame");
        let ran = self.run_frames::<TIMED>(t, quantum, tiles);
        self.park(t);
        // The callers, innermost first (their pc is past the call).
        ran.map_err(|error| noted(error, self.call_stack(t)))
    }

    fn run_frames<const TIMED: bool>(
        &mut self,
        t: usize,
        quantum: u64,
        tiles: &mut dyn Tiles,
    ) -> Result<Ran> {
        let program = self.program;
        if self.tasks[t].status == Status::Done {
            return Ok(Ran::Done(0));
        }
        // A strand resumed after blocking is unblocked by its first op.
        let mut unblocking = self.tasks[t].status == Status::Blocked;
        // One bound per op: the quantum, or the steps left before the
        // runaway limit (`steps` is brought up to date on every exit).
        let budget = quantum.min(self.options.max_steps.saturating_sub(self.steps));
        let mut done = 0u64;
        loop {
            let (func, block, pc) = (self.cur.func, self.cur.block, self.cur.pc);
            let inst = &program.functions[func].blocks[block].insts[pc];
            if done >= budget {
                self.steps += done;
                if self.steps >= self.options.max_steps {
                    return fail(
                        &inst.loc,
                        format!("stopped after {} operations (a runaway loop?)", self.steps),
                    );
                }
                return Ok(Ran::Preempted(done));
            }
            if TIMED {
                self.tasks[t].clock += self.op_cycles;
            }
            let ran = self.exec(t, inst, tiles);
            if !matches!(ran, Ok(true)) {
                self.steps += done;
                if !ran? {
                    self.tasks[t].status = Status::Blocked;
                    return Ok(Ran::Blocked(done));
                }
            }
            done += 1;
            if unblocking {
                unblocking = false;
                self.blocked_on.remove(&t);
                self.lock_waits.remove(&t);
                if self.tasks[t].status == Status::Blocked {
                    self.tasks[t].status = Status::Ready;
                }
            }
            if self.actions >= self.action_limit {
                self.steps += done;
                return Ok(Ran::Preempted(done));
            }
            if self.tasks[t].status == Status::Done {
                self.steps += done;
                return Ok(Ran::Done(done));
            }
        }
    }

    fn advance(&mut self, t: usize) {
        self.frame_mut(t).pc += 1;
    }

    /// Leave the block for `target`, passing `args` (no dead payload view
    /// may travel).
    fn branch(&mut self, t: usize, target: BlockId, args: &[Reg], loc: &Rc<str>) -> Result<bool> {
        self.check_operands(t, args, loc)?;
        self.jump(t, target, args);
        Ok(true)
    }

    fn jump(&mut self, t: usize, target: BlockId, args: &[Reg]) {
        let func = self.frame(t).func;
        let params = &self.program.functions[func].blocks[target].params;
        let frame = &mut self.cur;
        frame.block = target;
        frame.pc = 0;
        if !args.iter().any(|a| params.contains(a)) {
            // No argument is a parameter being written: copy one by one.
            for (&p, &a) in params.iter().zip(args) {
                let v = frame.regs[a as usize].clone();
                let old = std::mem::replace(&mut frame.regs[p as usize], v);
                recycle(&mut self.spare_f32, &mut self.spare_bf16, old);
            }
            return;
        }
        // Block arguments are read before any is written (a loop's header
        // may receive its own parameters swapped).
        let mut scratch = std::mem::take(&mut frame.scratch);
        scratch.extend(args.iter().map(|&r| frame.regs[r as usize].clone()));
        for (&p, v) in params.iter().zip(scratch.iter_mut()) {
            std::mem::swap(&mut frame.regs[p as usize], v);
        }
        // `scratch` now holds what the parameters held before the jump.
        for old in scratch.drain(..) {
            recycle(&mut self.spare_f32, &mut self.spare_bf16, old);
        }
        self.cur.scratch = scratch;
    }

    /// Execute one op; false when the strand must wait.
    fn exec(&mut self, t: usize, inst: &Inst, tiles: &mut dyn Tiles) -> Result<bool> {
        let loc = &inst.loc;
        match &inst.op {
            Op::Const(v, d) => self.set(t, *d, v.clone()),
            Op::Move(a, d) => {
                self.check_operands(t, &[*a], loc)?;
                let v = self.get(t, *a).clone();
                self.set(t, *d, v);
            }
            Op::Int(op, a, b, d) => {
                let v = integer(*op, self.int(t, *a, loc)?, self.int(t, *b, loc)?);
                self.set(t, *d, Value::Int(v));
            }
            Op::Cmp(p, a, b, d) => {
                let v = compare(*p, self.int(t, *a, loc)?, self.int(t, *b, loc)?);
                self.set(t, *d, Value::Bool(v));
            }
            Op::Assume {
                input,
                range,
                multiple_of,
            } => {
                let v = self.int(t, *input, loc)?;
                if let Some((lo, hi)) = range {
                    if v < *lo || v > *hi {
                        return fail(
                            loc,
                            format!("index.assume: the value {v} is outside range({lo}, {hi})"),
                        );
                    }
                }
                if let Some(m) = multiple_of {
                    if *m != 0 && v % m != 0 {
                        return fail(
                            loc,
                            format!("index.assume: the value {v} is not a multiple of {m}"),
                        );
                    }
                }
            }
            Op::Float(op, a, b, d) => {
                let v = self.float_values(*op, self.get(t, *a), self.get(t, *b), loc)?;
                self.set(t, *d, v);
            }
            Op::Convert(a, elem, d) => {
                let v = match (self.get(t, *a), elem) {
                    (Value::F32(x), Elem::BF16) => Value::BF16(f32_to_bf16(*x)),
                    (Value::BF16(x), Elem::F32) => Value::F32(bf16_to_f32(*x)),
                    (Value::VecF32(x), Elem::BF16) => {
                        Value::VecBF16(x.iter().map(|v| f32_to_bf16(*v)).collect())
                    }
                    (Value::VecBF16(x), Elem::F32) => {
                        Value::VecF32(x.iter().map(|v| bf16_to_f32(*v)).collect())
                    }
                    (other, elem) => {
                        return fail(
                            loc,
                            format!("cannot convert {} to {}", other.kind(), elem.name()),
                        )
                    }
                };
                self.set(t, *d, v);
            }
            Op::Select(c, a, b, d) => {
                self.check_operands(t, &[*a, *b], loc)?;
                let v = if self.boolean(t, *c, loc)? {
                    self.get(t, *a)
                } else {
                    self.get(t, *b)
                }
                .clone();
                self.set(t, *d, v);
            }
            Op::Splat(a, lanes, d) => {
                let v = Value::splat(self.get(t, *a), *lanes);
                self.set(t, *d, v);
            }
            Op::Interleave(a, b, d) => {
                let v = match (self.get(t, *a), self.get(t, *b)) {
                    (Value::VecBF16(x), Value::VecBF16(y)) if x.len() == y.len() => {
                        Value::VecBF16(x.iter().zip(y.iter()).flat_map(|(p, q)| [*p, *q]).collect())
                    }
                    (Value::VecF32(x), Value::VecF32(y)) if x.len() == y.len() => {
                        Value::VecF32(x.iter().zip(y.iter()).flat_map(|(p, q)| [*p, *q]).collect())
                    }
                    (x, y) => {
                        return fail(loc, format!("interleaves {} with {}", x.kind(), y.kind()))
                    }
                };
                self.set(t, *d, v);
            }
            Op::Dot2f(a, b, c, d) => {
                let regs = &self.cur.regs;
                let out = match (&regs[*a as usize], &regs[*b as usize], &regs[*c as usize]) {
                    // The common case: operands read in place, the result
                    // written into spare storage.
                    (Value::VecBF16(x), Value::VecBF16(w), Value::VecF32(acc))
                        if x.len() == w.len() && x.len() == 2 * acc.len() =>
                    {
                        let mut out = spare(&mut self.spare_f32, acc.len());
                        let lanes = Rc::get_mut(&mut out).expect("spare storage is unshared");
                        for (i, lane) in lanes.iter_mut().enumerate() {
                            let (x, w) = (&x[2 * i..2 * i + 2], &w[2 * i..2 * i + 2]);
                            *lane = dot2f_lane(
                                acc[i],
                                [bf16_to_f32(x[0]), bf16_to_f32(x[1])],
                                [bf16_to_f32(w[0]), bf16_to_f32(w[1])],
                            );
                        }
                        out
                    }
                    (x, w, acc) => {
                        let (Some(x), Some(w), Some(acc)) =
                            (Self::lanes_f32(x), Self::lanes_f32(w), Self::lanes_f32(acc))
                        else {
                            return fail(loc, "vector.dot2f needs vector operands".into());
                        };
                        if x.len() != w.len() || x.len() != 2 * acc.len() {
                            return fail(
                                loc,
                                format!(
                                    "vector.dot2f lane counts {} x {} into {}",
                                    x.len(),
                                    w.len(),
                                    acc.len()
                                ),
                            );
                        }
                        x.chunks_exact(2)
                            .zip(w.chunks_exact(2))
                            .zip(&acc)
                            .map(|((x, w), s)| dot2f_lane(*s, [x[0], x[1]], [w[0], w[1]]))
                            .collect()
                    }
                };
                self.set(t, *d, Value::VecF32(out));
            }
            Op::Wrapping(op, a, b, d) => {
                let (x, y) = (self.get(t, *a), self.get(t, *b));
                let Some(v) = integers::wrapping(*op, x, y) else {
                    let what = format!("integer arithmetic on {} and {}", x.kind(), y.kind());
                    return fail(loc, what);
                };
                self.set(t, *d, v);
            }
            Op::Mac(a, b, c, d) => {
                let (x, y, acc) = (self.get(t, *a), self.get(t, *b), self.get(t, *c));
                let Some(v) = integers::mac(x, y, acc) else {
                    let what = format!(
                        "vector.mac of {}, {} into {}",
                        x.kind(),
                        y.kind(),
                        acc.kind()
                    );
                    return fail(loc, what);
                };
                self.set(t, *d, v);
            }
            Op::Mmac(shape, a, b, c, d) => {
                let (x, y, acc) = (self.get(t, *a), self.get(t, *b), self.get(t, *c));
                let Some(v) = matmul::mmac(*shape, x, y, acc) else {
                    let what = format!(
                        "vector.mmac [{}, {}, {}] of {}, {} into {}",
                        shape.m,
                        shape.k,
                        shape.n,
                        x.kind(),
                        y.kind(),
                        acc.kind()
                    );
                    return fail(loc, what);
                };
                self.set(t, *d, v);
            }
            Op::Pick(index, choices, d) => {
                self.check_operands(t, choices, loc)?;
                let at = self.int(t, *index, loc)?;
                let Some(&choice) = usize::try_from(at).ok().and_then(|i| choices.get(i)) else {
                    let what = format!(
                        "scf.pick index {at} is outside its {} choices",
                        choices.len()
                    );
                    return fail(loc, what);
                };
                let v = self.get(t, choice).clone();
                self.set(t, *d, v);
            }
            Op::Srs(a, shift, elem, d) => {
                let Some(v) = integers::srs(self.get(t, *a), *shift, *elem) else {
                    let what = format!(
                        "vector.srs of {} to {}",
                        self.get(t, *a).kind(),
                        elem.name()
                    );
                    return fail(loc, what);
                };
                self.set(t, *d, v);
            }
            Op::Extract(a, i, d) => {
                let v = match self.get(t, *a) {
                    Value::VecF32(x) if *i < x.len() => Value::F32(x[*i]),
                    Value::VecBF16(x) if *i < x.len() => Value::BF16(x[*i]),
                    Value::VecInt(elem, x) if *i < x.len() => Value::Integer(*elem, x[*i]),
                    other => return fail(loc, format!("extracts lane {i} of {}", other.kind())),
                };
                self.set(t, *d, v);
            }
            Op::Load {
                view,
                indices,
                lanes,
                result,
            } => {
                // The view is read in place (no reference count traffic).
                let v = match &self.cur.regs[*view as usize] {
                    Value::View(v) => v,
                    other => return fail(loc, format!("expected a view, got {}", other.kind())),
                };
                self.check_alive(v, loc)?;
                let count = lanes.unwrap_or(1);
                let start = self.locate(t, v, indices, count, loc)?;
                if matches!(v.elem, Elem::Other(..)) || (v.elem == Elem::Index && count > 1) {
                    return Err(Self::unsupported_element(v, loc));
                }
                let at = v.offset + start * v.elem.size();
                let mut value = self.read_elements(v.buffer, at, v.elem, count);
                if lanes.is_some() && count == 1 {
                    value = Value::splat(&value, 1);
                }
                self.set(t, *result, value);
            }
            Op::Store {
                value,
                view,
                indices,
            } => {
                let v = self.view(t, *view, loc)?;
                let stored = self.get(t, *value).clone();
                let count = match &stored {
                    Value::VecF32(x) => x.len(),
                    Value::VecBF16(x) => x.len(),
                    Value::VecInt(_, x) => x.len(),
                    _ => 1,
                };
                let start = self.locate(t, &v, indices, count, loc)?;
                self.write_elements(&v, start, &stored, loc)?;
            }
            Op::Br(target, args) => {
                return self.branch(t, *target, args, loc);
            }
            Op::IntBr(op, a, b, d, target, args) => {
                let v = integer(*op, self.int(t, *a, loc)?, self.int(t, *b, loc)?);
                self.set(t, *d, Value::Int(v));
                return self.branch(t, *target, args, loc);
            }
            Op::CmpBr(p, a, b, yes, yes_args, no, no_args) => {
                let taken = compare(*p, self.int(t, *a, loc)?, self.int(t, *b, loc)?);
                let (target, args) = if taken {
                    (yes, yes_args)
                } else {
                    (no, no_args)
                };
                return self.branch(t, *target, args, loc);
            }
            Op::CondBr(c, yes, yes_args, no, no_args) => {
                let taken = self.boolean(t, *c, loc)?;
                let (target, args) = if taken {
                    (yes, yes_args)
                } else {
                    (no, no_args)
                };
                return self.branch(t, *target, args, loc);
            }
            Op::Return(values) => {
                self.check_operands(t, values, loc)?;
                let returned: Vec<Value> = values.iter().map(|&r| self.get(t, r).clone()).collect();
                let frame = std::mem::take(&mut self.cur);
                match self.tasks[t].frames.pop() {
                    Some(caller) => {
                        self.cur = caller;
                        for (&d, v) in frame.results.iter().zip(returned) {
                            self.cur.regs[d as usize] = v;
                        }
                    }
                    None => self.tasks[t].status = Status::Done,
                }
                return Ok(true);
            }
            _ => return self.exec_cold(t, inst, tiles),
        }
        self.advance(t);
        Ok(true)
    }

    /// The operations a loop body rarely runs (storage, channels, copies,
    /// calls), apart so that `exec` stays small.
    #[inline(never)]
    fn exec_cold(&mut self, t: usize, inst: &Inst, tiles: &mut dyn Tiles) -> Result<bool> {
        let loc = &inst.loc;
        match &inst.op {
            Op::AssumeAlignment(srcs, align, dsts) => {
                // The interpreter places caller buffers at multiples of 4096
                // bytes and each allocation at a multiple of its alignment
                // (and of 4096): a promise of more is not known to hold.
                for s in srcs {
                    if let Value::Buffer(b) = self.get(t, *s) {
                        let placed = self.alignments[*b as usize];
                        if *align > placed {
                            let what = if (*b as usize) < self.callers {
                                "a caller buffer"
                            } else {
                                "an allocation"
                            };
                            return fail(
                                loc,
                                format!(
                                    "buffer.assume.alignment promises {align}-byte alignment; the interpreter places {what} at a multiple of {placed} bytes only"
                                ),
                            );
                        }
                    }
                }
                for (s, d) in srcs.iter().zip(dsts) {
                    let v = self.get(t, *s).clone();
                    self.set(t, *d, v);
                }
            }
            Op::AssumeNoalias(srcs, dsts) => {
                let ids: Vec<Value> = srcs.iter().map(|s| self.get(t, *s).clone()).collect();
                for (i, a) in ids.iter().enumerate() {
                    for b in &ids[i + 1..] {
                        if let (Value::Buffer(x), Value::Buffer(y)) = (a, b) {
                            if x == y {
                                return fail(
                                    loc,
                                    "buffer.assume.noalias: the same buffer is bound twice".into(),
                                );
                            }
                        }
                    }
                }
                for (v, d) in ids.into_iter().zip(dsts) {
                    self.set(t, *d, v);
                }
            }
            Op::Alloca(size, align, d) => {
                let n = self.int(t, *size, loc)?;
                if n < 0 {
                    return fail(
                        loc,
                        format!("buffer.alloca of {n} bytes: the size must not be negative"),
                    );
                }
                if n > 1 << 30 {
                    return fail(
                        loc,
                        format!(
                            "buffer.alloca of {n} bytes: the interpreter allocates at most 1 GiB"
                        ),
                    );
                }
                self.buffers.push(vec![0; n as usize]);
                self.alignments.push((*align).max(CALLER_ALIGNMENT));
                self.set(t, *d, Value::Buffer(self.buffers.len() as u32 - 1));
            }
            Op::View {
                buffer,
                offset,
                shape,
                elem,
                strides,
                result,
            } => {
                let (b, base, window) = match *self.get(t, *buffer) {
                    Value::Buffer(b) => (b, 0, None),
                    Value::Window { buffer, base, size } => (buffer, base, Some(size)),
                    _ => return fail(loc, "buffer.view of something that is not a buffer".into()),
                };
                let off = self.int(t, *offset, loc)?;
                let mut dims = Vec::new();
                for d in shape {
                    dims.push(match d {
                        Dim::Fixed(n) => *n,
                        Dim::Reg(r) => {
                            let n = self.int(t, *r, loc)?;
                            if n < 0 {
                                let text: Vec<String> = shape
                                    .iter()
                                    .map(|d| match d {
                                        Dim::Fixed(n) => n.to_string(),
                                        Dim::Reg(r) => match self.get(t, *r) {
                                            Value::Int(v) => v.to_string(),
                                            _ => "?".into(),
                                        },
                                    })
                                    .collect();
                                return fail(
                                    loc,
                                    format!(
                                        "out of bounds: a view<{}x{}> has the negative dimension {n}",
                                        text.join("x"),
                                        elem.name()
                                    ),
                                );
                            }
                            n as usize
                        }
                    });
                }
                let len = window.unwrap_or(self.buffers[b as usize].len());
                let bytes = View::checked_span(&dims, strides.as_deref(), *elem);
                let view = View {
                    buffer: b,
                    offset: off.max(0) as usize,
                    shape: dims.into(),
                    elem: *elem,
                    strides: strides.as_deref().map(Rc::from),
                    owner: None,
                    origin: loc.clone(),
                };
                let fits = off >= 0
                    && bytes
                        .and_then(|n| view.offset.checked_add(n))
                        .is_some_and(|end| end <= len);
                // A window's views address its buffer from the window's base.
                let view = View {
                    offset: view.offset + base,
                    ..view
                };
                if !fits {
                    let range = match bytes.map(|n| off as i128 + n as i128) {
                        Some(end) => format!("bytes [{off}, {end})"),
                        None => "more bytes than the address space holds".into(),
                    };
                    return fail(
                        loc,
                        format!(
                            "out of bounds: a {} at byte offset {off} ({range}) does not fit in a buffer of {len} bytes",
                            view.type_text()
                        ),
                    );
                }
                self.set(t, *result, Value::View(Rc::new(view)));
            }
            Op::Reinterpret {
                source,
                shape,
                strides,
                result,
            } => {
                let s = self.view(t, *source, loc)?;
                let reach = View::checked_span(shape, strides.as_deref(), s.elem);
                if s.strides.is_some() || reach.is_none_or(|n| n > s.span()) {
                    return fail(
                        loc,
                        format!(
                            "reinterprets a {} as a view reaching {} bytes: more than its {}",
                            s.type_text(),
                            reach.map_or("too many".into(), |n| n.to_string()),
                            s.span()
                        ),
                    );
                }
                let view = View {
                    shape: shape.as_slice().into(),
                    strides: strides.as_deref().map(Rc::from),
                    origin: loc.clone(),
                    ..(*s).clone()
                };
                self.set(t, *result, Value::View(Rc::new(view)));
            }
            Op::Part {
                source,
                index,
                result,
            } => {
                let s = self.view(t, *source, loc)?;
                let i = self.int(t, *index, loc)?;
                let parts = s.shape.first().copied().unwrap_or(0);
                if i < 0 || i as usize >= parts {
                    return fail(
                        loc,
                        format!(
                            "view.part {i} is outside the {parts} parts of a {}",
                            s.type_text()
                        ),
                    );
                }
                // A part steps by the leading stride (the elements of the
                // rest for a row-major view) and keeps the other strides.
                let step = s
                    .strides
                    .as_ref()
                    .map_or_else(|| s.shape[1..].iter().product(), |st| st[0]);
                let view = View {
                    offset: s.offset + i as usize * step * s.elem.size(),
                    shape: s.shape[1..].into(),
                    strides: s.strides.as_ref().map(|st| st[1..].into()),
                    origin: loc.clone(),
                    ..(*s).clone()
                };
                self.set(t, *result, Value::View(Rc::new(view)));
            }
            Op::Pool(d) => self.set(t, *d, Value::Pool),
            Op::TileBuffer {
                tile,
                offset,
                size,
                result,
            } => {
                let buffer = self.tile_memory(*tile, tiles, loc)?;
                let len = self.buffers[buffer as usize].len();
                if offset.checked_add(*size).is_none_or(|end| end > len) {
                    return fail(
                        loc,
                        format!(
                            "bytes [{offset}, {}) are outside the {len}-byte data memory of tile {tile}",
                            offset.saturating_add(*size),
                        ),
                    );
                }
                let window = Value::Window {
                    buffer,
                    base: *offset,
                    size: *size,
                };
                self.set(t, *result, window);
            }
            Op::LockAcquire(lock) => {
                let now = self.tasks[t].clock;
                let taken = tiles
                    .try_acquire(lock.tile, lock.id, lock.value, now)
                    .map_err(|e| error(loc, e, Vec::new()))?;
                if let Some(at) = taken {
                    if at > now {
                        if let Some(stalls) = &mut self.stalls {
                            stalls.push((
                                t,
                                LockStall {
                                    tile: lock.tile,
                                    lock: lock.id,
                                    value: lock.value,
                                    begin: now,
                                    end: at,
                                },
                            ));
                        }
                    }
                    self.tasks[t].clock = at;
                } else {
                    // The op runs again when the core resumes.
                    self.tasks[t].clock -= self.op_cycles;
                    let what = format!(
                        "aie2p.lock.acquire of lock {} of tile {} (needs at least {})",
                        lock.id, lock.tile, lock.value
                    );
                    self.lock_waits.insert(t, (loc.clone(), what));
                    return Ok(false);
                }
            }
            Op::LockRelease(lock) => {
                let now = self.tasks[t].clock;
                tiles
                    .release(lock.tile, lock.id, lock.value, now)
                    .map_err(|e| error(loc, e, Vec::new()))?;
            }
            Op::Spawn {
                body,
                workers,
                instances,
            } => {
                let registers = self.program.functions[*body].registers as usize;
                let mut regs = self.frame(t).regs.clone();
                regs.resize(registers, Value::Undef);
                for (k, worker) in workers.iter().enumerate() {
                    let index = self.tasks.len();
                    self.tasks.push(Task {
                        name: format!(
                            "strand {} (worker [{}, {}]{})",
                            index,
                            worker[0],
                            worker[1],
                            if workers.len() > 1 {
                                format!(", instance {k}")
                            } else {
                                String::new()
                            }
                        ),
                        loc: loc.clone(),
                        frames: vec![Frame {
                            func: *body,
                            block: 0,
                            pc: 0,
                            regs: regs.clone(),
                            results: Vec::new(),
                            scratch: Vec::new(),
                        }],
                        status: Status::Ready,
                        groups: Vec::new(),
                        clock: 0,
                        instance: Some(instances[k]),
                    });
                }
            }
            Op::Instance(column, row) => {
                let Some([c, r]) = self.tasks[t].instance else {
                    return fail(
                        loc,
                        "pipeline.instance runs in the construction code, which is no strand instance"
                            .into(),
                    );
                };
                self.set(t, *column, Value::Int(c));
                self.set(t, *row, Value::Int(r));
            }
            Op::Bind(slots, capacity, d) => {
                let base = self.view(t, *slots, loc)?;
                let cap = self.int(t, *capacity, loc)?;
                let count = base.shape.first().copied().unwrap_or(0);
                if cap < 1 || cap as usize > count {
                    return fail(
                        loc,
                        format!("a channel of capacity {cap} over {count} slot(s); capacity must be 1..={count}"),
                    );
                }
                let record_shape: Rc<[usize]> = base.shape[1..].to_vec().into();
                self.channels.push(Channel {
                    base: (*base).clone(),
                    record_shape,
                    capacity: cap as usize,
                    free: (0..cap as usize).collect(),
                    ready: VecDeque::new(),
                    loc: loc.clone(),
                });
                self.set(t, *d, Value::Channel(self.channels.len() as u32 - 1));
            }
            Op::Reserve(ch, w, view) | Op::Acquire(ch, w, view) => {
                let reserve = matches!(inst.op, Op::Reserve(..));
                let c = self.channel(t, *ch, loc)?;
                let channel = &mut self.channels[c as usize];
                let queue = if reserve {
                    &mut channel.free
                } else {
                    &mut channel.ready
                };
                let Some(slot) = queue.pop_front() else {
                    let what = if reserve {
                        "channel.reserve, waiting for a free slot"
                    } else {
                        "channel.acquire, waiting for a published record"
                    };
                    self.blocked_on.insert(t, (loc.clone(), what.into(), c));
                    return Ok(false);
                };
                let payload = View {
                    buffer: channel.base.buffer,
                    offset: channel.base.offset + slot * channel.record_bytes(),
                    shape: channel.record_shape.clone(),
                    elem: channel.base.elem,
                    strides: None,
                    owner: Some(self.records.len() as u32),
                    origin: loc.clone(),
                };
                let id = self.records.len() as u32;
                self.records.push(Record {
                    channel: c,
                    slot,
                    kind: if reserve { Kind::Write } else { Kind::Read },
                    held: true,
                    task: t,
                    stack: self.running_call_stack(t),
                    created: loc.clone(),
                    ended: None,
                });
                self.set(
                    t,
                    *w,
                    if reserve {
                        Value::Write(id)
                    } else {
                        Value::Read(id)
                    },
                );
                self.set(t, *view, Value::View(Rc::new(payload)));
                self.actions += 1;
            }
            Op::Publish(w) | Op::Release(w) => {
                let publish = matches!(inst.op, Op::Publish(_));
                let kind = if publish { Kind::Write } else { Kind::Read };
                let id = self.record(t, *w, kind, loc)?;
                let record = &self.records[id as usize];
                if !record.held {
                    let verb = if publish { "publishes" } else { "releases" };
                    return Err(error(
                        loc,
                        format!("{verb} a record a second time"),
                        vec![(
                            record.ended.clone().unwrap_or_else(|| Rc::from("")),
                            "it was already ended here".into(),
                        )],
                    ));
                }
                let in_flight = self.copies.iter().find(|c| {
                    !c.waited
                        && if publish {
                            c.destination.owner == Some(id)
                        } else {
                            c.source.owner == Some(id)
                        }
                });
                if let Some(copy) = in_flight {
                    let (verb, way) = if publish {
                        ("publishes", "into")
                    } else {
                        ("releases", "out of")
                    };
                    return Err(error(
                        loc,
                        format!(
                            "{verb} a record while a copy {way} it is still in flight (wait for its group first)"
                        ),
                        std::iter::once((copy.loc.clone(), "the copy was started here".into()))
                            .chain(copy.stack.iter().cloned())
                            .collect(),
                    ));
                }
                let (c, slot) = (record.channel as usize, record.slot);
                let record = &mut self.records[id as usize];
                record.held = false;
                record.ended = Some(loc.clone());
                if publish {
                    self.channels[c].ready.push_back(slot);
                } else {
                    self.channels[c].free.push_back(slot);
                }
                self.actions += 1;
            }
            Op::Copy(src, dst, token) => {
                let (s, d) = (self.view(t, *src, loc)?, self.view(t, *dst, loc)?);
                if s.shape != d.shape || s.elem != d.elem {
                    return fail(
                        loc,
                        format!(
                            "copies a {} into a {}: the run-time shapes differ",
                            s.type_text(),
                            d.type_text()
                        ),
                    );
                }
                self.copies.push(Copy {
                    source: s,
                    destination: d,
                    moved: false,
                    waited: false,
                    loc: loc.clone(),
                    task: t,
                    stack: self.running_call_stack(t),
                });
                self.set(t, *token, Value::Token(self.copies.len() as u32 - 1));
            }
            Op::Group(tokens, d) => {
                let mut copies = Vec::new();
                for r in tokens {
                    match self.get(t, *r) {
                        Value::Token(c)
                            if self.groups.iter().any(|g| g.copies.contains(c))
                                || copies.contains(c) =>
                        {
                            return Err(error(
                                loc,
                                "commits a copy that is already in a group".into(),
                                vec![(
                                    self.copies[*c as usize].loc.clone(),
                                    "the copy was started here".into(),
                                )],
                            ));
                        }
                        Value::Token(c) => copies.push(*c),
                        other => return fail(loc, format!("groups {}", other.kind())),
                    }
                }
                self.groups.push(Group { copies });
                let g = self.groups.len() as u32 - 1;
                self.tasks[t].groups.push(g);
                self.set(t, *d, Value::Group(g));
            }
            Op::Wait(g, newer) => {
                let Value::Group(g) = *self.get(t, *g) else {
                    return fail(loc, "waits on something that is not a group".into());
                };
                let order = &self.tasks[t].groups;
                let Some(at) = order.iter().position(|x| *x == g) else {
                    return fail(loc, "waits on a group another strand committed".into());
                };
                let keep = (*newer as usize).min(order.len() - at - 1);
                let upto = order.len() - keep;
                let finishing: Vec<u32> = order[..upto].to_vec();
                for group in finishing {
                    for c in self.groups[group as usize].copies.clone() {
                        if !self.copies[c as usize].moved {
                            self.move_copy(c as usize);
                        }
                        self.copies[c as usize].waited = true;
                    }
                }
            }
            Op::Call(f, args, dsts) => {
                self.check_operands(t, args, loc)?;
                let callee = &self.program.functions[*f];
                let mut regs = vec![Value::Undef; callee.registers as usize];
                for (&p, &a) in callee.params.iter().zip(args) {
                    regs[p as usize] = self.get(t, a).clone();
                }
                self.advance(t);
                let callee = Frame {
                    func: *f,
                    block: 0,
                    pc: 0,
                    regs,
                    results: dsts.clone(),
                    scratch: Vec::new(),
                };
                let caller = std::mem::replace(&mut self.cur, callee);
                self.tasks[t].frames.push(caller);
                return Ok(true);
            }
            Op::ConfigGet(name, d) => {
                let Some(&v) = self.options.config.get(name) else {
                    return fail(
                        loc,
                        format!(
                            "config.get @{name} has no value: give one in the scenario \
                             (config={name}=VALUE) or specialize the module (loom-compile --config)"
                        ),
                    );
                };
                if let Some(facts) = self.program.configs.get(name) {
                    if let Some(problem) = facts.violation(v) {
                        return fail(loc, format!("the value {v} of @{name} {problem}"));
                    }
                }
                self.set(t, *d, Value::Int(v));
            }
            Op::CheckStep(step) => {
                let s = self.int(t, *step, loc)?;
                if s <= 0 {
                    return fail(
                        loc,
                        format!("scf.for with step {s}: the step must be positive"),
                    );
                }
            }
            Op::Unsupported(message) => return fail(loc, message.clone()),
            _ => unreachable!("exec handles the other operations"),
        }
        self.advance(t);
        Ok(true)
    }
}

/// The workers of a native realization, each started on a core: the
/// interpreter as the array simulator's Low IR core model. Workers are
/// tasks; their lock credits and tile memories come from the array through
/// [`Tiles`], and the tile memories are buffers here, which the array's DMA
/// engines reach through [`Workers::tile_memory`].
pub struct Workers<'p> {
    machine: Machine<'p>,
    /// Ops each worker executed (its busy cycles are these times the cost).
    ops: Vec<u64>,
    /// Each started core: its task, tile and the cycle it started.
    started: Vec<(usize, Tile, u64)>,
}

impl<'p> Workers<'p> {
    /// Workers of `program` (tile images' functions), each op costing
    /// `op_cycles` modelled cycles; all of them together stop as runaway
    /// after `max_steps` ops.
    pub fn new(program: &'p Program, op_cycles: u64, max_steps: u64) -> Workers<'p> {
        let options = Options {
            max_steps,
            ..Options::default()
        };
        let mut machine = Machine::new(program, options, Vec::new());
        machine.op_cycles = op_cycles;
        Workers {
            machine,
            ops: Vec::new(),
            started: Vec::new(),
        }
    }

    /// Start function `name` on the core at `tile` at modelled cycle `at`
    /// (its core was enabled then).
    pub fn start(&mut self, name: &str, tile: Tile, at: u64) -> Result<()> {
        let m = &mut self.machine;
        let Some(func) = m.program.functions.iter().position(|f| f.name == name) else {
            return fail(
                &Rc::from(""),
                format!(
                    "core {tile} is enabled, but its tile image @{name} defines no such function"
                ),
            );
        };
        let body = &m.program.functions[func];
        if !body.params.is_empty() {
            return fail(
                &body.loc,
                format!("worker @{name} takes parameters; a core starts it with none"),
            );
        }
        self.started.push((m.tasks.len(), tile, at));
        m.tasks.push(Task {
            name: format!("core {tile} (@{name})"),
            loc: body.loc.clone(),
            frames: vec![Frame {
                func,
                block: 0,
                pc: 0,
                regs: vec![Value::Undef; body.registers as usize],
                results: Vec::new(),
                scratch: Vec::new(),
            }],
            status: Status::Ready,
            groups: Vec::new(),
            clock: at,
            instance: Some([0, 0]),
        });
        Ok(())
    }

    /// Run every worker until it blocks or finishes; whether any ran an op.
    pub fn run(&mut self, tiles: &mut dyn Tiles) -> Result<bool> {
        let mut progressed = false;
        for t in 0..self.machine.tasks.len() {
            let ran = self.machine.run_task::<true>(t, u64::MAX, tiles)?;
            let (Ran::Blocked(n) | Ran::Preempted(n) | Ran::Done(n)) = ran;
            self.ops.resize(self.machine.tasks.len(), 0);
            self.ops[t] += n;
            progressed |= n > 0;
        }
        Ok(progressed)
    }

    /// Workers that have not finished: each with where it waits and why.
    pub fn unfinished(&self) -> Vec<(Rc<str>, String)> {
        let m = &self.machine;
        (0..m.tasks.len())
            .filter(|&t| m.tasks[t].status != Status::Done)
            .map(|t| match m.lock_waits.get(&t) {
                Some((loc, what)) => (loc.clone(), format!("{} waits in {what}", m.tasks[t].name)),
                None => (
                    m.tasks[t].loc.clone(),
                    format!("{} has not finished", m.tasks[t].name),
                ),
            })
            .collect()
    }

    /// Ops the workers executed.
    pub fn steps(&self) -> u64 {
        self.machine.steps
    }

    /// Each worker's name, the modelled cycle it finished (or stopped),
    /// and the cycles it spent executing.
    pub fn clocks(&self) -> Vec<(String, u64, u64)> {
        let cost = self.machine.op_cycles;
        self.machine
            .tasks
            .iter()
            .enumerate()
            .map(|(t, task)| {
                let ops = self.ops.get(t).copied().unwrap_or(0);
                (task.name.clone(), task.clock, ops * cost)
            })
            .collect()
    }

    /// Keep each worker's lock stalls from now on, for [`Workers::timelines`].
    pub fn record_stalls(&mut self) {
        self.machine.stalls.get_or_insert_with(Vec::new);
    }

    /// Each started core's timeline; stalls only if they were recorded.
    pub fn timelines(&self) -> Vec<Timeline> {
        let m = &self.machine;
        let stalls = m.stalls.as_deref().unwrap_or_default();
        self.started
            .iter()
            .map(|&(t, tile, started)| Timeline {
                name: m.tasks[t].name.clone(),
                tile,
                started,
                end: m.tasks[t].clock,
                finished: m.tasks[t].status == Status::Done,
                stalls: stalls
                    .iter()
                    .filter(|(task, _)| *task == t)
                    .map(|(_, stall)| stall.clone())
                    .collect(),
            })
            .collect()
    }

    /// The data memory of `tile`, of `bytes`, made zeroed at first use.
    pub fn tile_memory(&mut self, tile: Tile, bytes: u64) -> &mut [u8] {
        let id = self.machine.tile_buffer(tile, bytes);
        &mut self.machine.buffers[id as usize]
    }
}
