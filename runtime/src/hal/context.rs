//! The runtime library of the reference (`open`, `more`, `buffer`,
//! `upload`, `download`, `load`, `command`, `code`, `another`, `run`,
//! `submit`, `finish`, `debugOf`, `close`) over any `Device`.
//!
//! The order of the kernel calls is the driver's:
//! - `open`: the device heap (a 64 MiB DEV_HEAP buffer) is created and
//!   mapped before CREATE_HWCTX, which fails with ENOENT without it (linux
//!   aie2_ctx.c `aie2_hwctx_init`); `more` adds a context on the same heap.
//! - A run's buffers (`buffer`) are SHMEM buffers, each mapped on its own,
//!   as XRT makes its data buffers (xdna-driver `src/shim/buffer.cpp`
//!   `bo_flags_to_type`: AMDXDNA_BO_SHARE). Their device address is the one
//!   GET_BO_INFO reports, or else their address in this process, XRT's rule
//!   (`buffer::paddr`): with the IOMMU's PASID the NPU works in this
//!   process's address space, and the driver reports no address for a
//!   buffer not yet mapped (`amdxdna_gem_dev_addr`). Firmware images,
//!   control code and debug buffers are DEV buffers carved from the heap
//!   and reached through its mapping, as XRT places instruction buffers
//!   (the driver takes firmware and debug buffers only from the heap).
//! - Every page of a new buffer is written before any run (the NPU's writes
//!   to a page the process never touched are lost, per the reference), and
//!   each host write is followed by SYNC_BO to the device, each read
//!   preceded by SYNC_BO from the device, both from byte 0 (the reference's
//!   request has no offset) through the last byte copied.
//! - `load`: firmware and control code into DEV buffers, CONFIG_CU with the
//!   firmware's buffer (CU 0; the driver takes DEV buffers only, once per
//!   context), a DEV debug buffer (ASSIGN_DBG_BUF), then a mapped CMD buffer.
//! - `submit`: the packet into the command buffer, then EXEC_CMD with the
//!   control code's and the run's buffers; `finish` waits on the context's
//!   syncobj timeline (WAIT_FOR_SUBMIT) and only then reads each command's
//!   header state: COMPLETED is success, ERROR, ABORT and TIMEOUT are their
//!   own errors, anything else is a command that did not finish.
//!
//! A full ELF that carries PDIs runs as XRT's ELF flow runs one
//! (`load_elf`, `ElfProgram`): a context sized by the partition
//! (`ContextConfig::partition`), no CONFIG_CU and no debug buffer, each PDI
//! in a DEV buffer of its own (`pdi`), the control code submitted as
//! START_NPU_PREEMPT_ELF.
//!
//! An instruction list runs as a START_CU packet and an ELF's `.ctrltext`
//! as a START_NPU packet (`packet`). A Loom `.xdna` ELF is read with
//! `loom_targets::xdna::elf::read` and refused when not device-loadable;
//! other ELFs (XRT's) only have their `.ctrltext` taken. `load` applies no
//! argument relocations: `invoke` patches a Loom artifact's control code on
//! the host, as XRT does, and loads it with `load_code`.
//!
//! Buffers are never freed one by one (there is no GEM close here): the
//! kernel releases them with the descriptor, as the reference's `close` says.

use super::device::{BoInfo, BoKind, BoMap, Device, Hwctx, SyncDirection};
use super::ioctl::{check_range, HalError, OutOfRange};
use super::packet::{npu_packet, preempt_elf_packet, start_packet, PacketError};
use super::uapi::{AieMetadata, CuConfig, ErtHeader, ErtState, QosInfo, INVALID_ADDR};
use loom_targets::xdna::elf::{self, ElfError};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

/// The device heap. xdna-driver takes DEV_HEAP buffers in multiples of the
/// device memory size (64 MiB, facts §6); upstream takes at most that size:
/// 64 MiB suits both.
pub const HEAP_SIZE: u64 = 64 << 20;
/// Where the heap is mapped: at a multiple of 64 MiB, as XRT maps it
/// (xdna-driver `src/shim/kmq/pcidev.cpp` `heap_page_size` as the heap's
/// alignment). The driver gives the firmware the heap's user address
/// (aie2_hwctx.c `aie2_map_host_buf`); XRT's earlier shim said the heap
/// "must align at 64MB boundary".
pub const HEAP_ALIGN: usize = 64 << 20;
/// Other mappings go wherever the kernel puts them (any page).
const ANY_PAGE: usize = 1;
/// A command buffer: one page holds any packet `packet` writes.
pub const COMMAND_SIZE: u64 = 4096;
/// The debug buffer a loaded program writes (a Loom choice: one page).
pub const DEBUG_SIZE: u64 = 4096;
/// The operations per cycle mlir-aie's xclbins declare (aie_partition.json
/// "operations_per_cycle": "2048"), which XRT passes as `max_opc`.
pub const MAX_OPC: u32 = 2048;
/// The CU function of a DPU kernel (xclbin.h `FC_DPU`).
pub const CU_FUNC_DPU: u8 = 0;
/// Zeroes written per copy when a buffer's pages are touched.
const ZERO_CHUNK: usize = 64 << 10;

/// What CREATE_HWCTX asks for, and how long a run may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextConfig {
    pub qos: QosInfo,
    pub max_opc: u32,
    /// Core tiles: columns x core rows, as XRT computes it.
    pub num_tiles: u32,
    /// How long `finish` waits for a point.
    pub timeout: Duration,
}

impl ContextConfig {
    /// A context of `columns` columns of the NPU GET_INFO describes: the
    /// driver divides the tile count by the core rows its metadata reports
    /// (aie2_ctx.c `aie2_hwctx_init`: `num_tiles / metadata.core.row_count`).
    pub fn columns(metadata: &AieMetadata, columns: u32) -> ContextConfig {
        ContextConfig {
            qos: QosInfo::default(),
            max_opc: MAX_OPC,
            num_tiles: columns.saturating_mul(u32::from(metadata.core.row_count)),
            timeout: Duration::from_secs(10),
        }
    }

    /// The context XRT's ELF flow opens for a full ELF: its partition's
    /// columns and no operations-per-cycle figure (amd/xdna-driver
    /// @856409ca `src/shim/hwctx.cpp`, the `partition_size` constructor:
    /// `m_col_cnt = partition_size`, `m_ops_per_cycle = 0`, then
    /// `num_tiles = n_cols * core_rows`). The driver computes its own
    /// figure from the columns (aie2_ctx.c `aie2_ctx_init`).
    pub fn partition(metadata: &AieMetadata, columns: u32) -> ContextConfig {
        ContextConfig {
            max_opc: 0,
            ..ContextConfig::columns(metadata, columns)
        }
    }
}

/// A failed library call: which one, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextError {
    /// The library call (`open`, `load`, `run`, ...).
    pub call: &'static str,
    pub kind: ErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A kernel call failed (it names itself and its errno).
    Kernel(HalError),
    /// A copy outside a buffer.
    Range(OutOfRange),
    /// The driver placed a buffer where the heap mapping does not reach.
    OutsideHeap {
        bo: u32,
        vaddr: u64,
        size: u64,
    },
    /// A SHMEM buffer this context did not map (a `Bo` is plain data).
    NotMapped {
        bo: u32,
    },
    /// A zero-sized buffer, firmware image or control code.
    Empty(&'static str),
    Packet(PacketError),
    Code(CodeError),
    /// The command finished in state ERROR.
    CommandError {
        cmd: u32,
    },
    /// The command finished in state ABORT.
    CommandAborted {
        cmd: u32,
    },
    /// The command finished in state TIMEOUT.
    CommandTimedOut {
        cmd: u32,
    },
    /// The point was reached but the command is in another state.
    NotCompleted {
        cmd: u32,
        state: ErtState,
    },
}

impl fmt::Display for ContextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.call)?;
        match &self.kind {
            ErrorKind::Kernel(e) => write!(f, "{e}"),
            ErrorKind::Range(e) => write!(f, "{e}"),
            ErrorKind::OutsideHeap { bo, vaddr, size } => write!(
                f,
                "buffer {bo} ({size} bytes at {vaddr:#x}) is outside the mapped device heap"
            ),
            ErrorKind::NotMapped { bo } => {
                write!(f, "buffer {bo} is not a buffer this context mapped")
            }
            ErrorKind::Empty(what) => write!(f, "the {what} is empty"),
            ErrorKind::Packet(e) => write!(f, "{e}"),
            ErrorKind::Code(e) => write!(f, "{e}"),
            ErrorKind::CommandError { cmd } => write!(f, "command {cmd} ended in ERROR"),
            ErrorKind::CommandAborted { cmd } => write!(f, "command {cmd} was aborted"),
            ErrorKind::CommandTimedOut { cmd } => write!(f, "command {cmd} timed out"),
            ErrorKind::NotCompleted { cmd, state } => {
                write!(f, "command {cmd} is in state {state:?}, not COMPLETED")
            }
        }
    }
}

impl std::error::Error for ContextError {}

fn fail(call: &'static str) -> impl Fn(ErrorKind) -> ContextError {
    move |kind| ContextError { call, kind }
}

fn kernel(call: &'static str) -> impl Fn(HalError) -> ContextError {
    move |e| ContextError {
        call,
        kind: ErrorKind::Kernel(e),
    }
}

fn range(call: &'static str) -> impl Fn(OutOfRange) -> ContextError {
    move |e| ContextError {
        call,
        kind: ErrorKind::Range(e),
    }
}

/// Why control code cannot be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CodeError {
    /// An instruction list that is not whole 32-bit words.
    NotWords(usize),
    /// An ELF that is not 32-bit little-endian.
    NotElf32 {
        class: u8,
        data: u8,
    },
    /// Headers, tables or names that do not parse.
    Malformed(String),
    NoCtrlText,
    /// A Loom `.xdna` file that does not read back.
    Loom(ElfError),
    /// A Loom `.xdna` file that must not be sent to a device, and why.
    NotLoadable(String),
    /// A Loom `.xdna` file whose control code needs the caller's buffer
    /// addresses patched in first (`invoke` does that); loading it as it
    /// is would run its descriptors at address 0.
    NeedsPatches(usize),
}

impl fmt::Display for CodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodeError::NotWords(len) => write!(
                f,
                "an instruction list of {len} bytes is not whole 32-bit words"
            ),
            CodeError::NotElf32 { class, data } => write!(
                f,
                "ELF class {class}, data encoding {data}: not a 32-bit little-endian ELF"
            ),
            CodeError::Malformed(what) => write!(f, "malformed ELF: {what}"),
            CodeError::NoCtrlText => write!(f, "the ELF has no .ctrltext section"),
            CodeError::Loom(e) => write!(f, "{e}"),
            CodeError::NotLoadable(why) => write!(f, "the .xdna file is not loadable: {why}"),
            CodeError::NeedsPatches(n) => write!(
                f,
                "the .xdna file's control code has {n} argument patches to apply first: run it with hal::run_artifact"
            ),
        }
    }
}

impl std::error::Error for CodeError {}

/// Control code as `load` and `code` take it: the bytes the NPU runs and
/// whether they came from an ELF (which picks the START_NPU packet).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlCode {
    pub bytes: Vec<u8>,
    pub elf: bool,
}

const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// The sections of a 32-bit little-endian ELF, as `elf::sections` reads
/// them, its errors as the HAL names them.
fn sections(data: &[u8]) -> Result<Vec<elf::AnySection<'_>>, CodeError> {
    elf::sections(data).map_err(|e| match e {
        ElfError::WrongClass(_) | ElfError::WrongEndian(_) => CodeError::NotElf32 {
            class: data[4],
            data: data[5],
        },
        ElfError::Malformed(what) => CodeError::Malformed(what),
        other => CodeError::Malformed(other.to_string()),
    })
}

/// The `.ctrltext` section of a 32-bit ELF, or `None` when `data` is not an
/// ELF (the reference's `ctrlText`).
pub fn ctrl_text(data: &[u8]) -> Result<Option<Vec<u8>>, CodeError> {
    if !data.starts_with(ELF_MAGIC) {
        return Ok(None);
    }
    let found = sections(data)?
        .into_iter()
        .find_map(|s| s.data.filter(|_| s.name == b".ctrltext"))
        .ok_or(CodeError::NoCtrlText)?;
    Ok(Some(found.to_vec()))
}

/// Reads control code: an instruction list as it is, a Loom `.xdna` file
/// through `elf::read` (refused when not device-loadable), another ELF's
/// `.ctrltext`.
pub fn control_code(data: &[u8]) -> Result<ControlCode, CodeError> {
    if !data.starts_with(ELF_MAGIC) {
        if !data.len().is_multiple_of(4) {
            return Err(CodeError::NotWords(data.len()));
        }
        return Ok(ControlCode {
            bytes: data.to_vec(),
            elf: false,
        });
    }
    // Loom's own files say so with their `.note.loom` section.
    if sections(data)?.iter().any(|s| s.name == b".note.loom") {
        let artifact = elf::read(data).map_err(CodeError::Loom)?;
        if !artifact.device_loadable {
            let why = artifact.not_loadable_reason.unwrap_or_default();
            return Err(CodeError::NotLoadable(why));
        }
        if !artifact.patches.is_empty() {
            return Err(CodeError::NeedsPatches(artifact.patches.len()));
        }
        return Ok(ControlCode {
            bytes: artifact.ctrltext,
            elf: true,
        });
    }
    let bytes = ctrl_text(data)?.ok_or(CodeError::NoCtrlText)?;
    Ok(ControlCode { bytes, elf: true })
}

/// A kernel: its firmware image (PDI) and its control code (an instruction
/// list, or an ELF whose `.ctrltext` holds it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel<'a> {
    pub pdi: &'a [u8],
    pub ctrl: &'a [u8],
}

/// A device buffer: a SHMEM buffer mapped on its own (`buffer`) or a DEV
/// buffer carved from the heap (firmware, control code, debug buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bo {
    pub handle: u32,
    pub kind: BoKind,
    /// The device address a run uses.
    pub at: u64,
    pub size: u64,
    /// Where it starts in its mapping: the heap's for a DEV buffer, its own
    /// (0) for a SHMEM buffer.
    pub offset: u64,
    /// Its address in this process.
    pub host: u64,
}

/// A mapped command buffer: it holds one run's packet from its submit until
/// the run ends.
#[derive(Debug)]
pub struct Command<M> {
    pub bo: u32,
    map: M,
}

impl<M: BoMap> Command<M> {
    /// Its address in this process.
    pub fn at(&self) -> u64 {
        self.map.addr()
    }

    /// The ERT state its header holds now.
    pub fn state(&self) -> Result<ErtState, OutOfRange> {
        let mut word = [0u8; 4];
        self.map.read(0, &mut word)?;
        let header = ErtHeader::unpack(u32::from_le_bytes(word));
        Ok(ErtState::from_raw(header.state))
    }
}

/// What the contexts on one descriptor share: the device heap and the
/// mappings of the SHMEM buffers, by handle.
struct Memory<M> {
    heap: u32,
    heap_at: u64,
    heap_map: Rc<M>,
    shmem: RefCell<BTreeMap<u32, M>>,
}

/// An open hardware context with the device heap its buffers live in.
pub struct Context<'d, D: Device> {
    dev: &'d D,
    memory: Rc<Memory<D::Map>>,
    hwctx: Hwctx,
    config: ContextConfig,
    closed: bool,
}

impl<'d, D: Device> Context<'d, D> {
    /// Opens a hardware context with its device heap mapped into this
    /// process; the heap comes first. The driver keeps one heap per device
    /// descriptor until the descriptor closes, even when this open fails
    /// after making it (`close` destroys only the hardware context), so the
    /// device keeps the heap and its mapping (`Device::heap_slot`) and a
    /// later `open` on the same descriptor, a retry or a new context after
    /// `close`, uses them instead of asking for a second heap (EBUSY). More
    /// contexts on the same heap at once come from `more`.
    pub fn open(dev: &'d D, config: ContextConfig) -> Result<Context<'d, D>, ContextError> {
        let e = kernel("open");
        let slot = dev.heap_slot();
        let handle = match slot.handle() {
            Some(handle) => handle,
            None => {
                let handle = dev.create_bo(HEAP_SIZE, BoKind::DevHeap).map_err(&e)?;
                slot.set_handle(handle);
                handle
            }
        };
        let (heap_at, map) = match slot.mapped() {
            Some(mapped) => mapped,
            None => {
                let info = dev.bo_info(handle).map_err(&e)?;
                let map = dev
                    .map_bo(&info, HEAP_SIZE as usize, HEAP_ALIGN)
                    .map_err(&e)?;
                let map = Rc::new(map);
                slot.set_mapped(info.xdna_addr, Rc::clone(&map));
                (info.xdna_addr, map)
            }
        };
        let hwctx = dev
            .create_hwctx(&config.qos, config.max_opc, config.num_tiles)
            .map_err(&e)?;
        let memory = Rc::new(Memory {
            heap: handle,
            heap_at,
            heap_map: map,
            shmem: RefCell::new(BTreeMap::new()),
        });
        Ok(Context {
            dev,
            memory,
            hwctx,
            config,
            closed: false,
        })
    }

    /// Another hardware context on the same NPU and heap (a client has one
    /// heap), for a kernel that runs beside this one.
    pub fn more(&self) -> Result<Context<'d, D>, ContextError> {
        let c = &self.config;
        let hwctx = self
            .dev
            .create_hwctx(&c.qos, c.max_opc, c.num_tiles)
            .map_err(kernel("more"))?;
        Ok(Context {
            dev: self.dev,
            memory: Rc::clone(&self.memory),
            hwctx,
            config: self.config,
            closed: false,
        })
    }

    pub fn hwctx(&self) -> Hwctx {
        self.hwctx
    }

    /// The heap's BO handle, its address in this process and its device
    /// address.
    pub fn heap(&self) -> (u32, u64, u64) {
        let m = &self.memory;
        (m.heap, m.heap_map.addr(), m.heap_at)
    }

    /// A new DEV buffer of `size` bytes, where the heap mapping reaches it.
    fn carve(&self, call: &'static str, size: u64) -> Result<Bo, ContextError> {
        if size == 0 {
            return Err(fail(call)(ErrorKind::Empty("buffer")));
        }
        let handle = self
            .dev
            .create_bo(size, BoKind::Dev)
            .map_err(kernel(call))?;
        let info: BoInfo = self.dev.bo_info(handle).map_err(kernel(call))?;
        let outside = || {
            fail(call)(ErrorKind::OutsideHeap {
                bo: handle,
                vaddr: info.vaddr,
                size,
            })
        };
        let heap = &self.memory.heap_map;
        let offset = info.vaddr.checked_sub(heap.addr()).ok_or_else(outside)?;
        let end = offset.checked_add(size).ok_or_else(outside)?;
        if end > heap.len() as u64 {
            return Err(outside());
        }
        Ok(Bo {
            handle,
            kind: BoKind::Dev,
            at: info.xdna_addr,
            size,
            offset,
            host: info.vaddr,
        })
    }

    /// Runs `copy` on the mapping `bo` lives in, once `bo` is checked to lie
    /// in it (a `Bo` is plain data).
    fn mapped<T>(
        &self,
        call: &'static str,
        bo: &Bo,
        copy: impl FnOnce(&D::Map) -> Result<T, OutOfRange>,
    ) -> Result<T, ContextError> {
        let offset = usize::try_from(bo.offset).unwrap_or(usize::MAX);
        let size = usize::try_from(bo.size).unwrap_or(usize::MAX);
        if bo.kind != BoKind::Shmem {
            let heap = &self.memory.heap_map;
            check_range(offset, size, heap.len()).map_err(range(call))?;
            return copy(heap).map_err(range(call));
        }
        let maps = self.memory.shmem.borrow();
        let map = maps
            .get(&bo.handle)
            .ok_or_else(|| fail(call)(ErrorKind::NotMapped { bo: bo.handle }))?;
        check_range(offset, size, map.len()).map_err(range(call))?;
        copy(map).map_err(range(call))
    }

    /// Writes `data` at byte `at` of `bo` and flushes it to the device.
    fn put(&self, call: &'static str, bo: &Bo, data: &[u8], at: u64) -> Result<(), ContextError> {
        let len = data.len() as u64;
        let at_usize = usize::try_from(at).unwrap_or(usize::MAX);
        check_range(at_usize, data.len(), bo.size as usize).map_err(range(call))?;
        if data.is_empty() {
            return self.mapped(call, bo, |_| Ok(()));
        }
        // In range of the buffer, hence of its mapping (`mapped`).
        self.mapped(call, bo, |map| map.write((bo.offset + at) as usize, data))?;
        // The reference's SYNC_BO request has no offset: from byte 0.
        self.dev
            .sync_bo(bo.handle, SyncDirection::ToDevice, 0, at + len)
            .map_err(kernel(call))
    }

    /// Drops the CPU caches over `into.len()` bytes of `bo` from `at`, then
    /// copies them out.
    fn get(
        &self,
        call: &'static str,
        bo: &Bo,
        into: &mut [u8],
        at: u64,
    ) -> Result<(), ContextError> {
        let at_usize = usize::try_from(at).unwrap_or(usize::MAX);
        check_range(at_usize, into.len(), bo.size as usize).map_err(range(call))?;
        if into.is_empty() {
            return self.mapped(call, bo, |_| Ok(()));
        }
        self.mapped(call, bo, |_| Ok(()))?;
        self.dev
            .sync_bo(
                bo.handle,
                SyncDirection::FromDevice,
                0,
                at + into.len() as u64,
            )
            .map_err(kernel(call))?;
        self.mapped(call, bo, |map| map.read((bo.offset + at) as usize, into))
    }

    /// A DEV buffer holding `data`, every page of it written.
    fn place(&self, call: &'static str, data: &[u8]) -> Result<Bo, ContextError> {
        let bo = self.carve(call, data.len() as u64)?;
        self.put(call, &bo, data, 0)?;
        Ok(bo)
    }

    /// Writes zeroes over every page of `bo` and flushes them.
    fn zero(&self, call: &'static str, bo: &Bo) -> Result<(), ContextError> {
        let zeros = vec![0u8; ZERO_CHUNK.min(bo.size as usize)];
        self.mapped(call, bo, |map| {
            let mut at = 0;
            while at < bo.size {
                let n = zeros.len().min((bo.size - at) as usize);
                map.write((bo.offset + at) as usize, &zeros[..n])?;
                at += n as u64;
            }
            Ok(())
        })?;
        self.dev
            .sync_bo(bo.handle, SyncDirection::ToDevice, 0, bo.size)
            .map_err(kernel(call))
    }

    /// A zeroed DEV buffer whose every page this process has written.
    fn zeroed(&self, call: &'static str, size: u64) -> Result<Bo, ContextError> {
        let bo = self.carve(call, size)?;
        self.zero(call, &bo)?;
        Ok(bo)
    }

    /// A device buffer of `size` zero bytes; a run reads and writes it at
    /// its device address `at`. It is a SHMEM buffer with a mapping of its
    /// own, every page written.
    pub fn buffer(&self, size: u64) -> Result<Bo, ContextError> {
        let call = "buffer";
        if size == 0 {
            return Err(fail(call)(ErrorKind::Empty("buffer")));
        }
        let len = usize::try_from(size).unwrap_or(usize::MAX);
        let handle = self
            .dev
            .create_bo(size, BoKind::Shmem)
            .map_err(kernel(call))?;
        let info = self.dev.bo_info(handle).map_err(kernel(call))?;
        let map = self
            .dev
            .map_bo(&info, len, ANY_PAGE)
            .map_err(kernel(call))?;
        let host = map.addr();
        // XRT's rule (`buffer::paddr`): the driver's device address, or,
        // when it has none for this buffer, the process's own address.
        let at = if info.xdna_addr == INVALID_ADDR {
            host
        } else {
            info.xdna_addr
        };
        self.memory.shmem.borrow_mut().insert(handle, map);
        let bo = Bo {
            handle,
            kind: BoKind::Shmem,
            at,
            size,
            offset: 0,
            host,
        };
        self.zero(call, &bo)?;
        Ok(bo)
    }

    /// Copies `data` into `bo` at byte `at`, before the run that reads it.
    pub fn upload(&self, bo: &Bo, data: &[u8], at: u64) -> Result<(), ContextError> {
        self.put("upload", bo, data, at)
    }

    /// The `size` bytes of `bo` from byte `at` as the device left them.
    pub fn download(&self, bo: &Bo, size: u64, at: u64) -> Result<Vec<u8>, ContextError> {
        self.mapped("download", bo, |_| Ok(()))?;
        let len = usize::try_from(size).unwrap_or(usize::MAX);
        let at_usize = usize::try_from(at).unwrap_or(usize::MAX);
        check_range(at_usize, len, bo.size as usize).map_err(range("download"))?;
        let mut out = vec![0u8; len];
        self.get("download", bo, &mut out, at)?;
        Ok(out)
    }

    /// As `download`, into `into` (a loop that reuses one buffer).
    pub fn download_into(&self, bo: &Bo, into: &mut [u8], at: u64) -> Result<(), ContextError> {
        self.get("download_into", bo, into, at)
    }

    fn command_as(&self, call: &'static str) -> Result<Command<D::Map>, ContextError> {
        let e = kernel(call);
        let bo = self.dev.create_bo(COMMAND_SIZE, BoKind::Cmd).map_err(&e)?;
        let info = self.dev.bo_info(bo).map_err(&e)?;
        let map = self
            .dev
            .map_bo(&info, COMMAND_SIZE as usize, ANY_PAGE)
            .map_err(&e)?;
        Ok(Command { bo, map })
    }

    /// A command buffer, for a run submitted while others are in flight.
    pub fn command(&self) -> Result<Command<D::Map>, ContextError> {
        self.command_as("command")
    }

    /// Loads `kernel`: firmware and control code into device buffers, the
    /// context configured to run them with a debug buffer, a command buffer
    /// mapped for the runs. A context loads one kernel (the driver refuses
    /// a second CU configuration); `Program::another` shares it.
    pub fn load(&self, kernel_image: &Kernel<'_>) -> Result<Program<'_, D>, ContextError> {
        let code = control_code(kernel_image.ctrl).map_err(|e| fail("load")(ErrorKind::Code(e)))?;
        self.load_code(kernel_image.pdi, &code)
    }

    /// `load` of control code already read out of its file, such as an
    /// ELF's `.ctrltext` once its argument patches are applied (`invoke`).
    pub fn load_code(
        &self,
        pdi: &[u8],
        code: &ControlCode,
    ) -> Result<Program<'_, D>, ContextError> {
        let call = "load";
        if pdi.is_empty() {
            return Err(fail(call)(ErrorKind::Empty("firmware image")));
        }
        if code.bytes.is_empty() {
            return Err(fail(call)(ErrorKind::Empty("control code")));
        }
        let pdi = self.place(call, pdi)?;
        let ctrl = self.place(call, &code.bytes)?;
        let cu = CuConfig {
            cu_bo: pdi.handle,
            cu_func: CU_FUNC_DPU,
            pad: [0; 3],
        };
        self.dev
            .config_cu(self.hwctx.handle, &[cu])
            .map_err(kernel(call))?;
        let debug = self.zeroed(call, DEBUG_SIZE)?;
        self.dev
            .assign_debug_bo(self.hwctx.handle, debug.handle)
            .map_err(kernel(call))?;
        let cmd = self.command_as(call)?;
        Ok(Program {
            ctx: self,
            pdi,
            ctrl,
            size: code.bytes.len() as u64,
            elf: code.elf,
            debug,
            cmd,
        })
    }

    /// A DEV buffer holding the PDI `bytes`, flushed to the device. XRT
    /// makes a PDI's buffer with `use_type::pdi` (Xilinx/XRT @963c58ee
    /// `xrt_module.cpp` `create_instruction_buf`), which is cacheable
    /// (`xrt_bo.cpp` `compose_internal_bo_flags`), and xdna-driver's shim
    /// makes a cacheable buffer a DEV buffer once the client has a heap
    /// (`src/shim/buffer.cpp` `bo_flags_to_type`).
    pub fn pdi(&self, bytes: &[u8]) -> Result<Bo, ContextError> {
        let call = "pdi";
        if bytes.is_empty() {
            return Err(fail(call)(ErrorKind::Empty("PDI")));
        }
        self.place(call, bytes)
    }

    /// Loads a full ELF's control code, its argument and LOADPDI addresses
    /// already patched in, as XRT's ELF flow does: a DEV buffer and a
    /// command buffer, nothing configured on the context (the PDIs are
    /// reached through the code's LOADPDI ops).
    pub fn load_elf(&self, code: &[u8]) -> Result<ElfProgram<'_, D>, ContextError> {
        let call = "load";
        if code.is_empty() {
            return Err(fail(call)(ErrorKind::Empty("control code")));
        }
        let ctrl = self.place(call, code)?;
        let cmd = self.command_as(call)?;
        Ok(ElfProgram {
            ctx: self,
            ctrl,
            size: code.len() as u64,
            cmd,
        })
    }

    /// Writes `packet` into `cmd` and submits it with the control code's
    /// and the run's buffers, as XRT sends them, so the driver holds them
    /// for the run.
    fn exec(
        &self,
        call: &'static str,
        cmd: &Command<D::Map>,
        packet: &[u8],
        ctrl: &Bo,
        buffers: &[Bo],
    ) -> Result<u64, ContextError> {
        cmd.map.write(0, packet).map_err(range(call))?;
        let handles: Vec<u32> = std::iter::once(ctrl.handle)
            .chain(buffers.iter().map(|b| b.handle))
            .collect();
        self.dev
            .exec_cmd(self.hwctx.handle, cmd.bo, &handles)
            .map_err(kernel(call))
    }

    /// Waits until the context reaches `point`, then checks that each of
    /// `commands` completed.
    pub fn finish(&self, point: u64, commands: &[&Command<D::Map>]) -> Result<(), ContextError> {
        self.finish_as("finish", point, commands)
    }

    fn finish_as(
        &self,
        call: &'static str,
        point: u64,
        commands: &[&Command<D::Map>],
    ) -> Result<(), ContextError> {
        self.dev
            .wait_syncobj(self.hwctx.syncobj, point, self.config.timeout)
            .map_err(kernel(call))?;
        for cmd in commands {
            let state = cmd.state().map_err(range(call))?;
            let failed = match state {
                ErtState::Completed => continue,
                ErtState::Error => ErrorKind::CommandError { cmd: cmd.bo },
                ErtState::Abort => ErrorKind::CommandAborted { cmd: cmd.bo },
                ErtState::Timeout => ErrorKind::CommandTimedOut { cmd: cmd.bo },
                other => ErrorKind::NotCompleted {
                    cmd: cmd.bo,
                    state: other,
                },
            };
            return Err(fail(call)(failed));
        }
        Ok(())
    }

    /// Releases the hardware context; its buffers go with the descriptor.
    pub fn close(mut self) -> Result<(), ContextError> {
        self.closed = true;
        self.dev
            .destroy_hwctx(self.hwctx.handle)
            .map_err(kernel("close"))
    }
}

impl<D: Device> Drop for Context<'_, D> {
    fn drop(&mut self) {
        if !self.closed {
            // Nothing to report to from a drop; `close` reports.
            let _ = self.dev.destroy_hwctx(self.hwctx.handle);
        }
    }
}

/// A loaded kernel: its control code, the debug buffer it writes and the
/// command buffer of its runs.
pub struct Program<'c, D: Device> {
    ctx: &'c Context<'c, D>,
    pdi: Bo,
    ctrl: Bo,
    size: u64,
    elf: bool,
    debug: Bo,
    cmd: Command<D::Map>,
}

impl<'c, D: Device> Program<'c, D> {
    pub fn ctrl(&self) -> Bo {
        self.ctrl
    }

    /// The control code's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Whether the control code came from an ELF (START_NPU packets).
    pub fn is_elf(&self) -> bool {
        self.elf
    }

    pub fn firmware(&self) -> Bo {
        self.pdi
    }

    pub fn debug_bo(&self) -> Bo {
        self.debug
    }

    pub fn command(&self) -> &Command<D::Map> {
        &self.cmd
    }

    /// Replaces the control code; its buffer grows when the code does not
    /// fit (the old one stays allocated until the descriptor closes).
    pub fn code(&mut self, ctrl: &[u8]) -> Result<(), ContextError> {
        let call = "code";
        let code = control_code(ctrl).map_err(|e| fail(call)(ErrorKind::Code(e)))?;
        if code.bytes.is_empty() {
            return Err(fail(call)(ErrorKind::Empty("control code")));
        }
        if code.bytes.len() as u64 <= self.ctrl.size {
            self.ctx.put(call, &self.ctrl, &code.bytes, 0)?;
        } else {
            self.ctrl = self.ctx.place(call, &code.bytes)?;
        }
        self.size = code.bytes.len() as u64;
        self.elf = code.elf;
        Ok(())
    }

    /// Another program of this one's firmware, context and debug buffer,
    /// with its own control code and command buffer.
    pub fn another(&self, ctrl: &[u8]) -> Result<Program<'c, D>, ContextError> {
        let call = "another";
        let code = control_code(ctrl).map_err(|e| fail(call)(ErrorKind::Code(e)))?;
        if code.bytes.is_empty() {
            return Err(fail(call)(ErrorKind::Empty("control code")));
        }
        let ctrl = self.ctx.place(call, &code.bytes)?;
        let cmd = self.ctx.command_as(call)?;
        Ok(Program {
            ctx: self.ctx,
            pdi: self.pdi,
            ctrl,
            size: code.bytes.len() as u64,
            elf: code.elf,
            debug: self.debug,
            cmd,
        })
    }

    /// The packet of a run with `args`: START_NPU for an ELF's code,
    /// START_CU (args[0] the NPU opcode) for an instruction list.
    pub fn packet(&self, args: &[u64]) -> Result<Vec<u8>, PacketError> {
        if self.elf {
            npu_packet(self.ctrl.at, self.size, args)
        } else {
            start_packet(self.ctrl.at, self.size, args)
        }
    }

    fn submit_as(
        &self,
        call: &'static str,
        cmd: &Command<D::Map>,
        args: &[u64],
        buffers: &[Bo],
    ) -> Result<u64, ContextError> {
        let packet = self
            .packet(args)
            .map_err(|e| fail(call)(ErrorKind::Packet(e)))?;
        self.ctx.exec(call, cmd, &packet, &self.ctrl, buffers)
    }

    /// Queues a run in `cmd` and returns its point on the context's
    /// timeline; the context runs its commands in order.
    pub fn submit(
        &self,
        cmd: &Command<D::Map>,
        args: &[u64],
        buffers: &[Bo],
    ) -> Result<u64, ContextError> {
        self.submit_as("submit", cmd, args, buffers)
    }

    /// Runs the kernel once with `args` and waits for the run.
    pub fn run(&self, args: &[u64], buffers: &[Bo]) -> Result<(), ContextError> {
        let point = self.submit_as("run", &self.cmd, args, buffers)?;
        self.ctx.finish_as("run", point, &[&self.cmd])
    }

    /// The debug buffer as the runs left it.
    pub fn debug(&self) -> Result<Vec<u8>, ContextError> {
        let mut out = vec![0u8; self.debug.size as usize];
        self.ctx.get("debug", &self.debug, &mut out, 0)?;
        Ok(out)
    }
}

/// A loaded full ELF: its control code (which loads its PDIs itself) and
/// the command buffer of its runs.
pub struct ElfProgram<'c, D: Device> {
    ctx: &'c Context<'c, D>,
    ctrl: Bo,
    size: u64,
    cmd: Command<D::Map>,
}

impl<D: Device> ElfProgram<'_, D> {
    /// Runs the code once as START_NPU_PREEMPT_ELF and waits for the run;
    /// `first_arg` is what XRT puts after the preempt head (the entry's
    /// first buffer's address), `buffers` go with the command.
    pub fn run(&self, first_arg: u64, buffers: &[Bo]) -> Result<(), ContextError> {
        let call = "run";
        let packet = preempt_elf_packet(self.ctrl.at, self.size, first_arg)
            .map_err(|e| fail(call)(ErrorKind::Packet(e)))?;
        let point = self
            .ctx
            .exec(call, &self.cmd, &packet, &self.ctrl, buffers)?;
        self.ctx.finish_as(call, point, &[&self.cmd])
    }
}

#[cfg(test)]
mod tests;
