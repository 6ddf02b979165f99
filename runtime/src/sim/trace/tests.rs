//! A traced run of a small artifact (the shim sends two records to a core,
//! whose worker hands each back to the caller through the same slot),
//! its trace checked against the Trace Event Format.

use crate::interp::program::{Block, Function, Inst, IntOp, Lock, Op, Predicate, Program};
use crate::interp::value::Value;
use crate::sim::array::testing::*;
use crate::sim::run::{run, run_traced, DEFAULT_MAX_CORE_STEPS};
use crate::sim::trace::json;
use loom_targets::xdna::elf::{Artifact, TileImage};
use loom_targets::xdna::regs::Direction;
use loom_targets::xdna::txn::Txn;
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};

/// Bytes per record; the run moves two.
const RECORD: u32 = 16;

/// The worker: for each of two records, take it (lock 1), compute, publish
/// it in place (lock 2), wait until the core's MM2S has sent it (lock 3),
/// free the slot (lock 0).
fn worker() -> Program {
    let inst = |op| Inst {
        op,
        loc: "trace.loom:1:1".into(),
    };
    let lock = |id, value| Lock {
        tile: CORE,
        id,
        value,
    };
    let mut body = vec![
        inst(Op::LockAcquire(lock(1, 1))),
        inst(Op::Int(IntOp::Add, 3, 2, 4)),
    ];
    // Work between taking the record and publishing it.
    body.extend((0..8).map(|_| inst(Op::Int(IntOp::Mul, 4, 2, 5))));
    body.extend([
        inst(Op::LockRelease(lock(2, 1))),
        inst(Op::LockAcquire(lock(3, 1))),
        inst(Op::LockRelease(lock(0, 1))),
        inst(Op::CmpBr(Predicate::Slt, 4, 1, 1, vec![4], 2, vec![])),
    ]);
    let blocks = vec![
        Block {
            params: vec![],
            insts: vec![
                inst(Op::Const(Value::Int(0), 0)),
                inst(Op::Const(Value::Int(2), 1)),
                inst(Op::Const(Value::Int(1), 2)),
                inst(Op::Br(1, vec![0])),
            ],
        },
        Block {
            params: vec![3],
            insts: body,
        },
        Block {
            params: vec![],
            insts: vec![inst(Op::Return(vec![]))],
        },
    ];
    Program {
        functions: vec![Function {
            name: "worker".into(),
            params: vec![],
            blocks,
            registers: 6,
            loc: "trace.loom:1:1".into(),
        }],
        ..Program::default()
    }
}

/// The control code: routes both ways, the core's bring-up and start, its
/// S2MM and MM2S tasks of two runs over one slot at 0x400, the shim's
/// send of argument 0 and its receive into argument 1, and the SYNC.
fn artifact() -> Artifact {
    let slot = |acquire, release| tile_bd(0x400, RECORD, Some((acquire, -1)), Some((release, 1)));
    let mut ops = vec![load_pdi(0)];
    ops.extend(shim_token_route(1));
    ops.extend([Direction::S2mm, Direction::Mm2s].map(|d| controller_id(SHIM, d, 0, 1)));
    ops.extend([(0, 1), (1, 0), (2, 0), (3, 0)].map(|(lock, value)| lock_init(CORE, lock, value)));
    ops.extend(route_ops((SHIM, 0), (CORE, 0)));
    ops.extend(route_ops((CORE, 0), (SHIM, 0)));
    ops.extend(bring_up(CORE));
    ops.extend([
        core_enable(CORE, true),
        bd(CORE, 0, &slot(0, 1)),
        start_runs(CORE, Direction::S2mm, 0, 0, 2, false),
        bd(CORE, 2, &slot(2, 3)),
        start_runs(CORE, Direction::Mm2s, 0, 2, 2, false),
        bd(SHIM, 0, &shim_bd(2 * RECORD)),
        patch(0, 0, 0),
        start(SHIM, Direction::Mm2s, 0, 0, false),
        bd(SHIM, 2, &shim_bd(2 * RECORD)),
        patch(2, 1, 0),
        start(SHIM, Direction::S2mm, 0, 2, true),
        sync(SHIM, Direction::S2mm, 0),
    ]);
    crate::sim::array::testing::artifact(
        ops,
        vec![TileImage {
            column: CORE.column,
            row: CORE.row,
            name: "worker".into(),
            bytes: vec![],
        }],
    )
}

fn inputs() -> Vec<Vec<u8>> {
    vec![
        (1..=2 * RECORD as u8).collect(),
        vec![0; 2 * RECORD as usize],
    ]
}

#[test]
fn a_traced_run_gives_the_same_results_as_an_untraced_one() {
    let program = worker();
    let artifact = artifact();
    let plain = run(&artifact, &program, inputs(), DEFAULT_MAX_CORE_STEPS).unwrap();
    let (traced, trace) = run_traced(&artifact, &program, inputs(), DEFAULT_MAX_CORE_STEPS);
    let traced = traced.unwrap();
    // The records came back through the core.
    assert_eq!(plain.buffers[1], inputs()[0]);
    assert_eq!(traced.buffers, plain.buffers);
    assert_eq!(traced.txn_ops, plain.txn_ops);
    assert_eq!(traced.core_steps, plain.core_steps);
    assert_eq!(traced.timing.cycles, plain.timing.cycles);
    assert_eq!(traced.timing.records, plain.timing.records);
    assert_eq!(traced.timing.bound, plain.timing.bound);
    assert_eq!(trace.cycles, plain.timing.cycles);
    // The same run, the same bytes.
    let (_, again) = run_traced(&artifact, &program, inputs(), DEFAULT_MAX_CORE_STEPS);
    assert_eq!(json::write(&[("s", &again)]), json::write(&[("s", &trace)]));
}

/// `event[key]` as the type the format wants, or a message naming both.
fn field<'j>(event: &'j Json, key: &str) -> &'j Json {
    event
        .get(key)
        .unwrap_or_else(|| panic!("event {event} has no `{key}`"))
}

/// A complete event as read back: begin, end, name, category.
type Seen = (u64, u64, String, String);

fn int(event: &Json, key: &str) -> u64 {
    field(event, key)
        .as_u64()
        .unwrap_or_else(|| panic!("`{key}` of {event} is not a non-negative integer"))
}

fn string<'j>(event: &'j Json, key: &str) -> &'j str {
    field(event, key)
        .as_str()
        .unwrap_or_else(|| panic!("`{key}` of {event} is not a string"))
}

#[test]
fn the_trace_is_trace_event_format_json() {
    let program = worker();
    let artifact = artifact();
    let (outcome, trace) = run_traced(&artifact, &program, inputs(), DEFAULT_MAX_CORE_STEPS);
    let cycles = outcome.unwrap().timing.cycles;
    let text = json::write(&[("two records", &trace)]);
    let file: Json = serde_json::from_str(&text).expect("the trace parses as JSON");
    assert_eq!(file["displayTimeUnit"], "ms");
    assert_eq!(file["otherData"]["clock"], json::CLOCK);
    let events = file["traceEvents"]
        .as_array()
        .expect("traceEvents is an array");

    let mut names: BTreeMap<(u64, u64), String> = BTreeMap::new();
    let mut slices: BTreeMap<(u64, u64), Vec<Seen>> = BTreeMap::new();
    let mut process = None;
    for event in events {
        let (name, ph) = (string(event, "name"), string(event, "ph"));
        let (pid, tid) = (int(event, "pid"), int(event, "tid"));
        let ts = int(event, "ts");
        let args = field(event, "args");
        assert!(args.is_object(), "args of {event}");
        match ph {
            "M" => match name {
                "process_name" => process = Some(string(args, "name").to_string()),
                "thread_name" => {
                    let name = string(args, "name").to_string();
                    assert!(names.insert((pid, tid), name).is_none(), "{event}");
                }
                "process_sort_index" | "thread_sort_index" => {
                    int(args, "sort_index");
                }
                _ => panic!("unknown metadata event {event}"),
            },
            "X" => {
                let dur = int(event, "dur");
                let cat = string(event, "cat").to_string();
                assert!(
                    ts + dur <= cycles,
                    "{event} ends after the run's {cycles} cycles"
                );
                slices
                    .entry((pid, tid))
                    .or_default()
                    .push((ts, ts + dur, name.to_string(), cat));
            }
            _ => panic!("unexpected phase in {event}"),
        }
    }
    assert_eq!(
        process.as_deref(),
        Some("two records: array amd.xdna.strix.17f0_10")
    );
    // Every track used is named, and none is named twice.
    let used: BTreeSet<_> = slices.keys().copied().collect();
    let named: BTreeSet<_> = names.keys().copied().collect();
    assert_eq!(used, named);
    for (track, list) in &slices {
        // Sorted by begin in the file; on one track, none overlaps the next.
        for pair in list.windows(2) {
            assert!(pair[0].0 <= pair[1].0, "{track:?}: {pair:?} out of order");
            assert!(pair[0].1 <= pair[1].0, "{track:?}: {pair:?} overlap");
        }
    }
    let track = |name: &str| {
        let key = names.iter().find(|(_, n)| *n == name).map(|(k, _)| *k);
        let key = key.unwrap_or_else(|| panic!("no track `{name}` in {names:?}"));
        &slices[&key]
    };
    let kinds = |list: &[Seen], cat: &str| list.iter().filter(|s| s.3 == cat).count();
    // The command processor writes, then waits at the SYNC.
    let control = track("command processor (TXN)");
    assert!(kinds(control, "control") > 20);
    assert_eq!(
        control.last().unwrap().2,
        "SYNC: tile [0, 0] shim.dma.s2mm[0]"
    );
    // The core computes, and waits for its records and for the send.
    let core = track("tile [0, 3] core");
    assert!(kinds(core, "compute") >= 2, "{core:?}");
    assert!(kinds(core, "lock wait") >= 2, "{core:?}");
    assert!(core.iter().any(|s| s.2 == "lock wait: tile [0, 3] lock 3"));
    // Each of the core's DMA channels moves two records; the shim's one
    // transfer each way.
    for channel in ["s2mm", "mm2s"] {
        let list = track(&format!("tile [0, 3] core.dma.{channel}[0]"));
        assert_eq!(kinds(list, "transfer"), 2, "{list:?}");
        let list = track(&format!("tile [0, 0] shim.dma.{channel}[0]"));
        assert_eq!(kinds(list, "transfer"), 1, "{list:?}");
    }
    // The first record waits for the shim's bytes, the second for its
    // slot, freed by the worker; the shim's receive waits for both.
    let s2mm = track("tile [0, 3] core.dma.s2mm[0]");
    assert_eq!(s2mm[0].2, "stream wait: bd[0]", "{s2mm:?}");
    assert!(s2mm.iter().any(|s| s.2 == "lock wait: lock 0"), "{s2mm:?}");
    let shim = track("tile [0, 0] shim.dma.s2mm[0]");
    assert_eq!(kinds(shim, "stream wait"), 1, "{shim:?}");
    // A transfer takes its bytes at the channel's rate.
    let rate = strix().timing.dma_bytes_per_cycle;
    assert!(s2mm
        .iter()
        .filter(|s| s.3 == "transfer")
        .all(|s| s.1 - s.0 == u64::from(RECORD).div_ceil(rate)));
}

#[test]
fn a_hang_still_gives_its_trace() {
    let program = worker();
    let mut artifact = artifact();
    // Without its second record the worker waits for ever.
    let mut txn = Txn::decode(&artifact.ctrltext).unwrap();
    let both = bd(SHIM, 0, &shim_bd(2 * RECORD));
    let one = bd(SHIM, 0, &shim_bd(RECORD));
    for op in &mut txn.ops {
        if *op == both {
            *op = one.clone();
        }
    }
    artifact.ctrltext = txn.encode();
    let (outcome, trace) = run_traced(&artifact, &program, inputs(), DEFAULT_MAX_CORE_STEPS);
    let Err(error) = outcome else {
        panic!("the run without its second record did not hang");
    };
    assert!(error.message.starts_with("hang"), "{}", error.message);
    assert!(!trace.slices.is_empty());
    assert_eq!(trace.cycles, trace.last_end());
    let text = json::write(&[("hang", &trace)]);
    assert!(serde_json::from_str::<Json>(&text).is_ok());
}
