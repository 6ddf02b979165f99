//! The realization plan of one outlined pipeline on an aie2p device profile:
//! it reads the construction region (memory pools, channel storage, channel
//! bindings, strands), has each strand planned as a worker (`workers.rs`),
//! as the command stream (`command_stream.rs`) or as DMA forwards
//! (`forward.rs`), turns endpoints admitted
//! repeatedly into rings (`ring.rs`), stripes the channels worth it
//! (`lanes.rs`; unstriped when the striped plan does not fit), schedules the
//! command stream (`schedule.rs`), and places storage and checks resources
//! (`placement.rs`). The vocabulary is `realization.rs`.
//!
//! The plan reads the module only; `rewrite.rs` builds the native
//! realization from it.

use super::access::descriptor_steps;
use super::lanes;
use super::placement::{placed_alloca, view_bytes};
use super::realization::{
    refuse, run_argument, tile_at, Channel, Command, Held, Plan, Refusal, Transfer, Way,
};
use loom_dialects::ir::*;
use loom_dialects::names;
use loom_targets::xdna::regs::TileKind;
use loom_targets::{DeviceProfile, Tile};
use mlir_sys::*;
use std::collections::{BTreeMap, BTreeSet};

impl<'p> Plan<'p> {
    pub fn of(pipeline: MlirOperation, profile: &'p DeviceProfile) -> Result<Plan<'p>, Refusal> {
        let body = body(pipeline);
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
            idle: Vec::new(),
            forwarding: Vec::new(),
            forwards: Vec::new(),
            transfers: Vec::new(),
            commands: Vec::new(),
            run_arguments: all_args[specialization.min(all_args.len())..].to_vec(),
        };
        let mut pools: Vec<(MlirValue, Tile)> = Vec::new();
        let mut allocations: Vec<(MlirValue, usize)> = Vec::new();
        let mut strands = Vec::new();
        for op in ops_of(body) {
            match op_name(op).as_str() {
                names::index::CONSTANT | names::buffer::ASSUME_ALIGNMENT | names::buffer::VIEW => {}
                names::pipeline::MEMORY => {
                    let at = coordinates(op, "coordinates")?;
                    match tile_at(profile, at) {
                        Err(why) => return refuse(op, format!("pipeline.memory: {why}")),
                        Ok((tile, TileKind::Shim)) => {
                            return refuse(
                                op,
                                format!("pipeline.memory: tile {tile} is a shim tile of {}; it has no data memory to pool", profile.name),
                            )
                        }
                        Ok((tile, _)) => pools.push((results(op)[0], tile)),
                    }
                }
                names::buffer::ALLOCA => {
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
                names::channel::BIND => plan.bind_channel(op, &allocations)?,
                names::pipeline::STRAND => strands.push(op),
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
        let (transfers, program) = super::ring::rings(&plan.channels, transfers, program, &shared)?;
        let held = plan.hold_forward_dma()?;
        let forwarded: BTreeSet<usize> =
            plan.forwards.iter().flat_map(|f| [f.from, f.to]).collect();
        let forwarded_from: BTreeSet<usize> = plan.forwards.iter().map(|f| f.from).collect();
        let striped = lanes::striped(
            profile,
            &plan.channels,
            &transfers,
            &shared,
            (&forwarded, &forwarded_from),
            &held,
        );
        if !striped.is_empty() {
            let (lanes, lane_program) =
                lanes::split(profile, &plan.channels, &transfers, &program, &striped);
            for &c in &striped {
                lanes::stripe(&mut plan.channels[c], true);
            }
            // Striped only when it fits the profile, routes included, and
            // each pair of lanes gets two links; otherwise unstriped.
            if plan
                .realize_stream(lanes, &lane_program, &shared, &held)
                .is_ok()
                && plan.lanes_apart()
                && lanes::routes_fit(&plan)
            {
                return Ok(plan);
            }
            for &c in &striped {
                lanes::stripe(&mut plan.channels[c], false);
            }
        }
        plan.realize_stream(transfers, &program, &shared, &held)?;
        Ok(plan)
    }

    /// Schedules the command stream's `transfers`, places storage and checks
    /// resources.
    fn realize_stream(
        &mut self,
        mut transfers: Vec<Transfer>,
        program: &[Command],
        shared: &BTreeSet<(usize, bool)>,
        held: &Held,
    ) -> Result<(), Refusal> {
        address(&mut transfers, self.profile)?;
        self.commands = super::schedule::schedule(
            self.profile,
            &self.channels,
            &mut transfers,
            program,
            shared,
            held,
        )?;
        self.transfers = transfers;
        self.place_memory()?;
        self.check_resources()
    }

    /// Whether the two lanes of every striped transfer run on different
    /// shim channels (else striping gains nothing).
    fn lanes_apart(&self) -> bool {
        self.transfers.iter().enumerate().all(|(i, t)| {
            t.lane == 0
                || self.transfers[..i].iter().any(|u| {
                    u.copy.ptr == t.copy.ptr
                        && u.lane == 0
                        && (u.shim, u.shim_channel) != (t.shim, t.shim_channel)
                })
        })
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
        // Each forwarding strand's sides, once per strand.
        let by_strand: BTreeSet<((usize, bool), usize)> = self
            .forwards
            .iter()
            .flat_map(|f| [((f.from, false), f.strand), ((f.to, true), f.strand)])
            .collect();
        let forwarded: BTreeSet<(usize, bool)> = by_strand.iter().map(|s| s.0).collect();
        for side in self
            .workers
            .iter()
            .flat_map(|w| w.endpoints.iter())
            .chain(&stream)
            .chain(by_strand.iter().map(|s| &s.0))
        {
            *strands.entry(*side).or_insert(0) += 1;
        }
        // A forward's DMA takes its side's credits whenever they come, so no
        // other strand may contend for them.
        for &(c, reserve) in &forwarded {
            let n = strands[&(c, reserve)];
            if n > 1 {
                let channel = &self.channels[c];
                return refuse(channel.bind, format!(
                    "{n} strands admit %{}'s {} side, one of them a strand that forwards records (as DMA, without a core); a forwarded side must belong to that strand alone",
                    value_name(channel.value),
                    if reserve { "reserve" } else { "acquire" }
                ));
            }
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
        let def = is_op_result(slots).then(|| owner_op(slots));
        let Some(view) = def.filter(|&d| op_name(d) == names::buffer::VIEW) else {
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
        let end = base
            .checked_add(total)
            .filter(|&end| base >= 0 && end <= placed.size);
        if end.is_none() {
            return refuse(
                op,
                format!(
                    "the slots (bytes [{base}, {}) of their storage) overrun the {}-byte allocation",
                    i128::from(base) + i128::from(total),
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
            lanes: 1,
            joined: false,
            drains: 1,
        });
        Ok(())
    }

    pub(super) fn channel_of(&self, value: MlirValue) -> Option<usize> {
        self.channels
            .iter()
            .position(|c| same_value(c.value, value))
    }

    fn assign_strands(&mut self, strands: &[MlirOperation]) -> Result<(), Refusal> {
        let module = parent_op(self.pipeline).expect("a pipeline lives in a module");
        let functions = symbols(module);
        for &strand in strands {
            self.check_selection(strand)?;
        }
        for &strand in strands {
            let tile = self.worker_tile(strand)?;
            let strand_body = body(strand);
            let ops = ops_of(strand_body);
            let call = match ops.as_slice() {
                [call] if op_name(*call) == names::func::CALL => *call,
                _ => return refuse(strand, "aie2p-lower-pipeline needs outlined strands (run outline-pipeline-strands first)".into()),
            };
            let callee = symbol_ref(call, "callee").unwrap_or_default();
            let Some(&function) = functions.get(&callee) else {
                return refuse(call, format!("@{callee} is not defined"));
            };
            let entry = body(function);
            let params = arguments(entry).len();
            let args: Vec<MlirValue> = operands(call).into_iter().take(params).collect();
            // A strand left with nothing to run (its loops over records ran
            // zero times) is neither the command stream nor a worker: it is
            // not given a core for an empty image.
            if runs_nothing(function) {
                self.idle.push(function);
                continue;
            }
            let uses_caller_buffers = args
                .iter()
                .any(|&a| run_argument(a, &self.run_arguments).is_some());
            if uses_caller_buffers {
                if self.command_strand.is_some() {
                    return refuse(strand, "a second strand needs the command stream (it moves the caller's buffers); the command stream is one sequential engine and runs at most one strand".into());
                }
                self.command_strand = Some((strand, function));
                self.plan_command_stream(function, &args)?;
            } else if super::forward::forwards_only(function) {
                self.forwarding.push(function);
                self.plan_forward(function, &args)?;
            } else {
                self.plan_worker(strand, function, tile, args)?;
            }
        }
        Ok(())
    }
}

/// Whether `function` has no effect: branches, its return and pure ops only.
fn runs_nothing(function: MlirOperation) -> bool {
    walk(function).into_iter().skip(1).all(|op| {
        matches!(
            op_name(op).as_str(),
            names::func::RETURN | names::cfg::BR | names::cfg::COND_BR
        ) || is_pure(op)
    })
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

/// `[c, r]` from an array attribute.
pub(super) fn coordinates(op: MlirOperation, name: &str) -> Result<(i64, i64), Refusal> {
    match attribute(op, name).map(dense_i64_values).as_deref() {
        Some(&[c, r]) => Ok((c, r)),
        _ => refuse(op, format!("expects `{name}` = [column, row]")),
    }
}

/// Give each transfer its shim descriptor's dimensions, or refuse one whose
/// caller bytes the shim's descriptors cannot address.
pub(super) fn address(transfers: &mut [Transfer], profile: &DeviceProfile) -> Result<(), Refusal> {
    for t in transfers {
        let steps = t
            .access()
            .words()
            .and_then(|words| descriptor_steps(&words, profile, TileKind::Shim, true));
        match steps {
            Ok(addressing) => t.addressing = addressing,
            Err(why) => {
                let what = if t.records() == 1 {
                    "this record".to_string()
                } else {
                    format!("these {} records", t.records())
                };
                return refuse(t.copy, format!(
                    "the shim's DMA cannot address the caller's bytes of {what} as the view lays them out: {why}"
                ));
            }
        }
    }
    Ok(())
}
