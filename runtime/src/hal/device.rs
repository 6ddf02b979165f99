//! The operations the runtime needs from an amdxdna NPU, as the `Device`
//! trait; the real device over `ioctl` (the recording fake is `super::fake`),
//! and discovery of the NPUs this machine has.

use super::ioctl::{self, bytes_of, Channel, HalError, Mapping, OutOfRange, Syscall};
use super::uapi::{
    AieMetadata, AieVersion, ConfigCuHead, ConfigHwctx, CreateBo, CreateHwctx, CuConfig,
    DestroyHwctx, ExecCmd, FirmwareVersion, GetBoInfo, QosInfo, Reply, SyncBo, SyncobjTimelineWait,
    BO_CMD, BO_DEV, BO_DEV_HEAP, BO_SHMEM, CMD_SUBMIT_EXEC_BUF, HWCTX_ASSIGN_DBG_BUF,
    HWCTX_CONFIG_CU, SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, SYNC_DIRECT_FROM_DEVICE,
    SYNC_DIRECT_TO_DEVICE,
};
use loom_targets::DeviceProfile;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::mem::{size_of, size_of_val};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

/// `enum amdxdna_bo_type`: what a buffer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoKind {
    /// Host memory the device reaches through the process's page tables.
    Shmem,
    /// The client's device heap that DEV buffers are carved from.
    DevHeap,
    /// A buffer inside the device heap.
    Dev,
    /// A command buffer (an ERT packet).
    Cmd,
}

impl BoKind {
    pub fn raw(self) -> u32 {
        match self {
            BoKind::Shmem => BO_SHMEM,
            BoKind::DevHeap => BO_DEV_HEAP,
            BoKind::Dev => BO_DEV,
            BoKind::Cmd => BO_CMD,
        }
    }
}

/// The direction of a SYNC_BO cache operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncDirection {
    ToDevice,
    FromDevice,
}

impl SyncDirection {
    pub fn raw(self) -> u32 {
        match self {
            SyncDirection::ToDevice => SYNC_DIRECT_TO_DEVICE,
            SyncDirection::FromDevice => SYNC_DIRECT_FROM_DEVICE,
        }
    }
}

/// A hardware context and the timeline syncobj its commands signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hwctx {
    pub handle: u32,
    pub syncobj: u32,
}

/// GET_BO_INFO's answer for a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoInfo {
    pub handle: u32,
    /// The offset to mmap the buffer at (`INVALID_ADDR` when it has none).
    pub map_offset: u64,
    /// The buffer's user address once it has one (DEV buffers live inside
    /// the mapped heap), else `INVALID_ADDR` (or 0 from older drivers).
    pub vaddr: u64,
    /// The device address the NPU uses, `INVALID_ADDR` when the driver
    /// has none for it (a SHMEM buffer under PASID before its mmap).
    pub xdna_addr: u64,
}

/// A buffer mapped into this process; only copies go in and out, because
/// the NPU writes the pages behind Rust's back.
pub trait BoMap {
    /// The mapping's address in this process.
    fn addr(&self) -> u64;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn read(&self, at: usize, out: &mut [u8]) -> Result<(), OutOfRange>;
    fn write(&self, at: usize, data: &[u8]) -> Result<(), OutOfRange>;
}

impl BoMap for Mapping {
    fn addr(&self) -> u64 {
        Mapping::addr(self)
    }
    fn len(&self) -> usize {
        Mapping::len(self)
    }
    fn read(&self, at: usize, out: &mut [u8]) -> Result<(), OutOfRange> {
        Mapping::read(self, at, out)
    }
    fn write(&self, at: usize, data: &[u8]) -> Result<(), OutOfRange> {
        Mapping::write(self, at, data)
    }
}

/// A descriptor's device heap once one is made, and its mapping once
/// mapped. The driver keeps one heap per descriptor until the descriptor
/// closes, and refuses a second (EBUSY) even after a failed open: it sets
/// `client->dev_heap` when the heap is created and drops it only in
/// `amdxdna_drm_close` (amd/xdna-driver @856409ca
/// `src/driver/amdxdna/amdxdna_gem.c` `amdxdna_drm_create_dev_heap_bo`,
/// `amdxdna_drm.c` `amdxdna_drm_close`). So a device keeps its heap here as
/// long: `Context::open` uses the heap (and mapping) a failed or closed
/// context left rather than asking for another. The mapping stays for the
/// descriptor's life too: the driver gives the firmware the heap's user
/// address, the first mapping's (`amdxdna_hmm_register`), and forgets it
/// only in a work item after the last unmap.
pub struct HeapSlot<M> {
    handle: Cell<Option<u32>>,
    mapped: RefCell<Option<(u64, Rc<M>)>>,
}

impl<M> Default for HeapSlot<M> {
    fn default() -> Self {
        HeapSlot {
            handle: Cell::new(None),
            mapped: RefCell::new(None),
        }
    }
}

impl<M> HeapSlot<M> {
    /// The heap's BO handle, once created.
    pub fn handle(&self) -> Option<u32> {
        self.handle.get()
    }

    pub fn set_handle(&self, handle: u32) {
        self.handle.set(Some(handle));
    }

    /// The heap's device address and mapping, once mapped.
    pub fn mapped(&self) -> Option<(u64, Rc<M>)> {
        self.mapped.borrow().clone()
    }

    pub fn set_mapped(&self, xdna_addr: u64, map: Rc<M>) {
        *self.mapped.borrow_mut() = Some((xdna_addr, map));
    }
}

impl<M> fmt::Debug for HeapSlot<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mapped = self.mapped.borrow().as_ref().map(|(at, _)| *at);
        write!(
            f,
            "HeapSlot({:?}, mapped at {mapped:x?})",
            self.handle.get()
        )
    }
}

/// The kernel calls a run needs, each failing with the call's name and
/// errno. The real device issues ioctls; `FakeDevice` records them.
pub trait Device {
    type Map: BoMap;

    /// GET_INFO query `param` (`enum amdxdna_drm_get_param`) with a
    /// `size`-byte reply: the bytes the driver wrote (zeroes past them; it
    /// writes at most `size`, fewer when its reply struct is smaller).
    fn query(&self, param: u32, size: usize) -> Result<Vec<u8>, HalError>;

    /// A typed GET_INFO reply through `query`.
    fn query_as<R: Reply>(&self) -> Result<R, HalError>
    where
        Self: Sized,
    {
        Ok(R::parse(&self.query(R::PARAM, R::SIZE)?))
    }

    fn aie_version(&self) -> Result<AieVersion, HalError>
    where
        Self: Sized,
    {
        self.query_as()
    }
    fn firmware_version(&self) -> Result<FirmwareVersion, HalError>
    where
        Self: Sized,
    {
        self.query_as()
    }
    fn aie_metadata(&self) -> Result<AieMetadata, HalError>
    where
        Self: Sized,
    {
        self.query_as()
    }
    /// Where this descriptor keeps its device heap (see `HeapSlot`).
    fn heap_slot(&self) -> &HeapSlot<Self::Map>;
    /// CREATE_HWCTX; the driver refuses it (ENOENT) until the client has a
    /// device heap.
    fn create_hwctx(&self, qos: &QosInfo, max_opc: u32, num_tiles: u32) -> Result<Hwctx, HalError>;
    fn destroy_hwctx(&self, hwctx: u32) -> Result<(), HalError>;
    /// CONFIG_HWCTX(CONFIG_CU): the context's compute units and the BOs of
    /// their firmware images.
    fn config_cu(&self, hwctx: u32, cus: &[CuConfig]) -> Result<(), HalError>;
    /// CONFIG_HWCTX(ASSIGN_DBG_BUF).
    fn assign_debug_bo(&self, hwctx: u32, bo: u32) -> Result<(), HalError>;
    fn create_bo(&self, size: u64, kind: BoKind) -> Result<u32, HalError>;
    fn bo_info(&self, bo: u32) -> Result<BoInfo, HalError>;
    fn sync_bo(
        &self,
        bo: u32,
        direction: SyncDirection,
        offset: u64,
        size: u64,
    ) -> Result<(), HalError>;
    /// EXEC_CMD of command buffer `cmd` (the inline, single-command form)
    /// with the BOs the run uses; returns the syncobj timeline point.
    fn exec_cmd(&self, hwctx: u32, cmd: u32, bos: &[u32]) -> Result<u64, HalError>;
    /// Waits (WAIT_FOR_SUBMIT) until `syncobj` reaches `point` or `timeout`
    /// passes (ETIME).
    fn wait_syncobj(&self, syncobj: u32, point: u64, timeout: Duration) -> Result<(), HalError>;
    /// Maps `len` bytes of the buffer `info` describes at an address that is
    /// a multiple of `align` (a power of two).
    fn map_bo(&self, info: &BoInfo, len: usize, align: usize) -> Result<Self::Map, HalError>;
}

/// The NPU's versions and geometry as GET_INFO reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub aie: AieVersion,
    pub firmware: FirmwareVersion,
    pub metadata: AieMetadata,
}

/// Runs the three GET_INFO queries.
pub fn device_info<D: Device>(dev: &D) -> Result<DeviceInfo, HalError> {
    Ok(DeviceInfo {
        aie: dev.aie_version()?,
        firmware: dev.firmware_version()?,
        metadata: dev.aie_metadata()?,
    })
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, w, m) = (self.aie, self.firmware, self.metadata);
        write!(
            f,
            "AIE {}.{}, firmware {}.{}.{}.{}, {} columns x {} rows",
            a.major, a.minor, w.major, w.minor, w.patch, w.build, m.cols, m.rows
        )
    }
}

/// The rows of one tile kind as a start and a count, if they are
/// contiguous.
fn row_range(rows: &[u32]) -> Option<(u32, u32)> {
    let first = *rows.first()?;
    let contiguous = rows.iter().zip(first..).all(|(&r, want)| r == want);
    contiguous.then_some((first, rows.len() as u32))
}

/// The array a profile describes, as GET_INFO's AIE_METADATA would report
/// it (the counts and starts the driver and Loom both rely on).
pub(super) fn profile_rows(profile: &DeviceProfile) -> [(&'static str, Option<(u32, u32)>); 3] {
    let a = &profile.array;
    [
        ("core", row_range(&a.core_rows)),
        ("memory tile", row_range(&a.memory_tile_rows)),
        ("shim", row_range(&a.shim_rows)),
    ]
}

/// How the array GET_INFO reports differs from the one a profile
/// describes, each difference as `what: NPU value, profile value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeometryMismatch {
    pub profile: String,
    pub differences: Vec<String>,
}

impl fmt::Display for GeometryMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the NPU's array (GET_INFO AIE_METADATA) is not the one profile {} describes: {}",
            self.profile,
            self.differences.join("; ")
        )
    }
}

impl std::error::Error for GeometryMismatch {}

/// Checks the columns, rows and each tile kind's rows GET_INFO reports
/// against `profile`, which placed the artifact's tiles.
pub fn check_geometry(
    profile: &DeviceProfile,
    metadata: &AieMetadata,
) -> Result<(), GeometryMismatch> {
    let mut differences = Vec::new();
    let a = &profile.array;
    let mut compare = |what: &str, npu: String, wanted: String| {
        if npu != wanted {
            differences.push(format!("{what} {npu}, profile {wanted}"));
        }
    };
    compare("columns", metadata.cols.to_string(), a.columns.to_string());
    compare("rows", metadata.rows.to_string(), a.rows.to_string());
    let reported = [metadata.core, metadata.mem, metadata.shim];
    for ((kind, wanted), got) in profile_rows(profile).into_iter().zip(reported) {
        let shown = |(start, count): (u32, u32)| match count {
            0 => "no rows".to_string(),
            1 => format!("row {start}"),
            _ => format!("rows {start}-{}", start + count - 1),
        };
        let wanted = wanted.map_or("not contiguous".to_string(), shown);
        let got = shown((u32::from(got.row_start), u32::from(got.row_count)));
        compare(kind, got, wanted);
    }
    if differences.is_empty() {
        return Ok(());
    }
    Err(GeometryMismatch {
        profile: profile.name.clone(),
        differences,
    })
}

/// The CONFIG_CU parameter block: the head and then each CU, as the driver
/// copies it in (little-endian; at most a page).
pub fn config_cu_bytes(cus: &[CuConfig]) -> Result<Vec<u8>, HalError> {
    const PAGE: usize = 4096;
    let num_cus =
        u16::try_from(cus.len()).map_err(|_| HalError::from_errno("CONFIG_HWCTX", Errno::INVAL))?;
    let size = size_of::<ConfigCuHead>() + size_of_val(cus);
    if size > PAGE {
        return Err(HalError::from_errno("CONFIG_HWCTX", Errno::TOOBIG));
    }
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&num_cus.to_le_bytes());
    out.extend_from_slice(&[0u8; 6]);
    for cu in cus {
        out.extend_from_slice(&cu.cu_bo.to_le_bytes());
        out.push(cu.cu_func);
        out.extend_from_slice(&cu.pad);
    }
    Ok(out)
}

/// An amdxdna NPU opened read-write, or the same device over a `Syscall`
/// seam that takes its requests instead of the kernel.
#[derive(Debug)]
pub struct XdnaDevice {
    chan: Channel,
    node: PathBuf,
    heap: HeapSlot<Mapping>,
}

impl XdnaDevice {
    pub fn open(node: &Path) -> Result<XdnaDevice, HalError> {
        let fd = rustix::fs::open(node, OFlags::RDWR | OFlags::CLOEXEC, Mode::empty())
            .map_err(|e| HalError::from_errno("open", e))?;
        Ok(XdnaDevice {
            chan: Channel::Kernel(fd),
            node: node.to_path_buf(),
            heap: HeapSlot::default(),
        })
    }

    /// The real device's requests, as raw request numbers and argument
    /// bytes, handed to `seam` instead of the kernel (its node is shown as
    /// `<seam>`).
    pub fn over(seam: Box<dyn Syscall>) -> XdnaDevice {
        XdnaDevice {
            chan: Channel::Seam(seam),
            node: PathBuf::from("<seam>"),
            heap: HeapSlot::default(),
        }
    }

    pub fn node(&self) -> &Path {
        &self.node
    }
}

/// `timeout` from now as an absolute CLOCK_MONOTONIC time, saturating.
fn deadline_ns(timeout: Duration) -> i64 {
    let span = i64::try_from(timeout.as_nanos()).unwrap_or(i64::MAX);
    ioctl::monotonic_ns().saturating_add(span)
}

impl Device for XdnaDevice {
    type Map = Mapping;

    fn query(&self, param: u32, size: usize) -> Result<Vec<u8>, HalError> {
        self.chan.query(param, size)
    }

    fn heap_slot(&self) -> &HeapSlot<Mapping> {
        &self.heap
    }

    fn create_hwctx(&self, qos: &QosInfo, max_opc: u32, num_tiles: u32) -> Result<Hwctx, HalError> {
        let mut arg = CreateHwctx {
            qos_p: qos as *const QosInfo as u64,
            max_opc,
            num_tiles,
            ..Default::default()
        };
        self.chan.call(&mut arg, &[bytes_of(qos)])?;
        Ok(Hwctx {
            handle: arg.handle,
            syncobj: arg.syncobj_handle,
        })
    }

    fn destroy_hwctx(&self, hwctx: u32) -> Result<(), HalError> {
        let mut arg = DestroyHwctx {
            handle: hwctx,
            pad: 0,
        };
        self.chan.call(&mut arg, &[])
    }

    fn config_cu(&self, hwctx: u32, cus: &[CuConfig]) -> Result<(), HalError> {
        let block = config_cu_bytes(cus)?;
        let mut arg = ConfigHwctx {
            handle: hwctx,
            param_type: HWCTX_CONFIG_CU,
            param_val: block.as_ptr() as u64,
            // At most a page (config_cu_bytes).
            param_val_size: block.len() as u32,
            pad: 0,
        };
        self.chan.call(&mut arg, &[&block])
    }

    fn assign_debug_bo(&self, hwctx: u32, bo: u32) -> Result<(), HalError> {
        let mut arg = ConfigHwctx {
            handle: hwctx,
            param_type: HWCTX_ASSIGN_DBG_BUF,
            param_val: u64::from(bo),
            ..Default::default()
        };
        self.chan.call(&mut arg, &[])
    }

    fn create_bo(&self, size: u64, kind: BoKind) -> Result<u32, HalError> {
        let mut arg = CreateBo {
            size,
            kind: kind.raw(),
            ..Default::default()
        };
        self.chan.call(&mut arg, &[])?;
        Ok(arg.handle)
    }

    fn bo_info(&self, bo: u32) -> Result<BoInfo, HalError> {
        let mut arg = GetBoInfo {
            handle: bo,
            ..Default::default()
        };
        self.chan.call(&mut arg, &[])?;
        Ok(BoInfo {
            handle: bo,
            map_offset: arg.map_offset,
            vaddr: arg.vaddr,
            xdna_addr: arg.xdna_addr,
        })
    }

    fn sync_bo(
        &self,
        bo: u32,
        direction: SyncDirection,
        offset: u64,
        size: u64,
    ) -> Result<(), HalError> {
        let mut arg = SyncBo {
            handle: bo,
            direction: direction.raw(),
            offset,
            size,
        };
        self.chan.call(&mut arg, &[])
    }

    fn exec_cmd(&self, hwctx: u32, cmd: u32, bos: &[u32]) -> Result<u64, HalError> {
        let arg_count =
            u32::try_from(bos.len()).map_err(|_| HalError::from_errno("EXEC_CMD", Errno::INVAL))?;
        let mut arg = ExecCmd {
            hwctx,
            kind: CMD_SUBMIT_EXEC_BUF,
            cmd_handles: u64::from(cmd),
            args: bos.as_ptr() as u64,
            cmd_count: 1,
            arg_count,
            ..Default::default()
        };
        self.chan.call(&mut arg, &[bytes_of(bos)])?;
        Ok(arg.seq)
    }

    fn wait_syncobj(&self, syncobj: u32, point: u64, timeout: Duration) -> Result<(), HalError> {
        let mut arg = SyncobjTimelineWait {
            handles: &syncobj as *const u32 as u64,
            points: &point as *const u64 as u64,
            timeout_nsec: deadline_ns(timeout),
            count_handles: 1,
            flags: SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
            ..Default::default()
        };
        self.chan
            .call(&mut arg, &[bytes_of(&syncobj), bytes_of(&point)])
    }

    fn map_bo(&self, info: &BoInfo, len: usize, align: usize) -> Result<Mapping, HalError> {
        self.chan.map(info.map_offset, len, align)
    }
}

/// A PCI vendor, device and revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PciId {
    pub vendor: u16,
    pub device: u16,
    pub revision: u8,
}

impl fmt::Display for PciId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:04x} rev {:#04x}",
            self.vendor, self.device, self.revision
        )
    }
}

/// "0x17f0", "17f0" or "0x10\n" as a number.
fn parse_hex(text: &str) -> Option<u32> {
    let t = text.trim();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    u32::from_str_radix(t, 16).ok()
}

impl PciId {
    /// The id a profile names (`"1022:17f0"`, `"0x10"`).
    pub fn of_profile(profile: &DeviceProfile) -> Option<PciId> {
        let (vendor, device) = profile.device.pci_id.split_once(':')?;
        Some(PciId {
            vendor: u16::try_from(parse_hex(vendor)?).ok()?,
            device: u16::try_from(parse_hex(device)?).ok()?,
            revision: u8::try_from(parse_hex(&profile.device.pci_revision)?).ok()?,
        })
    }

    /// The profile of this exact device and revision, if Loom has one.
    pub fn profile(self) -> Option<&'static DeviceProfile> {
        loom_targets::profiles()
            .iter()
            .find(|p| PciId::of_profile(p) == Some(self))
    }
}

/// An amdxdna NPU this machine has: its node, PCI id and Loom profile.
#[derive(Clone, Debug)]
pub struct Npu {
    pub node: PathBuf,
    pub pci: PciId,
    pub profile: &'static DeviceProfile,
}

impl Npu {
    pub fn open(&self) -> Result<XdnaDevice, HalError> {
        XdnaDevice::open(&self.node)
    }
}

/// No amdxdna NPU with a Loom profile: where discovery looked and what it
/// found at each node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoDevice {
    pub dir: String,
    pub looked_at: Vec<String>,
}

impl fmt::Display for NoDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no amdxdna device found")?;
        if self.looked_at.is_empty() {
            write!(f, " (no accel* nodes in {})", self.dir)
        } else {
            write!(f, " (looked at {})", self.looked_at.join(", "))
        }
    }
}

impl std::error::Error for NoDevice {}

/// The kernel's name for the amdxdna driver (the reference's DRIVER).
pub const DRIVER: &str = "amdxdna";

/// The `accelN` entries of `dir`, by number.
fn accel_nodes(dir: &Path) -> Vec<(u32, String)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut nodes: Vec<(u32, String)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let n = name.strip_prefix("accel")?.parse().ok()?;
            Some((n, name))
        })
        .collect();
    nodes.sort();
    nodes
}

fn read_id(dir: &Path, file: &str) -> Result<u32, String> {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_hex(&text)
        .ok_or_else(|| format!("{}: not a hex number: {:?}", path.display(), text.trim()))
}

fn read_pci(dir: &Path) -> Result<PciId, String> {
    let too_wide = |file: &str| format!("{}: out of range", dir.join(file).display());
    Ok(PciId {
        vendor: u16::try_from(read_id(dir, "vendor")?).map_err(|_| too_wide("vendor"))?,
        device: u16::try_from(read_id(dir, "device")?).map_err(|_| too_wide("device"))?,
        revision: u8::try_from(read_id(dir, "revision")?).map_err(|_| too_wide("revision"))?,
    })
}

/// What one accel node is: an NPU, or why not.
fn probe(node: &Path, sysfs_device: &Path) -> Result<Npu, String> {
    let shown = node.display();
    let driver = std::fs::read_link(sysfs_device.join("driver"))
        .ok()
        .and_then(|target| target.file_name()?.to_str().map(str::to_string));
    match driver.as_deref() {
        None => return Err(format!("{shown} (no driver bound)")),
        Some(DRIVER) => {}
        Some(other) => return Err(format!("{shown} (driver {other})")),
    }
    let pci = read_pci(sysfs_device).map_err(|e| format!("{shown} ({DRIVER}, {e})"))?;
    let profile = pci
        .profile()
        .ok_or_else(|| format!("{shown} ({DRIVER}, PCI {pci}: no Loom profile)"))?;
    Ok(Npu {
        node: node.to_path_buf(),
        pci,
        profile,
    })
}

/// The amdxdna NPUs under `dev_root` (`/dev`: its `accel/accel*` nodes),
/// identified through `sys_root` (`/sys`: `class/accel/accelN/device/`'s
/// `driver` link and `vendor`, `device`, `revision` files).
pub fn discover(dev_root: &Path, sys_root: &Path) -> Result<Vec<Npu>, NoDevice> {
    let dir = dev_root.join("accel");
    let mut found = Vec::new();
    let mut looked_at = Vec::new();
    for (_, name) in accel_nodes(&dir) {
        let sysfs_device = sys_root.join("class/accel").join(&name).join("device");
        match probe(&dir.join(&name), &sysfs_device) {
            Ok(npu) => found.push(npu),
            Err(why) => looked_at.push(why),
        }
    }
    if found.is_empty() {
        return Err(NoDevice {
            dir: dir.display().to_string(),
            looked_at,
        });
    }
    Ok(found)
}

/// `discover` on this machine's `/dev` and `/sys`.
pub fn discover_system() -> Result<Vec<Npu>, NoDevice> {
    discover(Path::new("/dev"), Path::new("/sys"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hal::fake::FakeDevice;
    use crate::hal::testdir::TestDir;
    use std::os::fd::AsFd;

    /// A fake `/dev` + `/sys` with one accel node per (driver, vendor,
    /// device, revision).
    fn tree(nodes: &[(u32, Option<&str>, &str, &str, &str)]) -> TestDir {
        let t = TestDir::new("discover");
        std::fs::create_dir_all(t.path().join("dev/accel")).unwrap();
        for (n, driver, vendor, device, revision) in nodes {
            std::fs::write(t.path().join(format!("dev/accel/accel{n}")), b"").unwrap();
            let dev = t.path().join(format!("sys/class/accel/accel{n}/device"));
            std::fs::create_dir_all(&dev).unwrap();
            std::fs::write(dev.join("vendor"), format!("{vendor}\n")).unwrap();
            std::fs::write(dev.join("device"), format!("{device}\n")).unwrap();
            std::fs::write(dev.join("revision"), format!("{revision}\n")).unwrap();
            if let Some(driver) = driver {
                let target = t.path().join("sys/bus/pci/drivers").join(driver);
                std::fs::create_dir_all(&target).unwrap();
                std::os::unix::fs::symlink(&target, dev.join("driver")).unwrap();
            }
        }
        t
    }

    fn run(t: &TestDir) -> Result<Vec<Npu>, NoDevice> {
        discover(&t.path().join("dev"), &t.path().join("sys"))
    }

    #[test]
    fn strix_and_strix_halo_map_to_their_profiles() {
        let t = tree(&[
            (0, Some("amdxdna"), "0x1022", "0x17f0", "0x10"),
            (1, Some("amdxdna"), "0x1022", "0x17f0", "0x11"),
        ]);
        let npus = run(&t).unwrap();
        let names: Vec<&str> = npus.iter().map(|n| n.profile.name.as_str()).collect();
        assert_eq!(
            names,
            ["amd.xdna.strix.17f0_10", "amd.xdna.strix_halo.17f0_11"]
        );
        assert_eq!(
            npus[1].pci,
            PciId {
                vendor: 0x1022,
                device: 0x17f0,
                revision: 0x11
            }
        );
        assert!(npus[0].node.ends_with("dev/accel/accel0"));
        // The tree's node is a plain file: it opens, and answers no ioctl.
        let dev = npus[0].open().unwrap();
        assert_eq!(dev.node(), npus[0].node);
        assert_eq!(dev.aie_version().unwrap_err().call, "GET_INFO(AIE_VERSION)");
    }

    #[test]
    fn the_reported_array_is_checked_against_the_profile() {
        for p in loom_targets::profiles() {
            let dev = FakeDevice::of_profile(p);
            let info = device_info(&dev).unwrap();
            check_geometry(p, &info.metadata).unwrap();
        }
        let strix = &loom_targets::profiles()[0];
        let mut metadata = FakeDevice::of_profile(strix).metadata;
        metadata.cols = 4;
        metadata.core.row_count = 2;
        metadata.shim.row_count = 0;
        let e = check_geometry(strix, &metadata).unwrap_err();
        assert_eq!(
            e.differences,
            [
                "columns 4, profile 8",
                "core rows 2-3, profile rows 2-5",
                "shim no rows, profile row 0"
            ]
        );
        assert_eq!(
            e.to_string(),
            "the NPU's array (GET_INFO AIE_METADATA) is not the one profile \
             amd.xdna.strix.17f0_10 describes: columns 4, profile 8; core rows \
             2-3, profile rows 2-5; shim no rows, profile row 0"
        );
        let info = DeviceInfo {
            aie: AieVersion { major: 2, minor: 1 },
            firmware: FirmwareVersion {
                major: 1,
                minor: 5,
                patch: 2,
                build: 380,
            },
            metadata,
        };
        assert_eq!(
            info.to_string(),
            "AIE 2.1, firmware 1.5.2.380, 4 columns x 6 rows"
        );
    }

    #[test]
    fn profiles_come_from_the_target_data() {
        // Every profile's PCI id parses and maps back to that profile.
        for p in loom_targets::profiles() {
            let id = PciId::of_profile(p).unwrap();
            assert_eq!(id.profile().map(|q| q.name.as_str()), Some(p.name.as_str()));
        }
    }

    #[test]
    fn an_unknown_revision_and_other_drivers_are_reported() {
        let t = tree(&[
            (0, Some("amdxdna"), "0x1022", "0x17f0", "0x12"),
            (1, Some("ivpu"), "0x8086", "0x7d1d", "0x04"),
            (2, None, "0x1022", "0x17f0", "0x10"),
        ]);
        let err = run(&t).unwrap_err();
        assert_eq!(err.looked_at.len(), 3, "{err}");
        assert!(
            err.looked_at[0].ends_with("accel0 (amdxdna, PCI 1022:17f0 rev 0x12: no Loom profile)")
        );
        assert!(err.looked_at[1].ends_with("accel1 (driver ivpu)"));
        assert!(err.looked_at[2].ends_with("accel2 (no driver bound)"));
        let text = err.to_string();
        assert!(
            text.starts_with("no amdxdna device found (looked at "),
            "{text}"
        );
        assert!(text.contains("accel1 (driver ivpu)"), "{text}");
    }

    #[test]
    fn an_npu_is_found_beside_other_accelerators() {
        let t = tree(&[
            (0, Some("ivpu"), "0x8086", "0x7d1d", "0x04"),
            (10, Some("amdxdna"), "0x1022", "0x17f0", "0x10"),
            (2, Some("amdxdna"), "0x1022", "0x1502", "0x00"),
        ]);
        let npus = run(&t).unwrap();
        assert_eq!(npus.len(), 1);
        assert!(npus[0].node.ends_with("accel10"));
    }

    #[test]
    fn no_nodes_and_unreadable_ids() {
        let empty = TestDir::new("discover-empty");
        let err = discover(&empty.path().join("dev"), &empty.path().join("sys")).unwrap_err();
        assert!(err.looked_at.is_empty());
        assert!(err
            .to_string()
            .starts_with("no amdxdna device found (no accel* nodes in "));

        let t = tree(&[(0, Some("amdxdna"), "0x1022", "zz", "0x10")]);
        let err = run(&t).unwrap_err();
        assert!(err.looked_at[0].contains("not a hex number"), "{err}");
    }

    #[test]
    fn this_machine_is_searched_where_the_driver_puts_its_nodes() {
        // CI and the developers' machines have no NPU; on one with an NPU
        // each found node exists and its PCI id maps to its profile.
        match discover_system() {
            Ok(npus) => {
                for n in npus {
                    assert!(n.node.starts_with("/dev/accel/accel"), "{n:?}");
                    assert!(n.node.exists(), "{n:?}");
                    assert_eq!(n.pci.profile().map(|p| &p.name), Some(&n.profile.name));
                }
            }
            Err(e) => {
                assert_eq!(e.dir, "/dev/accel");
                let text = e.to_string();
                assert!(text.starts_with("no amdxdna device found ("), "{text}");
                if e.looked_at.is_empty() {
                    assert!(text.ends_with("(no accel* nodes in /dev/accel)"), "{text}");
                }
            }
        }
    }

    #[test]
    fn the_cu_block_is_the_driver_layout() {
        let cus = [
            CuConfig {
                cu_bo: 0x0102_0304,
                cu_func: 0,
                pad: [0; 3],
            },
            CuConfig {
                cu_bo: 7,
                cu_func: 1,
                pad: [0; 3],
            },
        ];
        assert_eq!(
            config_cu_bytes(&cus).unwrap(),
            [
                2, 0, 0, 0, 0, 0, 0, 0, // num_cus, pad
                4, 3, 2, 1, 0, 0, 0, 0, // cu_bo, cu_func, pad
                7, 0, 0, 0, 1, 0, 0, 0,
            ]
        );
        let many = vec![CuConfig::default(); 512];
        let e = config_cu_bytes(&many).unwrap_err();
        assert_eq!(
            (e.call, e.errno),
            ("CONFIG_HWCTX", Errno::TOOBIG.raw_os_error())
        );
        assert_eq!(config_cu_bytes(&many[..511]).unwrap().len(), 4096);
    }

    #[test]
    fn a_real_mapping_round_trips_through_a_file() {
        let t = TestDir::new("mapping");
        let path = t.path().join("bo");
        std::fs::write(&path, vec![0u8; 8192]).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        // At a multiple of 64 MiB, as the heap is mapped.
        let aligned = Mapping::new(file.as_fd(), 0, 4096, 64 << 20).unwrap();
        assert_eq!(aligned.addr() % (64 << 20), 0);
        aligned.write(0, b"head").unwrap();
        drop(aligned);
        assert_eq!(&std::fs::read(&path).unwrap()[..4], b"head");
        assert!(Mapping::new(file.as_fd(), 0, 4096, 3).is_err());
        let map = Mapping::new(file.as_fd(), 4096, 4096, 1).unwrap();
        assert_eq!(BoMap::len(&map), 4096);
        assert!(!BoMap::is_empty(&map));
        assert_ne!(BoMap::addr(&map), 0);
        BoMap::write(&map, 4092, b"loom").unwrap();
        let mut back = [0u8; 4];
        BoMap::read(&map, 4092, &mut back).unwrap();
        assert_eq!(&back, b"loom");
        assert!(BoMap::write(&map, 4093, b"loom").is_err());
        drop(map);
        // MAP_SHARED: the write reached the file.
        assert_eq!(&std::fs::read(&path).unwrap()[8188..], b"loom");
    }

    /// The real device's calls, on a node that is no amdxdna device (the
    /// null device answers every ioctl with ENOTTY), each fail with their
    /// own name.
    #[test]
    fn the_real_device_names_each_failed_call() {
        let dev = XdnaDevice::open(Path::new("/dev/null")).unwrap();
        assert_eq!(dev.node(), Path::new("/dev/null"));
        type Step = fn(&XdnaDevice) -> Result<(), HalError>;
        let calls: [(&str, Step); 11] = [
            ("GET_INFO(AIE_VERSION)", |d| d.aie_version().map(|_| ())),
            ("GET_INFO(FIRMWARE_VERSION)", |d| {
                d.firmware_version().map(|_| ())
            }),
            ("GET_INFO(AIE_METADATA)", |d| d.aie_metadata().map(|_| ())),
            ("CREATE_HWCTX", |d| {
                d.create_hwctx(&QosInfo::default(), 0, 4).map(|_| ())
            }),
            ("DESTROY_HWCTX", |d| d.destroy_hwctx(1)),
            ("CONFIG_HWCTX", |d| d.config_cu(1, &[CuConfig::default()])),
            ("CREATE_BO", |d| {
                d.create_bo(4096, BoKind::DevHeap).map(|_| ())
            }),
            ("GET_BO_INFO", |d| d.bo_info(1).map(|_| ())),
            ("SYNC_BO", |d| d.sync_bo(1, SyncDirection::ToDevice, 0, 4)),
            ("EXEC_CMD", |d| d.exec_cmd(1, 2, &[3, 4]).map(|_| ())),
            ("SYNCOBJ_TIMELINE_WAIT", |d| {
                d.wait_syncobj(1, 1, Duration::from_millis(1))
            }),
        ];
        for (name, run) in calls {
            let e = run(&dev).unwrap_err();
            assert_eq!((e.call, e.errno), (name, Errno::NOTTY.raw_os_error()));
        }
        assert_eq!(dev.assign_debug_bo(1, 2).unwrap_err().call, "CONFIG_HWCTX");
    }

    #[test]
    fn opening_a_missing_node_is_a_typed_error() {
        let e = XdnaDevice::open(Path::new("/nonexistent/accel0")).unwrap_err();
        assert_eq!((e.call, e.errno), ("open", Errno::NOENT.raw_os_error()));
    }
}
