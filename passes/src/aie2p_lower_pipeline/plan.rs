//! The realization plan of one outlined pipeline on an aie2p device profile:
//! where every channel's slots, locks and buffer descriptors live, which
//! strand is the command stream and what it transfers, which strands become
//! workers, and the refusals when the profile cannot hold the program.
//!
//! The plan reads the module only; `rewrite.rs` builds the native
//! realization from it.

use loom_dialects::ir::*;
use loom_targets::xdna::regs::TileKind;
use loom_targets::DeviceProfile;
use mlir_sys::*;
use std::collections::{BTreeMap, BTreeSet};

/// `[column, row]`.
pub type Tile = (i64, i64);

/// Bytes the lowering reserves in a worker's tile for its stack (the size
/// mlir-aie's cores default to).
pub const WORKER_STACK_BYTES: i64 = 1024;
const STACK_ALIGNMENT: i64 = 16;
/// A slot cursor: one index.
const CURSOR_BYTES: i64 = 8;

/// A refusal: where, and why (the resource, the tile, what was needed and
/// what exists).
pub struct Refusal {
    pub at: MlirLocation,
    pub message: String,
}

pub(super) fn refuse<T>(at: MlirOperation, message: String) -> Result<T, Refusal> {
    Err(Refusal {
        at: location(at),
        message,
    })
}

/// The kind of tile `[c, r]` in `profile`'s array, or why there is none.
pub fn tile_kind(profile: &DeviceProfile, (c, r): Tile) -> Result<TileKind, String> {
    let kind = (c >= 0 && r >= 0)
        .then(|| profile.tile_kind(c as u32, r as u32))
        .flatten();
    kind.ok_or_else(|| {
        format!(
            "tile [{c}, {r}] is outside the array of {} columns x {} rows of {}",
            profile.array.columns, profile.array.rows, profile.name
        )
    })
}

/// Storage placed in a tile's data memory.
pub struct Placed {
    /// The op the storage realizes (`buffer.alloca`), for its name.
    pub op: MlirOperation,
    pub tile: Tile,
    pub role: &'static str,
    pub align: i64,
    /// Set when the tile's memory is laid out.
    pub offset: i64,
    pub size: i64,
}

/// A `buffer.alloca` of constant size in `tile`, not placed yet.
fn placed_alloca(op: MlirOperation, tile: Tile, role: &'static str) -> Result<Placed, Refusal> {
    let size = operands(op).last().copied();
    let size = match size.and_then(constant_int) {
        Some(size) => size,
        None => {
            return refuse(
                op,
                "the allocation size must be a constant once the pipeline is specialized".into(),
            )
        }
    };
    Ok(Placed {
        op,
        tile,
        role,
        align: int_attribute(op, "alignment").unwrap_or(1),
        offset: 0,
        size,
    })
}

/// A channel: its slots in the storage of one tile, and two locks there:
/// free-slot credits (initially the capacity) and published-record credits.
pub struct Channel {
    pub bind: MlirOperation,
    pub value: MlirValue,
    pub tile: Tile,
    /// Index into `Plan::placed` of the channel's storage.
    pub storage: usize,
    /// Byte offset of slot 0 inside the storage.
    pub base: i64,
    pub slot_bytes: i64,
    pub capacity: i64,
    pub free_lock: i64,
    pub published_lock: i64,
}

/// Which way a command-stream transfer moves data.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Caller's buffer -> channel slot (reserve, copy, wait, publish).
    Ingress,
    /// Channel slot -> caller's buffer (acquire, copy, wait, release).
    Egress,
}

/// One DMA transfer of the command stream; `stream.rs` picks its channels
/// and buffer descriptors.
pub struct Transfer {
    pub copy: MlirOperation,
    pub way: Way,
    pub channel: usize,
    /// The tile of the channel's slots.
    pub tile: Tile,
    /// Which `run` argument of the pipeline, and the byte offset in it.
    pub argument: usize,
    pub argument_offset: i64,
    /// Bytes of one record (a channel slot).
    pub bytes: i64,
    /// Records it moves: more than one for the DMA-engine realization of an
    /// endpoint the stream admits repeatedly (`rings`), whose records are
    /// consecutive in the caller's buffer and go round the channel's slots.
    pub records: i64,
    pub tile_channel: i64,
    pub tile_bd: i64,
    pub shim: Tile,
    pub shim_channel: i64,
    pub shim_bd: i64,
}

impl Transfer {
    /// The tile buffer descriptors it takes: one per channel slot for a
    /// ring of records, else one.
    pub fn ring_slots(&self, channel: &Channel) -> i64 {
        if self.records > 1 {
            channel.capacity
        } else {
            1
        }
    }
}

/// What the command stream does, in order.
pub enum Command {
    Start(usize),
    /// Wait for the transfers' shim channels (a `kernel.async.wait`).
    Wait(MlirOperation, Vec<usize>),
}

/// A compute strand realized as tile code on its core.
pub struct Worker {
    pub strand: MlirOperation,
    pub function: MlirOperation,
    pub tile: Tile,
    /// Call operands, one per function parameter.
    pub arguments: Vec<MlirValue>,
    /// Channel (index into `Plan::channels`) of each channel parameter.
    pub channels: BTreeMap<usize, usize>,
    /// `buffer.alloca<private>` ops of the function -> index into `placed`.
    pub private: Vec<(MlirOperation, usize)>,
    /// Slot cursors (index into `placed`) of the channel endpoints
    /// (channel, reserve side) the worker admits more than once or in a
    /// loop; every other endpoint always takes slot 0.
    pub cursors: BTreeMap<(usize, bool), usize>,
    /// Every channel endpoint (channel, reserve side) the worker admits.
    pub endpoints: BTreeSet<(usize, bool)>,
}

pub struct Plan<'p> {
    pub profile: &'p DeviceProfile,
    pub pipeline: MlirOperation,
    pub placed: Vec<Placed>,
    pub channels: Vec<Channel>,
    pub workers: Vec<Worker>,
    /// The command-stream strand and its function.
    pub command_strand: Option<(MlirOperation, MlirOperation)>,
    pub transfers: Vec<Transfer>,
    pub commands: Vec<Command>,
    /// The pipeline's `run` arguments (construction-region arguments).
    pub run_arguments: Vec<MlirValue>,
}

fn constant_of(op: MlirOperation, value: MlirValue, what: &str) -> Result<i64, Refusal> {
    constant_int(value).map_or_else(
        || {
            refuse(
                op,
                format!("{what} must be a constant once the pipeline is specialized"),
            )
        },
        Ok,
    )
}

fn round_up(value: i64, alignment: i64) -> i64 {
    if alignment <= 1 {
        value
    } else {
        (value + alignment - 1) / alignment * alignment
    }
}

/// Bytes of one element of the type named `name`.
fn element_bytes(name: &str) -> Option<i64> {
    Some(match name {
        "i1" | "i8" => 1,
        "bf16" | "f16" | "i16" => 2,
        "f32" | "i32" => 4,
        "f64" | "i64" | "index" => 8,
        _ => return None,
    })
}

/// Bytes of a view value: `resolve` gives each dynamic dimension's
/// constant.
pub fn view_bytes(
    op: MlirOperation,
    value: MlirValue,
    resolve: &dyn Fn(MlirValue) -> Option<i64>,
) -> Result<i64, Refusal> {
    let unknown = || {
        refuse(
            op,
            "the view's shape must be constant once the pipeline is specialized".into(),
        )
    };
    let Some((shape, element)) = view_type_shape(value_type(value)) else {
        return unknown();
    };
    let Some(mut bytes) = element_bytes(&element) else {
        return unknown();
    };
    let mut dynamic = value_dims(value).unwrap_or_default().into_iter();
    for dim in shape {
        let extent = match dim {
            Some(extent) => extent as i64,
            None => match dynamic.next().and_then(resolve) {
                Some(extent) => extent,
                None => return unknown(),
            },
        };
        bytes *= extent;
    }
    Ok(bytes)
}

/// The block argument `value` is, if it is one of `args`.
fn argument_index(value: MlirValue, args: &[MlirValue]) -> Option<usize> {
    args.iter().position(|&a| same_value(a, value))
}

/// Look through `buffer.assume.alignment` to a construction-region argument.
fn run_argument(value: MlirValue, run: &[MlirValue]) -> Option<usize> {
    if let Some(i) = argument_index(value, run) {
        return Some(i);
    }
    // SAFETY: inspecting the value's definition.
    let is_result = unsafe { mlirValueIsAOpResult(value) };
    if !is_result {
        return None;
    }
    let def = owner_op(value);
    if op_name(def) != "buffer.assume.alignment" {
        return None;
    }
    let position = results(def).iter().position(|&r| same_value(r, value))?;
    argument_index(operands(def)[position], run)
}

impl<'p> Plan<'p> {
    pub fn of(pipeline: MlirOperation, profile: &'p DeviceProfile) -> Result<Plan<'p>, Refusal> {
        // SAFETY: a pipeline has one region with one block.
        let body = unsafe { mlirRegionGetFirstBlock(mlirOperationGetRegion(pipeline, 0)) };
        let all_args = arguments(body);
        let specialization =
            int_attribute(pipeline, "num_specialization_args").unwrap_or(0) as usize;
        let mut plan = Plan {
            profile,
            pipeline,
            placed: Vec::new(),
            channels: Vec::new(),
            workers: Vec::new(),
            command_strand: None,
            transfers: Vec::new(),
            commands: Vec::new(),
            run_arguments: all_args[specialization.min(all_args.len())..].to_vec(),
        };
        let mut pools: Vec<(MlirValue, Tile)> = Vec::new();
        let mut allocations: Vec<(MlirValue, usize)> = Vec::new();
        let mut strands = Vec::new();
        for op in ops_of(body) {
            match op_name(op).as_str() {
                "index.constant" | "buffer.assume.alignment" | "buffer.view" => {}
                "pipeline.memory" => {
                    let tile = coordinates(op, "coordinates")?;
                    match tile_kind(profile, tile) {
                        Err(why) => return refuse(op, format!("pipeline.memory: {why}")),
                        Ok(TileKind::Shim) => {
                            return refuse(
                                op,
                                format!("pipeline.memory: tile [{}, {}] is a shim tile of {}; it has no data memory to pool", tile.0, tile.1, profile.name),
                            )
                        }
                        Ok(_) => pools.push((results(op)[0], tile)),
                    }
                }
                "buffer.alloca" => {
                    let all = operands(op);
                    let Some(pool) = all.first().filter(|_| all.len() == 2) else {
                        return refuse(op, "storage of the construction region must be allocated in a pipeline.memory pool".into());
                    };
                    let Some(&(_, tile)) = pools.iter().find(|(p, _)| same_value(*p, *pool))
                    else {
                        return refuse(op, "the pool is not a pipeline.memory of this pipeline".into());
                    };
                    plan.placed.push(placed_alloca(op, tile, "channel")?);
                    allocations.push((results(op)[0], plan.placed.len() - 1));
                }
                "channel.bind" => plan.bind_channel(op, &allocations)?,
                "pipeline.strand" => strands.push(op),
                other => {
                    return refuse(
                        op,
                        format!("aie2p-lower-pipeline: `{other}` in a construction region has no realization on aie2p (storage, channels, constants and strands only)"),
                    )
                }
            }
        }
        plan.assign_strands(&strands)?;
        // The command stream's order, once every worker's endpoints are
        // known (an endpoint a worker also admits keeps its place).
        let shared: BTreeSet<(usize, bool)> = plan
            .workers
            .iter()
            .flat_map(|w| w.endpoints.iter().copied())
            .collect();
        plan.check_shared_sides()?;
        let program = std::mem::take(&mut plan.commands);
        let transfers = std::mem::take(&mut plan.transfers);
        let (mut transfers, program) =
            super::ring::rings(profile, &plan.channels, transfers, program, &shared)?;
        plan.commands =
            super::stream::schedule(profile, &plan.channels, &mut transfers, &program, &shared)?;
        plan.transfers = transfers;
        plan.place_memory()?;
        plan.check_resources()?;
        Ok(plan)
    }

    /// Refuses a channel side (reserve or acquire) that two strands admit
    /// when the channel has more than one slot: each strand goes round the
    /// slots in its own order (a worker with its slot cursor, the command
    /// stream's DMA ring from slot 0), which only agree on one slot.
    fn check_shared_sides(&self) -> Result<(), Refusal> {
        let mut strands: BTreeMap<(usize, bool), usize> = BTreeMap::new();
        let stream: BTreeSet<(usize, bool)> = self
            .transfers
            .iter()
            .map(|t| (t.channel, t.way == Way::Ingress))
            .collect();
        for side in self
            .workers
            .iter()
            .flat_map(|w| w.endpoints.iter())
            .chain(&stream)
        {
            *strands.entry(*side).or_insert(0) += 1;
        }
        for (&(c, reserve), &n) in &strands {
            let channel = &self.channels[c];
            if n > 1 && channel.capacity > 1 {
                return refuse(channel.bind, format!(
                    "{n} strands admit %{}'s {} side; each goes round the channel's {} slots in its own order, so a side that strands share must have one slot",
                    value_name(channel.value),
                    if reserve { "reserve" } else { "acquire" },
                    channel.capacity
                ));
            }
        }
        Ok(())
    }

    fn bind_channel(
        &mut self,
        op: MlirOperation,
        allocations: &[(MlirValue, usize)],
    ) -> Result<(), Refusal> {
        let all = operands(op);
        let (slots, capacity) = (all[0], all[1]);
        let capacity = constant_of(op, capacity, "the channel capacity")?;
        // The slots view: `buffer.view %storage[%offset]` of an allocation.
        // SAFETY: inspecting the value's definition.
        let def = unsafe { mlirValueIsAOpResult(slots) }.then(|| owner_op(slots));
        let Some(view) = def.filter(|&d| op_name(d) == "buffer.view") else {
            return refuse(
                op,
                "the channel's slots must be a buffer.view of pooled storage".into(),
            );
        };
        let view_operands = operands(view);
        let Some(&(_, storage)) = allocations
            .iter()
            .find(|(a, _)| same_value(*a, view_operands[0]))
        else {
            return refuse(
                op,
                "the channel's slots must be a buffer.view of pooled storage".into(),
            );
        };
        let base = constant_of(view, view_operands[1], "the slots' byte offset")?;
        let total = view_bytes(view, slots, &constant_int)?;
        if capacity <= 0 || total % capacity != 0 {
            return refuse(
                op,
                format!("{total} bytes of slots do not split into {capacity} equal slots"),
            );
        }
        let placed = &self.placed[storage];
        if base + total > placed.size {
            return refuse(
                op,
                format!(
                    "the slots (bytes [{base}, {}) of their storage) overrun the {}-byte allocation",
                    base + total,
                    placed.size
                ),
            );
        }
        let max = self.profile.limits.lock_value_max as i64;
        if capacity > max {
            return refuse(op, format!("a capacity of {capacity} slots needs a lock value of {capacity}; locks of {} hold at most {max}", self.profile.name));
        }
        self.channels.push(Channel {
            bind: op,
            value: results(op)[0],
            tile: placed.tile,
            storage,
            base,
            slot_bytes: total / capacity,
            capacity,
            free_lock: 0,
            published_lock: 0,
        });
        Ok(())
    }

    fn channel_of(&self, value: MlirValue) -> Option<usize> {
        self.channels
            .iter()
            .position(|c| same_value(c.value, value))
    }

    fn assign_strands(&mut self, strands: &[MlirOperation]) -> Result<(), Refusal> {
        let module = parent_op(self.pipeline).expect("a pipeline lives in a module");
        let functions = symbols(module);
        for &strand in strands {
            let tile = self.worker_tile(strand)?;
            // SAFETY: a strand has one region; an outlined one holds a call.
            let body = unsafe { mlirRegionGetFirstBlock(mlirOperationGetRegion(strand, 0)) };
            let ops = ops_of(body);
            let call = match ops.as_slice() {
                [call] if op_name(*call) == "func.call" => *call,
                _ => return refuse(strand, "aie2p-lower-pipeline needs outlined strands (run outline-pipeline-strands first)".into()),
            };
            let callee = symbol_ref(call, "callee").unwrap_or_default();
            let Some(&function) = functions.get(&callee) else {
                return refuse(call, format!("@{callee} is not defined"));
            };
            // SAFETY: a function's region holds its entry block first.
            let entry = unsafe { mlirRegionGetFirstBlock(mlirOperationGetRegion(function, 0)) };
            let params = arguments(entry).len();
            let args: Vec<MlirValue> = operands(call).into_iter().take(params).collect();
            let uses_caller_buffers = args
                .iter()
                .any(|&a| run_argument(a, &self.run_arguments).is_some());
            if uses_caller_buffers {
                if self.command_strand.is_some() {
                    return refuse(strand, "a second strand needs the command stream (it moves the caller's buffers); the command stream is one sequential engine and runs at most one strand".into());
                }
                self.command_strand = Some((strand, function));
                self.plan_command_stream(function, &args)?;
            } else {
                self.plan_worker(strand, function, tile, args)?;
            }
        }
        Ok(())
    }

    /// The strand's single worker.
    fn worker_tile(&self, strand: MlirOperation) -> Result<Tile, Refusal> {
        let origins = attribute(strand, "origins")
            .map(dense_i64_values)
            .unwrap_or_default();
        let counts = attribute(strand, "counts")
            .map(dense_i64_values)
            .unwrap_or_default();
        if origins.len() != 2 || counts != [1, 1] {
            return refuse(strand, format!("aie2p-lower-pipeline needs an explicit singleton worker selection workers([c, r], [1, 1], [1, 1]); got counts {counts:?}"));
        }
        Ok((origins[0], origins[1]))
    }

    fn plan_worker(
        &mut self,
        strand: MlirOperation,
        function: MlirOperation,
        tile: Tile,
        arguments: Vec<MlirValue>,
    ) -> Result<(), Refusal> {
        match tile_kind(self.profile, tile) {
            Err(why) => return refuse(strand, why),
            Ok(TileKind::Core) => {}
            Ok(kind) => {
                return refuse(
                    strand,
                    format!(
                        "the strand computes, so it needs a core; its worker [{}, {}] is a {} tile",
                        tile.0,
                        tile.1,
                        kind.name()
                    ),
                )
            }
        }
        let mut channels = BTreeMap::new();
        for (i, &value) in arguments.iter().enumerate() {
            let Some(channel) = self.channel_of(value) else {
                continue;
            };
            let storage = self.channels[channel].tile;
            if !reaches(tile, storage) || tile_kind(self.profile, storage) != Ok(TileKind::Core) {
                return refuse(strand, format!(
                    "the strand's core [{}, {}] cannot access channel %{}'s storage in tile [{}, {}] directly: a core reaches the data memory of its own tile and of its south, west and north core-tile neighbours only",
                    tile.0, tile.1, value_name(value), storage.0, storage.1
                ));
            }
            channels.insert(i, channel);
        }
        let mut private = Vec::new();
        for op in walk(function) {
            if op_name(op) == "buffer.alloca" {
                self.placed.push(placed_alloca(op, tile, "private")?);
                private.push((op, self.placed.len() - 1));
            }
        }
        // Endpoints admitted repeatedly rotate through their slots with a
        // cursor the worker keeps in its tile (reset when it starts).
        // SAFETY: a function's region holds its entry block first.
        let entry = unsafe { mlirRegionGetFirstBlock(mlirOperationGetRegion(function, 0)) };
        let params = loom_dialects::ir::arguments(entry);
        let mut admissions: BTreeMap<(usize, bool), (usize, bool)> = BTreeMap::new();
        for op in walk(function) {
            let name = op_name(op);
            if name != "channel.reserve" && name != "channel.acquire" {
                continue;
            }
            let Some(&channel) = params
                .iter()
                .position(|&p| same_value(p, operands(op)[0]))
                .and_then(|i| channels.get(&i))
            else {
                return refuse(op, "the channel must be a parameter of the strand".into());
            };
            // SAFETY: a live op in a block.
            let looped = in_cycle(unsafe { mlirOperationGetBlock(op) });
            let seen = admissions
                .entry((channel, name == "channel.reserve"))
                .or_insert((0, false));
            seen.0 += 1;
            seen.1 |= looped;
        }
        let mut cursors = BTreeMap::new();
        for (&key, &(count, looped)) in &admissions {
            if (count > 1 || looped) && self.channels[key.0].capacity > 1 {
                self.placed.push(Placed {
                    op: function,
                    tile,
                    role: "cursor",
                    align: CURSOR_BYTES,
                    offset: 0,
                    size: CURSOR_BYTES,
                });
                cursors.insert(key, self.placed.len() - 1);
            }
        }
        self.placed.push(Placed {
            op: function,
            tile,
            role: "stack",
            align: STACK_ALIGNMENT,
            offset: 0,
            size: WORKER_STACK_BYTES,
        });
        self.workers.push(Worker {
            strand,
            function,
            tile,
            arguments,
            channels,
            private,
            cursors,
            endpoints: admissions.keys().copied().collect(),
        });
        Ok(())
    }

    /// Check the command-stream rules on the strand's function and order its
    /// transfers and waits.
    fn plan_command_stream(
        &mut self,
        function: MlirOperation,
        args: &[MlirValue],
    ) -> Result<(), Refusal> {
        let params = {
            // SAFETY: a function's region holds its entry block first.
            let entry = unsafe { mlirRegionGetFirstBlock(mlirOperationGetRegion(function, 0)) };
            arguments(entry)
        };
        // Which run argument each buffer parameter is.
        let caller_buffer = |value: MlirValue| -> Option<usize> {
            let i = argument_index(value, &params)?;
            run_argument(args[i], &self.run_arguments)
        };
        let channel_param = |value: MlirValue| -> Option<usize> {
            let i = argument_index(value, &params)?;
            self.channel_of(args[i])
        };
        // A dimension is a constant, or a parameter the call passes one to.
        let resolve = |value: MlirValue| -> Option<i64> {
            constant_int(value)
                .or_else(|| argument_index(value, &params).and_then(|i| constant_int(args[i])))
        };
        let sequence = evaluate(function, resolve)?;
        // Obligations and payloads of admissions (each run of an admission
        // is one record): value -> channel, way, admission number.
        let mut admitted: Vec<(MlirValue, MlirValue, usize, Way, usize)> = Vec::new();
        let mut admissions = 0;
        // The admission each transfer fills or drains.
        let mut admission_of: Vec<usize> = Vec::new();
        // Per ingress endpoint (channel), its admissions not published yet,
        // oldest first: records are published in the order reserved.
        let mut unpublished: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        // Fixed external endpoints: view value -> (argument, byte offset).
        let mut external: Vec<(MlirValue, usize, i64)> = Vec::new();
        let mut pending: Vec<(MlirValue, usize)> = Vec::new(); // token -> transfer
        let mut groups: Vec<(MlirValue, Vec<usize>)> = Vec::new();
        let mut completed: Vec<MlirValue> = Vec::new();
        let mut waited: Vec<usize> = Vec::new();
        let mut transfers: Vec<Transfer> = Vec::new();
        // The starts and waits in program order; `stream::schedule` orders
        // them and picks the channels.
        let mut program: Vec<Command> = Vec::new();
        for step in sequence {
            let op = step.op;
            let name = op_name(op);
            match name.as_str() {
                // Control flow and index arithmetic: `evaluate` ran them.
                "cfg.br" | "cfg.cond_br" | "func.return" | "index.constant" | "index.add"
                | "index.sub" | "index.mul" | "index.min" | "index.max" | "index.cmp"
                | "index.assume" | "index.cast" => {}
                "buffer.view" => {
                    let all = operands(op);
                    let Some(argument) = caller_buffer(all[0]) else {
                        return refuse(op, "the command stream addresses the caller's buffers only; this view is of other storage".into());
                    };
                    let Some(offset) = step.operands[1] else {
                        return refuse(op, "the command stream needs fixed transfer endpoints: this byte offset is not known when the stream is compiled".into());
                    };
                    let view = results(op)[0];
                    external.retain(|e| !same_value(e.0, view));
                    external.push((view, argument, offset));
                }
                "channel.reserve" | "channel.acquire" => {
                    let Some(channel) = channel_param(operands(op)[0]) else {
                        return refuse(
                            op,
                            "the channel must be one of the pipeline's channels".into(),
                        );
                    };
                    let ingress = name == "channel.reserve";
                    let r = results(op);
                    if ingress {
                        unpublished.entry(channel).or_default().push(admissions);
                    }
                    admitted.retain(|a| !same_value(a.0, r[0]));
                    admitted.push((
                        r[0],
                        r[1],
                        channel,
                        if ingress { Way::Ingress } else { Way::Egress },
                        admissions,
                    ));
                    admissions += 1;
                }
                "kernel.async.copy" => {
                    let all = operands(op);
                    let (source, destination) = (all[0], all[1]);
                    let payload = |v: MlirValue| admitted.iter().find(|a| same_value(a.1, v));
                    let fixed = |v: MlirValue| external.iter().find(|e| same_value(e.0, v));
                    let (way, channel, admission, (argument, argument_offset)) =
                        match (fixed(source), payload(destination), payload(source), fixed(destination)) {
                            (Some(e), Some(p), _, _) if p.3 == Way::Ingress => (Way::Ingress, p.2, p.4, (e.1, e.2)),
                            (_, _, Some(p), Some(e)) if p.3 == Way::Egress => (Way::Egress, p.2, p.4, (e.1, e.2)),
                            _ => return refuse(op, "the command stream copies between a caller's buffer at a fixed offset and a reserved (to fill) or acquired (to drain) channel slot; this copy has another endpoint".into()),
                        };
                    if admission_of.contains(&admission) {
                        return refuse(op, format!("a second copy of one record of %{}: the command stream moves each record it admits with one copy (its buffer descriptor carries the record's lock credits)", value_name(self.channels[channel].value)));
                    }
                    let bytes = view_bytes(op, source, &resolve)?;
                    let slot = self.channels[channel].slot_bytes;
                    if bytes != slot {
                        return refuse(op, format!("the copy moves {bytes} bytes; the command stream moves whole channel slots of {slot} bytes"));
                    }
                    if bytes % 4 != 0 || argument_offset % 4 != 0 {
                        return refuse(op, format!("DMA transfers move multiples of 4 bytes at 4-byte offsets; this one moves {bytes} bytes at offset {argument_offset}"));
                    }
                    let tile = self.channels[channel].tile;
                    let shim = (
                        tile.0,
                        *self.profile.array.shim_rows.first().unwrap_or(&0) as i64,
                    );
                    transfers.push(Transfer {
                        copy: op,
                        way,
                        channel,
                        tile,
                        argument,
                        argument_offset,
                        bytes,
                        records: 1,
                        tile_channel: 0,
                        tile_bd: 0,
                        shim,
                        shim_channel: 0,
                        shim_bd: 0,
                    });
                    admission_of.push(admission);
                    let t = transfers.len() - 1;
                    program.push(Command::Start(t));
                    let token = results(op)[0];
                    if pending.iter().any(|p| same_value(p.0, token)) {
                        return refuse(op, "the copy's previous run (an earlier pass of the loop) was never grouped; the command stream must join every transfer".into());
                    }
                    pending.push((token, t));
                }
                "kernel.async.group" => {
                    let mut members = Vec::new();
                    for token in operands(op) {
                        match pending.iter().position(|p| same_value(p.0, token)) {
                            Some(i) => members.push(pending.remove(i).1),
                            None => return refuse(op, "the group's tokens must be copies of this strand not grouped before".into()),
                        }
                    }
                    groups.push((results(op)[0], members));
                }
                "kernel.async.wait" => {
                    let newer = int_attribute(op, "newer_groups").unwrap_or(0);
                    if newer != 0 {
                        return refuse(
                            op,
                            "the command stream waits for whole groups in order (newer_groups = 0)"
                                .into(),
                        );
                    }
                    let group = operands(op)[0];
                    let Some(i) = groups.iter().rposition(|g| same_value(g.0, group)) else {
                        // Completed already, by a wait for a younger group.
                        if completed.iter().any(|&g| same_value(g, group)) {
                            continue;
                        }
                        return refuse(op, "the group is not one of this strand's".into());
                    };
                    // Waiting for a group completes it and every group
                    // committed before it (docs/semantics.md).
                    let older: Vec<(MlirValue, Vec<usize>)> = groups.drain(..=i).collect();
                    completed.extend(older.iter().map(|g| g.0));
                    let members: Vec<usize> = older.into_iter().flat_map(|g| g.1).collect();
                    waited.extend(&members);
                    program.push(Command::Wait(op, members));
                }
                "channel.publish" | "channel.release" => {
                    let obligation = operands(op)[0];
                    let Some(&(_, _, channel, way, admission)) =
                        admitted.iter().find(|a| same_value(a.0, obligation))
                    else {
                        return refuse(
                            op,
                            "the obligation must come from this strand's reserve or acquire".into(),
                        );
                    };
                    // The DMA publishes its records in the order they were
                    // reserved; the channel hands them on in publish order.
                    if way == Way::Ingress {
                        let waiting = unpublished.entry(channel).or_default();
                        if waiting.first() != Some(&admission) {
                            return refuse(op, format!("the command stream publishes records of %{} in another order than it reserved them; its DMA publishes each record when its copy lands, in the order reserved", value_name(self.channels[channel].value)));
                        }
                        waiting.remove(0);
                    }
                    // The DMA hands the credit on when its transfer completes:
                    // the copy of this record must already be waited for.
                    let done = admission_of
                        .iter()
                        .enumerate()
                        .any(|(t, &a)| a == admission && waited.contains(&t));
                    if !done {
                        return refuse(op, format!("the command stream hands a record of %{} on when its DMA transfer completes; this {} has no waited copy of the record before it", value_name(self.channels[channel].value), name.trim_start_matches("channel.")));
                    }
                }
                other => {
                    return refuse(op, format!("`{other}` needs instruction execution; the command stream only moves the caller's buffers through channels (the strand would need a core, and a core cannot address the caller's buffers)"));
                }
            }
        }
        if let Some(&(token, _)) = pending.first() {
            return refuse(
                owner_op(token),
                "the copy is never waited for; the command stream must join every transfer".into(),
            );
        }
        // In program order; `Plan::of` schedules them once the workers are
        // planned.
        self.commands = program;
        self.transfers = transfers;
        Ok(())
    }

    /// Give every placed allocation its offset in its tile (in order,
    /// aligned), and check each tile's data memory.
    fn place_memory(&mut self) -> Result<(), Refusal> {
        let mut ends: BTreeMap<Tile, i64> = BTreeMap::new();
        for placed in &mut self.placed {
            let end = ends.entry(placed.tile).or_insert(0);
            placed.offset = round_up(*end, placed.align);
            *end = placed.offset + placed.size;
        }
        for (&tile, &end) in &ends {
            let kind = tile_kind(self.profile, tile).map_err(|why| Refusal {
                at: location(self.pipeline),
                message: why,
            })?;
            let capacity = self.profile.budget(kind).memory as i64;
            if end > capacity {
                let on_tile: Vec<&Placed> = self.placed.iter().filter(|p| p.tile == tile).collect();
                let sum = |role: &str| {
                    on_tile
                        .iter()
                        .filter(|p| p.role == role)
                        .map(|p| p.size)
                        .sum::<i64>()
                };
                let used: i64 = on_tile.iter().map(|p| p.size).sum();
                let first = on_tile
                    .iter()
                    .find(|p| p.offset + p.size > capacity)
                    .map_or(self.pipeline, |p| p.op);
                return refuse(first, format!(
                    "tile [{}, {}] ({} tile) data memory overflows: the placement needs {end} bytes (channel storage {}, private buffers {}, worker stack {}, slot cursors {}, alignment {}); the tile has {capacity}",
                    tile.0, tile.1, kind.name(), sum("channel"), sum("private"), sum("stack"), sum("cursor"), end - used
                ));
            }
        }
        Ok(())
    }

    /// Locks, buffer descriptors and DMA channels per tile.
    fn check_resources(&mut self) -> Result<(), Refusal> {
        let mut locks: BTreeMap<Tile, i64> = BTreeMap::new();
        for channel in &mut self.channels {
            let next = locks.entry(channel.tile).or_insert(0);
            channel.free_lock = *next;
            channel.published_lock = *next + 1;
            *next += 2;
        }
        for (&tile, &used) in &locks {
            let kind = tile_kind(self.profile, tile).expect("placed tiles are in the array");
            let available = self.profile.budget(kind).locks as i64;
            if used > available {
                let at = self
                    .channels
                    .iter()
                    .rev()
                    .find(|c| c.tile == tile)
                    .map_or(self.pipeline, |c| c.bind);
                return refuse(at, format!(
                    "tile [{}, {}] ({} tile) runs out of locks: its {} channels need {used} (a free-slot and a published-record lock each); the tile has {available}",
                    tile.0, tile.1, kind.name(), used / 2
                ));
            }
        }
        let mut per_tile: BTreeMap<Tile, (i64, i64, i64, MlirOperation)> = BTreeMap::new();
        for t in &self.transfers {
            let tile = self.channels[t.channel].tile;
            let ingress = t.way == Way::Ingress;
            let ring = t.ring_slots(&self.channels[t.channel]);
            for (at, bd, channel, s2mm) in [
                (tile, t.tile_bd + ring - 1, t.tile_channel, ingress),
                (t.shim, t.shim_bd, t.shim_channel, !ingress),
            ] {
                let entry = per_tile.entry(at).or_insert((0, 0, 0, t.copy));
                entry.0 = entry.0.max(bd + 1);
                if s2mm {
                    entry.1 = entry.1.max(channel + 1);
                } else {
                    entry.2 = entry.2.max(channel + 1);
                }
                entry.3 = t.copy;
            }
        }
        for (&tile, &(bds, s2mm, mm2s, at)) in &per_tile {
            let kind = tile_kind(self.profile, tile).expect("placed tiles are in the array");
            let b = self.profile.budget(kind);
            let what = [
                ("buffer descriptors", bds, b.bds as i64),
                ("S2MM DMA channels", s2mm, b.s2mm as i64),
                ("MM2S DMA channels", mm2s, b.mm2s as i64),
            ];
            for (resource, used, available) in what {
                if used > available {
                    return refuse(at, format!(
                        "tile [{}, {}] ({} tile) runs out of {resource}: the command stream's transfers need {used}; the tile has {available}",
                        tile.0, tile.1, kind.name()
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Whether a core at `core` reaches `storage`'s data memory directly: its
/// own tile, south, west and north (facts: the core's view of data memory).
fn reaches(core: Tile, storage: Tile) -> bool {
    let (c, r) = core;
    storage == (c, r) || storage == (c, r - 1) || storage == (c - 1, r) || storage == (c, r + 1)
}

/// `[c, r]` from an array attribute.
fn coordinates(op: MlirOperation, name: &str) -> Result<Tile, Refusal> {
    match attribute(op, name).map(dense_i64_values).as_deref() {
        Some(&[c, r]) => Ok((c, r)),
        _ => refuse(op, format!("expects `{name}` = [column, row]")),
    }
}

/// The function's ops in execution order, when its blocks form one
/// unconditional chain from the entry (the command-stream rule).
/// One operation of the command stream as it runs: the operation and the
/// integer values of its operands at that point.
struct Step {
    op: MlirOperation,
    operands: Vec<Option<i64>>,
}

/// The most operations a command stream runs once its loops are unrolled.
const STREAM_STEPS: usize = 1 << 16;

/// The integer value of an `index.cmp` of `a` and `b`.
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

/// The command stream's operations in the order they run: its control flow
/// is evaluated when it is compiled (loops over records, the branches that
/// depend on record numbers), which needs every branch condition to be
/// known then. `known` gives the values of the strand's parameters.
fn evaluate(
    function: MlirOperation,
    known: impl Fn(MlirValue) -> Option<i64>,
) -> Result<Vec<Step>, Refusal> {
    let key = |v: MlirValue| v.ptr as usize;
    let mut env: std::collections::HashMap<usize, i64> = std::collections::HashMap::new();
    // SAFETY: a function has one region.
    let region = unsafe { mlirOperationGetRegion(function, 0) };
    let mut block = blocks(region).first().copied();
    let mut steps = Vec::new();
    while let Some(b) = block.take() {
        for op in ops_of(b) {
            if steps.len() == STREAM_STEPS {
                return refuse(op, format!("the command stream runs more than {STREAM_STEPS} operations once its loops are unrolled"));
            }
            let value = |v: MlirValue| {
                constant_int(v)
                    .or_else(|| env.get(&key(v)).copied())
                    .or_else(|| known(v))
            };
            let all = operands(op);
            let values: Vec<Option<i64>> = all.iter().map(|&v| value(v)).collect();
            let name = op_name(op);
            let int = |i: usize| values.get(i).copied().flatten();
            let computed = match name.as_str() {
                "index.assume" | "index.cast" => int(0),
                "index.add" => int(0).zip(int(1)).map(|(a, b)| a.wrapping_add(b)),
                "index.sub" => int(0).zip(int(1)).map(|(a, b)| a.wrapping_sub(b)),
                "index.mul" => int(0).zip(int(1)).map(|(a, b)| a.wrapping_mul(b)),
                // Unsigned, as docs/semantics.md defines them.
                "index.min" => int(0)
                    .zip(int(1))
                    .map(|(a, b)| (a as u64).min(b as u64) as i64),
                "index.max" => int(0)
                    .zip(int(1))
                    .map(|(a, b)| (a as u64).max(b as u64) as i64),
                "index.cmp" => {
                    let predicate = string_attribute(op, "predicate").unwrap_or_default();
                    int(0)
                        .zip(int(1))
                        .and_then(|(a, b)| compare(&predicate, a, b))
                        .map(i64::from)
                }
                _ => None,
            };
            // A result a loop computed before is stale until recomputed.
            for r in results(op) {
                env.remove(&key(r));
            }
            if let (Some(v), Some(&r)) = (computed, results(op).first()) {
                env.insert(key(r), v);
            }
            let next = match name.as_str() {
                "cfg.br" => Some((0, values.clone())),
                "cfg.cond_br" => {
                    let Some(condition) = int(0) else {
                        return refuse(op, "the transfer strand branches on a value that is not known when it is compiled; the command stream's transfers must be fixed then".into());
                    };
                    let sizes =
                        attribute(op, "operandSegmentSizes").expect("cond_br has operand segments");
                    // SAFETY: a dense i32 array of three segment sizes.
                    let taken = unsafe { mlirDenseI32ArrayGetElement(sizes, 1) } as usize;
                    Some(if condition != 0 {
                        (0, values[1..1 + taken].to_vec())
                    } else {
                        (1, values[1 + taken..].to_vec())
                    })
                }
                "cfg.switch" => {
                    return refuse(op, "a transfer strand that switches: the command stream runs a sequence fixed when it is compiled".into());
                }
                _ => None,
            };
            steps.push(Step {
                op,
                operands: values,
            });
            if let Some((successor, arguments)) = next {
                // SAFETY: a branch has this successor.
                let dest = unsafe { mlirOperationGetSuccessor(op, successor) };
                for (parameter, argument) in loom_dialects::ir::arguments(dest)
                    .into_iter()
                    .zip(arguments)
                {
                    match argument {
                        Some(v) => env.insert(key(parameter), v),
                        None => env.remove(&key(parameter)),
                    };
                }
                block = Some(dest);
                break;
            }
        }
    }
    Ok(steps)
}

fn in_cycle(block: MlirBlock) -> bool {
    let successors = |b: MlirBlock| -> Vec<MlirBlock> {
        terminator(b)
            .map(|t| {
                // SAFETY: a live terminator and its successor positions.
                let n = unsafe { mlirOperationGetNumSuccessors(t) };
                (0..n)
                    .map(|i| unsafe { mlirOperationGetSuccessor(t, i) })
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut seen: Vec<*mut std::ffi::c_void> = Vec::new();
    let mut stack = successors(block);
    while let Some(b) = stack.pop() {
        if b.ptr == block.ptr {
            return true;
        }
        if !seen.contains(&b.ptr) {
            seen.push(b.ptr);
            stack.extend(successors(b));
        }
    }
    false
}
