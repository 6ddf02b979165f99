//! The recording fake of the amdxdna driver: an in-process `Device` that
//! records each call, answers from a script and holds callers to the rules
//! the driver source shows (for the HAL's tests and the tools' own).

use super::device::{
    config_cu_bytes, profile_rows, BoInfo, BoKind, BoMap, Device, HeapSlot, Hwctx, SyncDirection,
};
use super::ioctl::{check_range, query_name, HalError, OutOfRange, MAX_QUERY_SIZE};
use super::uapi::{
    ert_op, payload_word_index, AieMetadata, AieVersion, CuConfig, ErtHeader, ErtState,
    FirmwareVersion, NpuPreemptData, QosInfo, TileMetadata, INVALID_ADDR, QUERY_AIE_METADATA,
    QUERY_AIE_VERSION, QUERY_FIRMWARE_VERSION,
};
use loom_targets::DeviceProfile;
use rustix::io::Errno;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;
use std::time::Duration;

/// One kernel call the fake saw, with the arguments that matter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Call {
    Query(&'static str),
    CreateHwctx {
        qos: QosInfo,
        max_opc: u32,
        num_tiles: u32,
    },
    DestroyHwctx {
        hwctx: u32,
    },
    ConfigCu {
        hwctx: u32,
        cus: Vec<CuConfig>,
    },
    AssignDebugBo {
        hwctx: u32,
        bo: u32,
    },
    CreateBo {
        size: u64,
        kind: BoKind,
    },
    BoInfo {
        bo: u32,
    },
    SyncBo {
        bo: u32,
        direction: SyncDirection,
        offset: u64,
        size: u64,
    },
    ExecCmd {
        hwctx: u32,
        cmd: u32,
        bos: Vec<u32>,
    },
    WaitSyncobj {
        syncobj: u32,
        point: u64,
        timeout: Duration,
    },
    MapBo {
        bo: u32,
        len: usize,
        align: usize,
    },
}

impl Call {
    /// The name a failure of this call carries in its `HalError`.
    pub fn name(&self) -> &'static str {
        match self {
            Call::Query(name) => name,
            Call::CreateHwctx { .. } => "CREATE_HWCTX",
            Call::DestroyHwctx { .. } => "DESTROY_HWCTX",
            Call::ConfigCu { .. } | Call::AssignDebugBo { .. } => "CONFIG_HWCTX",
            Call::CreateBo { .. } => "CREATE_BO",
            Call::BoInfo { .. } => "GET_BO_INFO",
            Call::SyncBo { .. } => "SYNC_BO",
            Call::ExecCmd { .. } => "EXEC_CMD",
            Call::WaitSyncobj { .. } => "SYNCOBJ_TIMELINE_WAIT",
            Call::MapBo { .. } => "mmap",
        }
    }
}

/// The fake's made-up address spaces (not the driver's).
const FAKE_HEAP_XDNA_ADDR: u64 = 0x1_0000_0000;
const FAKE_DMA_ADDR: u64 = 0x2_0000_0000;
/// Page-aligned, but not at a multiple of 64 MiB: mappings that must be
/// aligned further have to ask.
const FAKE_HOST_ADDR: u64 = 0x7f12_3456_7000;
const FAKE_PAGE: usize = 4096;

/// The bytes behind a fake mapping, shared by the caller's `FakeMap` and the
/// fake (which reads command packets from them, writes command states into
/// them, and sees which pages the process wrote).
#[derive(Debug)]
struct FakeMem {
    bytes: RefCell<Vec<u8>>,
    /// Per page: whether this process wrote it.
    touched: RefCell<Vec<bool>>,
}

impl FakeMem {
    fn new(len: usize) -> FakeMem {
        FakeMem {
            bytes: RefCell::new(vec![0; len]),
            touched: RefCell::new(vec![false; len.div_ceil(FAKE_PAGE)]),
        }
    }

    /// Whether every page of `at..at + len` was written.
    fn all_touched(&self, at: usize, len: usize) -> bool {
        let touched = self.touched.borrow();
        let end = at.saturating_add(len).div_ceil(FAKE_PAGE);
        (at / FAKE_PAGE..end).all(|page| touched.get(page).copied().unwrap_or(false))
    }

    fn read_u32(&self, at: usize) -> Option<u32> {
        let bytes = self.bytes.borrow();
        let b = bytes.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

struct FakeBo {
    kind: BoKind,
    size: u64,
    xdna_addr: u64,
    /// Where the fake mapped it (0 before its mmap).
    host: u64,
    mem: Option<Rc<FakeMem>>,
}

/// A command EXEC_CMD accepted, as the fake saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submission {
    pub hwctx: u32,
    pub cmd: u32,
    pub bos: Vec<u32>,
    /// Its point on the context's syncobj timeline.
    pub point: u64,
    /// The packet the command buffer held: the header word and the `count`
    /// words after it (empty when the buffer was never mapped).
    pub packet: Vec<u8>,
    /// DEV and SHMEM buffers among `bos` with a page this process never
    /// wrote (the NPU's writes to such a page are lost, per the reference's
    /// `buffer`).
    pub untouched: Vec<u32>,
}

/// A submitted command the fake completes when its point is waited for.
struct Pending {
    hwctx: u32,
    point: u64,
    cmd: u32,
    state: ErtState,
}

#[derive(Default)]
struct FakeState {
    calls: Vec<Call>,
    /// Scripted failures: the next call of that name fails with the errno.
    failures: Vec<(&'static str, i32)>,
    /// Scripted failures by position: call number n (from 0) fails.
    failures_at: Vec<(usize, i32)>,
    /// The states the next commands finish in (COMPLETED when empty).
    completions: VecDeque<ErtState>,
    pending: Vec<Pending>,
    submissions: Vec<Submission>,
    bos: BTreeMap<u32, FakeBo>,
    heap: Option<u32>,
    heap_used: u64,
    dma_used: u64,
    next_handle: u32,
    next_host: u64,
    /// Per hardware context: its syncobj and last submitted point.
    hwctxs: BTreeMap<u32, (u32, u64)>,
    /// Hardware contexts whose CUs are configured.
    configured: BTreeSet<u32>,
    /// Debug buffers and the context each is assigned to.
    debug_bos: BTreeMap<u32, u32>,
    /// Per DEV or SHMEM buffer, its bytes as the device has them: each
    /// SYNC_BO to the device copies the synced range in.
    synced: BTreeMap<u32, Vec<u8>>,
    /// Scripted GET_INFO replies by parameter.
    replies: BTreeMap<u32, Vec<u8>>,
}

impl FakeState {
    /// The heap's bytes and the offset of DEV buffer `bo` in them.
    fn in_heap(&self, bo: &FakeBo) -> Option<(Rc<FakeMem>, usize)> {
        let heap = self.bos.get(&self.heap?)?;
        let offset = usize::try_from(bo.xdna_addr.checked_sub(heap.xdna_addr)?).ok()?;
        Some((heap.mem.clone()?, offset))
    }

    /// The bytes a DEV or SHMEM buffer lives in and its offset there.
    fn backing(&self, bo: &FakeBo) -> Option<(Rc<FakeMem>, usize)> {
        match bo.kind {
            BoKind::Dev => self.in_heap(bo),
            BoKind::Shmem => Some((bo.mem.clone()?, 0)),
            BoKind::DevHeap | BoKind::Cmd => None,
        }
    }

    /// Whether the process wrote every page of DEV or SHMEM buffer `handle`.
    fn touched(&self, handle: u32) -> bool {
        let Some(bo) = self.bos.get(&handle) else {
            return true;
        };
        if !matches!(bo.kind, BoKind::Dev | BoKind::Shmem) {
            return true;
        }
        match self.backing(bo) {
            Some((mem, offset)) => mem.all_touched(offset, bo.size as usize),
            None => false,
        }
    }

    /// Whether the driver would send the packet to the firmware, by what
    /// its run_job does before sending (xdna-driver @856409ca
    /// `aie2_message.c` `aie2_cmdlist_fill_slot`): the preempt opcodes need
    /// the firmware's AIE2_PREEMPT feature (else EOPNOTSUPP), and their
    /// payload must hold the preempt head (`aie2_cmdlist_fill_npu_elf`:
    /// EINVAL).
    fn sendable(packet: &[u8], preempt: bool) -> bool {
        let Some(word) = packet.get(..4) else {
            return true;
        };
        let header = ErtHeader::unpack(u32::from_le_bytes([word[0], word[1], word[2], word[3]]));
        if !matches!(
            header.opcode,
            ert_op::START_NPU_PREEMPT | ert_op::START_NPU_PREEMPT_ELF
        ) {
            return true;
        }
        let payload_words = header.count.saturating_sub(payload_word_index(header)) as usize;
        preempt && 4 * payload_words >= std::mem::size_of::<NpuPreemptData>()
    }

    /// The packet in command buffer `cmd`: its header and `count` words.
    fn packet(&self, cmd: u32) -> Vec<u8> {
        let Some(mem) = self.bos.get(&cmd).and_then(|b| b.mem.clone()) else {
            return Vec::new();
        };
        let Some(header) = mem.read_u32(0) else {
            return Vec::new();
        };
        let words = 1 + ErtHeader::unpack(header).count as usize;
        let bytes = mem.bytes.borrow();
        bytes[..bytes.len().min(4 * words)].to_vec()
    }
}

/// An in-process device that records each call and answers from a script.
/// Its SHMEM buffers are addressed as under the IOMMU's PASID (xdna-driver
/// amdxdna_gem.c `amdxdna_gem_dev_addr`): no device address until mapped,
/// then their address in this process; with `pasid` false they have a
/// made-up DMA address from the start, as in xdna-driver's developer builds
/// without PASID (`AMDXDNA_DEVEL`; upstream has no such mode).
/// Besides scripted failures it enforces what the driver source shows:
/// CREATE_HWCTX fails with ENOENT without a device heap (aie2_ctx.c
/// `aie2_hwctx_init`) and with EINVAL while the heap is unmapped (the
/// firmware is given its user address: aie2_hwctx.c `aie2_map_host_buf`; the
/// errno is the fake's choice), a DEV buffer fails with EINVAL without a
/// heap, before the heap is mapped, or beyond its size (amdxdna_gem.c
/// `amdxdna_gem_heap_alloc`), a second heap fails with EBUSY (amdxdna_gem.c
/// `amdxdna_drm_create_dev_heap`), CONFIG_CU takes only DEV buffers (upstream
/// linux's rule; xdna-driver does not check the kind) and only once per
/// context, and a debug buffer must be a DEV buffer not assigned yet
/// (EINVAL, EBUSY: aie2_ctx.c `aie2_hwctx_cu_config`,
/// `aie2_hwctx_hold_cu_bos`, `aie2_hwctx_cfg_debug_bo`), EXEC_CMD takes only
/// a CMD buffer (EINVAL: amdxdna_ctx.c `amdxdna_cmd_submit`), and a wait for
/// a point never submitted times out (ETIME) instead of blocking.
///
/// A submitted command completes when a wait covers its point: the fake then
/// writes its state (COMPLETED unless scripted) into the header of the
/// mapped command buffer, as the driver does when the firmware answers, so
/// a caller that reads the state before waiting sees the packet unchanged.
/// A command the driver would not send (a preempt opcode without
/// `preempt`, or a payload shorter than the preempt head) is accepted by
/// EXEC_CMD and reaches its point in state NEW, as xdna-driver leaves it:
/// `aie2_sched_job_run` (aie2_ctx.c) sets NEW, and the failed fill ends the
/// job with the error on its fence only, which the syncobj wait does not
/// report.
pub struct FakeDevice {
    pub aie: AieVersion,
    pub firmware: FirmwareVersion,
    pub metadata: AieMetadata,
    pub pasid: bool,
    /// The firmware's AIE2_PREEMPT feature, which xdna-driver needs for
    /// START_NPU_PREEMPT and START_NPU_PREEMPT_ELF (npu4_regs.c: firmware
    /// protocol 6.12 on, for Strix and Strix Halo alike).
    pub preempt: bool,
    state: RefCell<FakeState>,
    heap: HeapSlot<FakeMap>,
}

/// u32s as the little-endian bytes the driver writes.
fn to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// AIE_METADATA's 64 bytes (`struct amdxdna_drm_query_aie_metadata`).
fn metadata_bytes(m: &AieMetadata) -> Vec<u8> {
    let mut out = m.col_size.to_le_bytes().to_vec();
    out.extend_from_slice(&m.cols.to_le_bytes());
    out.extend_from_slice(&m.rows.to_le_bytes());
    out.extend(to_bytes(&[m.version.major, m.version.minor]));
    for t in [m.core, m.mem, m.shim] {
        let TileMetadata {
            row_count,
            row_start,
            dma_channel_count,
            lock_count,
            event_reg_count,
            pad,
        } = t;
        for half in [
            row_count,
            row_start,
            dma_channel_count,
            lock_count,
            event_reg_count,
        ]
        .into_iter()
        .chain(pad)
        {
            out.extend_from_slice(&half.to_le_bytes());
        }
    }
    out
}

impl Default for FakeDevice {
    fn default() -> Self {
        FakeDevice::new()
    }
}

/// A fake mapping: plain host memory at a made-up address.
#[derive(Debug)]
pub struct FakeMap {
    addr: u64,
    mem: Rc<FakeMem>,
}

impl BoMap for FakeMap {
    fn addr(&self) -> u64 {
        self.addr
    }
    fn len(&self) -> usize {
        self.mem.bytes.borrow().len()
    }
    fn read(&self, at: usize, out: &mut [u8]) -> Result<(), OutOfRange> {
        let bytes = self.mem.bytes.borrow();
        check_range(at, out.len(), bytes.len())?;
        out.copy_from_slice(&bytes[at..at + out.len()]);
        Ok(())
    }
    fn write(&self, at: usize, data: &[u8]) -> Result<(), OutOfRange> {
        let mut bytes = self.mem.bytes.borrow_mut();
        check_range(at, data.len(), bytes.len())?;
        bytes[at..at + data.len()].copy_from_slice(data);
        if !data.is_empty() {
            let mut touched = self.mem.touched.borrow_mut();
            let pages = at / FAKE_PAGE..(at + data.len()).div_ceil(FAKE_PAGE);
            for page in touched.get_mut(pages).into_iter().flatten() {
                *page = true;
            }
        }
        Ok(())
    }
}

impl FakeDevice {
    /// A fake of the NPU `profile` describes: GET_INFO reports its array.
    pub fn of_profile(profile: &DeviceProfile) -> FakeDevice {
        let mut dev = FakeDevice::new();
        let m = &mut dev.metadata;
        let narrow = |n: u32| u16::try_from(n).unwrap_or(u16::MAX);
        m.cols = narrow(profile.array.columns);
        m.rows = narrow(profile.array.rows);
        let rows = profile_rows(profile);
        for (tile, (_, range)) in [&mut m.core, &mut m.mem, &mut m.shim].into_iter().zip(rows) {
            let (start, count) = range.unwrap_or((0, 0));
            tile.row_start = narrow(start);
            tile.row_count = narrow(count);
        }
        dev
    }

    /// A fake whose GET_INFO reports zeroes.
    pub fn new() -> FakeDevice {
        FakeDevice {
            aie: AieVersion::default(),
            firmware: FirmwareVersion::default(),
            metadata: AieMetadata::default(),
            pasid: true,
            preempt: true,
            state: RefCell::new(FakeState {
                next_handle: 1,
                next_host: FAKE_HOST_ADDR,
                ..Default::default()
            }),
            heap: HeapSlot::default(),
        }
    }

    /// Scripts the next call named `call` (an `HalError` call name, e.g.
    /// "EXEC_CMD") to fail with `errno`.
    pub fn fail_next(&self, call: &'static str, errno: Errno) {
        self.state
            .borrow_mut()
            .failures
            .push((call, errno.raw_os_error()));
    }

    /// Scripts call number `index` (counting every call from 0, as `calls`
    /// lists them) to fail with `errno`, whatever it is.
    pub fn fail_at(&self, index: usize, errno: Errno) {
        self.state
            .borrow_mut()
            .failures_at
            .push((index, errno.raw_os_error()));
    }

    /// Scripts the state the next submitted command finishes in.
    pub fn complete_next_with(&self, state: ErtState) {
        self.state.borrow_mut().completions.push_back(state);
    }

    /// Scripts the reply GET_INFO query `param` gets (the driver's struct
    /// bytes; a query of a smaller size gets their start).
    pub fn reply_to(&self, param: u32, bytes: &[u8]) {
        self.state
            .borrow_mut()
            .replies
            .insert(param, bytes.to_vec());
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.state.borrow().calls.clone()
    }

    pub fn call_names(&self) -> Vec<&'static str> {
        self.state.borrow().calls.iter().map(Call::name).collect()
    }

    /// Every command EXEC_CMD accepted, in order.
    pub fn submissions(&self) -> Vec<Submission> {
        self.state.borrow().submissions.clone()
    }

    /// What DEV or SHMEM buffer `bo` holds, as the NPU would read it
    /// (`None` for another kind of buffer, or before it is mapped).
    pub fn bo_bytes(&self, bo: u32) -> Option<Vec<u8>> {
        let state = self.state.borrow();
        let b = state.bos.get(&bo)?;
        let (mem, at) = state.backing(b)?;
        let end = at.checked_add(usize::try_from(b.size).ok()?)?;
        let bytes = mem.bytes.borrow();
        bytes.get(at..end).map(<[u8]>::to_vec)
    }

    /// What DEV or SHMEM buffer `bo` held at its SYNC_BOs to the device:
    /// the bytes the NPU reads, where a write not yet synced does not
    /// count (`None` before any such sync).
    pub fn synced_bytes(&self, bo: u32) -> Option<Vec<u8>> {
        self.state.borrow().synced.get(&bo).cloned()
    }

    /// Records `call`, then fails it if the script says so.
    fn enter(&self, call: Call) -> Result<std::cell::RefMut<'_, FakeState>, HalError> {
        let name = call.name();
        let mut state = self.state.borrow_mut();
        let index = state.calls.len();
        state.calls.push(call);
        if let Some(i) = state.failures_at.iter().position(|(n, _)| *n == index) {
            let (_, errno) = state.failures_at.remove(i);
            return Err(HalError::new(name, errno));
        }
        if let Some(i) = state.failures.iter().position(|(n, _)| *n == name) {
            let (_, errno) = state.failures.remove(i);
            return Err(HalError::new(name, errno));
        }
        Ok(state)
    }

    fn handle(state: &mut FakeState) -> u32 {
        let h = state.next_handle;
        state.next_handle += 1;
        h
    }
}

impl Device for FakeDevice {
    type Map = FakeMap;

    /// The driver's replies as it writes them: the reply struct's first
    /// `size` bytes, zeroes after (xdna-driver @856409ca `aie2_pci.c`
    /// `min(args->buffer_size, sizeof(...))`), a scripted reply
    /// (`reply_to`) for another parameter, and EOPNOTSUPP for a parameter
    /// it does not know (`aie2_get_info`'s default case).
    fn query(&self, param: u32, size: usize) -> Result<Vec<u8>, HalError> {
        let name = query_name(param);
        let state = self.enter(Call::Query(name))?;
        if size > MAX_QUERY_SIZE {
            return Err(HalError::from_errno(name, Errno::TOOBIG));
        }
        let full = match param {
            QUERY_AIE_VERSION => to_bytes(&[self.aie.major, self.aie.minor]),
            QUERY_FIRMWARE_VERSION => {
                let f = self.firmware;
                to_bytes(&[f.major, f.minor, f.patch, f.build])
            }
            QUERY_AIE_METADATA => metadata_bytes(&self.metadata),
            other => match state.replies.get(&other) {
                Some(bytes) => bytes.clone(),
                None => return Err(HalError::from_errno(name, Errno::OPNOTSUPP)),
            },
        };
        let mut out = vec![0u8; size];
        let n = size.min(full.len());
        out[..n].copy_from_slice(&full[..n]);
        Ok(out)
    }

    fn heap_slot(&self) -> &HeapSlot<FakeMap> {
        &self.heap
    }

    fn create_hwctx(&self, qos: &QosInfo, max_opc: u32, num_tiles: u32) -> Result<Hwctx, HalError> {
        let mut state = self.enter(Call::CreateHwctx {
            qos: *qos,
            max_opc,
            num_tiles,
        })?;
        let Some(heap) = state.heap.and_then(|h| state.bos.get(&h)) else {
            return Err(HalError::from_errno("CREATE_HWCTX", Errno::NOENT));
        };
        // The driver hands the heap's user address to the firmware
        // (aie2_hwctx.c `aie2_map_host_buf`); an unmapped heap has none.
        if heap.mem.is_none() {
            return Err(HalError::from_errno("CREATE_HWCTX", Errno::INVAL));
        }
        let handle = FakeDevice::handle(&mut state);
        let syncobj = FakeDevice::handle(&mut state);
        state.hwctxs.insert(handle, (syncobj, 0));
        Ok(Hwctx { handle, syncobj })
    }

    fn destroy_hwctx(&self, hwctx: u32) -> Result<(), HalError> {
        let mut state = self.enter(Call::DestroyHwctx { hwctx })?;
        match state.hwctxs.remove(&hwctx) {
            Some(_) => Ok(()),
            None => Err(HalError::from_errno("DESTROY_HWCTX", Errno::INVAL)),
        }
    }

    fn config_cu(&self, hwctx: u32, cus: &[CuConfig]) -> Result<(), HalError> {
        let mut state = self.enter(Call::ConfigCu {
            hwctx,
            cus: cus.to_vec(),
        })?;
        config_cu_bytes(cus)?;
        let einval = || HalError::from_errno("CONFIG_HWCTX", Errno::INVAL);
        let all_dev = cus
            .iter()
            .all(|cu| state.bos.get(&cu.cu_bo).map(|b| b.kind) == Some(BoKind::Dev));
        if cus.is_empty() || !all_dev || !state.hwctxs.contains_key(&hwctx) {
            return Err(einval());
        }
        // The driver refuses to configure a context's CUs twice.
        if !state.configured.insert(hwctx) {
            return Err(einval());
        }
        Ok(())
    }

    fn assign_debug_bo(&self, hwctx: u32, bo: u32) -> Result<(), HalError> {
        let mut state = self.enter(Call::AssignDebugBo { hwctx, bo })?;
        let is_dev = state.bos.get(&bo).map(|b| b.kind) == Some(BoKind::Dev);
        if !is_dev || !state.hwctxs.contains_key(&hwctx) {
            return Err(HalError::from_errno("CONFIG_HWCTX", Errno::INVAL));
        }
        if state.debug_bos.contains_key(&bo) {
            return Err(HalError::from_errno("CONFIG_HWCTX", Errno::BUSY));
        }
        state.debug_bos.insert(bo, hwctx);
        Ok(())
    }

    fn create_bo(&self, size: u64, kind: BoKind) -> Result<u32, HalError> {
        let mut state = self.enter(Call::CreateBo { size, kind })?;
        let invalid = || HalError::from_errno("CREATE_BO", Errno::INVAL);
        let xdna_addr = match kind {
            BoKind::Dev => {
                let heap = state
                    .heap
                    .and_then(|h| state.bos.get(&h))
                    .ok_or_else(invalid)?;
                let (base, free) = (heap.xdna_addr, heap.size.saturating_sub(state.heap_used));
                if heap.host == 0 || size == 0 || size > free {
                    return Err(invalid());
                }
                let at = base + state.heap_used;
                // Page-aligned carving, like the driver's drm_mm allocator.
                state.heap_used += size.div_ceil(4096) * 4096;
                at
            }
            BoKind::DevHeap => FAKE_HEAP_XDNA_ADDR,
            BoKind::Shmem if self.pasid => INVALID_ADDR,
            BoKind::Shmem => {
                let at = FAKE_DMA_ADDR + state.dma_used;
                state.dma_used += size.div_ceil(4096) * 4096;
                at
            }
            BoKind::Cmd => 0,
        };
        // A client has one heap (amdxdna_gem.c `amdxdna_drm_create_dev_heap`).
        if kind == BoKind::DevHeap && state.heap.is_some() {
            return Err(HalError::from_errno("CREATE_BO", Errno::BUSY));
        }
        let handle = FakeDevice::handle(&mut state);
        if kind == BoKind::DevHeap {
            state.heap = Some(handle);
        }
        state.bos.insert(
            handle,
            FakeBo {
                kind,
                size,
                xdna_addr,
                host: 0,
                mem: None,
            },
        );
        Ok(handle)
    }

    fn bo_info(&self, bo: u32) -> Result<BoInfo, HalError> {
        let state = self.enter(Call::BoInfo { bo })?;
        let b = state
            .bos
            .get(&bo)
            .ok_or_else(|| HalError::from_errno("GET_BO_INFO", Errno::INVAL))?;
        if b.kind == BoKind::Shmem {
            // Under PASID the device address is the user address, which
            // the mmap makes.
            let user = if b.mem.is_some() {
                b.host
            } else {
                INVALID_ADDR
            };
            return Ok(BoInfo {
                handle: bo,
                map_offset: u64::from(bo) << 32,
                vaddr: user,
                xdna_addr: if self.pasid { user } else { b.xdna_addr },
            });
        }
        if b.kind != BoKind::Dev {
            return Ok(BoInfo {
                handle: bo,
                map_offset: u64::from(bo) << 32,
                vaddr: 0,
                xdna_addr: b.xdna_addr,
            });
        }
        // A DEV buffer has no mmap offset of its own: it is reached at its
        // place inside the mapped heap.
        let heap = state.heap.and_then(|h| state.bos.get(&h));
        Ok(BoInfo {
            handle: bo,
            map_offset: INVALID_ADDR,
            vaddr: heap.map_or(0, |h| h.host + (b.xdna_addr - h.xdna_addr)),
            xdna_addr: b.xdna_addr,
        })
    }

    fn sync_bo(
        &self,
        bo: u32,
        direction: SyncDirection,
        offset: u64,
        size: u64,
    ) -> Result<(), HalError> {
        let mut guard = self.enter(Call::SyncBo {
            bo,
            direction,
            offset,
            size,
        })?;
        let state = &mut *guard;
        // The driver's checks (amd/xdna-driver @856409ca
        // `src/driver/amdxdna/amdxdna_gem.c` `amdxdna_drm_sync_bo_ioctl`):
        // ENOENT for a handle the descriptor lacks, EINVAL for a range past
        // the GEM object's size, which is the buffer's size rounded up to a
        // page (`amdxdna_page_align` for DEV buffers; drm_gem_shmem_create
        // rounds SHMEM, CMD and heap buffers likewise).
        let Some(b) = state.bos.get(&bo) else {
            return Err(HalError::from_errno("SYNC_BO", Errno::NOENT));
        };
        let object = b.size.div_ceil(FAKE_PAGE as u64) * FAKE_PAGE as u64;
        if object < offset || object < size || offset > object - size {
            return Err(HalError::from_errno("SYNC_BO", Errno::INVAL));
        }
        if direction != SyncDirection::ToDevice {
            return Ok(());
        }
        let Some((mem, at)) = state.backing(b) else {
            return Ok(());
        };
        let len = b.size as usize;
        let copy = state.synced.entry(bo).or_insert_with(|| vec![0; len]);
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(len);
        let end = usize::try_from(offset.saturating_add(size))
            .unwrap_or(usize::MAX)
            .min(len);
        let bytes = mem.bytes.borrow();
        if let Some(from) = bytes.get(at + start..at + end) {
            copy[start..end].copy_from_slice(from);
        }
        Ok(())
    }

    fn exec_cmd(&self, hwctx: u32, cmd: u32, bos: &[u32]) -> Result<u64, HalError> {
        let mut state = self.enter(Call::ExecCmd {
            hwctx,
            cmd,
            bos: bos.to_vec(),
        })?;
        let einval = || HalError::from_errno("EXEC_CMD", Errno::INVAL);
        if state.bos.get(&cmd).map(|b| b.kind) != Some(BoKind::Cmd) {
            return Err(einval());
        }
        let (_, last) = state.hwctxs.get_mut(&hwctx).ok_or_else(einval)?;
        *last += 1;
        let point = *last;
        let packet = state.packet(cmd);
        let sendable = FakeState::sendable(&packet, self.preempt);
        let untouched = bos.iter().copied().filter(|&b| !state.touched(b)).collect();
        state.submissions.push(Submission {
            hwctx,
            cmd,
            bos: bos.to_vec(),
            point,
            packet,
            untouched,
        });
        let finish = if sendable {
            state.completions.pop_front().unwrap_or(ErtState::Completed)
        } else {
            ErtState::New
        };
        state.pending.push(Pending {
            hwctx,
            point,
            cmd,
            state: finish,
        });
        Ok(point)
    }

    fn wait_syncobj(&self, syncobj: u32, point: u64, timeout: Duration) -> Result<(), HalError> {
        let mut state = self.enter(Call::WaitSyncobj {
            syncobj,
            point,
            timeout,
        })?;
        let (hwctx, submitted) = state
            .hwctxs
            .iter()
            .find(|(_, (s, _))| *s == syncobj)
            .map(|(h, (_, p))| (*h, *p))
            .ok_or_else(|| HalError::from_errno("SYNCOBJ_TIMELINE_WAIT", Errno::INVAL))?;
        if point > submitted {
            return Err(HalError::from_errno("SYNCOBJ_TIMELINE_WAIT", Errno::TIME));
        }
        // The commands up to the point are done: their states land in
        // their command buffers' headers.
        let (done, waiting): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut state.pending)
            .into_iter()
            .partition(|p| p.hwctx == hwctx && p.point <= point);
        state.pending = waiting;
        for p in done {
            let Some(mem) = state.bos.get(&p.cmd).and_then(|b| b.mem.clone()) else {
                continue;
            };
            if let Some(header) = mem.read_u32(0) {
                let word = (header & !ErtHeader::STATE_MASK) | p.state.raw();
                mem.bytes.borrow_mut()[..4].copy_from_slice(&word.to_le_bytes());
            }
        }
        Ok(())
    }

    fn map_bo(&self, info: &BoInfo, len: usize, align: usize) -> Result<FakeMap, HalError> {
        let mut guard = self.enter(Call::MapBo {
            bo: info.handle,
            len,
            align,
        })?;
        let state = &mut *guard;
        let einval = || HalError::from_errno("mmap", Errno::INVAL);
        let b = state.bos.get_mut(&info.handle).ok_or_else(einval)?;
        if len == 0 || b.kind == BoKind::Dev || len as u64 > b.size || !align.is_power_of_two() {
            return Err(einval());
        }
        let addr = state.next_host.next_multiple_of(align as u64);
        let mem = Rc::new(FakeMem::new(len));
        b.host = addr;
        b.mem = Some(mem.clone());
        state.next_host = addr + (len as u64).div_ceil(4096) * 4096;
        Ok(FakeMap { addr, mem })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hal::device::device_info;
    use crate::hal::uapi::Reply;

    #[test]
    fn a_scripted_failure_propagates_with_the_call_name() {
        let dev = FakeDevice::new();
        dev.fail_next("GET_INFO(FIRMWARE_VERSION)", Errno::IO);
        let err = device_info(&dev).unwrap_err();
        assert_eq!(err.call, "GET_INFO(FIRMWARE_VERSION)");
        assert_eq!(err.errno, Errno::IO.raw_os_error());
        assert_eq!(
            err.to_string(),
            "GET_INFO(FIRMWARE_VERSION) failed: EIO (Input/output error)"
        );
        // The script is used up: the same queries now succeed.
        let info = device_info(&dev).unwrap();
        assert_eq!(info.aie, dev.aie);
        assert_eq!(
            dev.call_names(),
            [
                "GET_INFO(AIE_VERSION)",
                "GET_INFO(FIRMWARE_VERSION)",
                "GET_INFO(AIE_VERSION)",
                "GET_INFO(FIRMWARE_VERSION)",
                "GET_INFO(AIE_METADATA)",
            ]
        );
    }

    #[test]
    fn the_fake_holds_the_driver_to_heap_before_context() {
        let dev = FakeDevice::new();
        let qos = QosInfo::default();
        let e = dev.create_hwctx(&qos, 0x800, 4).unwrap_err();
        assert_eq!(
            (e.call, e.errno),
            ("CREATE_HWCTX", Errno::NOENT.raw_os_error())
        );
        let e = dev.create_bo(4096, BoKind::Dev).unwrap_err();
        assert_eq!(
            (e.call, e.errno),
            ("CREATE_BO", Errno::INVAL.raw_os_error())
        );

        let heap = dev.create_bo(64 << 20, BoKind::DevHeap).unwrap();
        // Not yet mapped: no DEV buffer can be carved from it, and the
        // firmware could not be given its address.
        assert!(dev.create_bo(4096, BoKind::Dev).is_err());
        let e = dev.create_hwctx(&qos, 0x800, 4).unwrap_err();
        assert_eq!(
            (e.call, e.errno),
            ("CREATE_HWCTX", Errno::INVAL.raw_os_error())
        );
        let info = dev.bo_info(heap).unwrap();
        let map = dev.map_bo(&info, 64 << 20, 1).unwrap();
        assert_eq!(map.len(), 64 << 20);
        assert!(!map.is_empty());
        let ctx = dev.create_hwctx(&qos, 0x800, 4).unwrap();
        let a = dev.create_bo(100, BoKind::Dev).unwrap();
        let b = dev.create_bo(4096, BoKind::Dev).unwrap();
        let (ia, ib) = (dev.bo_info(a).unwrap(), dev.bo_info(b).unwrap());
        assert_eq!(ia.xdna_addr, info.xdna_addr);
        assert_eq!(ib.xdna_addr, info.xdna_addr + 4096);
        assert_eq!((ia.vaddr, ib.vaddr), (map.addr(), map.addr() + 4096));
        assert_eq!(ia.map_offset, u64::MAX);
        assert!(dev.create_bo((64 << 20) + 1, BoKind::Dev).is_err());

        dev.sync_bo(a, SyncDirection::ToDevice, 0, 100).unwrap();
        // Only a CMD buffer is a command (amdxdna_cmd_submit).
        let e = dev.exec_cmd(ctx.handle, b, &[a]).unwrap_err();
        assert_eq!((e.call, e.errno), ("EXEC_CMD", Errno::INVAL.raw_os_error()));
        let cmd = dev.create_bo(4096, BoKind::Cmd).unwrap();
        let point = dev.exec_cmd(ctx.handle, cmd, &[a]).unwrap();
        assert_eq!(point, 1);
        // Never mapped: the fake saw no packet, and `a` was never written.
        let sent = &dev.submissions()[0];
        assert_eq!((sent.cmd, sent.point), (cmd, 1));
        assert!(sent.packet.is_empty());
        assert_eq!(sent.untouched, [a]);
        // A point not yet submitted times out rather than hanging.
        let e = dev
            .wait_syncobj(ctx.syncobj, 2, Duration::from_secs(1))
            .unwrap_err();
        assert_eq!(e.errno, Errno::TIME.raw_os_error());
        dev.wait_syncobj(ctx.syncobj, point, Duration::from_secs(1))
            .unwrap();
        dev.destroy_hwctx(ctx.handle).unwrap();
        let calls = dev.calls();
        assert_eq!(
            [&calls[2..4], &calls[5..6]].concat(),
            [
                Call::CreateBo {
                    size: 64 << 20,
                    kind: BoKind::DevHeap
                },
                Call::CreateBo {
                    size: 4096,
                    kind: BoKind::Dev
                },
                Call::BoInfo { bo: heap },
            ]
        );
    }

    #[test]
    fn each_failure_reply_reaches_the_caller_typed() {
        type Step = fn(&FakeDevice) -> Result<(), HalError>;
        let calls: [(&str, Step); 8] = [
            ("CREATE_BO", |d| d.create_bo(4096, BoKind::Cmd).map(|_| ())),
            ("GET_BO_INFO", |d| d.bo_info(1).map(|_| ())),
            ("mmap", |d| {
                let info = d.bo_info(1)?;
                d.map_bo(&info, 4096, 1).map(|_| ())
            }),
            ("CREATE_HWCTX", |d| {
                d.create_hwctx(&QosInfo::default(), 0, 4).map(|_| ())
            }),
            ("CONFIG_HWCTX", |d| {
                let bo = d.create_bo(4096, BoKind::Dev)?;
                d.assign_debug_bo(2, bo)
            }),
            ("SYNC_BO", |d| d.sync_bo(1, SyncDirection::FromDevice, 0, 4)),
            ("EXEC_CMD", |d| {
                let cmd = d.create_bo(4096, BoKind::Cmd)?;
                d.exec_cmd(2, cmd, &[]).map(|_| ())
            }),
            ("SYNCOBJ_TIMELINE_WAIT", |d| {
                d.wait_syncobj(3, 0, Duration::ZERO)
            }),
        ];
        for (name, run) in calls {
            let dev = FakeDevice::new();
            let heap = dev.create_bo(64 << 20, BoKind::DevHeap).unwrap();
            assert_eq!(heap, 1);
            let info = dev.bo_info(heap).unwrap();
            let _map = dev.map_bo(&info, 4096, 1).unwrap();
            let ctx = dev.create_hwctx(&QosInfo::default(), 0, 4).unwrap();
            assert_eq!((ctx.handle, ctx.syncobj), (2, 3));
            run(&dev).unwrap();
            dev.fail_next(name, Errno::BUSY);
            let e = run(&dev).unwrap_err();
            assert_eq!(e.call, name);
            assert_eq!(e.meaning, "EBUSY (Device or resource busy)");
            assert_eq!(dev.call_names().last(), Some(&name));
        }
    }

    /// The CU and debug-buffer rules of aie2_ctx.c, the CMD-only EXEC_CMD
    /// of amdxdna_ctx.c, failures by position, and commands completing when
    /// a wait covers their point.

    #[test]
    fn the_fake_holds_the_driver_to_its_cu_debug_and_command_rules() {
        let dev = FakeDevice::new();
        let heap = dev.create_bo(64 << 20, BoKind::DevHeap).unwrap();
        let heap_map = dev
            .map_bo(&dev.bo_info(heap).unwrap(), 64 << 20, 1)
            .unwrap();
        let ctx = dev.create_hwctx(&QosInfo::default(), 2048, 16).unwrap();
        let again = dev.create_bo(64 << 20, BoKind::DevHeap).unwrap_err();
        assert_eq!(again.errno, Errno::BUSY.raw_os_error());
        let pdi = dev.create_bo(4096, BoKind::Dev).unwrap();
        let cmd = dev.create_bo(4096, BoKind::Cmd).unwrap();
        let einval = Errno::INVAL.raw_os_error();
        let cu = |bo| CuConfig {
            cu_bo: bo,
            cu_func: 0,
            pad: [0; 3],
        };
        assert_eq!(
            dev.config_cu(ctx.handle, &[cu(cmd)]).unwrap_err().errno,
            einval
        );
        assert_eq!(dev.config_cu(ctx.handle, &[]).unwrap_err().errno, einval);
        assert_eq!(dev.config_cu(99, &[cu(pdi)]).unwrap_err().errno, einval);
        dev.config_cu(ctx.handle, &[cu(pdi)]).unwrap();
        assert_eq!(
            dev.config_cu(ctx.handle, &[cu(pdi)]).unwrap_err().errno,
            einval
        );

        let debug = dev.create_bo(4096, BoKind::Dev).unwrap();
        assert_eq!(
            dev.assign_debug_bo(ctx.handle, cmd).unwrap_err().errno,
            einval
        );
        dev.assign_debug_bo(ctx.handle, debug).unwrap();
        let busy = dev.assign_debug_bo(ctx.handle, debug).unwrap_err();
        assert_eq!(busy.errno, Errno::BUSY.raw_os_error());

        // Call number n fails, whatever it is.
        let next = dev.calls().len();
        dev.fail_at(next + 1, Errno::NOMEM);
        dev.bo_info(pdi).unwrap();
        let e = dev.sync_bo(pdi, SyncDirection::ToDevice, 0, 4).unwrap_err();
        assert_eq!((e.call, e.errno), ("SYNC_BO", Errno::NOMEM.raw_os_error()));

        // Two packets in the command buffer: NEW, count 1, opcode 20.
        let map = dev.map_bo(&dev.bo_info(cmd).unwrap(), 4096, 1).unwrap();
        let header = 1u32 | 1 << 12 | 20 << 23;
        map.write(0, &header.to_le_bytes()).unwrap();
        map.write(4, &[1, 0, 0, 0, 0xEE]).unwrap();
        dev.complete_next_with(ErtState::Abort);
        let first = dev.exec_cmd(ctx.handle, cmd, &[pdi]).unwrap();
        let second = dev.exec_cmd(ctx.handle, cmd, &[pdi]).unwrap();
        let sent = dev.submissions();
        // The packet is the header and its count words, nothing after.
        assert_eq!(sent[0].packet, [0x01, 0x10, 0x00, 0x0A, 1, 0, 0, 0]);
        // The heap pages under `pdi` were never written.
        assert_eq!(sent[0].untouched, [pdi]);
        let state = |m: &FakeMap| {
            let mut word = [0u8; 4];
            m.read(0, &mut word).unwrap();
            ErtState::from_raw(u32::from_le_bytes(word) & 0xF)
        };
        assert_eq!(state(&map), ErtState::New);
        dev.wait_syncobj(ctx.syncobj, first, Duration::ZERO)
            .unwrap();
        assert_eq!(state(&map), ErtState::Abort);
        dev.wait_syncobj(ctx.syncobj, second, Duration::ZERO)
            .unwrap();
        assert_eq!(state(&map), ErtState::Completed);
        // Writing the heap through its mapping touches the pages.
        let at = (dev.bo_info(pdi).unwrap().vaddr - heap_map.addr()) as usize;
        heap_map.write(at + 4095, &[1, 2]).unwrap();
        dev.exec_cmd(ctx.handle, cmd, &[pdi]).unwrap();
        assert!(dev.submissions()[2].untouched.is_empty());
    }

    /// The device has a buffer's bytes as of its syncs to the device; the
    /// preempt opcodes are sent only with AIE2_PREEMPT and a whole preempt
    /// head, otherwise they reach their point still NEW.
    #[test]
    fn the_fake_sees_synced_bytes_and_holds_preempt_commands_to_the_driver() {
        let dev = FakeDevice::new();
        let heap = dev.create_bo(64 << 20, BoKind::DevHeap).unwrap();
        let heap_map = dev
            .map_bo(&dev.bo_info(heap).unwrap(), 64 << 20, 1)
            .unwrap();
        let pdi = dev.create_bo(8, BoKind::Dev).unwrap();
        assert_eq!(dev.synced_bytes(pdi), None);
        let at = (dev.bo_info(pdi).unwrap().vaddr - heap_map.addr()) as usize;
        heap_map.write(at, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        dev.sync_bo(pdi, SyncDirection::ToDevice, 2, 4).unwrap();
        assert_eq!(dev.synced_bytes(pdi).unwrap(), [0, 0, 3, 4, 5, 6, 0, 0]);
        // A write after the sync is not on the device until synced.
        heap_map.write(at, &[9]).unwrap();
        dev.sync_bo(pdi, SyncDirection::FromDevice, 0, 8).unwrap();
        assert_eq!(dev.synced_bytes(pdi).unwrap()[0], 0);

        for (preempt, opcode, count, after) in [
            // CU mask + 10-word head + first argument: sent, completed.
            (true, 22, 13, ErtState::Completed),
            // A payload shorter than the head: EINVAL in the driver's fill.
            (true, 22, 10, ErtState::New),
            // Without AIE2_PREEMPT: EOPNOTSUPP for both preempt opcodes.
            (false, 22, 13, ErtState::New),
            (false, 21, 13, ErtState::New),
            (false, 20, 5, ErtState::Completed),
        ] {
            assert_eq!(
                state_after(preempt, opcode, count),
                after,
                "preempt {preempt}, opcode {opcode}, count {count}"
            );
        }
    }

    /// The state a command of `opcode` with `count` payload words is in once
    /// its point is reached, on a fake with or without AIE2_PREEMPT.
    fn state_after(preempt: bool, opcode: u32, count: u32) -> ErtState {
        let mut dev = FakeDevice::new();
        dev.preempt = preempt;
        let heap = dev.create_bo(64 << 20, BoKind::DevHeap).unwrap();
        let _heap_map = dev
            .map_bo(&dev.bo_info(heap).unwrap(), 64 << 20, 1)
            .unwrap();
        let ctx = dev.create_hwctx(&QosInfo::default(), 0, 4).unwrap();
        let cmd = dev.create_bo(4096, BoKind::Cmd).unwrap();
        let map = dev.map_bo(&dev.bo_info(cmd).unwrap(), 4096, 1).unwrap();
        let header = 1 | count << 12 | opcode << 23;
        map.write(0, &header.to_le_bytes()).unwrap();
        let point = dev.exec_cmd(ctx.handle, cmd, &[]).unwrap();
        dev.wait_syncobj(ctx.syncobj, point, Duration::ZERO)
            .unwrap();
        let mut word = [0u8; 4];
        map.read(0, &mut word).unwrap();
        ErtState::from_raw(u32::from_le_bytes(word) & 0xF)
    }

    /// SYNC_BO as xdna-driver's `amdxdna_drm_sync_bo_ioctl` checks it: the
    /// handle must exist (ENOENT) and `offset..offset + size` lie within the
    /// page-rounded object (EINVAL), in both directions, without overflow.
    #[test]
    fn the_fake_checks_sync_ranges_as_the_driver_does() {
        let dev = FakeDevice::new();
        let heap = dev.create_bo(64 << 20, BoKind::DevHeap).unwrap();
        let _map = dev
            .map_bo(&dev.bo_info(heap).unwrap(), 64 << 20, 1)
            .unwrap();
        let dev_bo = dev.create_bo(100, BoKind::Dev).unwrap();
        let shmem = dev.create_bo(5000, BoKind::Shmem).unwrap();
        let (einval, enoent) = (Errno::INVAL.raw_os_error(), Errno::NOENT.raw_os_error());
        for direction in [SyncDirection::ToDevice, SyncDirection::FromDevice] {
            let sync = |bo, offset, size| {
                dev.sync_bo(bo, direction, offset, size)
                    .map_err(|e| (e.call, e.errno))
            };
            // Within the object, which is the size rounded up to a page.
            assert_eq!(sync(dev_bo, 0, 100), Ok(()));
            assert_eq!(sync(dev_bo, 0, 4096), Ok(()));
            assert_eq!(sync(dev_bo, 4096, 0), Ok(()));
            assert_eq!(sync(dev_bo, 4000, 96), Ok(()));
            assert_eq!(sync(shmem, 0, 8192), Ok(()));
            // Past it.
            assert_eq!(sync(dev_bo, 0, 4097), Err(("SYNC_BO", einval)));
            assert_eq!(sync(dev_bo, 4097, 0), Err(("SYNC_BO", einval)));
            assert_eq!(sync(dev_bo, 4000, 97), Err(("SYNC_BO", einval)));
            assert_eq!(sync(shmem, 4096, 4097), Err(("SYNC_BO", einval)));
            assert_eq!(sync(dev_bo, u64::MAX, 1), Err(("SYNC_BO", einval)));
            assert_eq!(sync(dev_bo, 1, u64::MAX), Err(("SYNC_BO", einval)));
            // A handle the descriptor lacks.
            assert_eq!(sync(99, 0, 4), Err(("SYNC_BO", enoent)));
        }
    }

    /// The raw query: the driver's struct cut to the size asked for (or
    /// zero-padded past it), scripted replies for other parameters, and
    /// EOPNOTSUPP for one it does not know.
    #[test]
    fn raw_queries_answer_by_parameter_and_size() {
        let mut dev = FakeDevice::new();
        dev.aie = AieVersion { major: 2, minor: 1 };
        dev.metadata.cols = 8;
        assert_eq!(
            dev.query(QUERY_AIE_VERSION, 8).unwrap(),
            [2, 0, 0, 0, 1, 0, 0, 0]
        );
        assert_eq!(dev.query(QUERY_AIE_VERSION, 4).unwrap(), [2, 0, 0, 0]);
        assert_eq!(
            dev.query(QUERY_AIE_VERSION, 12).unwrap(),
            [2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]
        );
        let metadata = dev.query(QUERY_AIE_METADATA, 64).unwrap();
        assert_eq!(metadata.len(), 64);
        assert_eq!(AieMetadata::parse(&metadata), dev.metadata);
        let e = dev.query(5, 40).unwrap_err();
        assert_eq!(
            (e.call, e.errno),
            ("GET_INFO(HW_CONTEXTS)", Errno::OPNOTSUPP.raw_os_error())
        );
        dev.reply_to(12, &[7; 24]);
        assert_eq!(dev.query(12, 16).unwrap(), [7; 16]);
        assert_eq!(dev.query(77, 1).unwrap_err().call, "GET_INFO");
        // The typed queries are the raw ones, parsed.
        assert_eq!(dev.aie_version().unwrap(), dev.aie);
        assert_eq!(
            dev.call_names(),
            [
                "GET_INFO(AIE_VERSION)",
                "GET_INFO(AIE_VERSION)",
                "GET_INFO(AIE_VERSION)",
                "GET_INFO(AIE_METADATA)",
                "GET_INFO(HW_CONTEXTS)",
                "GET_INFO(RESOURCE_INFO)",
                "GET_INFO",
                "GET_INFO(AIE_VERSION)",
            ]
        );
    }

    #[test]
    fn fake_maps_copy_in_and_out_within_bounds() {
        let dev = FakeDevice::new();
        let cmd = dev.create_bo(4096, BoKind::Cmd).unwrap();
        let info = dev.bo_info(cmd).unwrap();
        let map = dev.map_bo(&info, 64, 1).unwrap();
        map.write(60, &[1, 2, 3, 4]).unwrap();
        let mut out = [0u8; 4];
        map.read(60, &mut out).unwrap();
        assert_eq!(out, [1, 2, 3, 4]);
        assert!(map.write(61, &[0; 4]).is_err());
        assert!(map.read(usize::MAX, &mut out).is_err());
        assert!(dev.map_bo(&info, 8192, 1).is_err());
    }
}
