//! The `.xdna` artifact of a native realization, and the target section of
//! the compile report, both rebuilt from the module alone (so a resumed
//! compile of the dumped native module gives the same bytes).
//!
//! The configuration function's instructions become TXN control code in
//! order: lock initial values (WRITE), stream routes (stream-switch WRITEs),
//! core enables, tile buffer descriptors (BLOCKWRITE) and start-queue
//! entries, shim buffer descriptors (BLOCKWRITE, then DDR_PATCH of the
//! caller's buffer address), shim task-queue entries with a completion
//! token, and waits for those tokens (TCT sync). Worker images carry the
//! worker's Low aie2p IR: there is no AIE2P code generator yet, so the
//! artifact and the report say `device_loadable: false`.

use crate::Failure;
use loom_dialects::ir::*;
use loom_targets::xdna::elf::{
    self, ArgKind, Artifact, Entry, EntryArg, Patch, PatchSchema, TileImage,
};
use loom_targets::xdna::regs::{BufferDescriptor, Direction, StartQueueEntry, TileKind};
use loom_targets::xdna::route::{self, Endpoint, Used};
use loom_targets::xdna::txn::{Txn, TxnOp};
use loom_targets::DeviceProfile;
use mlir_sys::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Why tile images cannot run on an NPU yet.
pub const NOT_LOADABLE: &str = "worker tile images carry Low aie2p IR for the simulated devices; \
     the AIE2P code generator does not exist yet";

/// In DDR_PATCH, the xclbin flow counts the instruction buffer arguments
/// (opcode, instructions, instruction count) before the kernel's own
/// (xdna-hardware-facts §4); the ELF flow patches through relocations.
const DDR_PATCH_ARGUMENT_BASE: u32 = 3;

pub struct Built {
    pub profile: &'static DeviceProfile,
    pub txn: Txn,
    pub artifact: Artifact,
    pub report: Value,
}

fn fail(op: MlirOperation, message: String) -> Failure {
    Failure(crate::diagnostic::render(
        &location_text(location(op)),
        "error",
        &message,
        &[],
    ))
}

/// An integer attribute the op's verifier guarantees.
fn int(op: MlirOperation, name: &str) -> i64 {
    int_attribute(op, name).unwrap_or(0)
}

fn tile(op: MlirOperation, name: &str) -> (u32, u32) {
    let t = attribute(op, name)
        .map(dense_i64_values)
        .unwrap_or_default();
    (t[0] as u32, t[1] as u32)
}

fn direction(op: MlirOperation) -> Direction {
    match string_attribute(op, "direction").as_deref() {
        Some("s2mm") => Direction::S2mm,
        _ => Direction::Mm2s,
    }
}

/// Per-tile accounting for the report.
#[derive(Default)]
struct TileUse {
    storage: BTreeMap<(i64, i64), (String, String)>, // (offset, size) -> (role, name)
    locks: Vec<i64>,
    bds: Vec<i64>,
    s2mm: Vec<i64>,
    mm2s: Vec<i64>,
    image: Option<(String, usize)>,
}

/// Record an `aie2p.tile.buffer` in its tile's storage (once per range).
fn place(tiles: &mut BTreeMap<(u32, u32), TileUse>, op: MlirOperation) {
    let role = string_attribute(op, "role").unwrap_or_default();
    tiles.entry(tile(op, "tile")).or_default().storage.insert(
        (int(op, "offset"), int(op, "size")),
        (role, value_name(results(op)[0])),
    );
}

/// Build the artifact of the public configuration function `root`.
pub fn build(module: MlirOperation, root: &str) -> Result<Built, Failure> {
    let root = root.trim_start_matches('@');
    let symbols = symbols(module);
    let Some(&function) = symbols.get(root) else {
        return Err(Failure(format!(
            "loom-compile: error: the native module has no @{root}\n"
        )));
    };
    let context = symbol_ref(function, "target").and_then(|t| symbols.get(&t).copied());
    let configuration = context.filter(|&c| {
        op_name(c) == "aie2p.target"
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
    let mut txn = Txn::new(profile).map_err(|e| fail(configuration, e.to_string()))?;
    // SAFETY: a function's region holds its body block first.
    let entry = unsafe { mlirRegionGetFirstBlock(mlirOperationGetRegion(function, 0)) };
    let run_arguments = arguments(entry);
    let mut patches = Vec::new();
    let mut patch_ops = Vec::new(); // (op index of the BD's BLOCKWRITE, argument, offset)
    let mut used = Used::default();
    let mut tiles: BTreeMap<(u32, u32), TileUse> = BTreeMap::new();
    let mut images = Vec::new();
    let mut command_stream = Vec::new();
    let kind_of = |op: MlirOperation, (c, r): (u32, u32)| {
        profile.tile_kind(c, r).ok_or_else(|| {
            fail(
                op,
                format!("tile [{c}, {r}] is outside the array of {}", profile.name),
            )
        })
    };
    let address = |op: MlirOperation,
                   (c, r): (u32, u32),
                   offset: Result<u32, loom_targets::xdna::regs::RegisterError>| {
        offset
            .map(|o| profile.tile_address(c, r, o) as u32)
            .map_err(|e| fail(op, format!("tile [{c}, {r}]: {e}")))
    };
    for op in ops_of(entry) {
        let name = op_name(op);
        if name.starts_with("aie2p.") && name != "aie2p.tile.buffer" {
            command_stream.push(Value::String(printed(|f, d| unsafe {
                // SAFETY: printing a live op.
                mlirOperationPrint(op, f, d)
            })));
        }
        match name.as_str() {
            "aie2p.tile.buffer" => place(&mut tiles, op),
            "aie2p.lock.init" => {
                let at = tile(op, "tile");
                let kind = kind_of(op, at)?;
                let lock = int(op, "lock");
                txn.ops.push(TxnOp::Write {
                    address: address(op, at, profile.lock_value(kind, lock as u32))?,
                    value: int(op, "value") as u32,
                });
                tiles.entry(at).or_default().locks.push(lock);
            }
            "aie2p.route" => {
                let (from, to) = (tile(op, "source"), tile(op, "destination"));
                let source = Endpoint {
                    column: from.0,
                    row: from.1,
                    channel: int(op, "source_channel") as u32,
                };
                let destination = Endpoint {
                    column: to.0,
                    row: to.1,
                    channel: int(op, "destination_channel") as u32,
                };
                let settings = route::route(profile, source, destination, &mut used)
                    .map_err(|e| fail(op, e.to_string()))?;
                // The shim mux/demux fields of other channels must stay.
                txn.ops.extend(settings.iter().map(|s| s.txn_op(profile)));
            }
            "aie2p.program.load" => {
                let at = tile(op, "coordinates");
                let image = symbol_ref(op, "image").unwrap_or_default();
                let Some(&worker) = symbols.get(&image) else {
                    return Err(fail(op, format!("@{image} is not defined")));
                };
                // The worker's private buffers and stack (its channel
                // storage is the configuration's, placed once).
                for placed in walk(worker)
                    .into_iter()
                    .filter(|&o| op_name(o) == "aie2p.tile.buffer")
                {
                    place(&mut tiles, placed);
                }
                // The image is a module of its own: the worker and its
                // core context, so a device can parse it alone.
                let mut text = String::new();
                let context = symbol_ref(worker, "target").and_then(|t| symbols.get(&t).copied());
                for op in context.into_iter().chain([worker]) {
                    // SAFETY: printing a live op.
                    text.push_str(&printed(|f, d| unsafe { mlirOperationPrint(op, f, d) }));
                    text.push_str("\n\n");
                }
                tiles.entry(at).or_default().image = Some((image.clone(), text.len()));
                images.push(TileImage {
                    column: at.0,
                    row: at.1,
                    name: image,
                    bytes: text.into_bytes(),
                });
            }
            "aie2p.core.enable" => {
                let at = tile(op, "tile");
                txn.ops.push(TxnOp::Write {
                    address: profile.tile_address(at.0, at.1, profile.core_control()) as u32,
                    value: 1,
                });
            }
            "aie2p.dma.bd" => {
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
                };
                let n = int(op, "bd");
                let words = profile
                    .encode_bd(kind, &bd)
                    .map_err(|e| fail(op, e.to_string()))?;
                txn.ops.push(TxnOp::BlockWrite {
                    address: address(op, at, profile.bd(kind, n as u32))?,
                    words,
                });
                tiles.entry(at).or_default().bds.push(n);
            }
            "aie2p.shim.bd" => {
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
                    burst_length: profile
                        .tile_registers(kind)
                        .bd_layout
                        .burst_length
                        .as_ref()
                        .and_then(|b| b.bytes.first().copied()),
                    iteration: None,
                };
                let n = int(op, "bd");
                let words = profile
                    .encode_bd(kind, &bd)
                    .map_err(|e| fail(op, e.to_string()))?;
                let bd_address = address(op, at, profile.bd(kind, n as u32))?;
                patch_ops.push((txn.ops.len(), argument, offset));
                txn.ops.push(TxnOp::BlockWrite {
                    address: bd_address,
                    words,
                });
                txn.ops.push(TxnOp::DdrPatch {
                    address: bd_address + 4,
                    arg_index: argument as u32 + DDR_PATCH_ARGUMENT_BASE,
                    arg_offset: offset as u64,
                });
                tiles.entry(at).or_default().bds.push(n);
            }
            "aie2p.dma.start" => {
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
                txn.ops.push(TxnOp::Write {
                    address: address(op, at, profile.start_queue(kind, dir, channel as u32))?,
                    value,
                });
                let usage = tiles.entry(at).or_default();
                match dir {
                    Direction::S2mm => usage.s2mm.push(channel),
                    Direction::Mm2s => usage.mm2s.push(channel),
                }
            }
            "aie2p.dma.wait" => {
                let at = tile(op, "tile");
                txn.ops.push(TxnOp::Sync {
                    column: at.0 as u8,
                    row: at.1 as u8,
                    direction: direction(op),
                    channel: int(op, "channel") as u8,
                    column_count: 1,
                    row_count: 1,
                });
            }
            "func.return" => {}
            other => {
                return Err(fail(
                    op,
                    format!("`{other}` is not a configuration instruction the xdna target encodes"),
                ));
            }
        }
    }
    let offsets = txn.op_offsets();
    for (index, argument, offset) in patch_ops {
        // The relocation names the BLOCKWRITE's first payload word (BD word 0).
        patches.push(Patch {
            arg_index: argument as u32,
            ctrltext_offset: (offsets[index] + 16) as u32,
            schema: PatchSchema::ShimDma48,
            addend: offset as u32,
        });
    }
    let columns = tiles.keys().map(|&(c, _)| c + 1).max().unwrap_or(1);
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
        device_loadable: false,
        not_loadable_reason: Some(NOT_LOADABLE.to_string()),
    };
    let report = report(profile, &tiles, command_stream, &txn, &artifact);
    Ok(Built {
        profile,
        txn,
        artifact,
        report,
    })
}

/// The ELF bytes of `built`.
pub fn elf_bytes(built: &Built) -> Result<Vec<u8>, Failure> {
    elf::write(&built.artifact)
        .map_err(|e| Failure(format!("loom-compile: error: writing the .xdna ELF: {e}\n")))
}

/// The program of an artifact's tile images (their Low IR), for the cores
/// of the array simulator.
pub fn tile_program(
    session: &crate::Session,
    artifact: &Artifact,
) -> Result<loom_runtime::interp::Program, Failure> {
    let images: String = artifact
        .tile_images
        .iter()
        .map(|i| String::from_utf8_lossy(&i.bytes).into_owned())
        .collect();
    let parsed = session.parse(images.as_bytes(), "<tile images>")?;
    loom_translate::translate(parsed.module.as_operation().to_raw())
        .map_err(|e| Failure(e.render()))
}

/// The `.xdna` bytes `module` compiles to for `root` on `target`
/// (TARGET:PROFILE) with the `config` values: the whole compile pipeline,
/// then the artifact (what loom-test's devices and the simulator bench run).
pub fn compile(
    session: &crate::Session,
    module: &mut melior::ir::Module,
    root: &str,
    target: &str,
    config: &[(String, String)],
) -> Result<Vec<u8>, Failure> {
    let request = crate::compile::Request {
        root,
        target: Some(target),
        config,
        lower: true,
    };
    let steps = crate::compile::plan(&request, module);
    crate::compile::run(session, module, &steps, &mut |_, _| Ok(()))?;
    elf_bytes(&build(module.as_operation().to_raw(), root)?)
}

fn report(
    profile: &DeviceProfile,
    tiles: &BTreeMap<(u32, u32), TileUse>,
    command_stream: Vec<Value>,
    txn: &Txn,
    artifact: &Artifact,
) -> Value {
    let per_tile: Vec<Value> = tiles
        .iter()
        .map(|(&(c, r), usage)| {
            let kind = profile.tile_kind(c, r).unwrap_or(TileKind::Core);
            let budget = profile.budget(kind);
            let bytes = |role: &str| -> i64 {
                usage.storage.iter().filter(|(_, (r, _))| r == role).map(|((_, size), _)| size).sum()
            };
            let end = usage.storage.keys().map(|(offset, size)| offset + size).max().unwrap_or(0);
            let placed: i64 = usage.storage.keys().map(|(_, size)| size).sum();
            let storage: Vec<Value> = usage
                .storage
                .iter()
                .map(|((offset, size), (role, name))| json!({"name": format!("%{name}"), "role": role, "offset": offset, "bytes": size}))
                .collect();
            let distinct = |v: &Vec<i64>| {
                let mut v = v.clone();
                v.sort();
                v.dedup();
                v.len()
            };
            let mut tile = json!({
                "tile": [c, r],
                "kind": kind.name(),
                "storage": storage,
                "authored_channel_storage_bytes": bytes("channel"),
                "private_bytes": bytes("private"),
                "added_by_lowering": {"stack_bytes": bytes("stack"), "slot_cursor_bytes": bytes("cursor"), "alignment_bytes": end - placed},
                "data_memory": {"used_bytes": end, "available_bytes": budget.memory},
                "locks": {"used": distinct(&usage.locks), "available": budget.locks},
                "buffer_descriptors": {"used": distinct(&usage.bds), "available": budget.bds},
                "dma_channels": {"s2mm_used": distinct(&usage.s2mm), "s2mm_available": budget.s2mm, "mm2s_used": distinct(&usage.mm2s), "mm2s_available": budget.mm2s},
            });
            if let Some((image, low_ir_bytes)) = &usage.image {
                tile["worker_image"] = json!({
                    "symbol": format!("@{image}"),
                    "low_ir_bytes": low_ir_bytes,
                    "machine_code_bytes": Value::Null,
                    "program_memory_budget_bytes": profile.core_tile.program_memory_bytes,
                    "fits_budget": Value::Null,
                    "why_unknown": "no AIE2P code generator yet: the image holds Low aie2p IR",
                });
            }
            tile
        })
        .collect();
    json!({
        "profile": profile.name,
        "admission": {
            "admitted": true,
            "device_loadable": artifact.device_loadable,
            "reason": artifact.not_loadable_reason,
        },
        "tiles": per_tile,
        "command_stream": command_stream,
        "txn": {"ops": txn.ops.len(), "bytes": artifact.ctrltext.len()},
        "argument_patches": artifact.patches.iter().map(|p| json!({"argument": p.arg_index, "ctrltext_offset": p.ctrltext_offset, "addend": p.addend})).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Session;
    use loom_runtime::hal::invoke::DDR_AIE_ADDR_OFFSET;
    use loom_runtime::hal::packet::npu_packet;
    use loom_runtime::hal::{Device, FakeDevice};
    use std::time::Duration;

    /// The walkthrough's artifact, compiled for Strix at K = 512 and read
    /// back from its bytes.
    fn walkthrough_artifact() -> Artifact {
        loom_passes::register_all();
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/gated-projection.loom"
        );
        let session = Session::new();
        let source = std::fs::read(path).unwrap();
        let mut module = session.parse(&source, path).unwrap().module;
        let config = vec![("ffn_gate_up.input_size".to_string(), "512".to_string())];
        let bytes = compile(
            &session,
            &mut module,
            "@ffn_gate_up_quadratic_bf16",
            "amd.xdna.aie2p:amd.xdna.strix.17f0_10",
            &config,
        )
        .unwrap();
        elf::read(&bytes).unwrap()
    }

    fn word(code: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(code[at..at + 4].try_into().unwrap())
    }

    /// The compiler's real artifact through the HAL on the recording fake:
    /// today's artifact is refused with its reason before any device call;
    /// marked loadable, its entry's arguments become buffers, each of its
    /// patches lands on a shim descriptor it wrote, and START_NPU carries
    /// the code and the buffers' addresses.
    #[test]
    fn the_walkthrough_artifact_runs_through_the_hal() {
        let artifact = walkthrough_artifact();
        let strix = &loom_targets::profiles()[0];
        let dev = FakeDevice::of_profile(strix);
        let args = vec![vec![1u8; 1024], vec![2u8; 2048], vec![0u8; 4]];
        let timeout = Duration::from_secs(1);
        let refused =
            loom_runtime::hal::run_artifact(&dev, strix, &artifact, b"pdi", args.clone(), timeout)
                .unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!("the artifact is not device-loadable: {NOT_LOADABLE}")
        );
        assert!(dev.calls().is_empty());

        let loadable = Artifact {
            device_loadable: true,
            not_loadable_reason: None,
            ..artifact.clone()
        };
        let out = loom_runtime::hal::run_artifact(
            &dev,
            strix,
            &loadable,
            b"pdi image",
            args.clone(),
            timeout,
        )
        .unwrap();
        // The fake NPU writes nothing: the buffers come back as they went.
        assert_eq!(out, args);
        let sent = dev.submissions();
        let [ctrl, input, weights, output] = sent[0].bos[..] else {
            panic!("{:?}", sent[0].bos);
        };
        let at = |bo| dev.bo_info(bo).unwrap().xdna_addr;
        let code = dev.bo_bytes(ctrl).unwrap();
        assert_eq!(code.len(), artifact.ctrltext.len());
        let packet = npu_packet(
            at(ctrl),
            code.len() as u64,
            &[at(input), at(weights), at(output)],
        );
        assert_eq!(sent[0].packet, packet.unwrap());
        // One patch per shim descriptor, each on the argument its
        // DDR_PATCH names: words 1 and 2 now hold the buffer's address
        // plus the DDR offset (the compiler wrote address 0).
        assert_eq!(artifact.patches.len(), 3);
        let buffers = [at(input), at(weights), at(output)];
        for p in &artifact.patches {
            let site = p.ctrltext_offset as usize;
            assert_eq!(word(&artifact.ctrltext, site + 4), 0);
            let expected =
                buffers[p.arg_index as usize] + u64::from(p.addend) + DDR_AIE_ADDR_OFFSET;
            assert_eq!(u64::from(word(&code, site + 4)), expected & 0xFFFF_FFFC);
            assert_eq!(u64::from(word(&code, site + 8) & 0xFFFF), expected >> 32);
        }
        let ddr_patches: Vec<u32> = Txn::decode(&code)
            .unwrap()
            .ops
            .iter()
            .filter_map(|op| match op {
                TxnOp::DdrPatch { arg_index, .. } => Some(*arg_index),
                _ => None,
            })
            .collect();
        let mut patched: Vec<u32> = artifact
            .patches
            .iter()
            .map(|p| p.arg_index + DDR_PATCH_ARGUMENT_BASE)
            .collect();
        patched.sort_unstable();
        let mut named = ddr_patches.clone();
        named.sort_unstable();
        assert_eq!(named, patched);
    }
}
