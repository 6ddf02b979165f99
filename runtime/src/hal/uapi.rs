//! The amdxdna kernel interface as plain `#[repr(C)]` types: the ioctl
//! arguments, the GET_INFO replies, the DRM syncobj timeline wait and the ERT
//! command packet the driver reads from a command buffer.
//!
//! Sources (read with the search tools, not copied):
//! - linux `include/uapi/drm/amdxdna_accel.h` (torvalds/linux 03c318a0),
//! - amd/xdna-driver `include/uapi/drm/amdxdna_accel.h` (00c56591), the
//!   superset that adds WAIT_CMD and GET_ARRAY,
//! - linux `drivers/accel/amdxdna/amdxdna_ctx.h` (098456f3) and the
//!   xdna-driver copy (0503d6fb) for the ERT header and START_NPU payload,
//! - linux `include/uapi/drm/drm.h` (c87866ed) for `DRM_IOCTL_BASE`,
//!   `DRM_COMMAND_BASE`, `DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT` and the 40-byte
//!   `drm_syncobj_timeline_wait`, plus its `deadline_nsec` tail (the
//!   WAIT_DEADLINE patch, Linux 6.4, as posted to dri-devel).
//!
//! Every size and field offset is pinned by a `const` assertion next to its
//! type, so a layout mistake is a compile error; the numbers are the ones
//! `shared/reference/xdna-hardware-facts.md` §6 lists.

use std::mem::{offset_of, size_of};

/// `DRM_IOCTL_BASE` (drm.h): the ioctl type byte of every DRM ioctl.
pub const DRM_IOCTL_BASE: u8 = b'd';
/// `DRM_COMMAND_BASE` (drm.h): driver ioctls are numbered from here.
pub const DRM_COMMAND_BASE: u8 = 0x40;

/// `enum amdxdna_drm_ioctl_id` (amdxdna_accel.h).
pub mod id {
    pub const CREATE_HWCTX: u8 = 0;
    pub const DESTROY_HWCTX: u8 = 1;
    pub const CONFIG_HWCTX: u8 = 2;
    pub const CREATE_BO: u8 = 3;
    pub const GET_BO_INFO: u8 = 4;
    pub const SYNC_BO: u8 = 5;
    pub const EXEC_CMD: u8 = 6;
    pub const GET_INFO: u8 = 7;
    /// xdna-driver only.
    pub const WAIT_CMD: u8 = 9;
    /// xdna-driver only upstream at the time of writing.
    pub const GET_ARRAY: u8 = 10;
}

/// The generic Linux `_IOC` encoding (asm-generic/ioctl.h, used by x86-64
/// and arm64): direction in bits 30-31 (write 1, read 2), size in 16-29,
/// type in 8-15, number in 0-7. The HAL issues its ioctls through rustix's
/// per-architecture encoder; these constants are the documented numbers the
/// tests hold it to.
const fn ioc(dir: u32, nr: u8, size: usize) -> u32 {
    (dir << 30) | ((size as u32) << 16) | ((DRM_IOCTL_BASE as u32) << 8) | nr as u32
}

/// `DRM_IOWR(nr, T)`.
pub const fn drm_iowr(nr: u8, size: usize) -> u32 {
    ioc(3, nr, size)
}

/// `DRM_IOW(nr, T)`.
pub const fn drm_iow(nr: u8, size: usize) -> u32 {
    ioc(1, nr, size)
}

pub const DRM_IOCTL_AMDXDNA_CREATE_HWCTX: u32 = drm_iowr(
    DRM_COMMAND_BASE + id::CREATE_HWCTX,
    size_of::<CreateHwctx>(),
);
pub const DRM_IOCTL_AMDXDNA_DESTROY_HWCTX: u32 = drm_iowr(
    DRM_COMMAND_BASE + id::DESTROY_HWCTX,
    size_of::<DestroyHwctx>(),
);
pub const DRM_IOCTL_AMDXDNA_CONFIG_HWCTX: u32 = drm_iowr(
    DRM_COMMAND_BASE + id::CONFIG_HWCTX,
    size_of::<ConfigHwctx>(),
);
pub const DRM_IOCTL_AMDXDNA_CREATE_BO: u32 =
    drm_iowr(DRM_COMMAND_BASE + id::CREATE_BO, size_of::<CreateBo>());
pub const DRM_IOCTL_AMDXDNA_GET_BO_INFO: u32 =
    drm_iowr(DRM_COMMAND_BASE + id::GET_BO_INFO, size_of::<GetBoInfo>());
pub const DRM_IOCTL_AMDXDNA_SYNC_BO: u32 =
    drm_iowr(DRM_COMMAND_BASE + id::SYNC_BO, size_of::<SyncBo>());
pub const DRM_IOCTL_AMDXDNA_EXEC_CMD: u32 =
    drm_iowr(DRM_COMMAND_BASE + id::EXEC_CMD, size_of::<ExecCmd>());
pub const DRM_IOCTL_AMDXDNA_GET_INFO: u32 =
    drm_iowr(DRM_COMMAND_BASE + id::GET_INFO, size_of::<GetInfo>());
pub const DRM_IOCTL_AMDXDNA_GET_ARRAY: u32 =
    drm_iowr(DRM_COMMAND_BASE + id::GET_ARRAY, size_of::<GetArray>());
/// xdna-driver declares WAIT_CMD with `DRM_IOW`, not `DRM_IOWR`.
pub const DRM_IOCTL_AMDXDNA_WAIT_CMD: u32 =
    drm_iow(DRM_COMMAND_BASE + id::WAIT_CMD, size_of::<WaitCmd>());
/// `DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT` = `DRM_IOWR(0xCA, ...)` (drm.h).
pub const DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT_NR: u8 = 0xCA;
pub const DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT: u32 = drm_iowr(
    DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT_NR,
    size_of::<SyncobjTimelineWait>(),
);

/// `struct amdxdna_qos_info`: QoS hints for a new hardware context.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QosInfo {
    pub gops: u32,
    pub fps: u32,
    pub dma_bandwidth: u32,
    pub latency: u32,
    pub frame_exec_time: u32,
    pub priority: u32,
}
const _: () = assert!(size_of::<QosInfo>() == 24);
const _: () = assert!(offset_of!(QosInfo, gops) == 0);
const _: () = assert!(offset_of!(QosInfo, fps) == 4);
const _: () = assert!(offset_of!(QosInfo, dma_bandwidth) == 8);
const _: () = assert!(offset_of!(QosInfo, latency) == 12);
const _: () = assert!(offset_of!(QosInfo, frame_exec_time) == 16);
const _: () = assert!(offset_of!(QosInfo, priority) == 20);

/// `struct amdxdna_drm_create_hwctx`. `handle` and `syncobj_handle` are
/// written by the kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreateHwctx {
    pub ext: u64,
    pub ext_flags: u64,
    /// Address of a `QosInfo` the kernel reads.
    pub qos_p: u64,
    pub umq_bo: u32,
    pub log_buf_bo: u32,
    pub max_opc: u32,
    pub num_tiles: u32,
    pub mem_size: u32,
    pub umq_doorbell: u32,
    pub handle: u32,
    pub syncobj_handle: u32,
}
const _: () = assert!(size_of::<CreateHwctx>() == 56);
const _: () = assert!(offset_of!(CreateHwctx, ext_flags) == 8);
const _: () = assert!(offset_of!(CreateHwctx, qos_p) == 16);
const _: () = assert!(offset_of!(CreateHwctx, umq_bo) == 24);
const _: () = assert!(offset_of!(CreateHwctx, log_buf_bo) == 28);
const _: () = assert!(offset_of!(CreateHwctx, max_opc) == 32);
const _: () = assert!(offset_of!(CreateHwctx, num_tiles) == 36);
const _: () = assert!(offset_of!(CreateHwctx, mem_size) == 40);
const _: () = assert!(offset_of!(CreateHwctx, umq_doorbell) == 44);
const _: () = assert!(offset_of!(CreateHwctx, handle) == 48);
const _: () = assert!(offset_of!(CreateHwctx, syncobj_handle) == 52);

/// `struct amdxdna_drm_destroy_hwctx`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DestroyHwctx {
    pub handle: u32,
    pub pad: u32,
}
const _: () = assert!(size_of::<DestroyHwctx>() == 8);
const _: () = assert!(offset_of!(DestroyHwctx, pad) == 4);

/// `struct amdxdna_cu_config`: one compute unit and the BO of its firmware
/// image (PDI).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CuConfig {
    pub cu_bo: u32,
    pub cu_func: u8,
    pub pad: [u8; 3],
}
const _: () = assert!(size_of::<CuConfig>() == 8);
const _: () = assert!(offset_of!(CuConfig, cu_func) == 4);
const _: () = assert!(offset_of!(CuConfig, pad) == 5);

/// The fixed head of `struct amdxdna_hwctx_param_config_cu`; `num_cus`
/// `CuConfig`s follow it in the same buffer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConfigCuHead {
    pub num_cus: u16,
    pub pad: [u16; 3],
}
const _: () = assert!(size_of::<ConfigCuHead>() == 8);
const _: () = assert!(offset_of!(ConfigCuHead, pad) == 2);

/// `enum amdxdna_drm_config_hwctx_param`.
pub const HWCTX_CONFIG_CU: u32 = 0;
pub const HWCTX_ASSIGN_DBG_BUF: u32 = 1;

/// `struct amdxdna_drm_config_hwctx`. `param_val` is a user address for
/// CONFIG_CU (at most a page, read by the kernel) and a BO handle for the
/// debug-buffer parameters.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConfigHwctx {
    pub handle: u32,
    pub param_type: u32,
    pub param_val: u64,
    pub param_val_size: u32,
    pub pad: u32,
}
const _: () = assert!(size_of::<ConfigHwctx>() == 24);
const _: () = assert!(offset_of!(ConfigHwctx, param_type) == 4);
const _: () = assert!(offset_of!(ConfigHwctx, param_val) == 8);
const _: () = assert!(offset_of!(ConfigHwctx, param_val_size) == 16);
const _: () = assert!(offset_of!(ConfigHwctx, pad) == 20);

/// `AMDXDNA_INVALID_ADDR`: GET_BO_INFO's answer for an address a buffer
/// does not have.
pub const INVALID_ADDR: u64 = !0;

/// `enum amdxdna_bo_type`.
pub const BO_SHMEM: u32 = 1;
pub const BO_DEV_HEAP: u32 = 2;
pub const BO_DEV: u32 = 3;
pub const BO_CMD: u32 = 4;

/// `struct amdxdna_drm_create_bo`. `handle` is written by the kernel;
/// `flags` and `vaddr` must be zero (upstream: MBZ).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreateBo {
    pub flags: u64,
    pub vaddr: u64,
    pub size: u64,
    pub kind: u32,
    pub handle: u32,
}
const _: () = assert!(size_of::<CreateBo>() == 32);
const _: () = assert!(offset_of!(CreateBo, vaddr) == 8);
const _: () = assert!(offset_of!(CreateBo, size) == 16);
const _: () = assert!(offset_of!(CreateBo, kind) == 24);
const _: () = assert!(offset_of!(CreateBo, handle) == 28);

/// `struct amdxdna_drm_get_bo_info`. The last three fields are written by
/// the kernel: the mmap offset, the user address (0 when the BO must be
/// mapped) and the device address.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GetBoInfo {
    pub ext: u64,
    pub ext_flags: u64,
    pub handle: u32,
    pub pad: u32,
    pub map_offset: u64,
    pub vaddr: u64,
    pub xdna_addr: u64,
}
const _: () = assert!(size_of::<GetBoInfo>() == 48);
const _: () = assert!(offset_of!(GetBoInfo, ext) == 0);
const _: () = assert!(offset_of!(GetBoInfo, ext_flags) == 8);
const _: () = assert!(offset_of!(GetBoInfo, handle) == 16);
const _: () = assert!(offset_of!(GetBoInfo, pad) == 20);
const _: () = assert!(offset_of!(GetBoInfo, map_offset) == 24);
const _: () = assert!(offset_of!(GetBoInfo, vaddr) == 32);
const _: () = assert!(offset_of!(GetBoInfo, xdna_addr) == 40);

/// `SYNC_DIRECT_TO_DEVICE` / `SYNC_DIRECT_FROM_DEVICE`.
pub const SYNC_DIRECT_TO_DEVICE: u32 = 0;
pub const SYNC_DIRECT_FROM_DEVICE: u32 = 1;

/// `struct amdxdna_drm_sync_bo`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncBo {
    pub handle: u32,
    pub direction: u32,
    pub offset: u64,
    pub size: u64,
}
const _: () = assert!(size_of::<SyncBo>() == 24);
const _: () = assert!(offset_of!(SyncBo, direction) == 4);
const _: () = assert!(offset_of!(SyncBo, offset) == 8);
const _: () = assert!(offset_of!(SyncBo, size) == 16);

/// `enum amdxdna_cmd_type`: the only kind the HAL submits.
pub const CMD_SUBMIT_EXEC_BUF: u32 = 0;

/// `struct amdxdna_drm_exec_cmd`. With `cmd_count` 1 (the only count the
/// driver accepts) `cmd_handles` is the command BO handle itself; `args` is
/// the address of `arg_count` u32 BO handles the kernel reads. `seq` (the
/// syncobj timeline point) is written by the kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExecCmd {
    pub ext: u64,
    pub ext_flags: u64,
    pub hwctx: u32,
    pub kind: u32,
    pub cmd_handles: u64,
    pub args: u64,
    pub cmd_count: u32,
    pub arg_count: u32,
    pub seq: u64,
}
const _: () = assert!(size_of::<ExecCmd>() == 56);
const _: () = assert!(offset_of!(ExecCmd, ext) == 0);
const _: () = assert!(offset_of!(ExecCmd, ext_flags) == 8);
const _: () = assert!(offset_of!(ExecCmd, hwctx) == 16);
const _: () = assert!(offset_of!(ExecCmd, kind) == 20);
const _: () = assert!(offset_of!(ExecCmd, cmd_handles) == 24);
const _: () = assert!(offset_of!(ExecCmd, args) == 32);
const _: () = assert!(offset_of!(ExecCmd, cmd_count) == 40);
const _: () = assert!(offset_of!(ExecCmd, arg_count) == 44);
const _: () = assert!(offset_of!(ExecCmd, seq) == 48);

/// `struct amdxdna_drm_wait_cmd` (xdna-driver only): the layout behind the
/// WAIT_CMD number; the HAL waits on the syncobj timeline instead.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitCmd {
    pub hwctx: u32,
    pub timeout: u32,
    pub seq: u64,
}
const _: () = assert!(size_of::<WaitCmd>() == 16);
const _: () = assert!(offset_of!(WaitCmd, hwctx) == 0);
const _: () = assert!(offset_of!(WaitCmd, timeout) == 4);
const _: () = assert!(offset_of!(WaitCmd, seq) == 8);

/// `struct amdxdna_drm_get_array` (xdna-driver): the layout behind the
/// GET_ARRAY number.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GetArray {
    pub param: u32,
    pub element_size: u32,
    pub num_element: u32,
    pub pad: u32,
    pub buffer: u64,
}
const _: () = assert!(size_of::<GetArray>() == 24);
const _: () = assert!(offset_of!(GetArray, param) == 0);
const _: () = assert!(offset_of!(GetArray, element_size) == 4);
const _: () = assert!(offset_of!(GetArray, num_element) == 8);
const _: () = assert!(offset_of!(GetArray, pad) == 12);
const _: () = assert!(offset_of!(GetArray, buffer) == 16);

/// `enum amdxdna_drm_get_param`: the GET_INFO queries the HAL makes.
pub const QUERY_AIE_METADATA: u32 = 1;
pub const QUERY_AIE_VERSION: u32 = 2;
pub const QUERY_FIRMWARE_VERSION: u32 = 8;

/// `struct amdxdna_drm_get_info`: `buffer` is the address of the reply the
/// kernel writes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GetInfo {
    pub param: u32,
    pub buffer_size: u32,
    pub buffer: u64,
}
const _: () = assert!(size_of::<GetInfo>() == 16);
const _: () = assert!(offset_of!(GetInfo, buffer_size) == 4);
const _: () = assert!(offset_of!(GetInfo, buffer) == 8);

/// `struct amdxdna_drm_query_aie_version`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AieVersion {
    pub major: u32,
    pub minor: u32,
}
const _: () = assert!(size_of::<AieVersion>() == 8);
const _: () = assert!(offset_of!(AieVersion, major) == 0);
const _: () = assert!(offset_of!(AieVersion, minor) == 4);

/// `struct amdxdna_drm_query_firmware_version`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FirmwareVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    pub build: u32,
}
const _: () = assert!(size_of::<FirmwareVersion>() == 16);
const _: () = assert!(offset_of!(FirmwareVersion, major) == 0);
const _: () = assert!(offset_of!(FirmwareVersion, minor) == 4);
const _: () = assert!(offset_of!(FirmwareVersion, patch) == 8);
const _: () = assert!(offset_of!(FirmwareVersion, build) == 12);

/// `struct amdxdna_drm_query_aie_tile_metadata`: one kind of tile.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileMetadata {
    pub row_count: u16,
    pub row_start: u16,
    pub dma_channel_count: u16,
    pub lock_count: u16,
    pub event_reg_count: u16,
    pub pad: [u16; 3],
}
const _: () = assert!(size_of::<TileMetadata>() == 16);
const _: () = assert!(offset_of!(TileMetadata, row_start) == 2);
const _: () = assert!(offset_of!(TileMetadata, dma_channel_count) == 4);
const _: () = assert!(offset_of!(TileMetadata, lock_count) == 6);
const _: () = assert!(offset_of!(TileMetadata, event_reg_count) == 8);
const _: () = assert!(offset_of!(TileMetadata, pad) == 10);

/// `struct amdxdna_drm_query_aie_metadata`: the array geometry the firmware
/// reports.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AieMetadata {
    pub col_size: u32,
    pub cols: u16,
    pub rows: u16,
    pub version: AieVersion,
    pub core: TileMetadata,
    pub mem: TileMetadata,
    pub shim: TileMetadata,
}
const _: () = assert!(size_of::<AieMetadata>() == 64);
const _: () = assert!(offset_of!(AieMetadata, cols) == 4);
const _: () = assert!(offset_of!(AieMetadata, rows) == 6);
const _: () = assert!(offset_of!(AieMetadata, version) == 8);
const _: () = assert!(offset_of!(AieMetadata, core) == 16);
const _: () = assert!(offset_of!(AieMetadata, mem) == 32);
const _: () = assert!(offset_of!(AieMetadata, shim) == 48);

/// The little-endian u16 at `at` of a reply (0 past its end: the caller
/// passes whole replies).
fn u16_at(reply: &[u8], at: usize) -> u16 {
    let mut b = [0u8; 2];
    if let Some(s) = reply.get(at..at + 2) {
        b.copy_from_slice(s);
    }
    u16::from_le_bytes(b)
}

fn u32_at(reply: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    if let Some(s) = reply.get(at..at + 4) {
        b.copy_from_slice(s);
    }
    u32::from_le_bytes(b)
}

// The GET_INFO replies from the bytes the kernel writes, field by field at
// the offsets pinned above (the reference's parseAie and parseFirmware).
impl AieVersion {
    pub fn from_le_bytes(reply: &[u8; 8]) -> AieVersion {
        AieVersion {
            major: u32_at(reply, offset_of!(AieVersion, major)),
            minor: u32_at(reply, offset_of!(AieVersion, minor)),
        }
    }
}

impl FirmwareVersion {
    pub fn from_le_bytes(reply: &[u8; 16]) -> FirmwareVersion {
        FirmwareVersion {
            major: u32_at(reply, offset_of!(FirmwareVersion, major)),
            minor: u32_at(reply, offset_of!(FirmwareVersion, minor)),
            patch: u32_at(reply, offset_of!(FirmwareVersion, patch)),
            build: u32_at(reply, offset_of!(FirmwareVersion, build)),
        }
    }
}

impl TileMetadata {
    fn from_le_bytes(reply: &[u8]) -> TileMetadata {
        let at = |field: usize| u16_at(reply, field);
        TileMetadata {
            row_count: at(offset_of!(TileMetadata, row_count)),
            row_start: at(offset_of!(TileMetadata, row_start)),
            dma_channel_count: at(offset_of!(TileMetadata, dma_channel_count)),
            lock_count: at(offset_of!(TileMetadata, lock_count)),
            event_reg_count: at(offset_of!(TileMetadata, event_reg_count)),
            pad: [0; 3],
        }
    }
}

impl AieMetadata {
    pub fn from_le_bytes(reply: &[u8; 64]) -> AieMetadata {
        let tile = |field: usize| TileMetadata::from_le_bytes(&reply[field..field + 16]);
        let version = offset_of!(AieMetadata, version);
        AieMetadata {
            col_size: u32_at(reply, offset_of!(AieMetadata, col_size)),
            cols: u16_at(reply, offset_of!(AieMetadata, cols)),
            rows: u16_at(reply, offset_of!(AieMetadata, rows)),
            version: AieVersion {
                major: u32_at(reply, version),
                minor: u32_at(reply, version + 4),
            },
            core: tile(offset_of!(AieMetadata, core)),
            mem: tile(offset_of!(AieMetadata, mem)),
            shim: tile(offset_of!(AieMetadata, shim)),
        }
    }
}

/// A GET_INFO reply the HAL reads: its parameter number, its size, and
/// its value from the bytes the kernel wrote (the reference's `parseAie`
/// and `parseFirmware`). `Device::query_as` asks for one through the raw
/// `Device::query`.
pub trait Reply: Sized {
    const PARAM: u32;
    const SIZE: usize;
    /// The value from `reply`'s first `SIZE` bytes (zeroes past its end).
    fn parse(reply: &[u8]) -> Self;
}

/// `reply`'s first `N` bytes, zero-padded.
fn first<const N: usize>(reply: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    let n = reply.len().min(N);
    out[..n].copy_from_slice(&reply[..n]);
    out
}

macro_rules! reply {
    ($ty:ty, $param:expr) => {
        impl Reply for $ty {
            const PARAM: u32 = $param;
            const SIZE: usize = size_of::<$ty>();
            fn parse(reply: &[u8]) -> Self {
                <$ty>::from_le_bytes(&first::<{ size_of::<$ty>() }>(reply))
            }
        }
    };
}

reply!(AieVersion, QUERY_AIE_VERSION);
reply!(FirmwareVersion, QUERY_FIRMWARE_VERSION);
reply!(AieMetadata, QUERY_AIE_METADATA);

/// `DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT` (drm.h): wait for the point
/// to be submitted, not only signalled.
pub const SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT: u32 = 1 << 1;

/// `struct drm_syncobj_timeline_wait` with the `deadline_nsec` tail (Linux
/// 6.4; amdxdna needs 6.14, and the DRM core zero-fills or truncates a
/// size mismatch either way). `handles` and `points` are addresses of
/// `count_handles` u32 handles and u64 points the kernel reads;
/// `timeout_nsec` is an absolute CLOCK_MONOTONIC time.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncobjTimelineWait {
    pub handles: u64,
    pub points: u64,
    pub timeout_nsec: i64,
    pub count_handles: u32,
    pub flags: u32,
    pub first_signaled: u32,
    pub pad: u32,
    pub deadline_nsec: u64,
}
const _: () = assert!(size_of::<SyncobjTimelineWait>() == 48);
const _: () = assert!(offset_of!(SyncobjTimelineWait, points) == 8);
const _: () = assert!(offset_of!(SyncobjTimelineWait, timeout_nsec) == 16);
const _: () = assert!(offset_of!(SyncobjTimelineWait, count_handles) == 24);
const _: () = assert!(offset_of!(SyncobjTimelineWait, flags) == 28);
const _: () = assert!(offset_of!(SyncobjTimelineWait, first_signaled) == 32);
const _: () = assert!(offset_of!(SyncobjTimelineWait, pad) == 36);
const _: () = assert!(offset_of!(SyncobjTimelineWait, deadline_nsec) == 40);

/// `enum ert_cmd_opcode` (amdxdna_ctx.h; the PREEMPT ones from xdna-driver).
pub mod ert_op {
    pub const START_CU: u32 = 0;
    pub const CMD_CHAIN: u32 = 19;
    pub const START_NPU: u32 = 20;
    pub const START_NPU_PREEMPT: u32 = 21;
    pub const START_NPU_PREEMPT_ELF: u32 = 22;
}

/// `enum ert_cmd_state`: what the driver leaves in a command's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErtState {
    Invalid,
    New,
    Queued,
    Running,
    Completed,
    Error,
    Abort,
    Submitted,
    Timeout,
    NoResponse,
    /// A value the enum does not name (the field is 4 bits wide).
    Other(u32),
}

impl ErtState {
    pub fn from_raw(raw: u32) -> ErtState {
        match raw {
            0 => ErtState::Invalid,
            1 => ErtState::New,
            2 => ErtState::Queued,
            3 => ErtState::Running,
            4 => ErtState::Completed,
            5 => ErtState::Error,
            6 => ErtState::Abort,
            7 => ErtState::Submitted,
            8 => ErtState::Timeout,
            9 => ErtState::NoResponse,
            other => ErtState::Other(other),
        }
    }

    pub fn raw(self) -> u32 {
        match self {
            ErtState::Invalid => 0,
            ErtState::New => 1,
            ErtState::Queued => 2,
            ErtState::Running => 3,
            ErtState::Completed => 4,
            ErtState::Error => 5,
            ErtState::Abort => 6,
            ErtState::Submitted => 7,
            ErtState::Timeout => 8,
            ErtState::NoResponse => 9,
            ErtState::Other(raw) => raw,
        }
    }
}

/// The first word of `struct amdxdna_cmd`: `AMDXDNA_CMD_STATE` GENMASK(3, 0),
/// `AMDXDNA_CMD_EXTRA_CU_MASK` GENMASK(11, 10), `AMDXDNA_CMD_COUNT`
/// GENMASK(22, 12) (the payload words after the header, CU masks included)
/// and `AMDXDNA_CMD_OPCODE` GENMASK(27, 23).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErtHeader {
    pub state: u32,
    pub extra_cu_masks: u32,
    pub count: u32,
    pub opcode: u32,
}

impl ErtHeader {
    pub const STATE_MASK: u32 = 0xF;
    pub const EXTRA_CU_MASK_SHIFT: u32 = 10;
    pub const EXTRA_CU_MASK_MASK: u32 = 0x3;
    pub const COUNT_SHIFT: u32 = 12;
    pub const COUNT_MASK: u32 = 0x7FF;
    pub const OPCODE_SHIFT: u32 = 23;
    pub const OPCODE_MASK: u32 = 0x1F;

    /// The header word, or `None` when a field does not fit its bits (a
    /// packet the driver would read differently than meant).
    pub fn pack(self) -> Option<u32> {
        if self.state > Self::STATE_MASK
            || self.extra_cu_masks > Self::EXTRA_CU_MASK_MASK
            || self.count > Self::COUNT_MASK
            || self.opcode > Self::OPCODE_MASK
        {
            return None;
        }
        Some(
            self.state
                | self.extra_cu_masks << Self::EXTRA_CU_MASK_SHIFT
                | self.count << Self::COUNT_SHIFT
                | self.opcode << Self::OPCODE_SHIFT,
        )
    }

    pub fn unpack(word: u32) -> ErtHeader {
        ErtHeader {
            state: word & Self::STATE_MASK,
            extra_cu_masks: (word >> Self::EXTRA_CU_MASK_SHIFT) & Self::EXTRA_CU_MASK_MASK,
            count: (word >> Self::COUNT_SHIFT) & Self::COUNT_MASK,
            opcode: (word >> Self::OPCODE_SHIFT) & Self::OPCODE_MASK,
        }
    }
}

/// `struct amdxdna_cmd_start_npu`: the fixed head of an ERT_START_NPU
/// payload (after the header and CU mask words); `prop_count` property
/// words and then the kernel arguments follow it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StartNpu {
    /// Device address of the control code.
    pub buffer: u64,
    /// Size of the control code in bytes.
    pub buffer_size: u32,
    pub prop_count: u32,
}
const _: () = assert!(size_of::<StartNpu>() == 16);
const _: () = assert!(offset_of!(StartNpu, buffer_size) == 8);
const _: () = assert!(offset_of!(StartNpu, prop_count) == 12);

impl StartNpu {
    /// The little-endian bytes the driver reads (the NPU hosts are x86-64).
    pub fn to_le_bytes(self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[0..8].copy_from_slice(&self.buffer.to_le_bytes());
        out[8..12].copy_from_slice(&self.buffer_size.to_le_bytes());
        out[12..16].copy_from_slice(&self.prop_count.to_le_bytes());
        out
    }
}

/// `struct amdxdna_cmd_preempt_data` (xdna-driver
/// `src/driver/amdxdna/amdxdna_ctx.h` @856409ca; XRT `ert.h`
/// `ert_npu_preempt_data` @963c58ee is the same layout): the fixed head of
/// an ERT_START_NPU_PREEMPT or _PREEMPT_ELF payload, after the CU mask.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NpuPreemptData {
    /// Device address of the control code.
    pub instruction_buffer: u64,
    pub save_buffer: u64,
    pub restore_buffer: u64,
    /// Size of the control code in bytes.
    pub instruction_buffer_size: u32,
    pub save_buffer_size: u32,
    pub restore_buffer_size: u32,
    pub instruction_prop_count: u32,
}
const _: () = assert!(size_of::<NpuPreemptData>() == 40);
const _: () = assert!(offset_of!(NpuPreemptData, save_buffer) == 8);
const _: () = assert!(offset_of!(NpuPreemptData, restore_buffer) == 16);
const _: () = assert!(offset_of!(NpuPreemptData, instruction_buffer_size) == 24);
const _: () = assert!(offset_of!(NpuPreemptData, save_buffer_size) == 28);
const _: () = assert!(offset_of!(NpuPreemptData, restore_buffer_size) == 32);
const _: () = assert!(offset_of!(NpuPreemptData, instruction_prop_count) == 36);

impl NpuPreemptData {
    /// The little-endian bytes the driver reads, in field order (the
    /// asserts above pin it to the layout).
    pub fn to_le_bytes(self) -> [u8; 40] {
        let mut out = [0u8; 40];
        out[0..8].copy_from_slice(&self.instruction_buffer.to_le_bytes());
        out[8..16].copy_from_slice(&self.save_buffer.to_le_bytes());
        out[16..24].copy_from_slice(&self.restore_buffer.to_le_bytes());
        out[24..28].copy_from_slice(&self.instruction_buffer_size.to_le_bytes());
        out[28..32].copy_from_slice(&self.save_buffer_size.to_le_bytes());
        out[32..36].copy_from_slice(&self.restore_buffer_size.to_le_bytes());
        out[36..40].copy_from_slice(&self.instruction_prop_count.to_le_bytes());
        out
    }
}

/// `amdxdna_cmd_get_payload` skips `1 + extra_cu_masks` CU mask words
/// (none for CMD_CHAIN): the payload's word index after the header.
pub fn payload_word_index(header: ErtHeader) -> u32 {
    if header.opcode == ert_op::CMD_CHAIN {
        0
    } else {
        1 + header.extra_cu_masks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers of xdna-hardware-facts.md §6, which match the
    /// `DRM_IOWR(DRM_COMMAND_BASE + id, struct)` of both headers.
    #[test]
    fn ioctl_numbers_match_the_facts() {
        assert_eq!(DRM_IOCTL_AMDXDNA_CREATE_HWCTX, 0xC038_6440);
        assert_eq!(DRM_IOCTL_AMDXDNA_DESTROY_HWCTX, 0xC008_6441);
        assert_eq!(DRM_IOCTL_AMDXDNA_CONFIG_HWCTX, 0xC018_6442);
        assert_eq!(DRM_IOCTL_AMDXDNA_CREATE_BO, 0xC020_6443);
        assert_eq!(DRM_IOCTL_AMDXDNA_GET_BO_INFO, 0xC030_6444);
        assert_eq!(DRM_IOCTL_AMDXDNA_SYNC_BO, 0xC018_6445);
        assert_eq!(DRM_IOCTL_AMDXDNA_EXEC_CMD, 0xC038_6446);
        assert_eq!(DRM_IOCTL_AMDXDNA_GET_INFO, 0xC010_6447);
        assert_eq!(DRM_IOCTL_AMDXDNA_GET_ARRAY, 0xC018_644A);
        assert_eq!(DRM_IOCTL_AMDXDNA_WAIT_CMD, 0x4010_6449);
        // drm.h: DRM_IOWR(0xCA, struct drm_syncobj_timeline_wait), 48 bytes.
        assert_eq!(DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, 0xC030_64CA);
    }

    #[test]
    fn query_and_type_numbers_match_the_facts() {
        assert_eq!(
            (
                QUERY_AIE_METADATA,
                QUERY_AIE_VERSION,
                QUERY_FIRMWARE_VERSION
            ),
            (1, 2, 8)
        );
        assert_eq!((BO_SHMEM, BO_DEV_HEAP, BO_DEV, BO_CMD), (1, 2, 3, 4));
        assert_eq!((HWCTX_CONFIG_CU, HWCTX_ASSIGN_DBG_BUF), (0, 1));
        assert_eq!((SYNC_DIRECT_TO_DEVICE, SYNC_DIRECT_FROM_DEVICE), (0, 1));
        assert_eq!(SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, 2);
        assert_eq!(
            (
                ert_op::START_CU,
                ert_op::CMD_CHAIN,
                ert_op::START_NPU,
                ert_op::START_NPU_PREEMPT,
                ert_op::START_NPU_PREEMPT_ELF
            ),
            (0, 19, 20, 21, 22)
        );
    }

    #[test]
    fn ert_states_round_trip_and_match_the_facts() {
        let named = [
            (ErtState::New, 1),
            (ErtState::Queued, 2),
            (ErtState::Running, 3),
            (ErtState::Completed, 4),
            (ErtState::Error, 5),
            (ErtState::Abort, 6),
            (ErtState::Timeout, 8),
        ];
        for (state, raw) in named {
            assert_eq!(state.raw(), raw);
            assert_eq!(ErtState::from_raw(raw), state);
        }
        for raw in 0..16 {
            assert_eq!(ErtState::from_raw(raw).raw(), raw);
        }
        assert_eq!(ErtState::from_raw(12), ErtState::Other(12));
    }

    #[test]
    fn ert_header_packs_each_field_into_its_bits() {
        let only = |h: ErtHeader| h.pack().unwrap();
        let zero = ErtHeader {
            state: 0,
            extra_cu_masks: 0,
            count: 0,
            opcode: 0,
        };
        assert_eq!(only(ErtHeader { state: 0xF, ..zero }), 0x0000_000F);
        assert_eq!(
            only(ErtHeader {
                extra_cu_masks: 3,
                ..zero
            }),
            0x0000_0C00
        );
        assert_eq!(
            only(ErtHeader {
                count: 0x7FF,
                ..zero
            }),
            0x007F_F000
        );
        assert_eq!(
            only(ErtHeader {
                opcode: 0x1F,
                ..zero
            }),
            0x0F80_0000
        );
        // A START_NPU packet in state NEW with a CU mask, the 16-byte head
        // and two 64-bit arguments: 1 + 4 + 4 = 9 words after the header.
        let start = ErtHeader {
            state: ErtState::New.raw(),
            extra_cu_masks: 0,
            count: 9,
            opcode: ert_op::START_NPU,
        };
        let word = only(start);
        assert_eq!(word, 1 | 9 << 12 | 20 << 23);
        assert_eq!(word.to_le_bytes(), [0x01, 0x90, 0x00, 0x0A]);
        assert_eq!(ErtHeader::unpack(word), start);
        assert_eq!(payload_word_index(start), 1);
        assert_eq!(
            payload_word_index(ErtHeader {
                opcode: ert_op::CMD_CHAIN,
                ..start
            }),
            0
        );
        assert_eq!(
            payload_word_index(ErtHeader {
                extra_cu_masks: 2,
                ..start
            }),
            3
        );
        // The driver rewrites only the state bits; reading them back from a
        // completed packet leaves the rest as written.
        let done = (word & !ErtHeader::STATE_MASK) | ErtState::Completed.raw();
        assert_eq!(
            ErtState::from_raw(ErtHeader::unpack(done).state),
            ErtState::Completed
        );
        assert_eq!(ErtHeader::unpack(done).count, 9);
    }

    #[test]
    fn ert_header_refuses_fields_wider_than_their_bits() {
        let ok = ErtHeader {
            state: 1,
            extra_cu_masks: 0,
            count: 1,
            opcode: 20,
        };
        assert!(ErtHeader { state: 16, ..ok }.pack().is_none());
        assert!(ErtHeader {
            extra_cu_masks: 4,
            ..ok
        }
        .pack()
        .is_none());
        assert!(ErtHeader { count: 0x800, ..ok }.pack().is_none());
        assert!(ErtHeader { opcode: 32, ..ok }.pack().is_none());
    }

    #[test]
    fn preempt_payload_bytes() {
        let head = NpuPreemptData {
            instruction_buffer: 0x0000_0001_0203_4000,
            save_buffer: 0x11,
            restore_buffer: 0x22,
            instruction_buffer_size: 0x180,
            save_buffer_size: 3,
            restore_buffer_size: 4,
            instruction_prop_count: 5,
        };
        #[rustfmt::skip]
        let expected = [
            0x00, 0x40, 0x03, 0x02, 0x01, 0x00, 0x00, 0x00, // instruction_buffer
            0x11, 0, 0, 0, 0, 0, 0, 0,                      // save_buffer
            0x22, 0, 0, 0, 0, 0, 0, 0,                      // restore_buffer
            0x80, 0x01, 0x00, 0x00,                         // instruction_buffer_size
            3, 0, 0, 0,                                     // save_buffer_size
            4, 0, 0, 0,                                     // restore_buffer_size
            5, 0, 0, 0,                                     // instruction_prop_count
        ];
        assert_eq!(head.to_le_bytes(), expected);
    }

    #[test]
    fn start_npu_payload_bytes() {
        let head = StartNpu {
            buffer: 0x0000_0001_0203_4000,
            buffer_size: 0x0000_0180,
            prop_count: 0,
        };
        assert_eq!(
            head.to_le_bytes(),
            [
                0x00, 0x40, 0x03, 0x02, 0x01, 0x00, 0x00, 0x00, // buffer
                0x80, 0x01, 0x00, 0x00, // buffer_size
                0x00, 0x00, 0x00, 0x00, // prop_count
            ]
        );
    }
}
