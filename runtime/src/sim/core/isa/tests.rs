//! The isa core on small programs written as llvm-objdump text, packed by
//! `loom_aie2p_isa`, written as core ELFs and run on an `Array`.

use super::{IsaCores, Options, ProgramSource};
use crate::sim::array::testing::{
    array, artifact, bring_up, controller_id, core_enable, load_pdi, lock_init, shim_to_core,
    shim_token_route, strix, tile_bd, CORE, SHIM,
};
use crate::sim::array::Array;
use crate::sim::core::Cores;
use crate::sim::run::run_with;
use loom_aie2p_isa::elf::{self, CoreImage, DataSegment, OWN_DATA_VIEW};
use loom_aie2p_isa::{parse_bundle, Bundle};
use loom_diagnostic::Diagnostic;
use loom_targets::xdna::elf::TileImage;
use loom_targets::xdna::regs::Direction;
use loom_targets::Tile;
use std::collections::BTreeMap;

/// These tests start cores without control code: each runs its tile
/// image's program as a loader would copy it.
pub(super) fn options() -> Options {
    Options {
        program: ProgramSource::TileImage,
        ..Options::default()
    }
}

/// The bytes of `lines`: one bundle per line (slots joined by `;`); a line
/// `name:` puts a label at the next bundle, `@name` in a line is that
/// label's address, and `.align` pads with 16-bit NOPs to a 16-byte line
/// (jump targets start one, xdna-hardware-facts §9).
pub(super) fn assemble(lines: &[&str]) -> Vec<u8> {
    let pass = |labels: &BTreeMap<String, usize>| {
        let mut out = Vec::new();
        let mut found = BTreeMap::new();
        for line in lines {
            let line = line.trim();
            if let Some(label) = line.strip_suffix(':') {
                found.insert(label.to_string(), out.len());
            } else if line == ".align" {
                while out.len() % 16 != 0 {
                    out.extend(bundle("nop"));
                }
            } else {
                let mut text = line.to_string();
                for (name, at) in labels {
                    text = text.replace(&format!("@{name}"), &at.to_string());
                }
                if text.contains('@') {
                    text = text
                        .split('@')
                        .next()
                        .map(|head| format!("{head}0"))
                        .unwrap_or_default();
                }
                out.extend(bundle(&text));
            }
        }
        (out, found)
    };
    let (_, labels) = pass(&BTreeMap::new());
    pass(&labels).0
}

fn bundle(text: &str) -> Vec<u8> {
    let instructions = parse_bundle(text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
    Bundle::pack(instructions)
        .and_then(|b| b.encode())
        .unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

fn core_elf(program: Vec<u8>, data: Vec<DataSegment>) -> Vec<u8> {
    elf::write(&CoreImage {
        program,
        data,
        entry: 0,
    })
    .unwrap()
}

fn image(name: &str, tile: Tile, bytes: Vec<u8>) -> TileImage {
    TileImage {
        column: tile.column,
        row: tile.row,
        name: name.into(),
        bytes,
    }
}

/// Run one core at `CORE` on its own until it finishes or blocks.
pub(super) fn run_alone(
    lines: &[&str],
    data: Vec<DataSegment>,
    options: Options,
) -> (IsaCores, Array, Result<(), Diagnostic>) {
    run_at(CORE, lines, data, options)
}

fn run_at(
    tile: Tile,
    lines: &[&str],
    data: Vec<DataSegment>,
    options: Options,
) -> (IsaCores, Array, Result<(), Diagnostic>) {
    let images = [image("worker", tile, core_elf(assemble(lines), data))];
    let mut cores = IsaCores::new(strix(), &images, options);
    let mut array = array();
    let result = cores.start("worker", tile, 0).and_then(|()| {
        while cores.run(&mut array)? {}
        Ok(())
    });
    (cores, array, result)
}

/// A register's value once every write in flight has landed.
pub(super) fn register(cores: &IsaCores, tile: Tile, name: &str) -> u32 {
    let mut regs = cores.core(tile).regs.clone();
    regs.settle(u64::MAX);
    regs.value(name).unwrap()
}

pub(super) fn message(result: Result<(), Diagnostic>) -> String {
    result.expect_err("the run fails").to_string()
}

/// The 5 delay slots of a transfer, as NOPs.
const DELAY: [&str; 5] = ["nop", "nop", "nop", "nop", "nop"];

fn with_delay<'a>(head: &[&'a str], tail: &[&'a str]) -> Vec<&'a str> {
    let mut out = head.to_vec();
    out.extend(DELAY);
    out.extend(tail);
    out
}

#[test]
fn a_counted_loop_computes_a_known_value() {
    // r1 = sum of r0 * 3 for r0 = 10 down to 1, r0 counted down by jnz.
    let lines = [
        "movx r0, #10",
        "movx r1, #0",
        ".align",
        "loop:",
        "add r2, r0, r0",
        "add r2, r2, r0",
        "add r1, r1, r2",
        "add r0, r0, #-1",
        "jnz r0, #@loop",
    ];
    let lines = with_delay(&lines, &["done"]);
    let (cores, _, result) = run_alone(&lines, vec![], options());
    result.unwrap();
    let expected: u32 = (1..=10).map(|i| i * 3).sum();
    assert_eq!(register(&cores, CORE, "r1"), expected);
    assert_eq!(register(&cores, CORE, "r0"), 0);
    let figures = &cores.figures()[0];
    // 2 moves, 10 iterations of 5 bundles and 5 delay slots, `done`; the
    // alignment padding's NOPs are bundles too.
    let padding = figures.bundles - (2 + 10 * 10 + 1);
    assert!(padding <= 8, "{figures:?}");
    assert_eq!(
        figures.cycles, figures.bundles,
        "no stalls: a bundle per cycle"
    );
    assert!(figures.stalls.is_empty());
    assert!(figures.stall_sites.is_empty());
    assert_eq!(figures.vector_bundles, 0, "a scalar loop");
}

#[test]
fn delay_slots_execute_before_the_jump_takes_effect() {
    let lines = [
        "movx r1, #0",
        "j #@target",
        "add r1, r1, #1",
        "add r1, r1, #1",
        "add r1, r1, #1",
        "add r1, r1, #1",
        "add r1, r1, #1",
        "add r1, r1, #50", // not executed: the jump took effect
        "done",
        ".align",
        "target:",
        "add r1, r1, #10",
        "done",
    ];
    let (cores, _, result) = run_alone(&lines, vec![], options());
    result.unwrap();
    assert_eq!(register(&cores, CORE, "r1"), 15);
}

/// `lda r1` lands its result 7 cycles after issue; an `add` in the next
/// bundle reads r1 at its cycle 1.
fn early_read_program() -> (Vec<&'static str>, Vec<DataSegment>) {
    let lines = vec![
        "movxm p0, #459264", // 0x70200: own data view + 0x200
        "mova r1, #7",
        "lda r1, [p0, #0]",
        "add r2, r1, #0",
        "nop",
        "nop",
        "nop",
        "nop",
        "nop",
        "nop",
        "add r3, r1, #0",
        "done",
    ];
    let data = vec![DataSegment {
        address: OWN_DATA_VIEW + 0x200,
        bytes: 99u32.to_le_bytes().to_vec(),
        zeroed: 60,
    }];
    (lines, data)
}

#[test]
fn loads_reach_a_neighbour_through_its_view_in_every_addressing_mode() {
    // The core at [1, 3] loads from its west neighbour [0, 3], whose memory
    // the ELF's data segment (west view, 0x50000) filled.
    let core = Tile::new(1, 3);
    let lines = [
        "movxm p0, #327696", // 0x50010
        "lda.s8 r1, [p0], #1",
        "lda.u8 r2, [p0, #0]",
        "movxm p1, #327696",
        "lda.s16 r3, [p1, #2]",
        "lda r4, [p1, #4]",
        "movx r5, #4",
        "mov dj0, r5",
        "lda.u16 r6, [p1, dj0]",
        "nop",
        "nop",
        "nop",
        "nop",
        "nop",
        "nop",
        "nop",
        "done",
    ];
    let bytes = vec![0xF0, 0x80, 0x01, 0x80, 0x78, 0x56, 0x34, 0x12];
    let data = vec![DataSegment {
        address: 0x5_0010,
        bytes: bytes.clone(),
        zeroed: 8,
    }];
    let (mut cores, _, result) = run_at(core, &lines, data, options());
    result.unwrap();
    let expect = |name: &str, value: u32| assert_eq!(register(&cores, core, name), value, "{name}");
    expect("r1", 0xFFFF_FFF0);
    expect("p0", 0x5_0011);
    expect("r2", 0x80);
    expect("r3", 0xFFFF_8001);
    expect("r4", 0x1234_5678);
    expect("r6", 0x5678);
    assert_eq!(
        cores.tile_memory(Tile::new(0, 3), 0x1_0000)[0x10..0x18],
        bytes[..]
    );
}

#[test]
fn jl_links_the_address_after_its_delay_slots() {
    let lines = [
        "jl #@callee", // 6 bytes, then 5 2-byte delay slots: returns to 16
        "nop",
        "nop",
        "nop",
        "nop",
        "nop",
        "done",
        ".align",
        "callee:",
        "mov r5, lr",
        "done",
    ];
    let (cores, _, result) = run_alone(&lines, vec![], options());
    result.unwrap();
    assert_eq!(register(&cores, CORE, "r5"), 16);
}

#[test]
fn a_read_inside_a_latency_window_is_flagged() {
    let (lines, data) = early_read_program();
    let (_, _, result) = run_alone(&lines, data, options());
    let error = message(result);
    assert!(
        error.contains("`add\tr2, r1, #0` reads r1 at cycle 4, but `lda\tr1, [p0, #0]`")
            && error.contains("writes it at cycle 9")
            && error.contains("at 0x000e"),
        "{error}"
    );
}

#[test]
fn with_the_checker_off_an_early_read_sees_the_old_value() {
    let (lines, data) = early_read_program();
    let options = Options {
        program: ProgramSource::TileImage,
        hazards: false,
        ..options()
    };
    let (cores, _, result) = run_alone(&lines, data, options);
    result.unwrap();
    assert_eq!(register(&cores, CORE, "r2"), 7, "before the load landed");
    assert_eq!(register(&cores, CORE, "r3"), 99, "after it landed");
    assert_eq!(register(&cores, CORE, "p0"), 0x70200);
}

#[test]
fn two_writes_landing_in_one_cycle_are_flagged() {
    let lines = [
        "movxm p0, #458752",
        "lda r1, [p0, #0]", // lands at issue + 7
        "nop",
        "nop",
        "nop",
        "nop",
        "nop",
        "mova r1, #3", // issued 6 later, lands at issue + 1: the same cycle
        "done",
    ];
    let error = message(run_alone(&lines, vec![], options()).2);
    assert!(
        error.contains("`mova\tr1, #3` writes r1 at cycle 8, the cycle `lda\tr1, [p0, #0]`"),
        "{error}"
    );
}

#[test]
fn a_loop_that_never_ends_hits_max_cycles() {
    let lines = with_delay(&[".align", "spin:", "j #@spin"], &[]);
    let options = Options {
        program: ProgramSource::TileImage,
        max_cycles: 1000,
        ..options()
    };
    let error = message(run_alone(&lines, vec![], options).2);
    assert!(
        error.contains("runaway: the core ran past the limit of 1000 cycles (now at cycle 1001"),
        "{error}"
    );
    assert!(
        error.contains("core [0, 3] (tile image `worker`) at 0x00"),
        "{error}"
    );
}

#[test]
fn a_corrupted_instruction_word_is_reported_with_its_address() {
    let mut program = assemble(&["movx r0, #1", "movx r1, #2", "done"]);
    // The second bundle's format bits are no format's.
    let second = bundle("movx r0, #1").len();
    program[second..second + 4].copy_from_slice(&[0x1e, 0xff, 0xff, 0xff]);
    let images = [image("worker", CORE, core_elf(program, vec![]))];
    let mut cores = IsaCores::new(strix(), &images, options());
    let mut array = array();
    cores.start("worker", CORE, 0).unwrap();
    let error = cores.run(&mut array).unwrap_err().to_string();
    assert!(
        error.contains("core [0, 3] (tile image `worker`) at 0x0004: cannot decode the bundle (bytes 1e ff ff ff"),
        "{error}"
    );
}

#[test]
fn instructions_without_semantics_are_refused() {
    let error = message(run_alone(&["abs r1, r2", "done"], vec![], options()).2);
    assert!(
        error.contains("`abs\tr1, r2` (ABS, Alu slot) is not modelled by the isa core"),
        "{error}"
    );
}

/// The counted loop's result stored to the core's own memory: the word
/// lands in tile memory (`st`'s itinerary gives its memory cycle).
#[test]
fn a_stored_result_lands_in_memory() {
    let lines = [
        "movx r0, #10",
        "movx r1, #0",
        "movxm p0, #459008", // 0x70100
        ".align",
        "loop:",
        "add r1, r1, r0",
        "add r0, r0, #-1",
        "jnz r0, #@loop",
    ];
    let lines = with_delay(&lines, &["st r1, [p0, #4]", "done"]);
    let (mut cores, _, result) = run_alone(&lines, vec![], options());
    result.unwrap();
    let expected: u32 = (1..=10).sum();
    assert_eq!(register(&cores, CORE, "r1"), expected, "the loop ran");
    let memory = cores.tile_memory(CORE, 0x1_0000);
    assert_eq!(memory[0x104..0x108], expected.to_le_bytes());
}

#[test]
fn a_tile_image_that_is_not_machine_code_is_refused() {
    let images = [image("worker", CORE, b"func.func @worker() {}".to_vec())];
    let mut cores = IsaCores::new(strix(), &images, options());
    let error = cores.start("worker", CORE, 0).unwrap_err().to_string();
    assert!(
        error.contains("is not a core ELF: it holds Low aie2p IR")
            && error.contains("run these images with --core=lowir"),
        "{error}"
    );
}

#[test]
fn silicon_rules_are_checked_at_run_time() {
    // Lock requests 2 bundles apart (acquire-equal 0 of own lock 2: granted).
    let lines = ["movx r0, #0", "acq #50, r0", "nop", "acq #50, r0", "done"];
    let error = message(run_alone(&lines, vec![], options()).2);
    assert!(
        error.contains("a lock request 2 bundle(s) after the previous one"),
        "{error}"
    );
    // `done` in a delay slot.
    let lines = [".align", "top:", "j #@top", "nop", "done"];
    let error = message(run_alone(&lines, vec![], options()).2);
    assert!(
        error.contains("`done` in delay slot 2 of the transfer at 0x0000"),
        "{error}"
    );
    // A jump target in the middle of a 16-byte line after real work.
    let mut lines = vec!["movx r0, #0", "j #@late"];
    lines.extend(DELAY);
    lines.extend(["movx r1, #1", "late:", "done"]);
    let error = message(run_alone(&lines, vec![], options()).2);
    assert!(error.contains("neither starts a 16-byte line"), "{error}");
    // A zero-overhead loop register.
    let error = message(run_alone(&["movx r0, #4", "mov lc, r0", "done"], vec![], options()).2);
    assert!(
        error.contains("`mov\tlc, r0` writes lc, a zero-overhead loop register"),
        "{error}"
    );
}

/// The worker waits for the record DMA delivers into its memory at 0x400
/// (own lock 1, id 49), then loads its first word.
const CONSUMER: [&str; 12] = [
    "movx r0, #-1",
    "movxm p0, #459776", // 0x70400
    "acq #49, r0",
    "lda r1, [p0, #0]",
    "nop",
    "nop",
    "nop",
    "nop",
    "nop",
    "nop",
    "nop",
    "done",
];

#[test]
fn an_acquire_stalls_until_a_dma_release() {
    let data: Vec<u8> = (1..=32).collect();
    let mut ops = vec![load_pdi(0)];
    // The token route and Controller_IDs `array()` sets up, for the SYNC.
    ops.extend(shim_token_route(1));
    for direction in [Direction::S2mm, Direction::Mm2s] {
        ops.extend((0..2).map(|ch| controller_id(SHIM, direction, ch, 1)));
    }
    ops.extend(bring_up(CORE));
    let mut transfer = shim_to_core(tile_bd(0x400, 32, Some((0, -1)), Some((1, 1))), 32, 0);
    // The core starts before the shim sends, and blocks on lock 1.
    transfer.insert(2, core_enable(CORE, true));
    ops.extend(transfer);
    let images = vec![image("worker", CORE, core_elf(assemble(&CONSUMER), vec![]))];
    let artifact = artifact(ops, images.clone());
    let mut cores = IsaCores::new(strix(), &images, options());
    let outcome = run_with(&artifact, &mut cores, vec![data.clone()]).unwrap();
    let first = u32::from_le_bytes(data[..4].try_into().unwrap());
    assert_eq!(register(&cores, CORE, "r1"), first);
    let figures = &cores.figures()[0];
    let stalled = figures.stalls["lock 1 of tile [0, 3] (core lock id 49)"];
    assert!(stalled > 0, "{figures:?}");
    // One acquire waited: its address names the site (no line table here).
    let sites: Vec<_> = figures.stall_sites.values().collect();
    assert_eq!(sites, [&stalled], "{figures:?}");
    assert_eq!(figures.cycles, figures.bundles + stalled);
    assert_eq!(outcome.core_steps, figures.bundles);
    assert!(outcome.timing.cycles >= figures.cycles);
}

#[test]
fn a_missing_release_ends_in_the_hang_report() {
    // Nothing ever releases own lock 1: the worker waits for ever.
    let mut ops = vec![load_pdi(0)];
    ops.extend(bring_up(CORE));
    ops.extend([lock_init(CORE, 1, 0), core_enable(CORE, true)]);
    let images = vec![image("worker", CORE, core_elf(assemble(&CONSUMER), vec![]))];
    let artifact = artifact(ops, images.clone());
    let mut cores = IsaCores::new(strix(), &images, options());
    // A line table, as the code generator is to give: the wait names the
    // source line of the acquire's address.
    let lines = [(0, "worker.loom:3:5"), (10, "worker.loom:7:9")];
    cores.set_line_table("worker", lines.map(|(a, l)| (a, l.to_string())).into());
    let Err(error) = run_with(&artifact, &mut cores, vec![]) else {
        panic!("the run completes");
    };
    let text = format!("{error:?}");
    assert!(
        text.contains(
            "hang: the control code finished, but cores or DMA engines are still blocked"
        ),
        "{text}"
    );
    assert!(text.contains(r#"location: "worker.loom:7:9""#), "{text}");
    assert!(
        text.contains(
            "core [0, 3] (tile image `worker`) waits at 0x000a `acq\\t#49, r0` to acquire lock 1 \
             of tile [0, 3] (core lock id 49) (>= 1)"
        ),
        "{text}"
    );
}

#[test]
fn a_core_takes_its_south_neighbours_lock_and_reads_its_memory() {
    // DMA fills [0, 3]'s memory at 0x400 and releases its lock 1; the core
    // at [0, 4] sees that tile as south: lock id 1, data at 0x40400.
    let north = Tile::new(0, 4);
    let data: Vec<u8> = (101..=132).collect();
    let mut ops = vec![load_pdi(0)];
    ops.extend(shim_token_route(1));
    for direction in [Direction::S2mm, Direction::Mm2s] {
        ops.extend((0..2).map(|ch| controller_id(SHIM, direction, ch, 1)));
    }
    ops.extend(bring_up(north));
    let mut transfer = shim_to_core(tile_bd(0x400, 32, Some((0, -1)), Some((1, 1))), 32, 0);
    transfer.insert(2, core_enable(north, true));
    ops.extend(transfer);
    let lines = [
        "movx r0, #-1",
        "movxm p0, #263168", // 0x40400
        "acq #1, r0",
        "lda r1, [p0, #28]",
        "nop",
        "nop",
        "nop",
        "nop",
        "nop",
        "nop",
        "nop",
        "done",
    ];
    let images = vec![image("reader", north, core_elf(assemble(&lines), vec![]))];
    let artifact = artifact(ops, images.clone());
    let mut cores = IsaCores::new(strix(), &images, options());
    run_with(&artifact, &mut cores, vec![data.clone()]).unwrap();
    let last = u32::from_le_bytes(data[28..32].try_into().unwrap());
    assert_eq!(register(&cores, north, "r1"), last);
    let figures = &cores.figures()[0];
    assert!(
        figures
            .stalls
            .contains_key("lock 1 of tile [0, 3] (core lock id 1)"),
        "{figures:?}"
    );
}

/// A producer core at [0, 4] stores a word into its south neighbour's
/// memory and releases that tile's lock 1 (its id 1); the consumer at
/// [0, 3] waits for the lock as its own id 49, then loads the word.
#[test]
fn a_release_from_another_core_ends_an_acquire_stall() {
    let producer = Tile::new(0, 4);
    let producer_lines = [
        "movx r1, #77",
        "movxm p0, #263168", // 0x40400: south view
        "movx r0, #1",
        "st r1, [p0, #0]",
        "nop",
        "nop",
        "nop",
        "rel #1, r0",
        "done",
    ];
    let images = [
        image(
            "producer",
            producer,
            core_elf(assemble(&producer_lines), vec![]),
        ),
        image("consumer", CORE, core_elf(assemble(&CONSUMER), vec![])),
    ];
    let mut cores = IsaCores::new(strix(), &images, options());
    cores.record_stalls();
    let mut array = array();
    let result = cores
        .start("consumer", CORE, 0)
        .and_then(|()| cores.start("producer", producer, 0))
        .and_then(|()| {
            while cores.run(&mut array)? {}
            Ok(())
        });
    result.unwrap();
    assert_eq!(register(&cores, CORE, "r1"), 77);
    assert!(cores.unfinished().is_empty());
    let consumer = &cores.figures()[0];
    assert!(
        consumer.stalls["lock 1 of tile [0, 3] (core lock id 49)"] > 0,
        "{consumer:?}"
    );
    // A trace's timeline: the consumer's one wait, on its own lock 1, as
    // long as the figures count it.
    let timeline = &cores.timelines()[0];
    assert!(timeline.finished);
    let [stall] = timeline.stalls.as_slice() else {
        panic!("{timeline:?}")
    };
    assert_eq!((stall.tile, stall.lock, stall.value), (CORE, 1, 1));
    assert_eq!(
        stall.end - stall.begin,
        consumer.stalls["lock 1 of tile [0, 3] (core lock id 49)"]
    );
}
