//! Build the native realization from a plan: compute strands become worker
//! functions (lock credits, storage placed in tile memory), and the
//! pipeline becomes its configuration function (storage, locks, routes,
//! program loads, core enables, then the command stream's transfers and
//! waits).

use super::access::Addressing;
use super::placement::view_bytes;
use super::realization::{refuse, Channel, Command, Plan, Refusal, Way, Worker};
use super::ring::ring_tasks;
use loom_dialects::instance;
use loom_dialects::ir::*;
use loom_dialects::names;
use loom_targets::Tile;
use mlir_sys::*;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

/// A type of a Loom dialect by its spelling (registered in every context).
fn loom_type(ctx: MlirContext, text: &str) -> MlirType {
    parse_type(ctx, text).expect("the Loom dialects' own type spellings parse")
}

fn tile_attr(ctx: MlirContext, tile: Tile) -> MlirAttribute {
    dense_i64_attr(ctx, &[i64::from(tile.column), i64::from(tile.row)])
}

/// A detached op `name` at `loc` with integer attributes and a tile.
fn tile_op(
    name: &'static str,
    loc: MlirLocation,
    tile_name: &'static str,
    tile: Tile,
    ints: &[(&'static str, i64)],
) -> OpSpec<'static> {
    let ctx = location_context(loc);
    let mut spec = OpSpec::new(name, loc);
    spec.attributes.push((tile_name, tile_attr(ctx, tile)));
    for &(key, value) in ints {
        spec.attributes.push((key, i64_attr(ctx, value)));
    }
    spec
}

/// One tile's side of a ring of records on one of its DMA channels: the
/// chains of `ring::ring_tasks`, each descriptor taking a `take` credit and
/// giving a `give` credit, and the start-queue entry of each task.
struct RingSide {
    tile: Tile,
    dma_channel: i64,
    s2mm: bool,
    first_bd: i64,
    /// The lanes of each slot it moves, one descriptor each, with the
    /// lane's credits: one lane (a striped channel's transfer, a writer of
    /// a joined channel's part) or all of them.
    lanes: Range<i64>,
    /// How each descriptor addresses its slot (None: in order).
    addressing: Option<Addressing>,
}

impl RingSide {
    /// `records` records through `channel`'s slots, a lane's bytes per
    /// descriptor: an S2MM side takes free-slot credits and hands on
    /// published-record ones, an MM2S side the reverse.
    fn ops(
        &self,
        plan: &Plan,
        channel: &Channel,
        records: i64,
        loc: MlirLocation,
    ) -> Vec<OpSpec<'static>> {
        let ctx = location_context(loc);
        let slot = plan.placed[channel.storage].offset + channel.base;
        let per_slot = self.lanes.end - self.lanes.start;
        let mut ops = Vec::new();
        let mut chains = BTreeSet::new();
        for task in ring_tasks(records, channel.capacity, plan.profile) {
            // Tasks of whole rounds run one chain.
            if chains.insert(task.first) {
                let count = task.slots * per_slot;
                for i in 0..count {
                    let at = self.first_bd + task.first * per_slot + i;
                    let lane = self.lanes.start + i % per_slot;
                    let (free, published) = channel.lane_locks(lane);
                    let (take, give) = if self.s2mm {
                        (free, published)
                    } else {
                        (published, free)
                    };
                    let offset = slot
                        + i / per_slot % channel.capacity * channel.slot_bytes
                        + lane * channel.lane_bytes();
                    let mut bd = tile_op(
                        names::aie2p::DMA_BD,
                        loc,
                        "tile",
                        self.tile,
                        &[
                            ("bd", at),
                            ("offset", offset),
                            ("length", channel.lane_bytes()),
                            ("acquire_lock", take),
                            ("acquire_value", 1),
                            ("release_lock", give),
                            ("release_value", 1),
                        ],
                    );
                    if i + 1 < count {
                        bd.attributes.push(("next", i64_attr(ctx, at + 1)));
                    }
                    push_addressing(&mut bd, &self.addressing);
                    ops.push(bd);
                }
            }
            let mut start = tile_op(
                names::aie2p::DMA_START,
                loc,
                "tile",
                self.tile,
                &[
                    ("channel", self.dma_channel),
                    ("bd", self.first_bd + task.first * per_slot),
                ],
            );
            if task.runs > 1 {
                start.attributes.push(("repeat", i64_attr(ctx, task.runs)));
            }
            start
                .attributes
                .push(("direction", direction(ctx, self.s2mm)));
            ops.push(start);
        }
        ops
    }
}

/// A descriptor op's `steps`/`wraps` and `iteration` (tile descriptors
/// have no iteration: a chain uses each once per record).
fn push_addressing(bd: &mut OpSpec<'static>, addressing: &Option<Addressing>) {
    let Some(a) = addressing else {
        return;
    };
    let ctx = location_context(bd.location);
    if !a.steps.is_empty() {
        bd.attributes.push(("steps", dense_i64_attr(ctx, &a.steps)));
        bd.attributes.push(("wraps", dense_i64_attr(ctx, &a.wraps)));
    }
    if let Some(it) = a.iteration {
        bd.attributes
            .push(("iteration_stride", i64_attr(ctx, it.step)));
        bd.attributes
            .push(("iteration_wrap", i64_attr(ctx, it.count)));
    }
}

/// `aie2p.route` from a tile's MM2S channel to a tile's S2MM channel.
fn route(
    loc: MlirLocation,
    (from, from_channel): (Tile, i64),
    (to, to_channel): (Tile, i64),
) -> OpSpec<'static> {
    let ctx = location_context(loc);
    let mut route = OpSpec::new(names::aie2p::ROUTE, loc);
    route.attributes = vec![
        ("source", tile_attr(ctx, from)),
        ("source_channel", i64_attr(ctx, from_channel)),
        ("destination", tile_attr(ctx, to)),
        ("destination_channel", i64_attr(ctx, to_channel)),
    ];
    route
}

fn direction(ctx: MlirContext, s2mm: bool) -> MlirAttribute {
    string_attr(ctx, if s2mm { "s2mm" } else { "mm2s" })
}

/// `aie2p.tile.buffer<ROLE> [c, r] offset O size S : buffer` named `name`.
fn tile_buffer(
    ctx: MlirContext,
    role: &str,
    tile: Tile,
    offset: i64,
    size: i64,
    name: &str,
) -> MlirOperation {
    let mut spec = tile_op(
        names::aie2p::TILE_BUFFER,
        named_location(ctx, name),
        "tile",
        tile,
        &[("offset", offset), ("size", size)],
    );
    spec.attributes.push(("role", string_attr(ctx, role)));
    spec.results = vec![loom_type(ctx, "!buffer.buffer")];
    spec.build()
}

/// `view.store %value, %view[0]` of an index.
fn store_index(ctx: MlirContext, value: MlirValue, view: MlirValue) -> MlirOperation {
    let mut store = OpSpec::new(names::view::STORE, unknown_location(ctx));
    store.operands = vec![value, view];
    store.attributes = vec![
        ("operandSegmentSizes", dense_i32_attr(ctx, &[1, 1, 0, 0])),
        ("static_indices", dense_i64_attr(ctx, &[0])),
    ];
    store.build()
}

/// Before `at`: the byte offset of the slot `cursor` holds, and the cursor
/// moved to the next slot (wrapping after `capacity`).
fn slot_from_cursor(
    at: MlirOperation,
    cursor: MlirValue,
    base: i64,
    slot_bytes: i64,
    capacity: i64,
) -> MlirValue {
    let ctx = context(at);
    let index = index_type(ctx);
    let put = |op: MlirOperation| {
        insert_before(at, op);
        results(op).first().copied()
    };
    let constant = |name: &str, value: i64| {
        put(index_constant(named_location(ctx, name), value, index)).expect("a constant")
    };
    let binary = |name: &'static str,
                  a: MlirValue,
                  b: MlirValue,
                  ty: MlirType,
                  attrs: Vec<(&'static str, MlirAttribute)>| {
        let mut spec = OpSpec::new(name, unknown_location(ctx));
        spec.operands = vec![a, b];
        spec.results = vec![ty];
        spec.attributes = attrs;
        spec.build()
    };
    let mut load = OpSpec::new(names::view::LOAD, named_location(ctx, "slot"));
    load.operands = vec![cursor];
    load.results = vec![index];
    load.attributes = vec![
        ("operandSegmentSizes", dense_i32_attr(ctx, &[1, 0, 0])),
        ("static_indices", dense_i64_attr(ctx, &[0])),
    ];
    let slot = put(load.build()).expect("a load has a result");
    let bytes = constant("slot_bytes", slot_bytes);
    let start = constant("slot_base", base);
    let within = put(binary(names::index::MUL, slot, bytes, index, vec![])).expect("a result");
    let at_byte = put(binary(names::index::ADD, within, start, index, vec![])).expect("a result");
    let mut cast = OpSpec::new(names::index::CAST, named_location(ctx, "slot_offset"));
    cast.operands = vec![at_byte];
    cast.results = vec![loom_type(ctx, "!buffer.offset")];
    let offset = put(cast.build()).expect("a cast has a result");
    let one = constant("slot_step", 1);
    let after = put(binary(names::index::ADD, slot, one, index, vec![])).expect("a result");
    let slots = constant("slot_count", capacity);
    let wraps = put(binary(
        names::index::CMP,
        after,
        slots,
        i1_type(ctx),
        vec![("predicate", string_attr(ctx, "eq"))],
    ))
    .expect("a result");
    let zero = constant("slot_first", 0);
    let mut select = OpSpec::new(names::scf::SELECT, named_location(ctx, "next_slot"));
    select.operands = vec![wraps, zero, after];
    select.results = vec![index];
    let next = put(select.build()).expect("a select has a result");
    put(store_index(ctx, next, cursor));
    offset
}

/// Turn the strand's function into its worker: constants for its scalar
/// parameters, lock credits and placed slots for its channel actions, placed
/// private storage, no parameters.
fn realize_worker(plan: &Plan, worker: &Worker, name: &str) -> Result<(), Refusal> {
    let function = worker.function;
    // A worker is a singleton strand's one instance (the plan refuses wider
    // selections), so its coordinates are (0, 0).
    crate::loom_expand_instances::place_instance(function, [0, 0]);
    // An SPMD instance's worker says which: the compile report lists it.
    for name in [instance::SELECTION, instance::INSTANCE] {
        if let Some(value) = attribute(worker.strand, name) {
            set_attribute(function, name, value);
        }
    }
    let ctx = context(function);
    let entry = body(function);
    let params = arguments(entry);
    let first = ops_of(entry)[0];
    for (i, &param) in params.iter().enumerate() {
        if worker.channels.contains_key(&i) {
            continue;
        }
        let Some(value) = constant_int(worker.arguments[i]) else {
            return refuse(worker.strand, format!(
                "the worker receives %{}, which is neither a channel nor a constant; a core has no other way to receive it",
                value_name(param)
            ));
        };
        let constant = index_constant(
            named_location(ctx, &value_name(param)),
            value,
            value_type(param),
        );
        insert_before(first, constant);
        replace_all_uses(param, results(constant)[0]);
    }
    let stack = plan
        .placed
        .iter()
        .find(|p| p.role == "stack" && p.op.ptr == function.ptr)
        .expect("every worker has a stack");
    insert_before(
        first,
        tile_buffer(ctx, "stack", worker.tile, stack.offset, stack.size, "stack"),
    );
    // Slot cursors: one index cell per repeatedly admitted endpoint, reset
    // to slot 0 when the worker starts.
    let index = index_type(ctx);
    let offset_type = loom_type(ctx, "!buffer.offset");
    let mut cursor_views = BTreeMap::new();
    for (&(channel, reserve), &placed) in &worker.cursors {
        let cell = &plan.placed[placed];
        let name = format!(
            "{}_{}_cursor",
            value_name(plan.channels[channel].value),
            if reserve { "reserve" } else { "acquire" }
        );
        let storage = tile_buffer(ctx, "cursor", worker.tile, cell.offset, cell.size, &name);
        insert_before(first, storage);
        let origin = index_constant(named_location(ctx, "cursor_origin"), 0, offset_type);
        insert_before(first, origin);
        let mut view = OpSpec::new(
            names::buffer::VIEW,
            named_location(ctx, &format!("{name}_view")),
        );
        view.operands = vec![results(storage)[0], results(origin)[0]];
        view.results = vec![loom_type(ctx, "!view.view<1xindex>")];
        let view = view.build();
        insert_before(first, view);
        let zero = index_constant(named_location(ctx, "slot_zero"), 0, index);
        insert_before(first, zero);
        insert_before(first, store_index(ctx, results(zero)[0], results(view)[0]));
        cursor_views.insert((channel, reserve), results(view)[0]);
    }
    // Collected first: realizing one admission destroys its publish or
    // release, which a walk would visit later.
    let admissions: Vec<MlirOperation> = walk(function)
        .into_iter()
        .filter(|&op| {
            matches!(
                op_name(op).as_str(),
                names::channel::RESERVE | names::channel::ACQUIRE
            )
        })
        .collect();
    for op in admissions {
        let reserve = op_name(op) == names::channel::RESERVE;
        let Some(i) = params.iter().position(|&p| same_value(p, operands(op)[0])) else {
            return refuse(op, "the channel must be a parameter of the strand".into());
        };
        let channel_index = worker.channels[&i];
        let channel = &plan.channels[channel_index];
        // Every lane's credit: a striped channel's record is both halves.
        let credits: Vec<(i64, i64)> = (0..channel.lanes)
            .map(|lane| {
                let (free, published) = channel.lane_locks(lane);
                if reserve {
                    (free, published)
                } else {
                    (published, free)
                }
            })
            .collect();
        let loc = location(op);
        for &(take, _) in &credits {
            insert_before(
                op,
                tile_op(
                    names::aie2p::LOCK_ACQUIRE,
                    loc,
                    "tile",
                    channel.tile,
                    &[("lock", take), ("value", 1)],
                )
                .build(),
            );
        }
        let placed = &plan.placed[channel.storage];
        let storage_name = value_name(results(placed.op)[0]);
        let storage = tile_buffer(
            ctx,
            "channel",
            channel.tile,
            placed.offset,
            placed.size,
            &storage_name,
        );
        insert_before(op, storage);
        // The slot's byte offset: slot 0 for an endpoint admitted once,
        // else the cursor's slot, and the cursor moves on.
        let offset = match cursor_views.get(&(channel_index, reserve)) {
            None => {
                let offset = index_constant(
                    named_location(ctx, "slot_offset"),
                    channel.base,
                    offset_type,
                );
                insert_before(op, offset);
                results(offset)[0]
            }
            Some(&cursor) => slot_from_cursor(
                op,
                cursor,
                channel.base,
                channel.slot_bytes,
                channel.capacity,
            ),
        };
        let r = results(op);
        let (obligation, payload) = (r[0], r[1]);
        let mut view = OpSpec::new(
            names::buffer::VIEW,
            named_location(ctx, &value_name(payload)),
        );
        view.operands = vec![results(storage)[0], offset];
        view.operands
            .extend(value_dims(payload).unwrap_or_default());
        view.results = vec![value_type(payload)];
        let view = view.build();
        insert_before(op, view);
        replace_all_uses(payload, results(view)[0]);
        for (user, _) in uses(obligation) {
            let user_name = op_name(user);
            if user_name != names::channel::PUBLISH && user_name != names::channel::RELEASE {
                return refuse(user, format!(
                    "the record obligation %{} flows into `{user_name}`; this lowering follows an obligation straight to its publish or release",
                    value_name(obligation)
                ));
            }
            for &(_, give) in &credits {
                insert_before(
                    user,
                    tile_op(
                        names::aie2p::LOCK_RELEASE,
                        location(user),
                        "tile",
                        channel.tile,
                        &[("lock", give), ("value", 1)],
                    )
                    .build(),
                );
            }
            erase(user);
        }
        erase(op);
    }
    address_views(function)?;
    for &(alloca, index) in &worker.private {
        let placed = &plan.placed[index];
        let name = value_name(results(alloca)[0]);
        let storage = tile_buffer(
            ctx,
            "private",
            worker.tile,
            placed.offset,
            placed.size,
            &name,
        );
        insert_before(alloca, storage);
        replace_all_uses(results(alloca)[0], results(storage)[0]);
        erase(alloca);
    }
    for (i, &param) in params.iter().enumerate().rev() {
        if !uses(param).is_empty() {
            let (user, _) = uses(param)[0];
            return refuse(user, format!(
                "the worker passes channel %{} on to `{}`; this lowering realizes channel actions in the strand's own body",
                value_name(param),
                op_name(user)
            ));
        }
        erase_block_argument(entry, i as u32);
    }
    let signature = function_type(ctx, &[], &[]);
    set_attribute(function, "function_type", type_attr(signature));
    set_attribute(function, "arg_dims", dense_i64_attr(ctx, &[]));
    set_attribute(function, "sym_name", string_attr(ctx, name));
    remove_attribute(function, "inline_hint");
    Ok(())
}

/// The configuration function: everything the invocation's command stream
/// does, in order.
fn configuration(plan: &Plan, name: &str, context_name: &str, workers: &[String]) -> MlirOperation {
    let pipeline = plan.pipeline;
    let ctx = context(pipeline);
    let types: Vec<MlirType> = plan.run_arguments.iter().map(|&a| value_type(a)).collect();
    let locations: Vec<MlirLocation> = plan
        .run_arguments
        .iter()
        .map(|&a| named_location(ctx, &value_name(a)))
        .collect();
    let (function, entry) = {
        let signature = function_type(ctx, &types, &[]);
        let mut spec = OpSpec::new(names::func::DEF, location(pipeline));
        spec.attributes = vec![
            ("sym_name", string_attr(ctx, name)),
            ("sym_visibility", string_attr(ctx, "public")),
            ("target", flat_symbol_ref_attr(ctx, context_name)),
            ("function_type", type_attr(signature)),
            ("arg_dims", dense_i64_attr(ctx, &[])),
        ];
        spec.regions = 1;
        let function = spec.build();
        let entry = append_block(region(function, 0), &types, &locations);
        (function, entry)
    };
    let args = arguments(entry);
    let put = |spec: OpSpec| append(entry, spec.build());
    for placed in plan.placed.iter().filter(|p| p.role == "channel") {
        let name = value_name(results(placed.op)[0]);
        append(
            entry,
            tile_buffer(
                ctx,
                "channel",
                placed.tile,
                placed.offset,
                placed.size,
                &name,
            ),
        );
    }
    for channel in &plan.channels {
        let loc = location(channel.bind);
        for lane in 0..channel.lanes {
            let (free, published) = channel.lane_locks(lane);
            put(tile_op(
                names::aie2p::LOCK_INIT,
                loc,
                "tile",
                channel.tile,
                &[("lock", free), ("value", channel.capacity)],
            ));
            put(tile_op(
                names::aie2p::LOCK_INIT,
                loc,
                "tile",
                channel.tile,
                &[("lock", published), ("value", 0)],
            ));
        }
    }
    for (at, from, to) in plan.routes() {
        put(route(location(at), from, to));
    }
    for (worker, image) in plan.workers.iter().zip(workers) {
        let loc = location(worker.strand);
        let mut load = OpSpec::new(names::aie2p::PROGRAM_LOAD, loc);
        load.attributes = vec![
            ("coordinates", tile_attr(ctx, worker.tile)),
            ("image", flat_symbol_ref_attr(ctx, image)),
        ];
        put(load);
        put(tile_op(
            names::aie2p::CORE_ENABLE,
            loc,
            "tile",
            worker.tile,
            &[],
        ));
    }
    // The forwards' DMA runs from the start, paced by the channels' locks. A
    // broadcast's forwards share their source's MM2S ring, emitted with the
    // first of them.
    let mut sent = BTreeSet::new();
    for f in &plan.forwards {
        let (from, to) = (&plan.channels[f.from], &plan.channels[f.to]);
        if sent.insert(f.from) {
            let side = RingSide {
                tile: from.tile,
                dma_channel: f.mm2s,
                s2mm: false,
                first_bd: f.mm2s_bd,
                lanes: f.mm2s_lanes(from),
                addressing: f.mm2s_addressing.clone(),
            };
            for op in side.ops(plan, from, f.records, location(f.copy)) {
                put(op);
            }
        }
        let side = RingSide {
            tile: to.tile,
            dma_channel: f.s2mm,
            s2mm: true,
            first_bd: f.s2mm_bd,
            lanes: f.s2mm_lanes(to),
            addressing: f.s2mm_addressing.clone(),
        };
        for op in side.ops(plan, to, f.records, location(f.copy)) {
            put(op);
        }
    }
    for command in &plan.commands {
        match command {
            Command::Start(t) => {
                let t = &plan.transfers[*t];
                let channel = &plan.channels[t.channel];
                let loc = location(t.copy);
                let ingress = t.way == Way::Ingress;
                let side = RingSide {
                    tile: channel.tile,
                    dma_channel: t.tile_channel,
                    s2mm: ingress,
                    first_bd: t.tile_bd,
                    lanes: channel.chain_lanes(t.lane),
                    addressing: None,
                };
                for op in side.ops(plan, channel, t.records(), loc) {
                    put(op);
                }
                // The shim descriptor moves the records in one use, or one
                // iteration position's in each.
                let uses = t.addressing.as_ref().map_or(1, |a| a.uses());
                let mut shim = tile_op(
                    names::aie2p::SHIM_BD,
                    loc,
                    "tile",
                    t.shim,
                    &[
                        ("bd", t.shim_bd),
                        ("offset", t.argument_offset),
                        ("length", t.bytes * t.records() / uses),
                    ],
                );
                shim.operands = vec![args[t.argument]];
                push_addressing(&mut shim, &t.addressing);
                put(shim);
                let mut start_attributes = vec![("channel", t.shim_channel), ("bd", t.shim_bd)];
                if uses > 1 {
                    start_attributes.push(("repeat", uses));
                }
                let mut start = tile_op(
                    names::aie2p::DMA_START,
                    loc,
                    "tile",
                    t.shim,
                    &start_attributes,
                );
                start
                    .attributes
                    .push(("direction", direction(ctx, !ingress)));
                start.attributes.push(("token", unit_attr(ctx)));
                put(start);
            }
            Command::Wait(op, members) => {
                for &m in members {
                    let t = &plan.transfers[m];
                    let mut wait = tile_op(
                        names::aie2p::DMA_WAIT,
                        location(*op),
                        "tile",
                        t.shim,
                        &[("channel", t.shim_channel)],
                    );
                    wait.attributes
                        .push(("direction", direction(ctx, t.way == Way::Egress)));
                    put(wait);
                }
            }
        }
    }
    put(OpSpec::new(names::func::RETURN, location(pipeline)));
    function
}

/// Replace the pipeline with its native realization.
pub fn realize(module: MlirOperation, plan: &Plan) -> Result<(), Refusal> {
    let ctx = context(module);
    let mut taken: BTreeSet<String> = symbols(module).keys().cloned().collect();
    let mut images = Vec::new();
    for worker in &plan.workers {
        let name = fresh_symbol(
            &mut taken,
            &format!("__loom_worker_{}_{}_", worker.tile.column, worker.tile.row),
        );
        realize_worker(plan, worker, &name)?;
        crate::worker_loops::optimize(worker.function);
        images.push(name);
    }
    let pipeline_name = symbol_name(plan.pipeline).unwrap_or_default();
    let context_name = fresh_symbol(&mut taken, "__loom_target_configuration_");
    let profile = &plan.profile.name;
    let function = configuration(plan, &pipeline_name, &context_name, &images);
    let mut context = OpSpec::new(names::aie2p::TARGET, unknown_location(ctx));
    context.attributes = vec![
        ("sym_name", string_attr(ctx, &context_name)),
        ("kind", string_attr(ctx, "configuration")),
        ("device_profile", string_attr(ctx, profile)),
    ];
    insert_before(plan.pipeline, function);
    insert_before(plan.pipeline, context.build());
    let array_context = symbol_ref(plan.pipeline, "target");
    // The pipeline, the command-stream function and the functions of idle
    // and forwarding strands are replaced; nothing refers to them any more.
    let replaced: Vec<MlirOperation> = plan
        .command_strand
        .map(|(_, function)| function)
        .into_iter()
        .chain(plan.idle.iter().copied())
        .chain(plan.forwarding.iter().copied())
        .collect();
    let contexts: Vec<Option<String>> = replaced
        .iter()
        .map(|&function| symbol_ref(function, "target"))
        .collect();
    erase(plan.pipeline);
    for function in replaced {
        erase(function);
    }
    // Their generated contexts have no user left.
    let generated = std::iter::once(array_context).chain(contexts);
    for name in generated.into_iter().flatten() {
        if !name.starts_with("__loom_target_context_") {
            continue;
        }
        if let Some(&op) = symbols(module).get(&name) {
            erase(op);
        }
    }
    Ok(())
}

/// Tile code addresses every view of a tile buffer by its own shape (the
/// code generator and the cores do), so each `view.reinterpret` and
/// `view.part` becomes a `buffer.view` of the same buffer, in program order
/// (a part of a reshaped record, or a reshaped part, works too):
/// - a reinterpret between row-major views (the plan refuses strided ones)
///   is the same bytes at the same offset with the new shape;
/// - a part is the source's offset plus the index times a part's bytes.
fn address_views(function: MlirOperation) -> Result<(), Refusal> {
    for op in walk(function) {
        let name = op_name(op);
        if name != names::view::REINTERPRET && name != names::view::PART {
            continue;
        }
        let source = owner_op(operands(op)[0]);
        if op_name(source) != names::buffer::VIEW {
            return refuse(op, "tile code reshapes and takes parts only of a view of a tile buffer (a record, a slot or a private buffer)".into());
        }
        let result = results(op)[0];
        let start = if name == names::view::PART {
            part_offset(op, operands(source)[1], view_bytes(op, result, &|_| None)?)
        } else {
            operands(source)[1]
        };
        let mut view = OpSpec::new(names::buffer::VIEW, location(op));
        view.operands = vec![operands(source)[0], start];
        view.results = vec![value_type(result)];
        let view = view.build();
        insert_before(op, view);
        replace_all_uses(result, results(view)[0]);
        erase(op);
    }
    Ok(())
}

/// Before the `view.part` `op`: `offset` plus its index times
/// `part_bytes`, as an offset.
fn part_offset(op: MlirOperation, offset: MlirValue, part_bytes: i64) -> MlirValue {
    let loc = location(op);
    let offset_type = loom_type(context(op), "!buffer.offset");
    let put = |built: MlirOperation| {
        insert_before(op, built);
        results(built)[0]
    };
    let bytes = put(index_constant(loc, part_bytes, offset_type));
    let binary = |name: &'static str, operands: Vec<MlirValue>| {
        let mut spec = OpSpec::new(name, loc);
        spec.operands = operands;
        spec.results = vec![offset_type];
        spec.build()
    };
    let index = put(binary(names::index::CAST, vec![operands(op)[1]]));
    let within = put(binary(names::index::MUL, vec![index, bytes]));
    put(binary(names::index::ADD, vec![offset, within]))
}
