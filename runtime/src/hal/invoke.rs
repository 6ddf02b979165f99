//! One run of a Loom `.xdna` artifact (what `loom-test --device=xdna` calls):
//! admit it for the NPU, make a device buffer per argument, apply the ELF's
//! argument patches to its control code on the host, load, submit, wait,
//! read the buffers back.
//!
//! The patches are XRT's ELF flow for aie2p (Xilinx/XRT
//! `src/runtime_src/core/common/api`): `xrt_elf.cpp` takes each `.rela.dyn`
//! entry of an ELF whose ABI version is not 1 as r_offset into `.ctrltext`,
//! r_type the schema and r_addend an offset into the buffer;
//! `elf_patcher.cpp` `symbol_patcher::patch_symbol` then calls
//! - `patch_shim48(ctrltext + r_offset, address + r_addend)` for
//!   `shim_dma_48`: BD words 1 and 2 read as a 48-bit address (word 2's low
//!   16 bits high), plus the value plus 0x8000_0000 ("originated from NPU
//!   firmware": the NPU's view of host memory), written back as word 1 with
//!   its low two bits cleared and word 2's low half, its high half kept;
//! - `patch64` for `address_64`: the address in two words, low first;
//! - `patch32` for `scalar_32`: the word's bits under the symbol's mask
//!   replaced (Loom writes an all-ones mask);
//!
//! the last two without the addend. The address is `xrt::bo::address()`;
//! here, the buffer's device address `Bo::at`.
//!
//! DDR_PATCH ops stay in the control code. aiebu, which makes XRT's ELFs
//! from TXN (Xilinx/aiebu `aie2_blob_preprocessor_input.cpp` `process_txn`),
//! turns each DDR_PATCH into a `shim_dma_48` relocation at the BD its
//! BLOCKWRITE wrote, clears that BD's address bits and leaves the op where
//! it is; XRT then patches the BD on the host. What the firmware does with
//! the op in an ELF's control code is not public (XRT's ELF flow sends it no
//! buffer addresses: `xrt_kernel.cpp` `initialize_command` keeps only the
//! first 64-bit argument), so keeping it is XRT's behaviour, unverified.
//!
//! Two ways to load, by what the artifact carries:
//! - With PDIs (`.pdi.<id>` sections, loaded by LOADPDI ops in its code),
//!   the artifact runs as XRT's full-ELF flow runs such an ELF (Xilinx/XRT
//!   @963c58ee): a hardware context of the partition's columns with no
//!   compute unit configured (amd/xdna-driver @856409ca `src/shim/hwctx.cpp`,
//!   `kmq/hwctx.cpp`: the `partition_size` constructors send no CONFIG_CU),
//!   one DEV buffer per PDI holding its bytes (`xrt_module.cpp`
//!   `create_instruction_buf`: `create_bo(..., use_type::pdi)`, filled and
//!   synced), each LOADPDI's address words set to its PDI buffer's device
//!   address with `patch64` (the plain address: no DDR offset, unlike
//!   `shim_dma_48`), and ERT_START_NPU_PREEMPT_ELF (`xrt_elf.cpp`
//!   `get_ert_opcode`: any `.pdi` section picks it). No firmware image is
//!   taken, and none may be given.
//!   xdna-driver sends that opcode only when the firmware has its
//!   AIE2_PREEMPT feature (`aie2_message.c` `aie2_cmdlist_fill_slot`, else
//!   EOPNOTSUPP); the refusal happens after EXEC_CMD, in the driver's
//!   scheduler, and leaves the command in state NEW (`aie2_ctx.c`
//!   `aie2_sched_job_run`), which `run_artifact` reports as
//!   `PreemptElfNotSent`.
//! - Without PDIs, the reference's way: the context's compute unit is
//!   configured with a firmware image the caller gives (an xclbin's AIE
//!   partition, `xclbin`; `loom-test --firmware`), and the code runs as a
//!   START_NPU packet, which the driver sends as MSG_OP_EXEC_DPU for the
//!   compute unit its CU mask names (linux `aie2_message.c`
//!   `aie2_execbuf`). Without an image the run is refused with
//!   `NoFirmware`.

use super::context::{Bo, Context, ContextConfig, ContextError, ControlCode, ErrorKind};
use super::device::{check_geometry, device_info, Device, GeometryMismatch};
use super::ioctl::HalError;
use super::uapi::ErtState;
use loom_targets::xdna::elf::{Artifact, Patch, PatchSchema, Pdi};
use loom_targets::xdna::txn::{Txn, TxnOp};
use loom_targets::DeviceProfile;
use rustix::io::Errno;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

/// What a shim DMA adds to a host address (XRT elf_patcher.cpp
/// `get_ddr_aie_addr_offset`).
pub const DDR_AIE_ADDR_OFFSET: u64 = 0x8000_0000;

/// Why a run of an artifact did not happen or did not complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InvokeError {
    /// Compiled for another profile than the NPU's.
    ProfileMismatch {
        artifact: String,
        npu: String,
    },
    /// Marked `device_loadable: false`, with the artifact's reason.
    NotLoadable {
        reason: String,
    },
    /// Not exactly one entry (a file `elf::read` accepts has one).
    Entries(usize),
    /// Not as many argument buffers as the entry has arguments.
    Arguments {
        entry: String,
        expected: usize,
        given: usize,
    },
    /// A partition of no columns, or wider than the NPU.
    Columns {
        columns: u32,
        available: u32,
    },
    /// A device buffer holds at least one byte.
    EmptyArgument {
        index: usize,
    },
    Patch(PatchError),
    /// An artifact without PDIs and no firmware image for the context's
    /// compute unit.
    NoFirmware,
    /// A firmware image given for an artifact that carries its own PDIs
    /// (their ids).
    FirmwareWithPdis {
        pdis: Vec<u16>,
    },
    /// A PDI's buffer could not be made.
    Pdi {
        id: u16,
        error: ContextError,
    },
    /// The driver left the START_NPU_PREEMPT_ELF command unsent (state NEW
    /// once its point was reached).
    PreemptElfNotSent {
        cmd: u32,
    },
    /// A GET_INFO query failed.
    Query(HalError),
    /// The NPU's array is not the one its profile describes.
    Geometry(GeometryMismatch),
    /// The wait for the run reached the timeout (ETIME).
    TimedOut {
        timeout: Duration,
    },
    /// A library call failed (it names its kernel call, or the command's
    /// end state); `argument` is the buffer it was made for.
    Context {
        argument: Option<usize>,
        error: ContextError,
    },
}

impl fmt::Display for InvokeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvokeError::ProfileMismatch { artifact, npu } => write!(
                f,
                "the artifact was compiled for {artifact}, but the NPU is {npu}"
            ),
            InvokeError::NotLoadable { reason } => {
                write!(f, "the artifact is not device-loadable: {reason}")
            }
            InvokeError::Entries(n) => {
                write!(f, "the artifact has {n} entries; a run takes exactly one")
            }
            InvokeError::Arguments {
                entry,
                expected,
                given,
            } => write!(f, "{entry} takes {expected} buffers, {given} given"),
            InvokeError::Columns { columns, available } => write!(
                f,
                "a partition of {columns} columns does not fit the NPU's {available}"
            ),
            InvokeError::EmptyArgument { index } => write!(
                f,
                "argument {index} is empty: a device buffer needs at least one byte"
            ),
            InvokeError::Patch(e) => write!(f, "{e}"),
            InvokeError::NoFirmware => write!(
                f,
                "the artifact carries no PDI (.pdi.<id> section) and no firmware image \
                 was given: a START_NPU run needs a compute unit configured with one"
            ),
            InvokeError::FirmwareWithPdis { pdis } => {
                let names: Vec<String> = pdis.iter().map(|id| format!(".pdi.{id}")).collect();
                write!(
                    f,
                    "a firmware image was given, but the artifact carries its own PDIs ({}), \
                     which its control code loads",
                    names.join(", ")
                )
            }
            InvokeError::Pdi { id, error } => write!(f, "PDI .pdi.{id}: {error}"),
            InvokeError::PreemptElfNotSent { cmd } => write!(
                f,
                "the driver did not send command {cmd} (ERT_START_NPU_PREEMPT_ELF, opcode 22) \
                 to the firmware: it is still NEW after its run ended. xdna-driver refuses \
                 this opcode with EOPNOTSUPP when the firmware lacks the AIE2_PREEMPT feature \
                 (firmware protocol 6.12 or later on Strix and Strix Halo), and a driver \
                 that does not know the opcode refuses it the same way (see the kernel log); \
                 an artifact that carries PDIs runs only with it"
            ),
            InvokeError::Query(e) => write!(f, "querying the NPU: {e}"),
            InvokeError::Geometry(e) => write!(f, "{e}"),
            InvokeError::TimedOut { timeout } => {
                write!(f, "the run did not finish within {timeout:?}")
            }
            InvokeError::Context {
                argument: Some(i),
                error,
            } => write!(f, "argument {i}: {error}"),
            InvokeError::Context {
                argument: None,
                error,
            } => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for InvokeError {}

/// An argument patch that cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchError {
    /// The patch names an argument the entry does not have.
    NoArgument { index: u32, arguments: usize },
    /// The words the schema rewrites are unaligned or past the code's end.
    Site {
        schema: PatchSchema,
        offset: u32,
        code_len: usize,
    },
    /// A PDI's load that is not the address of a LOADPDI op of that PDI
    /// (`found`: the op's first word, `8 | id << 16` in one).
    NotLoadPdi { id: u16, offset: u32, found: u32 },
    /// LOADPDI ops of PDI `id` that no `.pdi.<id>` relocation patches: the
    /// firmware would load a PDI at address 0.
    UnpatchedLoadPdi { id: u16, ops: usize, loads: usize },
    /// Control code that does not decode as TXN, so its LOADPDI ops cannot
    /// be checked.
    NotTxn(String),
    /// A LOADPDI whose size word is not its PDI's size: the firmware would
    /// read another length than the buffer holds.
    PdiSize {
        id: u16,
        offset: u32,
        op_size: u32,
        pdi_size: usize,
    },
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatchError::NoArgument { index, arguments } => write!(
                f,
                "a patch names argument {index}, but the entry has {arguments}"
            ),
            PatchError::Site {
                schema,
                offset,
                code_len,
            } => write!(
                f,
                "the {schema:?} patch at {offset:#x} is unaligned or overruns the \
                 control code ({code_len} bytes)"
            ),
            PatchError::NotLoadPdi { id, offset, found } => write!(
                f,
                "the load of .pdi.{id} at {offset:#x} is not the address of a LOADPDI of \
                 that PDI (the op's first word is {found:#010x}, not {:#010x})",
                load_pdi_word(*id)
            ),
            PatchError::UnpatchedLoadPdi { id, ops, loads } => write!(
                f,
                "the control code has {ops} LOADPDI ops of PDI {id}, but {loads} .pdi.{id} \
                 relocations: the others would load a PDI at address 0"
            ),
            PatchError::NotTxn(e) => write!(f, "the control code is not TXN: {e}"),
            PatchError::PdiSize {
                id,
                offset,
                op_size,
                pdi_size,
            } => write!(
                f,
                "the LOADPDI of .pdi.{id} at {offset:#x} says {op_size} bytes, but the PDI \
                 holds {pdi_size}"
            ),
        }
    }
}

impl std::error::Error for PatchError {}

/// The words a schema rewrites (XRT elf_patcher.cpp `required_patch_bytes`).
fn patch_words(schema: PatchSchema) -> usize {
    match schema {
        PatchSchema::ShimDma48 => 3,
        PatchSchema::Address64 => 2,
        PatchSchema::Scalar32 => 1,
    }
}

/// The byte offset `patch` rewrites, checked against code of `code_len`
/// bytes and an entry of `arguments` buffers.
fn site(patch: &Patch, code_len: usize, arguments: usize) -> Result<usize, PatchError> {
    if patch.arg_index as usize >= arguments {
        return Err(PatchError::NoArgument {
            index: patch.arg_index,
            arguments,
        });
    }
    let at = patch.ctrltext_offset as usize;
    let fits = at
        .checked_add(4 * patch_words(patch.schema))
        .is_some_and(|end| end <= code_len);
    if !at.is_multiple_of(4) || !fits {
        return Err(PatchError::Site {
            schema: patch.schema,
            offset: patch.ctrltext_offset,
            code_len,
        });
    }
    Ok(at)
}

fn word(code: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    if let Some(bytes) = at.checked_add(4).and_then(|end| code.get(at..end)) {
        w.copy_from_slice(bytes);
    }
    u32::from_le_bytes(w)
}

fn set_word(code: &mut [u8], at: usize, value: u32) {
    if let Some(bytes) = at.checked_add(4).and_then(|end| code.get_mut(at..end)) {
        bytes.copy_from_slice(&value.to_le_bytes());
    }
}

/// The first word of a LOADPDI op of PDI `id` (aie-rt `XAie_LoadPdiHdr`:
/// opcode 8, a pad byte, the 16-bit id).
fn load_pdi_word(id: u16) -> u32 {
    8 | u32::from(id) << 16
}

/// Checks that each load of `pdi` is the address of a LOADPDI op of that
/// PDI in `code` and that the op's size is the PDI's; returns the offsets
/// of the address words.
fn pdi_loads(pdi: &Pdi, code: &[u8]) -> Result<Vec<usize>, PatchError> {
    let mut sites = Vec::with_capacity(pdi.loads.len());
    for &offset in &pdi.loads {
        let at = offset as usize;
        let fits = at
            .checked_add(4 * patch_words(PatchSchema::Address64))
            .is_some_and(|end| end <= code.len());
        if !at.is_multiple_of(4) || !fits {
            return Err(PatchError::Site {
                schema: PatchSchema::Address64,
                offset,
                code_len: code.len(),
            });
        }
        // The op's first word and its size word come before the address.
        let found = at.checked_sub(8).map_or(0, |op| word(code, op));
        if at < 8 || found != load_pdi_word(pdi.id) {
            return Err(PatchError::NotLoadPdi {
                id: pdi.id,
                offset,
                found,
            });
        }
        let op_size = word(code, at - 4);
        if op_size as usize != pdi.bytes.len() {
            return Err(PatchError::PdiSize {
                id: pdi.id,
                offset,
                op_size,
                pdi_size: pdi.bytes.len(),
            });
        }
        sites.push(at);
    }
    Ok(sites)
}

/// Checks that every LOADPDI op in `artifact`'s code is one a `.pdi.<id>`
/// relocation patches (`pdi_loads` checked that each relocation lands on
/// one): `elf::read` refuses a relocation naming a PDI the file lacks, but
/// not an op no relocation names.
fn all_loads_patched(artifact: &Artifact) -> Result<(), PatchError> {
    let txn = Txn::decode(&artifact.ctrltext).map_err(|e| PatchError::NotTxn(e.to_string()))?;
    let mut ops = BTreeMap::<u16, usize>::new();
    for op in &txn.ops {
        if let TxnOp::LoadPdi { id, .. } = op {
            *ops.entry(*id).or_default() += 1;
        }
    }
    for (id, ops) in ops {
        let loads = artifact
            .pdis
            .iter()
            .find(|p| p.id == id)
            .map_or(0, |p| p.loads.iter().collect::<BTreeSet<_>>().len());
        if ops > loads {
            return Err(PatchError::UnpatchedLoadPdi { id, ops, loads });
        }
    }
    Ok(())
}

/// Writes each PDI's buffer address (`addresses`, one per PDI) into the
/// address words of its LOADPDI ops, as XRT's `patch64` does: low word
/// first, nothing added.
pub fn patch_pdi_loads(code: &mut [u8], pdis: &[Pdi], addresses: &[u64]) -> Result<(), PatchError> {
    for (pdi, &address) in pdis.iter().zip(addresses) {
        for at in pdi_loads(pdi, code)? {
            set_word(code, at, address as u32);
            set_word(code, at + 4, (address >> 32) as u32);
        }
    }
    Ok(())
}

/// `code` with each patch applied for buffers at `addresses` (one per
/// argument), in order, as XRT's `patch_symbol` applies them.
pub fn patch_control_code(
    code: &[u8],
    patches: &[Patch],
    addresses: &[u64],
) -> Result<Vec<u8>, PatchError> {
    let mut out = code.to_vec();
    for p in patches {
        // `site` checked the argument and that the words are in `out`.
        let at = site(p, out.len(), addresses.len())?;
        let address = addresses.get(p.arg_index as usize).copied().unwrap_or(0);
        match p.schema {
            PatchSchema::ShimDma48 => {
                // Unsigned C++ arithmetic: wraps rather than failing.
                let (low, high) = (word(&out, at + 4), word(&out, at + 8));
                let held = u64::from(high & 0xFFFF) << 32 | u64::from(low);
                let patched = held
                    .wrapping_add(address.wrapping_add(u64::from(p.addend)))
                    .wrapping_add(DDR_AIE_ADDR_OFFSET);
                set_word(&mut out, at + 4, patched as u32 & 0xFFFF_FFFC);
                set_word(
                    &mut out,
                    at + 8,
                    (high & 0xFFFF_0000) | (patched >> 32) as u32,
                );
            }
            PatchSchema::Address64 => {
                set_word(&mut out, at, address as u32);
                set_word(&mut out, at + 4, (address >> 32) as u32);
            }
            PatchSchema::Scalar32 => set_word(&mut out, at, address as u32),
        }
    }
    Ok(out)
}

/// The checks made before any device call.
fn admit(
    npu_profile: &DeviceProfile,
    artifact: &Artifact,
    args: &[Vec<u8>],
) -> Result<(), InvokeError> {
    if artifact.profile != npu_profile.name {
        return Err(InvokeError::ProfileMismatch {
            artifact: artifact.profile.clone(),
            npu: npu_profile.name.clone(),
        });
    }
    if !artifact.device_loadable {
        let reason = artifact.not_loadable_reason.clone().unwrap_or_default();
        return Err(InvokeError::NotLoadable { reason });
    }
    let [entry] = artifact.entries.as_slice() else {
        return Err(InvokeError::Entries(artifact.entries.len()));
    };
    if args.len() != entry.args.len() {
        return Err(InvokeError::Arguments {
            entry: entry.name.clone(),
            expected: entry.args.len(),
            given: args.len(),
        });
    }
    let available = npu_profile.array.columns;
    if artifact.columns == 0 || artifact.columns > available {
        return Err(InvokeError::Columns {
            columns: artifact.columns,
            available,
        });
    }
    if let Some(index) = args.iter().position(Vec::is_empty) {
        return Err(InvokeError::EmptyArgument { index });
    }
    for p in &artifact.patches {
        site(p, artifact.ctrltext.len(), args.len()).map_err(InvokeError::Patch)?;
    }
    for pdi in &artifact.pdis {
        pdi_loads(pdi, &artifact.ctrltext).map_err(InvokeError::Patch)?;
    }
    all_loads_patched(artifact).map_err(InvokeError::Patch)
}

fn context(argument: Option<usize>) -> impl Fn(ContextError) -> InvokeError {
    move |error| InvokeError::Context { argument, error }
}

/// What a failed run's error says: the wait's timeout, the driver leaving
/// a START_NPU_PREEMPT_ELF command unsent, or the library call's error.
fn run_error(timeout: Duration, preempt_elf: bool) -> impl Fn(ContextError) -> InvokeError {
    move |error| match &error.kind {
        ErrorKind::Kernel(e)
            if e.call == "SYNCOBJ_TIMELINE_WAIT" && e.errno == Errno::TIME.raw_os_error() =>
        {
            InvokeError::TimedOut { timeout }
        }
        ErrorKind::NotCompleted {
            cmd,
            state: ErtState::New,
        } if preempt_elf => InvokeError::PreemptElfNotSent { cmd: *cmd },
        _ => InvokeError::Context {
            argument: None,
            error,
        },
    }
}

/// Runs `artifact` once on `device` with one buffer per argument holding
/// `args`, and returns the buffers as the run left them. An artifact that
/// carries PDIs loads them itself (START_NPU_PREEMPT_ELF) and takes no
/// `firmware`; one without runs on a compute unit configured with
/// `firmware` (a PDI), which must then not be empty.
pub fn run_artifact<D: Device>(
    device: &D,
    npu_profile: &DeviceProfile,
    artifact: &Artifact,
    firmware: &[u8],
    mut args: Vec<Vec<u8>>,
    timeout: Duration,
) -> Result<Vec<Vec<u8>>, InvokeError> {
    admit(npu_profile, artifact, &args)?;
    let full_elf = !artifact.pdis.is_empty();
    if full_elf && !firmware.is_empty() {
        let pdis = artifact.pdis.iter().map(|p| p.id).collect();
        return Err(InvokeError::FirmwareWithPdis { pdis });
    }
    if !full_elf && firmware.is_empty() {
        return Err(InvokeError::NoFirmware);
    }
    // The artifact's tiles were placed on the profile's array: it must be
    // the NPU's, and the context's tile count follows the NPU's core rows.
    let info = device_info(device).map_err(InvokeError::Query)?;
    check_geometry(npu_profile, &info.metadata).map_err(InvokeError::Geometry)?;
    let sized = if full_elf {
        ContextConfig::partition
    } else {
        ContextConfig::columns
    };
    let config = ContextConfig {
        timeout,
        ..sized(&info.metadata, artifact.columns)
    };
    // Dropping the context on an early return destroys it.
    let ctx = Context::open(device, config).map_err(context(None))?;
    let mut buffers = Vec::with_capacity(args.len());
    for (i, data) in args.iter().enumerate() {
        let bo = ctx.buffer(data.len() as u64).map_err(context(Some(i)))?;
        ctx.upload(&bo, data, 0).map_err(context(Some(i)))?;
        buffers.push(bo);
    }
    let addresses: Vec<u64> = buffers.iter().map(|b| b.at).collect();
    let mut bytes = patch_control_code(&artifact.ctrltext, &artifact.patches, &addresses)
        .map_err(InvokeError::Patch)?;
    let ran = if full_elf {
        let mut pdis: Vec<Bo> = Vec::with_capacity(artifact.pdis.len());
        for pdi in &artifact.pdis {
            let bo = ctx
                .pdi(&pdi.bytes)
                .map_err(|error| InvokeError::Pdi { id: pdi.id, error })?;
            pdis.push(bo);
        }
        let at: Vec<u64> = pdis.iter().map(|b| b.at).collect();
        patch_pdi_loads(&mut bytes, &artifact.pdis, &at).map_err(InvokeError::Patch)?;
        let program = ctx.load_elf(&bytes).map_err(context(None))?;
        // XRT sends the first argument only; the driver reads none.
        program.run(addresses.first().copied().unwrap_or(0), &buffers)
    } else {
        let program = ctx
            .load_code(firmware, &ControlCode { bytes, elf: true })
            .map_err(context(None))?;
        program.run(&addresses, &buffers)
    };
    ran.map_err(run_error(timeout, full_elf))?;
    for (i, (bo, data)) in buffers.iter().zip(args.iter_mut()).enumerate() {
        ctx.download_into(bo, data, 0).map_err(context(Some(i)))?;
    }
    ctx.close().map_err(context(None))?;
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hal::device::{BoKind, SyncDirection};
    use crate::hal::fake::{Call, FakeDevice};
    use crate::hal::ioctl::HalError;
    use crate::hal::packet::npu_packet;
    use crate::hal::packet::preempt_elf_packet;
    use crate::hal::uapi::ErtState;
    use loom_targets::xdna::elf::{self, ArgKind, ElfError, Entry, EntryArg};
    use loom_targets::xdna::pdi::empty as empty_pdi;

    const FIRMWARE: &[u8] = b"a partition image of whole words";
    const TIMEOUT: Duration = Duration::from_secs(3);
    /// Word 2 of each descriptor: its high half is not address and stays.
    const BD_WORD_2: u32 = 0xABCD_0000;

    fn strix() -> &'static DeviceProfile {
        &loom_targets::profiles()[0]
    }

    /// Per argument, the compiler's shim transfer without its queue push:
    /// a BLOCKWRITE of shim BD n of tile (0, 0) (0x1D000 + 0x20 n, facts
    /// §3) holding address 0, then DDR_PATCH of its word 1 with the plain
    /// argument index, as the compiler writes it; with `pdis`, framed by
    /// `LOADPDI 0` and `LOADPDI 1` as the compiler frames a self-contained
    /// artifact. Returns the code, each descriptor's offset in it (the
    /// BLOCKWRITE payload, after four header words) and each LOADPDI's
    /// address words' offset (after two words).
    fn framed_code(pdis: bool) -> (Vec<u8>, Vec<u32>, Vec<u32>) {
        let mut txn = Txn::new(strix(), 1).unwrap();
        let load = |id| TxnOp::LoadPdi {
            id,
            size: empty_pdi(id).len() as u32,
            address: 0,
        };
        if pdis {
            txn.ops.push(load(0));
        }
        for arg in 0..2u32 {
            let bd = 0x1D000 + 0x20 * arg;
            let words = vec![16, 0, BD_WORD_2, 0, 0, 0, 0, 1 << 25];
            txn.ops.push(TxnOp::BlockWrite { address: bd, words });
            txn.ops.push(TxnOp::DdrPatch {
                address: bd + 4,
                arg_index: arg,
                arg_offset: 0,
            });
        }
        if pdis {
            txn.ops.push(load(1));
        }
        let offsets = txn.op_offsets();
        let mut sites = vec![];
        let mut loads = vec![];
        for (op, &at) in txn.ops.iter().zip(&offsets) {
            match op {
                TxnOp::BlockWrite { .. } => sites.push(at as u32 + 16),
                TxnOp::LoadPdi { .. } => loads.push(at as u32 + 8),
                _ => {}
            }
        }
        (txn.encode(), sites, loads)
    }

    fn code() -> (Vec<u8>, Vec<u32>) {
        let (code, sites, _) = framed_code(false);
        (code, sites)
    }

    /// A loadable artifact as `elf::read` gives it back from its file:
    /// argument 0 read from byte 16, argument 1 from byte 0; with `pdis`,
    /// carrying `.pdi.0` and `.pdi.1` for its two LOADPDI ops.
    fn artifact_with(pdis: bool) -> Artifact {
        let (ctrltext, sites, loads) = framed_code(pdis);
        let patch = |arg_index, addend| Patch {
            arg_index,
            ctrltext_offset: sites[arg_index as usize],
            schema: PatchSchema::ShimDma48,
            addend,
        };
        let arg = |name: &str| EntryArg {
            name: name.into(),
            kind: ArgKind::Buffer,
        };
        let pdis = loads
            .iter()
            .zip(0..)
            .map(|(&at, id)| Pdi {
                id,
                bytes: empty_pdi(id),
                loads: vec![at],
            })
            .collect();
        let written = Artifact {
            profile: strix().name.clone(),
            columns: 1,
            ctrltext,
            patches: vec![patch(0, 16), patch(1, 0)],
            entries: vec![Entry {
                name: "scale".into(),
                args: vec![arg("input"), arg("output")],
            }],
            tile_images: vec![],
            pdis,
            device_loadable: true,
            not_loadable_reason: None,
            caveat: None,
        };
        elf::read(&elf::write(&written).unwrap()).unwrap()
    }

    fn artifact() -> Artifact {
        artifact_with(false)
    }

    fn args() -> Vec<Vec<u8>> {
        vec![(0..80).collect(), vec![0xEE; 64]]
    }

    fn run(dev: &FakeDevice, timeout: Duration) -> Result<Vec<Vec<u8>>, InvokeError> {
        run_artifact(dev, strix(), &artifact(), FIRMWARE, args(), timeout)
    }

    /// A fake Strix NPU.
    fn npu() -> FakeDevice {
        FakeDevice::of_profile(strix())
    }

    /// The library call (and buffer) each kernel call of a run is made for;
    /// `None` for the GET_INFO queries made before any.
    fn phases() -> Vec<Option<(&'static str, Option<usize>)>> {
        let mut out = vec![None; 3];
        let mut calls = vec![("open", None); 4];
        for i in 0..2 {
            calls.extend([("buffer", Some(i)); 4]);
            calls.push(("upload", Some(i)));
        }
        let mut out_calls = calls;
        out_calls.extend([("load", None); 14]);
        out_calls.extend([("run", None); 2]);
        out_calls.extend([("download_into", Some(0)), ("download_into", Some(1))]);
        out_calls.push(("close", None));
        out.extend(out_calls.into_iter().map(Some));
        out
    }

    fn position(calls: &[Call], wanted: impl Fn(&Call) -> bool) -> usize {
        calls.iter().position(wanted).unwrap()
    }

    #[test]
    fn a_loadable_artifact_runs_with_its_control_code_patched() {
        let dev = npu();
        let out = run(&dev, TIMEOUT).unwrap();
        // The fake NPU writes nothing: the buffers come back as uploaded.
        assert_eq!(out, args());
        #[rustfmt::skip]
        let expected = [
            "GET_INFO(AIE_VERSION)", "GET_INFO(FIRMWARE_VERSION)", "GET_INFO(AIE_METADATA)",
            "CREATE_BO", "GET_BO_INFO", "mmap", "CREATE_HWCTX",
            "CREATE_BO", "GET_BO_INFO", "mmap", "SYNC_BO", "SYNC_BO", // argument 0
            "CREATE_BO", "GET_BO_INFO", "mmap", "SYNC_BO", "SYNC_BO", // argument 1
            "CREATE_BO", "GET_BO_INFO", "SYNC_BO", // firmware
            "CREATE_BO", "GET_BO_INFO", "SYNC_BO", // control code
            "CONFIG_HWCTX",
            "CREATE_BO", "GET_BO_INFO", "SYNC_BO", "CONFIG_HWCTX", // debug
            "CREATE_BO", "GET_BO_INFO", "mmap", // command
            "EXEC_CMD", "SYNCOBJ_TIMELINE_WAIT",
            "SYNC_BO", "SYNC_BO",
            "DESTROY_HWCTX",
        ];
        assert_eq!(dev.call_names(), expected);
        assert_eq!(phases().len(), expected.len());
        let calls = dev.calls();
        // One column of the four core rows GET_INFO reports; the argument
        // buffers are SHMEM buffers; the wait has the caller's timeout.
        assert!(matches!(calls[6], Call::CreateHwctx { num_tiles: 4, .. }));
        for at in [7, 12] {
            assert!(matches!(
                calls[at],
                Call::CreateBo {
                    kind: BoKind::Shmem,
                    ..
                }
            ));
        }
        let wait = position(&calls, |c| matches!(c, Call::WaitSyncobj { .. }));
        assert!(matches!(
            calls[wait],
            Call::WaitSyncobj {
                timeout: TIMEOUT,
                ..
            }
        ));
        let sent = dev.submissions();
        let [ctrl, input, output] = sent[0].bos[..] else {
            panic!("{:?}", sent[0].bos);
        };
        // Each buffer read back after a sync from the device, whole.
        let read_back = &calls[wait + 1..wait + 3];
        for (call, (bo, len)) in read_back.iter().zip([(input, 80), (output, 64)]) {
            let expected = Call::SyncBo {
                bo,
                direction: SyncDirection::FromDevice,
                offset: 0,
                size: len,
            };
            assert_eq!(call, &expected);
        }
        assert!(sent[0].untouched.is_empty());
        // Under PASID a SHMEM buffer's device address is its address here.
        let at = |bo| dev.bo_info(bo).unwrap().xdna_addr;
        assert_eq!(at(input), dev.bo_info(input).unwrap().vaddr);
        let loaded = dev.bo_bytes(ctrl).unwrap();
        let packet = npu_packet(at(ctrl), loaded.len() as u64, &[at(input), at(output)]);
        assert_eq!(sent[0].packet, packet.unwrap());
        // Words 1 and 2 of each descriptor hold its buffer's address plus
        // the addend plus the DDR offset; every other byte is as compiled.
        let (mut expected, sites) = code();
        for (site, address) in sites.iter().zip([at(input) + 16, at(output)]) {
            let shim = address + DDR_AIE_ADDR_OFFSET;
            let at = *site as usize;
            expected[at + 4..at + 8].copy_from_slice(&(shim as u32).to_le_bytes());
            let high = BD_WORD_2 | (shim >> 32) as u32;
            expected[at + 8..at + 12].copy_from_slice(&high.to_le_bytes());
        }
        assert_eq!(loaded, expected);
        // Bits 32-47 of the process address (the fake maps at 0x7f12_...)
        // land in word 2's low half.
        assert_eq!(word(&loaded, sites[1] as usize + 8), 0xABCD_7F12);
        // The DDR_PATCH ops are still there, as aiebu leaves them.
        let ops = Txn::decode(&loaded).unwrap().ops;
        let patches = ops.iter().filter(|op| matches!(op, TxnOp::DdrPatch { .. }));
        assert_eq!(patches.count(), 2);
    }

    #[test]
    fn refusals_come_before_any_device_call() {
        let good = artifact();
        let halo = &loom_targets::profiles()[1];
        let mut unloadable = good.clone();
        unloadable.device_loadable = false;
        unloadable.not_loadable_reason = Some("no AIE2P code generator yet".into());
        let unloadable = elf::read(&elf::write(&unloadable).unwrap()).unwrap();
        let changed = |change: fn(&mut Artifact)| {
            let mut a = good.clone();
            change(&mut a);
            a
        };
        let wide = changed(|a| a.columns = 9);
        let none = changed(|a| a.columns = 0);
        let entryless = changed(|a| a.entries.clear());
        let overrun = changed(|a| a.patches[1].ctrltext_offset = a.ctrltext.len() as u32 - 8);
        let unaligned = changed(|a| a.patches[0].ctrltext_offset += 2);
        let stray = changed(|a| a.patches[1].arg_index = 2);
        let one = vec![vec![1u8; 4]];
        let hollow = vec![vec![1u8; 4], vec![]];
        let code_len = good.ctrltext.len();
        let site = |offset| {
            InvokeError::Patch(PatchError::Site {
                schema: PatchSchema::ShimDma48,
                offset,
                code_len,
            })
        };
        let cases: [(&Artifact, &DeviceProfile, Vec<Vec<u8>>, InvokeError); 11] = [
            (
                &good,
                halo,
                args(),
                InvokeError::ProfileMismatch {
                    artifact: "amd.xdna.strix.17f0_10".into(),
                    npu: "amd.xdna.strix_halo.17f0_11".into(),
                },
            ),
            (
                &unloadable,
                strix(),
                args(),
                InvokeError::NotLoadable {
                    reason: "no AIE2P code generator yet".into(),
                },
            ),
            (&entryless, strix(), args(), InvokeError::Entries(0)),
            (
                &good,
                strix(),
                one,
                InvokeError::Arguments {
                    entry: "scale".into(),
                    expected: 2,
                    given: 1,
                },
            ),
            (
                &wide,
                strix(),
                args(),
                InvokeError::Columns {
                    columns: 9,
                    available: 8,
                },
            ),
            (
                &none,
                strix(),
                args(),
                InvokeError::Columns {
                    columns: 0,
                    available: 8,
                },
            ),
            (
                &good,
                strix(),
                hollow,
                InvokeError::EmptyArgument { index: 1 },
            ),
            (&overrun, strix(), args(), site(code_len as u32 - 8)),
            (
                &unaligned,
                strix(),
                args(),
                site(good.patches[0].ctrltext_offset + 2),
            ),
            (
                &stray,
                strix(),
                args(),
                InvokeError::Patch(PatchError::NoArgument {
                    index: 2,
                    arguments: 2,
                }),
            ),
            (&good, strix(), args(), InvokeError::NoFirmware),
        ];
        for (artifact, profile, args, expected) in cases {
            let dev = npu();
            let e = run_artifact(&dev, profile, artifact, &[], args, TIMEOUT).unwrap_err();
            assert_eq!(e, expected);
            assert!(dev.calls().is_empty(), "{e}");
        }
        let text = |e: InvokeError| e.to_string();
        let mismatch = text(InvokeError::ProfileMismatch {
            artifact: good.profile.clone(),
            npu: halo.name.clone(),
        });
        assert_eq!(
            mismatch,
            "the artifact was compiled for amd.xdna.strix.17f0_10, but the NPU is \
             amd.xdna.strix_halo.17f0_11"
        );
        let reason = InvokeError::NotLoadable {
            reason: "no AIE2P code generator yet".into(),
        };
        assert_eq!(
            text(reason),
            "the artifact is not device-loadable: no AIE2P code generator yet"
        );
        assert!(text(InvokeError::NoFirmware).contains("no PDI (.pdi.<id> section)"));
        assert!(text(site(0x40)).contains("ShimDma48 patch at 0x40"));
    }

    /// Each kernel call of a run, failing in turn, surfaces with its name,
    /// the library call it was made for and the buffer it was for; the
    /// context is destroyed on the way out.
    #[test]
    fn every_failed_device_call_is_a_typed_error() {
        let names = {
            let dev = npu();
            run(&dev, TIMEOUT).unwrap();
            dev.call_names()
        };
        assert_eq!(names.len(), phases().len());
        let hwctx = names.iter().position(|&n| n == "CREATE_HWCTX").unwrap();
        for (index, (name, phase)) in names.iter().zip(phases()).enumerate() {
            let dev = npu();
            dev.fail_at(index, Errno::IO);
            let e = run(&dev, TIMEOUT).unwrap_err();
            let failed = HalError::new(name, Errno::IO.raw_os_error());
            let Some((call, argument)) = phase else {
                assert_eq!(e, InvokeError::Query(failed), "call {index}");
                assert_eq!(
                    e.to_string(),
                    format!("querying the NPU: {name} failed: EIO (Input/output error)")
                );
                continue;
            };
            let error = ContextError {
                call,
                kind: ErrorKind::Kernel(failed),
            };
            assert_eq!(e, InvokeError::Context { argument, error }, "call {index}");
            let shown = e.to_string();
            assert!(
                shown.contains(&format!("{call}: {name} failed: EIO")),
                "{shown}"
            );
            assert_eq!(shown.starts_with("argument "), argument.is_some());
            // Once CREATE_HWCTX succeeded, the context goes with the error.
            if index > hwctx {
                assert_eq!(dev.call_names().last(), Some(&"DESTROY_HWCTX"));
            }
        }
    }

    #[test]
    fn a_command_that_ends_in_error_is_reported_as_such() {
        let dev = npu();
        dev.complete_next_with(ErtState::Error);
        let e = run(&dev, TIMEOUT).unwrap_err();
        let cmd = dev.submissions()[0].cmd;
        let error = ContextError {
            call: "run",
            kind: ErrorKind::CommandError { cmd },
        };
        assert_eq!(
            e,
            InvokeError::Context {
                argument: None,
                error
            }
        );
        assert_eq!(e.to_string(), format!("run: command {cmd} ended in ERROR"));
        // Nothing is read back from a failed run; the context is released.
        let names = dev.call_names();
        assert_eq!(
            names[names.len() - 2..],
            ["SYNCOBJ_TIMELINE_WAIT", "DESTROY_HWCTX"]
        );
    }

    #[test]
    fn a_wait_past_its_timeout_is_a_timeout() {
        let dev = npu();
        let timeout = Duration::from_millis(250);
        dev.fail_next("SYNCOBJ_TIMELINE_WAIT", Errno::TIME);
        let e = run(&dev, timeout).unwrap_err();
        assert_eq!(e, InvokeError::TimedOut { timeout });
        assert_eq!(e.to_string(), "the run did not finish within 250ms");
        let calls = dev.calls();
        assert!(
            matches!(calls[calls.len() - 2], Call::WaitSyncobj { timeout: t, .. } if t == timeout)
        );
        assert!(matches!(calls[calls.len() - 1], Call::DestroyHwctx { .. }));
        // ETIME from another call is that call's failure, not the run's
        // timeout.
        let dev = npu();
        dev.fail_next("EXEC_CMD", Errno::TIME);
        let e = run(&dev, timeout).unwrap_err();
        assert!(
            matches!(e, InvokeError::Context { argument: None, .. }),
            "{e}"
        );
        assert!(
            e.to_string().starts_with("run: EXEC_CMD failed: ETIME"),
            "{e}"
        );
    }

    #[test]
    fn an_npu_whose_array_is_not_the_profiles_is_refused_before_its_heap() {
        let dev = npu();
        // What Strix reports if the firmware gave the context half the array.
        let mut dev = dev;
        dev.metadata.cols = 4;
        let e = run(&dev, TIMEOUT).unwrap_err();
        let InvokeError::Geometry(mismatch) = &e else {
            panic!("{e}");
        };
        assert_eq!(mismatch.differences, ["columns 4, profile 8"]);
        assert!(
            e.to_string().contains("profile amd.xdna.strix.17f0_10"),
            "{e}"
        );
        assert_eq!(dev.calls().len(), 3);
    }

    /// Each CREATE_BO with the handle the GET_BO_INFO right after it asks
    /// about (every buffer the HAL makes is looked up at once).
    fn created(calls: &[Call]) -> Vec<(u64, BoKind, u32)> {
        calls
            .windows(2)
            .filter_map(|pair| match pair {
                [Call::CreateBo { size, kind }, Call::BoInfo { bo }] => Some((*size, *kind, *bo)),
                _ => None,
            })
            .collect()
    }

    fn run_full(dev: &FakeDevice) -> Result<Vec<Vec<u8>>, InvokeError> {
        run_artifact(dev, strix(), &artifact_with(true), &[], args(), TIMEOUT)
    }

    /// A library call, and the buffer or PDI it was made for.
    type Phase = (&'static str, Option<usize>, Option<u16>);

    /// The kernel calls of a run of an artifact with PDIs, and the
    /// library call each is made for (`None`: GET_INFO, before any).
    fn full_phases() -> Vec<(&'static str, Option<Phase>)> {
        let mut out: Vec<_> = ["GET_INFO(AIE_VERSION)", "GET_INFO(FIRMWARE_VERSION)"]
            .into_iter()
            .chain(["GET_INFO(AIE_METADATA)"])
            .map(|n| (n, None))
            .collect();
        let open = ["CREATE_BO", "GET_BO_INFO", "mmap", "CREATE_HWCTX"];
        out.extend(open.map(|n| (n, Some(("open", None, None)))));
        for i in 0..2 {
            let buffer = ["CREATE_BO", "GET_BO_INFO", "mmap", "SYNC_BO"];
            out.extend(buffer.map(|n| (n, Some(("buffer", Some(i), None)))));
            out.push(("SYNC_BO", Some(("upload", Some(i), None))));
        }
        let placed = ["CREATE_BO", "GET_BO_INFO", "SYNC_BO"];
        for id in 0..2 {
            out.extend(placed.map(|n| (n, Some(("pdi", None, Some(id))))));
        }
        out.extend(placed.map(|n| (n, Some(("load", None, None)))));
        let command = ["CREATE_BO", "GET_BO_INFO", "mmap"];
        out.extend(command.map(|n| (n, Some(("load", None, None)))));
        let run = ["EXEC_CMD", "SYNCOBJ_TIMELINE_WAIT"];
        out.extend(run.map(|n| (n, Some(("run", None, None)))));
        for i in 0..2 {
            out.push(("SYNC_BO", Some(("download_into", Some(i), None))));
        }
        out.push(("DESTROY_HWCTX", Some(("close", None, None))));
        out
    }

    /// An artifact that carries PDIs runs as XRT's full-ELF flow runs it:
    /// no firmware image, a context of its partition with nothing
    /// configured, a DEV buffer per PDI holding its bytes, each LOADPDI
    /// holding its own PDI buffer's address, START_NPU_PREEMPT_ELF.
    #[test]
    fn an_artifact_with_pdis_runs_as_preempt_elf_without_firmware() {
        let artifact = artifact_with(true);
        assert_eq!(artifact.pdis.len(), 2);
        let dev = npu();
        let out = run_full(&dev).unwrap();
        assert_eq!(out, args());
        let expected: Vec<&str> = full_phases().iter().map(|(n, _)| *n).collect();
        // No CONFIG_HWCTX at all: no CU, no debug buffer.
        assert_eq!(dev.call_names(), expected);
        let calls = dev.calls();
        // The partition's one column of four core rows, no ops figure.
        let hwctx = position(&calls, |c| matches!(c, Call::CreateHwctx { .. }));
        assert!(matches!(
            calls[hwctx],
            Call::CreateHwctx {
                max_opc: 0,
                num_tiles: 4,
                ..
            }
        ));
        let bos = created(&calls);
        let kinds: Vec<(u64, BoKind)> = bos.iter().map(|&(size, kind, _)| (size, kind)).collect();
        let code_len = artifact.ctrltext.len() as u64;
        assert_eq!(
            kinds,
            [
                (64 << 20, BoKind::DevHeap),
                (80, BoKind::Shmem),
                (64, BoKind::Shmem),
                (368, BoKind::Dev), // .pdi.0
                (368, BoKind::Dev), // .pdi.1
                (code_len, BoKind::Dev),
                (4096, BoKind::Cmd),
            ]
        );
        let (pdi0, pdi1, ctrl) = (bos[3].2, bos[4].2, bos[5].2);
        let at = |bo| dev.bo_info(bo).unwrap().xdna_addr;
        // What the device has of each PDI buffer is its PDI, whole.
        assert_eq!(dev.synced_bytes(pdi0).unwrap(), empty_pdi(0));
        assert_eq!(dev.synced_bytes(pdi1).unwrap(), empty_pdi(1));
        assert_ne!(at(pdi0), at(pdi1));
        let sent = dev.submissions();
        let [sent_ctrl, input, output] = sent[0].bos[..] else {
            panic!("{:?}", sent[0].bos);
        };
        assert_eq!(sent_ctrl, ctrl);
        // The code the device has: the argument patches as before, and
        // each LOADPDI's address words its own PDI buffer's address, low
        // word first, nothing added.
        let mut expected = patch_control_code(
            &artifact.ctrltext,
            &artifact.patches,
            &[at(input), at(output)],
        )
        .unwrap();
        for (pdi, bo) in artifact.pdis.iter().zip([pdi0, pdi1]) {
            let site = pdi.loads[0] as usize;
            assert_eq!(word(&artifact.ctrltext, site), 0);
            expected[site..site + 4].copy_from_slice(&(at(bo) as u32).to_le_bytes());
            expected[site + 4..site + 8].copy_from_slice(&((at(bo) >> 32) as u32).to_le_bytes());
        }
        assert_eq!(dev.synced_bytes(ctrl).unwrap(), expected);
        let ops = Txn::decode(&expected).unwrap().ops;
        let load = |id, bo| TxnOp::LoadPdi {
            id,
            size: 368,
            address: at(bo),
        };
        assert_eq!(ops.first(), Some(&load(0, pdi0)));
        assert_eq!(ops.last(), Some(&load(1, pdi1)));
        // Opcode 22, the preempt head (the code's address and size, no
        // save or restore code), then argument 0's address only.
        let packet = preempt_elf_packet(at(ctrl), code_len, at(input)).unwrap();
        assert_eq!(sent[0].packet, packet);
        let header = u32::from_le_bytes(packet[..4].try_into().unwrap());
        assert_eq!(header >> 23, 22);
        assert_eq!(word(&packet, 8), at(ctrl) as u32);
        assert_eq!(word(&packet, 32), code_len as u32);
        assert!(sent[0].untouched.is_empty());
    }

    #[test]
    fn the_driver_refusing_preempt_elf_is_reported_as_such() {
        let mut dev = npu();
        dev.preempt = false;
        let e = run_full(&dev).unwrap_err();
        let cmd = dev.submissions()[0].cmd;
        assert_eq!(e, InvokeError::PreemptElfNotSent { cmd });
        let shown = e.to_string();
        for part in [
            "ERT_START_NPU_PREEMPT_ELF, opcode 22",
            "still NEW",
            "EOPNOTSUPP",
            "AIE2_PREEMPT",
        ] {
            assert!(shown.contains(part), "{shown}");
        }
        // Nothing is read back; the context is released.
        let names = dev.call_names();
        assert_eq!(
            names[names.len() - 2..],
            ["SYNCOBJ_TIMELINE_WAIT", "DESTROY_HWCTX"]
        );
        // Without PDIs the same NPU runs START_NPU as before.
        let mut dev = npu();
        dev.preempt = false;
        run(&dev, TIMEOUT).unwrap();
    }

    #[test]
    fn every_failed_call_of_a_preempt_elf_run_is_a_typed_error() {
        let phases = full_phases();
        for (index, (name, phase)) in phases.iter().enumerate() {
            let dev = npu();
            dev.fail_at(index, Errno::IO);
            let e = run_full(&dev).unwrap_err();
            let failed = HalError::new(name, Errno::IO.raw_os_error());
            let Some((call, argument, pdi)) = *phase else {
                assert_eq!(e, InvokeError::Query(failed), "call {index}");
                continue;
            };
            let error = ContextError {
                call,
                kind: ErrorKind::Kernel(failed),
            };
            let expected = match pdi {
                Some(id) => InvokeError::Pdi { id, error },
                None => InvokeError::Context { argument, error },
            };
            assert_eq!(e, expected, "call {index}");
            if let Some(id) = pdi {
                assert!(
                    e.to_string()
                        .starts_with(&format!("PDI .pdi.{id}: pdi: {name} failed: EIO")),
                    "{e}"
                );
            }
        }
    }

    /// What is wrong with a PDI-carrying artifact is found before any
    /// device call.
    #[test]
    fn pdi_refusals_come_before_any_device_call() {
        let good = artifact_with(true);
        let load1 = good.pdis[1].loads[0];
        let code_len = good.ctrltext.len();
        let changed = |change: &dyn Fn(&mut Artifact)| {
            let mut a = good.clone();
            change(&mut a);
            a
        };
        let patch = InvokeError::Patch;
        let cases = [
            // Its load aimed at PDI 1's LOADPDI.
            (
                changed(&|a| a.pdis[0].loads[0] = load1),
                patch(PatchError::NotLoadPdi {
                    id: 0,
                    offset: load1,
                    found: 8 | 1 << 16,
                }),
            ),
            (
                changed(&|a| a.pdis[1].bytes.extend([0; 4])),
                patch(PatchError::PdiSize {
                    id: 1,
                    offset: load1,
                    op_size: 368,
                    pdi_size: 372,
                }),
            ),
            (
                changed(&|a| a.pdis[0].loads[0] = code_len as u32 - 4),
                patch(PatchError::Site {
                    schema: PatchSchema::Address64,
                    offset: code_len as u32 - 4,
                    code_len,
                }),
            ),
            // The closing LOADPDI 1 with no .pdi.1 to patch it from.
            (
                changed(&|a| a.pdis.truncate(1)),
                patch(PatchError::UnpatchedLoadPdi {
                    id: 1,
                    ops: 1,
                    loads: 0,
                }),
            ),
            (
                changed(&|a| a.ctrltext[0] = 9),
                patch(PatchError::NotTxn(
                    Txn::decode(&[&[9], &good.ctrltext[1..]].concat())
                        .unwrap_err()
                        .to_string(),
                )),
            ),
        ];
        for (artifact, expected) in cases {
            let dev = npu();
            let e = run_artifact(&dev, strix(), &artifact, &[], args(), TIMEOUT).unwrap_err();
            assert_eq!(e, expected);
            assert!(dev.calls().is_empty(), "{e}");
        }
        // An artifact with PDIs takes no firmware image.
        let dev = npu();
        let e = run_artifact(&dev, strix(), &good, FIRMWARE, args(), TIMEOUT).unwrap_err();
        assert_eq!(e, InvokeError::FirmwareWithPdis { pdis: vec![0, 1] });
        assert!(dev.calls().is_empty());
        assert!(
            e.to_string().contains("its own PDIs (.pdi.0, .pdi.1)"),
            "{e}"
        );
        // A file without .pdi.1 still reads (nothing relocates the op);
        // admission names the op no relocation patches.
        let bare = elf::read(&elf::write(&changed(&|a| a.pdis.truncate(1))).unwrap()).unwrap();
        let e = run_artifact(&npu(), strix(), &bare, &[], args(), TIMEOUT).unwrap_err();
        assert!(
            e.to_string()
                .contains("1 LOADPDI ops of PDI 1, but 0 .pdi.1 relocations"),
            "{e}"
        );
        let aimed = PatchError::NotLoadPdi {
            id: 0,
            offset: load1,
            found: 8 | 1 << 16,
        };
        assert!(
            aimed
                .to_string()
                .contains("first word is 0x00010008, not 0x00000008"),
            "{aimed}"
        );
    }

    /// A relocation naming a PDI the file lacks never reaches the HAL:
    /// `elf::read` refuses the file.
    #[test]
    fn a_load_of_a_pdi_the_file_lacks_is_refused_by_elf_read() {
        let mut bytes = elf::write(&artifact_with(true)).unwrap();
        let sections = elf::sections(&bytes).unwrap();
        let name = sections.iter().find(|s| s.name == b".pdi.1").unwrap().name;
        // Renaming the section leaves the relocation's symbol .pdi.1.
        let at = name.as_ptr() as usize - bytes.as_ptr() as usize;
        bytes[at + 5] = b'7';
        assert_eq!(
            elf::read(&bytes).unwrap_err(),
            ElfError::BadRelocation("a LOADPDI names .pdi.1, which the file lacks".into())
        );
    }

    fn words(values: &[u32]) -> Vec<u8> {
        values.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// XRT adds to what the descriptor words hold, carries into word 2,
    /// keeps word 2's high half and clears word 1's low two bits; the
    /// other schemas store the address without the addend.
    #[test]
    fn each_schema_is_patched_as_xrt_patches_it() {
        let code = words(&[0xAAAA_AAAA, 0xFFFF_FFF0, 0xBEEF_0002, 0x1234_5678, !0, !0]);
        let patch = |arg_index, ctrltext_offset, schema, addend| Patch {
            arg_index,
            ctrltext_offset,
            schema,
            addend,
        };
        let patches = [
            patch(0, 0, PatchSchema::ShimDma48, 0x20),
            patch(1, 12, PatchSchema::Scalar32, 0),
            patch(1, 16, PatchSchema::Address64, 0),
        ];
        let addresses = [0x1_2345_6789, 0xDEAD_BEEF_0000_1000];
        let patched = patch_control_code(&code, &patches, &addresses).unwrap();
        // 0x2_FFFF_FFF0 + 0x1_2345_6789 + 0x20 + 0x8000_0000 = 0x4_A345_6799.
        let expected = [
            0xAAAA_AAAA,
            0xA345_6798,
            0xBEEF_0004,
            0x0000_1000,
            0x0000_1000,
            0xDEAD_BEEF,
        ];
        assert_eq!(patched, words(&expected));
        // Overflow wraps as XRT's unsigned arithmetic does.
        assert!(patch_control_code(&code, &patches[..1], &[u64::MAX]).is_ok());
        let site = |offset| PatchError::Site {
            schema: PatchSchema::ShimDma48,
            offset,
            code_len: 24,
        };
        for offset in [2, 16, u32::MAX] {
            let bad = [patch(0, offset, PatchSchema::ShimDma48, 0)];
            assert_eq!(
                patch_control_code(&code, &bad, &addresses),
                Err(site(offset))
            );
        }
        assert_eq!(
            patch_control_code(&code, &patches, &addresses[..1]),
            Err(PatchError::NoArgument {
                index: 1,
                arguments: 1
            })
        );
    }
}
