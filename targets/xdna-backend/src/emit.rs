//! The `.xdna` artifact of a native realization, rebuilt from the module
//! alone (so a resumed compile of the dumped native module gives the same
//! bytes), with the realization section of the compile report.
//!
//! The configuration function's instructions become TXN control code that
//! brings the partition up in mlir-aie's order (`--expand-load-pdis` and
//! lib/Targets/AIERT.cpp; docs/research/configuration-path/findings.md Q6,
//! Q8), then runs the command stream:
//!
//! 1. LOADPDI of the empty `.pdi.0`: the firmware resets the partition;
//! 2. per core tile with a program: the core disabled, its DMA channels
//!    reset, the program written, the channels let go (`bring_up`);
//! 3. lock initial values, stream routes, and the task-complete-token routes
//!    of every tile that issues tokens;
//! 4. core enables, last of the configuration;
//! 5. the command stream in its order: tile buffer descriptors (BLOCKWRITE)
//!    and start-queue entries, shim buffer descriptors (BLOCKWRITE, then
//!    DDR_PATCH of the caller's buffer address), the channel's controller id
//!    before a queue entry that issues a token, and waits for those tokens
//!    (TCT sync);
//! 6. LOADPDI of the other empty PDI, `.pdi.1`, so that the next dispatch's
//!    first load is a new PDI and resets the partition again.
//!
//! Configuration instructions after the command stream's first one are
//! refused: they would run before it.
//!
//! Worker images are what `Options::worker_code` asks for: the worker's Low
//! aie2p IR (`lowir`, for the simulated devices: the artifact says
//! `device_loadable: false` and step 2 writes no program), or its machine
//! code (`machine`: the core ELF, whose program step 2 writes with a
//! BLOCKWRITE at the tile's program memory; the artifact is device-loadable
//! once every image is machine code that passed the checkers, and still
//! says it is unverified on hardware).

use crate::attributes::{direction, int, tile};
use crate::bring_up::{controller_id, core_bring_up, core_enable};
use crate::report::{place, report, MachineCode, TileUse};
use loom_diagnostic::Diagnostic;
use loom_dialects::instance;
use loom_dialects::ir::*;
use loom_dialects::names;
use loom_targets::xdna::elf::{
    self, ArgKind, Artifact, ElfError, Entry, EntryArg, Patch, PatchSchema, Pdi, TileImage,
};
use loom_targets::xdna::pdi;
use loom_targets::xdna::regs::{
    BufferDescriptor, Dimension, Direction, Iteration, StartQueueEntry, TileKind,
};
use loom_targets::xdna::route::{self, Endpoint, Used};
use loom_targets::xdna::txn::{shim_descriptor, Txn, TxnOp};
use loom_targets::{DeviceProfile, Tile};
use mlir_sys::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Why tile images cannot run on an NPU yet.
pub const NOT_LOADABLE: &str = "worker tile images carry Low aie2p IR for the simulated devices \
     (compiled with --worker-code=lowir)";

/// What the artifact says while no image has run on an NPU.
pub const UNVERIFIED: &str = "unverified on hardware: no Loom artifact has run on an NPU yet";

/// The form of the worker images.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WorkerCode {
    /// Low aie2p IR, for the simulated devices' Low IR core (the oracle).
    LowIr,
    /// AIE2P machine code: each image is its core ELF.
    #[default]
    Machine,
}

impl std::str::FromStr for WorkerCode {
    type Err = String;
    fn from_str(s: &str) -> Result<WorkerCode, String> {
        match s {
            "lowir" => Ok(WorkerCode::LowIr),
            "machine" => Ok(WorkerCode::Machine),
            other => Err(format!(
                "`{other}` is not a worker-code form; expected lowir or machine"
            )),
        }
    }
}

/// How the back end builds the artifact.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    pub worker_code: WorkerCode,
}

pub struct Built {
    pub profile: &'static DeviceProfile,
    pub txn: Txn,
    pub artifact: Artifact,
    pub report: Value,
}

fn fail(op: MlirOperation, message: String) -> Diagnostic {
    Diagnostic::error(location_text(location(op)), message)
}

/// A descriptor op's `steps` and `wraps` as its dimensions, innermost first
/// (none for a linear transfer); the encoder checks them against the
/// profile's fields.
fn dimensions(op: MlirOperation) -> Result<Vec<Dimension>, Diagnostic> {
    let (Some(steps), Some(wraps)) = (attribute(op, "steps"), attribute(op, "wraps")) else {
        return Ok(Vec::new());
    };
    let bytes = |value: i64| {
        u32::try_from(value).map_err(|_| {
            fail(
                op,
                format!("dimension value {value} is outside 0..={}", u32::MAX),
            )
        })
    };
    let wraps = dense_i64_values(wraps);
    dense_i64_values(steps)
        .into_iter()
        .enumerate()
        .map(|(i, step)| {
            Ok(Dimension {
                step: bytes(step)?,
                wrap: wraps.get(i).map(|&w| bytes(w)).transpose()?,
            })
        })
        .collect()
}

/// A shim descriptor op's `iteration S wrap W`, from its first use on (the
/// encoder checks the fields).
fn iteration(op: MlirOperation) -> Result<Option<Iteration>, Diagnostic> {
    if attribute(op, "iteration_stride").is_none() {
        return Ok(None);
    }
    let field = |name: &str| {
        let value = int(op, name);
        u32::try_from(value).map_err(|_| {
            fail(
                op,
                format!("iteration value {value} is outside 0..={}", u32::MAX),
            )
        })
    };
    Ok(Some(Iteration {
        stride: field("iteration_stride")?,
        wrap: field("iteration_wrap")?,
        current: 0,
    }))
}

/// Build the artifact of the public configuration function `root`.
pub fn emit(module: MlirOperation, root: &str, options: &Options) -> Result<Built, Diagnostic> {
    let root = root.trim_start_matches('@');
    let symbols = symbols(module);
    // Nothing here changes the module, so one numbering prints all of it.
    let printer = OpPrinter::new(module);
    let Some(&function) = symbols.get(root) else {
        return Err(Diagnostic::error(
            "loom-compile",
            format!("the native module has no @{root}"),
        ));
    };
    let context = symbol_ref(function, "target").and_then(|t| symbols.get(&t).copied());
    let configuration = context.filter(|&c| {
        op_name(c) == names::aie2p::TARGET
            && string_attribute(c, "kind").as_deref() == Some("configuration")
    });
    let Some(configuration) = configuration else {
        return Err(fail(function, format!("@{root} is not a configuration function (a func.def targeting an aie2p.target<configuration>)")));
    };
    let profile_name = string_attribute(configuration, "device_profile").unwrap_or_default();
    let Some(profile) = loom_targets::profiles()
        .iter()
        .find(|p| p.name == profile_name)
    else {
        return Err(fail(
            configuration,
            format!("unknown device profile `{profile_name}`"),
        ));
    };
    let entry = body(function);
    let run_arguments = arguments(entry);
    // The control code's parts, in the order they run (see the module doc).
    let mut bring_up = Vec::new();
    let mut configure = Vec::new();
    let mut enables = Vec::new();
    let mut stream = Vec::new();
    let mut patches = Vec::new();
    let mut patch_ops = Vec::new(); // (index in `stream` of the BD's BLOCKWRITE, argument, offset)
    let mut stream_started = false;
    let mut routed_columns = BTreeSet::new();
    let mut used = Used::default();
    let mut tiles: BTreeMap<Tile, TileUse> = BTreeMap::new();
    let mut images = Vec::new();
    let mut programs = crate::select::Programs::default();
    let mut command_stream = Vec::new();
    let kind_of = |op: MlirOperation, at: Tile| {
        profile.tile_kind(at.column, at.row).ok_or_else(|| {
            fail(
                op,
                format!("tile {at} is outside the array of {}", profile.name),
            )
        })
    };
    let address = |op: MlirOperation,
                   at: Tile,
                   offset: Result<u32, loom_targets::xdna::regs::RegisterError>| {
        offset
            .map(|o| profile.tile_address(at.column, at.row, o) as u32)
            .map_err(|e| fail(op, format!("tile {at}: {e}")))
    };
    // Every tile with a channel that issues task-complete tokens gets a
    // controller id and a route for them to the firmware.
    let issuers: BTreeSet<Tile> = ops_of(entry)
        .into_iter()
        .filter(|&op| op_name(op) == names::aie2p::DMA_START && attribute(op, "token").is_some())
        .map(|op| tile(op, "tile"))
        .collect();
    let ids = route::controller_ids(&issuers).map_err(|e| fail(function, e.to_string()))?;
    for op in ops_of(entry) {
        let name = op_name(op);
        if name.starts_with("aie2p.") && name != names::aie2p::TILE_BUFFER {
            command_stream.push(Value::String(printer.text(op)));
        }
        let configures = [
            names::aie2p::LOCK_INIT,
            names::aie2p::ROUTE,
            names::aie2p::PROGRAM_LOAD,
            names::aie2p::CORE_ENABLE,
        ]
        .contains(&name.as_str());
        if configures && stream_started {
            return Err(fail(
                op,
                format!("`{name}` follows the command stream's first transfer; the xdna target configures the array before the command stream runs, so it would run earlier than written"),
            ));
        }
        stream_started |=
            !configures && name != names::aie2p::TILE_BUFFER && name != names::func::RETURN;
        match name.as_str() {
            names::aie2p::TILE_BUFFER => place(&mut tiles, op),
            names::aie2p::LOCK_INIT => {
                let at = tile(op, "tile");
                let kind = kind_of(op, at)?;
                let lock = int(op, "lock");
                configure.push(TxnOp::Write {
                    address: address(op, at, profile.lock_value(kind, lock as u32))?,
                    value: int(op, "value") as u32,
                });
                tiles.entry(at).or_default().locks.push(lock);
            }
            names::aie2p::ROUTE => {
                let (from, to) = (tile(op, "source"), tile(op, "destination"));
                let source = Endpoint {
                    column: from.column,
                    row: from.row,
                    channel: int(op, "source_channel") as u32,
                };
                let destination = Endpoint {
                    column: to.column,
                    row: to.row,
                    channel: int(op, "destination_channel") as u32,
                };
                let settings = route::route(profile, source, destination, &mut used)
                    .map_err(|e| fail(op, e.to_string()))?;
                // The shim mux/demux fields of other channels must stay.
                configure.extend(settings.iter().map(|s| s.txn_op(profile)));
                // A route may cross columns no tile of the design is in.
                routed_columns.extend(settings.iter().map(|s| s.column));
                for s in &settings {
                    let at = Tile::new(s.column, s.row);
                    tiles.entry(at).or_default().switch.push(s.what.clone());
                }
            }
            names::aie2p::PROGRAM_LOAD => {
                let at = tile(op, "coordinates");
                let image = symbol_ref(op, "image").unwrap_or_default();
                let Some(&worker) = symbols.get(&image) else {
                    return Err(fail(op, format!("@{image} is not defined")));
                };
                // The worker's private buffers and stack (its channel
                // storage is the configuration's, placed once).
                for placed in walk(worker)
                    .into_iter()
                    .filter(|&o| op_name(o) == names::aie2p::TILE_BUFFER)
                {
                    place(&mut tiles, placed);
                }
                if kind_of(op, at)? != TileKind::Core {
                    return Err(fail(
                        op,
                        format!("tile {at} has no core to load a program into"),
                    ));
                }
                let (bytes, program) = match options.worker_code {
                    WorkerCode::LowIr => (low_ir_image(&printer, &symbols, worker), vec![]),
                    WorkerCode::Machine => {
                        let locks = profile.limits.lock_value_max;
                        let code = crate::select::compile(&mut programs, worker, at, locks)?;
                        let limit = profile.core_tile.program_memory_bytes;
                        if code.bytes.len() as u64 > limit {
                            return Err(fail(
                                op,
                                format!("@{image}: its machine code is {} bytes; the program memory of tile {at} holds {limit}", code.bytes.len()),
                            ));
                        }
                        let elf = code.elf().map_err(|e| {
                            fail(worker, format!("writing the core ELF of @{image}: {e}"))
                        })?;
                        tiles.entry(at).or_default().machine = Some(MachineCode {
                            bytes: code.bytes.len(),
                            bundles: code.bundles,
                            nop_bundles: code.nop_bundles,
                            frame_bytes: code.frame_bytes,
                        });
                        (elf, program_writes(profile, at, &code.bytes))
                    }
                };
                bring_up.extend(
                    core_bring_up(profile, at, program)
                        .map_err(|e| fail(op, format!("tile {at}: {e}")))?,
                );
                let usage = tiles.entry(at).or_default();
                usage.image = Some((image.clone(), bytes.len()));
                let list = |name| attribute(worker, name).map(dense_i64_values);
                usage.instance = list(instance::SELECTION)
                    .filter(|s| s.len() == 6)
                    .zip(list(instance::INSTANCE).filter(|c| c.len() == 2));
                images.push(TileImage {
                    column: at.column,
                    row: at.row,
                    name: image,
                    bytes,
                });
            }
            names::aie2p::CORE_ENABLE => {
                let at = tile(op, "tile");
                if kind_of(op, at)? != TileKind::Core {
                    return Err(fail(op, format!("tile {at} has no core to enable")));
                }
                enables.push(core_enable(profile, at));
            }
            names::aie2p::DMA_BD => {
                let at = tile(op, "tile");
                let kind = kind_of(op, at)?;
                let regs = profile.tile_registers(kind);
                let own = regs.dma_own_lock_id_base as i64;
                let base = regs
                    .dma_own_memory_address
                    .as_ref()
                    .map_or(0, |h| h.0 as u64);
                let lock = |name: &str, value: &str, sign: i64| {
                    attribute(op, name)
                        .map(|_| ((own + int(op, name)) as u32, (sign * int(op, value)) as i32))
                };
                let bd = BufferDescriptor {
                    address: base + int(op, "offset") as u64,
                    length: int(op, "length") as u32,
                    // Out of range stays out of range: the encoder refuses it.
                    next_bd: attribute(op, "next")
                        .map(|_| u32::try_from(int(op, "next")).unwrap_or(u32::MAX)),
                    valid: true,
                    // Acquire-greater-equal N is written as -N.
                    acquire: lock("acquire_lock", "acquire_value", -1),
                    release: lock("release_lock", "release_value", 1),
                    burst_length: None,
                    iteration: None,
                    dimensions: dimensions(op)?,
                };
                let n = int(op, "bd");
                let words = profile
                    .encode_bd(kind, &bd)
                    .map_err(|e| fail(op, e.to_string()))?;
                stream.push(TxnOp::BlockWrite {
                    address: address(op, at, profile.bd(kind, n as u32))?,
                    words,
                });
                tiles.entry(at).or_default().bds.push(n);
            }
            names::aie2p::SHIM_BD => {
                let at = tile(op, "tile");
                let kind = kind_of(op, at)?;
                let buffer = operands(op)[0];
                let Some(argument) = run_arguments.iter().position(|&a| same_value(a, buffer))
                else {
                    return Err(fail(op, "the buffer must be an argument of the configuration function (a caller's buffer)".into()));
                };
                let offset = int(op, "offset");
                let bd = BufferDescriptor {
                    // The caller's buffer address is added when it is known.
                    address: 0,
                    length: int(op, "length") as u32,
                    next_bd: None,
                    valid: true,
                    acquire: None,
                    release: None,
                    // mlir-aie's default burst: the longest the shim offers
                    // (AIEDialect.cpp getShimBurstLength).
                    burst_length: profile
                        .tile_registers(kind)
                        .bd_layout
                        .burst_length
                        .as_ref()
                        .and_then(|b| b.bytes.iter().copied().max()),
                    iteration: iteration(op)?,
                    dimensions: dimensions(op)?,
                };
                let n = int(op, "bd");
                let words = profile
                    .encode_bd(kind, &bd)
                    .map_err(|e| fail(op, e.to_string()))?;
                let bd_address = address(op, at, profile.bd(kind, n as u32))?;
                patch_ops.push((stream.len(), argument, offset));
                // DDR_PATCH names the runtime buffer by its plain 0-based
                // index, as mlir-aie writes it (AIEDmaToNpu, golden test
                // test/Conversion/DmaToNpu/dma_to_npu.mlir); the +3 is the
                // xclbin kernel-argument numbering that aiebu adds itself
                // when it names relocation symbols
                // (docs/research/configuration-path/findings.md, Q1).
                stream.extend(shim_descriptor(
                    bd_address,
                    words,
                    argument as u32,
                    offset as u64,
                ));
                tiles.entry(at).or_default().bds.push(n);
            }
            names::aie2p::DMA_START => {
                let at = tile(op, "tile");
                let kind = kind_of(op, at)?;
                let dir = direction(op);
                let channel = int(op, "channel");
                let entry = StartQueueEntry {
                    start_bd: int(op, "bd") as u32,
                    runs: attribute(op, "repeat")
                        .map_or(1, |_| u32::try_from(int(op, "repeat")).unwrap_or(u32::MAX)),
                    token_issue: attribute(op, "token").is_some(),
                };
                let value = profile
                    .encode_start_queue(kind, &entry)
                    .map_err(|e| fail(op, e.to_string()))?;
                if entry.token_issue {
                    stream.push(
                        controller_id(profile, kind, at, dir, channel as u32, ids[&at])
                            .map_err(|e| fail(op, format!("tile {at}: {e}")))?,
                    );
                }
                stream.push(TxnOp::Write {
                    address: address(op, at, profile.start_queue(kind, dir, channel as u32))?,
                    value,
                });
                let usage = tiles.entry(at).or_default();
                match dir {
                    Direction::S2mm => usage.s2mm.push(channel),
                    Direction::Mm2s => usage.mm2s.push(channel),
                }
            }
            names::aie2p::DMA_WAIT => {
                let at = tile(op, "tile");
                stream.push(TxnOp::Sync {
                    column: at.column as u8,
                    row: at.row as u8,
                    direction: direction(op),
                    channel: int(op, "channel") as u8,
                    column_count: 1,
                    row_count: 1,
                });
            }
            names::func::RETURN => {}
            other => {
                return Err(fail(
                    op,
                    format!("`{other}` is not a configuration instruction the xdna target encodes"),
                ));
            }
        }
    }
    configure.extend(
        route::token_routes(profile, &ids, &mut used)
            .map_err(|e| fail(function, e.to_string()))?
            .iter()
            .map(|s| s.txn_op(profile)),
    );
    // The partition's width: every column the control code touches, from 0
    // (addresses are absolute; the firmware relocates the partition).
    let columns = tiles
        .keys()
        .chain(&issuers)
        .map(|t| t.column)
        .chain(routed_columns)
        .map(|c| c + 1)
        .max()
        .unwrap_or(1);
    let mut txn = Txn::new(profile, columns).map_err(|e| fail(configuration, e.to_string()))?;
    let empty = [pdi::empty(0), pdi::empty(1)];
    let load = |id: u16| TxnOp::LoadPdi {
        id,
        size: empty[usize::from(id)].len() as u32,
        address: 0,
    };
    txn.ops.push(load(0));
    txn.ops.extend(bring_up);
    txn.ops.extend(configure);
    txn.ops.extend(enables);
    let stream_at = txn.ops.len();
    txn.ops.extend(stream);
    txn.ops.push(load(1));
    let offsets = txn.op_offsets();
    for (index, argument, offset) in patch_ops {
        // The relocation names the BLOCKWRITE's first payload word (BD word 0).
        patches.push(Patch {
            arg_index: argument as u32,
            ctrltext_offset: (offsets[stream_at + index] + 16) as u32,
            schema: PatchSchema::ShimDma48,
            addend: offset as u32,
        });
    }
    // XRT writes each PDI's buffer address into its LOADPDI's words 2-3.
    let last = txn.ops.len() - 1;
    let pdis = empty
        .into_iter()
        .zip([offsets[0], offsets[last]])
        .enumerate()
        .map(|(id, (bytes, at))| Pdi {
            id: id as u16,
            bytes,
            loads: vec![(at + 8) as u32],
        })
        .collect();
    let machine = options.worker_code == WorkerCode::Machine;
    let artifact = Artifact {
        profile: profile.name.clone(),
        columns,
        ctrltext: txn.encode(),
        patches,
        entries: vec![Entry {
            name: root.to_string(),
            args: run_arguments
                .iter()
                .map(|&a| EntryArg {
                    name: value_name(a),
                    kind: ArgKind::Buffer,
                })
                .collect(),
        }],
        tile_images: images,
        pdis,
        // Every image is machine code that passed both checkers (compile
        // refuses any other), or none is.
        device_loadable: machine,
        not_loadable_reason: (!machine).then(|| NOT_LOADABLE.to_string()),
        caveat: machine.then(|| UNVERIFIED.to_string()),
    };
    let report = report(profile, &tiles, command_stream, &txn, &artifact);
    Ok(Built {
        profile,
        txn,
        artifact,
        report,
    })
}

/// The image of a worker as Low IR: a module of its own, the worker and
/// its core context, so a device can parse it alone.
fn low_ir_image(
    printer: &OpPrinter,
    symbols: &BTreeMap<String, MlirOperation>,
    worker: MlirOperation,
) -> Vec<u8> {
    let mut text = String::new();
    let context = symbol_ref(worker, "target").and_then(|t| symbols.get(&t).copied());
    for op in context.into_iter().chain([worker]) {
        text.push_str(&printer.text(op));
        text.push_str("\n\n");
    }
    text.into_bytes()
}

/// The BLOCKWRITE of `code` into the program memory of tile `at` (the
/// last word padded with zeros, past the final `done`).
fn program_writes(profile: &DeviceProfile, at: Tile, code: &[u8]) -> Vec<TxnOp> {
    let words = code
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect();
    let offset = profile.core_tile.program_memory_offset as u32;
    vec![TxnOp::BlockWrite {
        address: profile.tile_address(at.column, at.row, offset) as u32,
        words,
    }]
}

impl Built {
    /// The `.xdna` ELF bytes.
    pub fn elf(&self) -> Result<Vec<u8>, ElfError> {
        elf::write(&self.artifact)
    }
}
