//! The command stream's transfers: the one strand that moves the caller's
//! buffers, checked against the command-stream rules (fixed endpoints,
//! whole slots, every copy grouped and waited for, records published in the
//! order reserved) and turned into DMA transfers and ordered waits.

use super::evaluate::{call_constant, evaluate, evaluated, Whose};
use super::joins::Joins;
use super::placement::{view_access, view_bytes};
use super::realization::{
    argument_index, refuse, run_argument, Command, Plan, Refusal, Transfer, Way,
};
use loom_dialects::ir::*;
use loom_dialects::names;
use loom_targets::Tile;
use mlir_sys::*;
use std::collections::BTreeMap;

impl Plan<'_> {
    /// Check the command-stream rules on the strand's function and order its
    /// transfers and waits.
    pub(super) fn plan_command_stream(
        &mut self,
        function: MlirOperation,
        args: &[MlirValue],
    ) -> Result<(), Refusal> {
        let params = {
            let entry = body(function);
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
        let resolve = |value: MlirValue| call_constant(value, &params, args);
        let whose = Whose {
            strand: "the transfer strand",
            work: "the command stream",
            transfers: "the command stream's transfers",
        };
        let sequence = evaluate(function, resolve, &whose)?;
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
        let mut joins = Joins::new("the command stream");
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
                name if evaluated(name) => {}
                names::buffer::VIEW => {
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
                names::channel::RESERVE | names::channel::ACQUIRE => {
                    let Some(channel) = channel_param(operands(op)[0]) else {
                        return refuse(
                            op,
                            "the channel must be one of the pipeline's channels".into(),
                        );
                    };
                    let ingress = name == names::channel::RESERVE;
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
                names::kernel::ASYNC_COPY => {
                    let all = operands(op);
                    let (source, destination) = (all[0], all[1]);
                    let payload = |v: MlirValue| admitted.iter().find(|a| same_value(a.1, v));
                    let fixed = |v: MlirValue| external.iter().find(|e| same_value(e.0, v));
                    let (way, channel, admission, (argument, argument_offset), outside) =
                        match (fixed(source), payload(destination), payload(source), fixed(destination)) {
                            (Some(e), Some(p), _, _) if p.3 == Way::Ingress => (Way::Ingress, p.2, p.4, (e.1, e.2), source),
                            (_, _, Some(p), Some(e)) if p.3 == Way::Egress => (Way::Egress, p.2, p.4, (e.1, e.2), destination),
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
                    let layout = view_access(op, outside, &resolve)?;
                    let tile = self.channels[channel].tile;
                    let shim = Tile::new(
                        tile.column,
                        *self.profile.array.shim_rows.first().unwrap_or(&0),
                    );
                    transfers.push(Transfer {
                        copy: op,
                        way,
                        channel,
                        tile,
                        argument,
                        argument_offset,
                        layout,
                        outside: Vec::new(),
                        addressing: None,
                        bytes,
                        lane: 0,
                        tile_channel: 0,
                        tile_bd: 0,
                        shim,
                        shim_channel: 0,
                        shim_bd: 0,
                    });
                    admission_of.push(admission);
                    let t = transfers.len() - 1;
                    program.push(Command::Start(t));
                    joins.copy(op, t)?;
                }
                names::kernel::ASYNC_GROUP => joins.group(op)?,
                names::kernel::ASYNC_WAIT => {
                    let members = joins.wait(op)?;
                    // Empty when a wait for a younger group completed it.
                    if !members.is_empty() {
                        waited.extend(&members);
                        program.push(Command::Wait(op, members));
                    }
                }
                names::channel::PUBLISH | names::channel::RELEASE => {
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
        joins.all_grouped()?;
        // In program order; `Plan::of` schedules them once the workers are
        // planned.
        self.commands = program;
        self.transfers = transfers;
        Ok(())
    }
}
