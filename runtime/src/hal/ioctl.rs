//! The HAL's only `unsafe`: ioctls on the amdxdna file descriptor and the
//! mmap of its buffers, behind safe functions whose arguments are the typed
//! structs of `uapi`.
//!
//! Every request goes through one seam, `Channel`: it is turned into a
//! `RawIoctl` (the raw request number, the argument's own bytes, the blocks
//! the kernel reads through its addresses, GET_INFO's reply memory) and
//! handed to the kernel (`Channel::Kernel`) or to a `Syscall` (`Channel::Seam`),
//! which sees exactly what the kernel would. The HAL's byte-level tests
//! (`hal/wire_tests.rs`) put a recording `Syscall` there.
//!
//! What makes the safe surface sound, request by request:
//! - Every ioctl number is computed here from the argument's own type
//!   (`opcode::read_write::<T>`), so the size the DRM core copies in and out
//!   is `size_of::<T>()`, the length of the bytes passed, and every such `T`
//!   is a `#[repr(C)]` struct of integers without padding, for which any
//!   bytes the kernel (or a seam) writes back are a valid value.
//! - `Channel::call` accepts only the sealed `Request` types, whose embedded
//!   addresses the kernel only reads from (the QoS block of CREATE_HWCTX, the
//!   CU list of CONFIG_HWCTX, the BO handles of EXEC_CMD, the handles and
//!   points of the syncobj wait): a wrong address there is an EFAULT, never a
//!   write into this process. What could change that is refused before the
//!   call: a non-zero MBZ extension pointer, CREATE_BO's `vaddr` (a BO backed
//!   by memory the caller chose), a CONFIG_HWCTX parameter other than
//!   CONFIG_CU and ASSIGN_DBG_BUF, an EXEC_CMD kind other than EXEC_BUF.
//! - GET_INFO, whose reply the kernel writes through an address, goes
//!   through `Channel::query`, which points it at zeroed memory of at least a
//!   page and at least the reply size asked for (see there for what each
//!   driver writes).
//! - A seam never reaches the kernel: only `Channel::Kernel` issues ioctls,
//!   and nothing outside this module can build a `RawIoctl`.
//! - A `Mapping` never hands out references into the shared pages (the NPU
//!   and the kernel write them behind Rust's back): it copies in and out.
#![allow(unsafe_code)]

use super::uapi::id;
use super::uapi::{
    ConfigHwctx, CreateBo, CreateHwctx, DestroyHwctx, ExecCmd, GetBoInfo, GetInfo, QosInfo, SyncBo,
    SyncobjTimelineWait, CMD_SUBMIT_EXEC_BUF, DRM_COMMAND_BASE, DRM_IOCTL_BASE,
    DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT_NR, HWCTX_ASSIGN_DBG_BUF, HWCTX_CONFIG_CU, QUERY_AIE_METADATA,
    QUERY_AIE_VERSION, QUERY_FIRMWARE_VERSION,
};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::io::Errno;
use rustix::ioctl::{opcode, Ioctl, IoctlOutput, Opcode};
use rustix::mm::{MapFlags, ProtFlags};
use std::ffi::c_void;
use std::fmt;
use std::mem::size_of;
use std::ptr::NonNull;

/// A failed kernel call: which call, its errno and what that errno means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HalError {
    pub call: &'static str,
    pub errno: i32,
    pub meaning: String,
}

impl HalError {
    pub fn new(call: &'static str, errno: i32) -> HalError {
        HalError {
            call,
            errno,
            meaning: errno_meaning(errno),
        }
    }

    pub fn from_errno(call: &'static str, errno: Errno) -> HalError {
        HalError::new(call, errno.raw_os_error())
    }
}

impl fmt::Display for HalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: {}", self.call, self.meaning)
    }
}

impl std::error::Error for HalError {}

/// The errnos the amdxdna and DRM paths return, by name.
const ERRNO_NAMES: [(Errno, &str); 22] = [
    (Errno::PERM, "EPERM"),
    (Errno::NOENT, "ENOENT"),
    (Errno::INTR, "EINTR"),
    (Errno::IO, "EIO"),
    (Errno::NXIO, "ENXIO"),
    (Errno::TOOBIG, "E2BIG"),
    (Errno::BADF, "EBADF"),
    (Errno::AGAIN, "EAGAIN"),
    (Errno::NOMEM, "ENOMEM"),
    (Errno::ACCESS, "EACCES"),
    (Errno::FAULT, "EFAULT"),
    (Errno::BUSY, "EBUSY"),
    (Errno::EXIST, "EEXIST"),
    (Errno::NODEV, "ENODEV"),
    (Errno::INVAL, "EINVAL"),
    (Errno::NOTTY, "ENOTTY"),
    (Errno::NOSPC, "ENOSPC"),
    (Errno::RANGE, "ERANGE"),
    (Errno::TIME, "ETIME"),
    (Errno::TIMEDOUT, "ETIMEDOUT"),
    (Errno::OPNOTSUPP, "EOPNOTSUPP"),
    (Errno::CANCELED, "ECANCELED"),
];

/// "ENOENT (No such file or directory)": the errno's name where it is one
/// the driver returns, and the C library's text for it.
pub fn errno_meaning(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    let suffix = format!(" (os error {errno})");
    let text = text.strip_suffix(&suffix).unwrap_or(&text);
    match ERRNO_NAMES.iter().find(|(e, _)| e.raw_os_error() == errno) {
        Some((_, name)) => format!("{name} ({text})"),
        None => format!("errno {errno} ({text})"),
    }
}

mod sealed {
    pub trait Sealed {}
}

/// An ioctl whose argument the kernel reads and writes back in place and
/// whose embedded addresses the kernel only reads (see the module doc).
pub trait Request: sealed::Sealed + Sized {
    /// The call's name in errors.
    const NAME: &'static str;
    /// The ioctl number within the DRM range ('d').
    const NR: u8;

    /// Whether a field holds what the safe surface does not allow: an MBZ
    /// extension pointer, a user address backing a BO, or a parameter kind
    /// whose address the kernel might write through. Checked before the call.
    fn refused(&self) -> bool;
}

macro_rules! request {
    ($ty:ty, $name:literal, $nr:expr, |$a:ident| $refused:expr) => {
        impl sealed::Sealed for $ty {}
        impl Request for $ty {
            const NAME: &'static str = $name;
            const NR: u8 = $nr;

            fn refused(&self) -> bool {
                let $a = self;
                $refused
            }
        }
    };
}

request!(
    CreateHwctx,
    "CREATE_HWCTX",
    DRM_COMMAND_BASE + id::CREATE_HWCTX,
    |a| a.ext != 0 || a.ext_flags != 0
);
request!(
    DestroyHwctx,
    "DESTROY_HWCTX",
    DRM_COMMAND_BASE + id::DESTROY_HWCTX,
    |_a| false
);
request!(
    ConfigHwctx,
    "CONFIG_HWCTX",
    DRM_COMMAND_BASE + id::CONFIG_HWCTX,
    |a| a.param_type != HWCTX_CONFIG_CU && a.param_type != HWCTX_ASSIGN_DBG_BUF
);
request!(
    CreateBo,
    "CREATE_BO",
    DRM_COMMAND_BASE + id::CREATE_BO,
    |a| a.flags != 0 || a.vaddr != 0
);
request!(
    GetBoInfo,
    "GET_BO_INFO",
    DRM_COMMAND_BASE + id::GET_BO_INFO,
    |a| a.ext != 0 || a.ext_flags != 0
);
request!(SyncBo, "SYNC_BO", DRM_COMMAND_BASE + id::SYNC_BO, |_a| {
    false
});
request!(ExecCmd, "EXEC_CMD", DRM_COMMAND_BASE + id::EXEC_CMD, |a| a
    .ext
    != 0
    || a.ext_flags != 0
    || a.kind != CMD_SUBMIT_EXEC_BUF);
request!(
    SyncobjTimelineWait,
    "SYNCOBJ_TIMELINE_WAIT",
    DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT_NR,
    |_a| false
);

/// The name a GET_INFO query's failure carries: its parameter as
/// `enum amdxdna_drm_get_param` names it (linux
/// `include/uapi/drm/amdxdna_accel.h` @03c318a0; 10 to 15 from amd/xdna-driver
/// `include/uapi/drm/amdxdna_accel.h` @856409ca), or plain `GET_INFO`.
pub fn query_name(param: u32) -> &'static str {
    match param {
        0 => "GET_INFO(AIE_STATUS)",
        QUERY_AIE_METADATA => "GET_INFO(AIE_METADATA)",
        QUERY_AIE_VERSION => "GET_INFO(AIE_VERSION)",
        3 => "GET_INFO(CLOCK_METADATA)",
        4 => "GET_INFO(SENSORS)",
        5 => "GET_INFO(HW_CONTEXTS)",
        QUERY_FIRMWARE_VERSION => "GET_INFO(FIRMWARE_VERSION)",
        9 => "GET_INFO(POWER_MODE)",
        10 => "GET_INFO(TELEMETRY)",
        11 => "GET_INFO(FORCE_PREEMPT_STATE)",
        12 => "GET_INFO(RESOURCE_INFO)",
        13 => "GET_INFO(FRAME_BOUNDARY_PREEMPT_STATE)",
        14 => "GET_INFO(CERT_FIRMWARE_VERSION)",
        15 => "GET_INFO(AUTO_COREDUMP)",
        _ => "GET_INFO",
    }
}

/// The most bytes a raw query may ask for (GET_INFO's `buffer_size` is a
/// u32; a MiB is more than any reply the drivers write).
pub const MAX_QUERY_SIZE: usize = 1 << 20;

/// The least reply memory a raw query gives the kernel, whatever size it
/// asks for: older linux kernels write `sizeof` a fixed reply struct without
/// looking at `buffer_size` (linux `drivers/accel/amdxdna/aie2_pci.c`
/// before @b87f920b: `aie2_get_aie_version` and its neighbours copy
/// `sizeof(version)`), and every such struct is smaller than a page.
const QUERY_FLOOR: usize = 4096;

/// The `_IOWR('d', nr, T)` number for this architecture, from T's size.
pub fn opcode_of<T>(nr: u8) -> Opcode {
    opcode::read_write::<T>(DRM_IOCTL_BASE, nr)
}

/// One ioctl exactly as the kernel receives it: the raw request number, the
/// argument's bytes (read and written back in place), the memory the
/// kernel reads through the addresses in those bytes, and, for GET_INFO, the
/// reply memory it writes. Only this module builds one, from a `Request`'s
/// own bytes, so what a `Syscall` sees is what the real device would pass.
pub struct RawIoctl<'a> {
    name: &'static str,
    number: Opcode,
    arg: &'a mut [u8],
    reads: Vec<&'a [u8]>,
    reply: Option<&'a mut [u8]>,
}

impl<'a> RawIoctl<'a> {
    /// The call's name in errors (`CREATE_HWCTX`, `GET_INFO(AIE_VERSION)`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The raw request number (`DRM_IOWR(nr, struct)`).
    // `Opcode` is a c_ulong on libc targets, a c_uint under linux_raw.
    #[allow(clippy::unnecessary_cast)]
    pub fn number(&self) -> u32 {
        self.number as u32
    }

    /// The argument's bytes, in this machine's byte order.
    pub fn arg(&self) -> &[u8] {
        self.arg
    }

    /// The argument's bytes, for a `Syscall` that answers in place as the
    /// kernel does (a handle, a sequence number).
    pub fn arg_mut(&mut self) -> &mut [u8] {
        self.arg
    }

    /// Each block the kernel reads through an address in the argument: the
    /// address the argument carries for it, and its bytes.
    pub fn reads(&self) -> impl Iterator<Item = (u64, &[u8])> + '_ {
        self.reads.iter().map(|r| (r.as_ptr() as u64, *r))
    }

    /// GET_INFO's reply memory (at the argument's `buffer`), for a
    /// `Syscall` to answer into; `None` for the other requests.
    pub fn reply_mut(&mut self) -> Option<&mut [u8]> {
        self.reply.as_deref_mut()
    }
}

/// The layer under the audited calls, as a seam: something that takes each
/// ioctl as its raw request number and argument bytes (and each mmap of a
/// BO as its offset and length) instead of the kernel. A test puts one under
/// `XdnaDevice::over` to capture exactly what the real device would pass.
/// Whatever it does never reaches the kernel: only `Channel::Kernel` does.
pub trait Syscall {
    /// Answers `request` (its bytes and reply are the caller's to write).
    fn ioctl(&self, request: &mut RawIoctl<'_>) -> Result<(), Errno>;

    /// Accepts or refuses an mmap of `len` bytes at the DRM fake offset
    /// `offset`, at a multiple of `align`; an accepted one is backed by
    /// private anonymous memory.
    fn mmap(&self, offset: u64, len: usize, align: usize) -> Result<(), Errno>;
}

/// Where a device's requests go: the kernel, through the descriptor, or a
/// `Syscall` seam.
pub enum Channel {
    Kernel(OwnedFd),
    Seam(Box<dyn Syscall>),
}

impl fmt::Debug for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Channel::Kernel(fd) => write!(f, "Kernel({fd:?})"),
            Channel::Seam(_) => write!(f, "Seam"),
        }
    }
}

/// The bytes of a `Request` argument: its own memory, which the kernel reads
/// and writes in place.
fn bytes_of_mut<R: Request>(arg: &mut R) -> &mut [u8] {
    // SAFETY: every `Request` is a `#[repr(C)]` struct of integers with no
    // padding (uapi.rs pins each field's offset back to back and the total
    // size), so all `size_of::<R>()` bytes are initialized, and any bytes
    // written through the slice are a valid `R`. The slice borrows `arg`
    // exclusively for its lifetime.
    unsafe { std::slice::from_raw_parts_mut((arg as *mut R).cast::<u8>(), size_of::<R>()) }
}

/// Memory the kernel reads through an address in an argument.
pub trait Plain: sealed::Sealed {
    fn bytes(&self) -> &[u8];
}

impl sealed::Sealed for u32 {}
impl sealed::Sealed for u64 {}
impl sealed::Sealed for [u32] {}
impl sealed::Sealed for [u8] {}
impl sealed::Sealed for QosInfo {}

macro_rules! plain {
    ($ty:ty) => {
        impl Plain for $ty {
            fn bytes(&self) -> &[u8] {
                // SAFETY: an integer, a slice of integers or a `#[repr(C)]`
                // struct of u32s with no padding (uapi.rs): every byte is
                // initialized; the slice borrows `self`.
                unsafe {
                    std::slice::from_raw_parts(
                        (self as *const $ty).cast::<u8>(),
                        std::mem::size_of_val(self),
                    )
                }
            }
        }
    };
}
plain!(u32);
plain!(u64);
plain!([u32]);
plain!([u8]);
plain!(QosInfo);

/// The bytes of `value`, as the kernel reads them at its address.
pub fn bytes_of<T: Plain + ?Sized>(value: &T) -> &[u8] {
    value.bytes()
}

/// Issues `raw` on the kernel descriptor `fd`.
///
/// # Safety
/// `raw.number` must be the `_IOWR` number of the type whose bytes
/// `raw.arg` are (so the kernel copies exactly `raw.arg.len()` bytes), and
/// every address inside them the kernel writes through must point at memory
/// `raw` exclusively borrows (GET_INFO's reply).
unsafe fn kernel_ioctl(fd: BorrowedFd<'_>, raw: &mut RawIoctl<'_>) -> rustix::io::Result<()> {
    /// One in-place ioctl argument for rustix.
    struct InPlace {
        opcode: Opcode,
        ptr: *mut c_void,
    }

    // SAFETY: `ptr` is the start of the argument bytes `kernel_ioctl`'s
    // caller exclusively borrows for the whole call, and the opcode's size
    // is their length; the kernel's writes land in those bytes, read back
    // through the borrow (`IS_MUTATING`).
    unsafe impl Ioctl for InPlace {
        type Output = ();
        const IS_MUTATING: bool = true;

        fn opcode(&self) -> Opcode {
            self.opcode
        }

        fn as_ptr(&mut self) -> *mut c_void {
            self.ptr
        }

        unsafe fn output_from_ptr(_: IoctlOutput, _: *mut c_void) -> rustix::io::Result<()> {
            Ok(())
        }
    }

    let request = InPlace {
        opcode: raw.number,
        ptr: raw.arg.as_mut_ptr().cast(),
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { rustix::ioctl::ioctl(fd, request) }
}

impl Channel {
    /// Issues `raw`, retrying EINTR as libdrm's `drmIoctl` does (a signal
    /// during a syncobj wait is not a failure). EAGAIN, which libdrm also
    /// retries, is returned: a busy-loop on a full queue would hide it.
    ///
    /// # Safety
    /// As `kernel_ioctl`'s (a seam never reaches the kernel).
    unsafe fn dispatch(&self, raw: &mut RawIoctl<'_>) -> Result<(), HalError> {
        loop {
            let result = match self {
                // SAFETY: forwarded from this function's contract.
                Channel::Kernel(fd) => unsafe { kernel_ioctl(fd.as_fd(), raw) },
                Channel::Seam(seam) => seam.ioctl(raw),
            };
            match result {
                Ok(()) => return Ok(()),
                Err(e) if e == Errno::INTR => continue,
                Err(e) => return Err(HalError::from_errno(raw.name, e)),
            }
        }
    }

    /// Issues request `R`; the kernel's replies land in `arg`. `reads` are
    /// the blocks the addresses in `arg` point at (for a seam to see; the
    /// kernel follows the addresses).
    pub fn call<R: Request>(&self, arg: &mut R, reads: &[&[u8]]) -> Result<(), HalError> {
        if arg.refused() {
            return Err(HalError::from_errno(R::NAME, Errno::INVAL));
        }
        let mut raw = RawIoctl {
            name: R::NAME,
            number: opcode_of::<R>(R::NR),
            arg: bytes_of_mut(arg),
            reads: reads.to_vec(),
            reply: None,
        };
        // SAFETY: the opcode is computed from `R` and the bytes are `R`'s;
        // by `Request`'s contract (its impls are the sealed list above,
        // checked against the driver) the kernel writes only into them, and
        // `refused` turned away the fields that would let it or the device
        // write elsewhere.
        unsafe { self.dispatch(&mut raw) }
    }

    /// GET_INFO query `param` with a `size`-byte reply: the bytes the kernel
    /// wrote for it (zeroes past what it wrote).
    ///
    /// The reply memory is zeroed and at least a page: the drivers write at
    /// most `buffer_size` bytes (xdna-driver @856409ca `aie2_pci.c`:
    /// `min(args->buffer_size, sizeof(...))`, or a check of `buffer_size`
    /// first), older linux kernels `sizeof` a fixed reply of under a page,
    /// and the one query that reads an address from the reply (AIE_STATUS)
    /// finds 0 there, which faults (EFAULT) rather than writes this process.
    pub fn query(&self, param: u32, size: usize) -> Result<Vec<u8>, HalError> {
        let name = query_name(param);
        if size > MAX_QUERY_SIZE {
            return Err(HalError::from_errno(name, Errno::TOOBIG));
        }
        let mut reply = vec![0u8; size.max(QUERY_FLOOR)];
        let mut info = GetInfo {
            param,
            // At most MAX_QUERY_SIZE (checked above).
            buffer_size: size as u32,
            buffer: reply.as_mut_ptr() as u64,
        };
        let number = opcode_of::<GetInfo>(DRM_COMMAND_BASE + id::GET_INFO);
        // SAFETY: `GetInfo` is a `#[repr(C)]` struct of integers with no
        // padding (uapi.rs), as `bytes_of_mut` requires of a `Request`.
        let arg = unsafe {
            std::slice::from_raw_parts_mut(
                (&mut info as *mut GetInfo).cast::<u8>(),
                size_of::<GetInfo>(),
            )
        };
        let mut raw = RawIoctl {
            name,
            number,
            arg,
            reads: Vec::new(),
            reply: Some(&mut reply[..size]),
        };
        // SAFETY: the opcode is computed from `GetInfo`, whose bytes `arg`
        // are; `info.buffer` is the address of `reply`, exclusively
        // borrowed by `raw` until the call returns, and the kernel writes
        // no more of it than the doc above says.
        unsafe { self.dispatch(&mut raw)? };
        reply.truncate(size);
        Ok(reply)
    }

    /// Maps `len` bytes of the BO at mmap offset `offset` at a multiple of
    /// `align`: the kernel's mapping, or anonymous memory a seam accepted.
    pub fn map(&self, offset: u64, len: usize, align: usize) -> Result<Mapping, HalError> {
        match self {
            Channel::Kernel(fd) => Mapping::new(fd.as_fd(), offset, len, align),
            Channel::Seam(seam) => {
                seam.mmap(offset, len, align)
                    .map_err(|e| HalError::from_errno("mmap", e))?;
                Mapping::anonymous(len, align)
            }
        }
    }
}

/// The current CLOCK_MONOTONIC time in nanoseconds: the clock of a DRM
/// syncobj wait's absolute timeout.
pub fn monotonic_ns() -> i64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    now.tv_sec
        .saturating_mul(1_000_000_000)
        .saturating_add(now.tv_nsec)
}

/// A read or write outside a mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutOfRange {
    pub at: usize,
    pub len: usize,
    pub size: usize,
}

impl fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} bytes at offset {} are outside a {}-byte buffer",
            self.len, self.at, self.size
        )
    }
}

impl std::error::Error for OutOfRange {}

/// Checks `at..at + len` against a buffer of `size` bytes.
pub fn check_range(at: usize, len: usize, size: usize) -> Result<(), OutOfRange> {
    match at.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(OutOfRange { at, len, size }),
    }
}

/// A BO mapped into this process (shared with the kernel and the NPU),
/// unmapped on drop.
pub struct Mapping {
    ptr: NonNull<c_void>,
    len: usize,
}

/// The page size mappings are made in (x86-64 and the NPU hosts: 4 KiB).
const PAGE: usize = 4096;

impl Mapping {
    /// Maps `len` bytes of the BO whose GET_BO_INFO `map_offset` is `offset`
    /// at an address that is a multiple of `align` (a power of two; up to a
    /// page, wherever the kernel picks).
    pub fn new(
        fd: BorrowedFd<'_>,
        offset: u64,
        len: usize,
        align: usize,
    ) -> Result<Mapping, HalError> {
        let einval = || HalError::from_errno("mmap", Errno::INVAL);
        if len == 0 || !align.is_power_of_two() {
            return Err(einval());
        }
        let at = if align <= PAGE {
            std::ptr::null_mut()
        } else {
            Self::aligned_hole(len, align)?
        };
        let flags = if at.is_null() {
            MapFlags::SHARED
        } else {
            MapFlags::SHARED | MapFlags::FIXED
        };
        // SAFETY: either a fresh shared mapping at an address the kernel
        // picks (null hint), or one over `len` bytes that `aligned_hole`
        // reserved for it and nothing else uses; it aliases no Rust object
        // and lives until `drop` unmaps it.
        let ptr = unsafe {
            rustix::mm::mmap(
                at,
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                flags,
                fd,
                offset,
            )
        };
        let ptr = match ptr {
            Ok(ptr) => ptr,
            Err(e) => {
                if !at.is_null() {
                    // SAFETY: the reservation `aligned_hole` made, unused.
                    let _ = unsafe { rustix::mm::munmap(at, len) };
                }
                return Err(HalError::from_errno("mmap", e));
            }
        };
        let ptr = NonNull::new(ptr).ok_or_else(|| HalError::from_errno("mmap", Errno::FAULT))?;
        Ok(Mapping { ptr, len })
    }

    /// `len` bytes of private anonymous memory at a multiple of `align`:
    /// what a `Syscall` seam's accepted mmap is backed by.
    pub fn anonymous(len: usize, align: usize) -> Result<Mapping, HalError> {
        let einval = || HalError::from_errno("mmap", Errno::INVAL);
        if len == 0 || !align.is_power_of_two() {
            return Err(einval());
        }
        let (at, flags) = if align <= PAGE {
            (std::ptr::null_mut(), MapFlags::PRIVATE)
        } else {
            (
                Self::aligned_hole(len, align)?,
                MapFlags::PRIVATE | MapFlags::FIXED,
            )
        };
        // SAFETY: as in `new`: a fresh mapping at an address the kernel
        // picks, or over the reservation `aligned_hole` made for it alone.
        let ptr = unsafe {
            rustix::mm::mmap_anonymous(at, len, ProtFlags::READ | ProtFlags::WRITE, flags)
        }
        .map_err(|e| HalError::from_errno("mmap", e))?;
        let ptr = NonNull::new(ptr).ok_or_else(|| HalError::from_errno("mmap", Errno::FAULT))?;
        Ok(Mapping { ptr, len })
    }

    /// Reserves `len` bytes of address space at a multiple of `align` (an
    /// inaccessible anonymous mapping the caller maps over with MAP_FIXED),
    /// as XRT places the device heap (xdna-driver `src/shim/buffer.cpp`
    /// `mmap_ptr`).
    fn aligned_hole(len: usize, align: usize) -> Result<*mut c_void, HalError> {
        let fail = |e| HalError::from_errno("mmap", e);
        let span = len.checked_add(align).ok_or_else(|| fail(Errno::NOMEM))?;
        // SAFETY: a fresh private mapping with no access at an address the
        // kernel picks aliases no Rust object.
        let base = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                span,
                ProtFlags::empty(),
                MapFlags::PRIVATE,
            )
        }
        .map_err(fail)?;
        let start = base as usize;
        let head = start.next_multiple_of(align) - start;
        let tail = span - head - len;
        let at = base.cast::<u8>().wrapping_add(head);
        // SAFETY: the head and tail are the parts of the reservation just
        // made outside `at..at + len`; nothing refers to them.
        unsafe {
            if head > 0 {
                let _ = rustix::mm::munmap(base, head);
            }
            if tail > 0 {
                let _ = rustix::mm::munmap(at.wrapping_add(len).cast(), tail);
            }
        }
        Ok(at.cast())
    }

    /// The mapping's address in this process (the heap's host address).
    pub fn addr(&self) -> u64 {
        self.ptr.as_ptr() as u64
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `out.len()` bytes from offset `at` of the mapping.
    pub fn read(&self, at: usize, out: &mut [u8]) -> Result<(), OutOfRange> {
        check_range(at, out.len(), self.len)?;
        // SAFETY: `at..at + out.len()` is inside the live mapping (checked
        // above), which no Rust reference covers, and `out` is a distinct
        // exclusive borrow.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.ptr.as_ptr().cast::<u8>().add(at),
                out.as_mut_ptr(),
                out.len(),
            )
        };
        Ok(())
    }

    /// Copies `data` into the mapping at offset `at`.
    pub fn write(&self, at: usize, data: &[u8]) -> Result<(), OutOfRange> {
        check_range(at, data.len(), self.len)?;
        // SAFETY: as in `read`; the mapping is writable (PROT_WRITE) and no
        // Rust reference covers it, so writing through `&self` aliases
        // nothing.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                self.ptr.as_ptr().cast::<u8>().add(at),
                data.len(),
            )
        };
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what `mmap` returned and nothing
        // refers into the mapping once its owner is gone. An munmap error
        // leaves the pages mapped, which only leaks them.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr(), self.len) };
    }
}

impl fmt::Debug for Mapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Mapping({:#x}, {} bytes)", self.addr(), self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hal::uapi::*;

    /// rustix's encoder and the documented numbers agree on the
    /// architectures the NPU hosts use.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn issued_numbers_are_the_uapi_numbers() {
        fn of<R: Request>() -> u32 {
            opcode_of::<R>(R::NR) as u32
        }
        assert_eq!(of::<CreateHwctx>(), DRM_IOCTL_AMDXDNA_CREATE_HWCTX);
        assert_eq!(of::<DestroyHwctx>(), DRM_IOCTL_AMDXDNA_DESTROY_HWCTX);
        assert_eq!(of::<ConfigHwctx>(), DRM_IOCTL_AMDXDNA_CONFIG_HWCTX);
        assert_eq!(of::<CreateBo>(), DRM_IOCTL_AMDXDNA_CREATE_BO);
        assert_eq!(of::<GetBoInfo>(), DRM_IOCTL_AMDXDNA_GET_BO_INFO);
        assert_eq!(of::<SyncBo>(), DRM_IOCTL_AMDXDNA_SYNC_BO);
        assert_eq!(of::<ExecCmd>(), DRM_IOCTL_AMDXDNA_EXEC_CMD);
        assert_eq!(of::<SyncobjTimelineWait>(), DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT);
        assert_eq!(
            opcode_of::<GetInfo>(DRM_COMMAND_BASE + id::GET_INFO) as u32,
            DRM_IOCTL_AMDXDNA_GET_INFO
        );
    }

    #[test]
    fn errors_name_the_call_and_the_errno() {
        let e = HalError::new("CREATE_HWCTX", Errno::NOENT.raw_os_error());
        assert_eq!(e.errno, 2);
        assert_eq!(e.meaning, "ENOENT (No such file or directory)");
        assert_eq!(
            e.to_string(),
            "CREATE_HWCTX failed: ENOENT (No such file or directory)"
        );
        // An errno outside the table still says what it is.
        let odd = HalError::new("EXEC_CMD", 133);
        assert!(odd.meaning.starts_with("errno 133 ("), "{}", odd.meaning);
    }

    /// The real calls on a descriptor that is not an amdxdna node fail with
    /// the kernel's errno and the call's name, never by crashing.
    #[test]
    fn calls_on_a_non_drm_file_fail_typed() {
        let file = std::fs::File::open("/proc/self/stat").unwrap();
        let fd = file.as_fd();
        let chan = Channel::Kernel(file.try_clone().unwrap().into());
        let mut bo = GetBoInfo {
            handle: 1,
            ..Default::default()
        };
        let e = chan.call(&mut bo, &[]).unwrap_err();
        assert_eq!(e.call, "GET_BO_INFO");
        assert_eq!(e.errno, Errno::NOTTY.raw_os_error());
        let e = chan.query(QUERY_AIE_VERSION, 8).unwrap_err();
        assert_eq!(e.call, "GET_INFO(AIE_VERSION)");
        assert_eq!(e.errno, Errno::NOTTY.raw_os_error());
        // A raw query of a parameter the HAL has no name for, and one too
        // big for GET_INFO's size field.
        assert_eq!(chan.query(77, 4).unwrap_err().call, "GET_INFO");
        let e = chan
            .query(QUERY_AIE_VERSION, MAX_QUERY_SIZE + 1)
            .unwrap_err();
        assert_eq!(e.errno, Errno::TOOBIG.raw_os_error());
        // CREATE_BO with a user address is refused before the kernel sees it.
        let mut bo = CreateBo {
            vaddr: 0x1000,
            size: 4096,
            kind: BO_SHMEM,
            ..Default::default()
        };
        let e = chan.call(&mut bo, &[]).unwrap_err();
        assert_eq!(
            (e.call, e.errno),
            ("CREATE_BO", Errno::INVAL.raw_os_error())
        );
        // So are the other fields that could point the kernel elsewhere.
        let einval = Errno::INVAL.raw_os_error();
        let mut ctx = CreateHwctx {
            ext: 8,
            ..Default::default()
        };
        assert_eq!(chan.call(&mut ctx, &[]).unwrap_err().errno, einval);
        let mut config = ConfigHwctx {
            param_type: 2,
            ..Default::default()
        };
        assert_eq!(chan.call(&mut config, &[]).unwrap_err().errno, einval);
        let mut exec = ExecCmd {
            kind: 1,
            ..Default::default()
        };
        assert_eq!(chan.call(&mut exec, &[]).unwrap_err().errno, einval);
        // An allowed CONFIG_HWCTX reaches the kernel (and this file refuses it).
        config.param_type = HWCTX_ASSIGN_DBG_BUF;
        assert_eq!(
            chan.call(&mut config, &[]).unwrap_err().errno,
            Errno::NOTTY.raw_os_error()
        );
        assert_eq!(
            Mapping::new(fd, 0, 0, 1).unwrap_err().errno,
            Errno::INVAL.raw_os_error()
        );
    }

    /// The replies as the driver writes them (amdxdna_accel.h layouts,
    /// little-endian), byte by byte.
    #[test]
    fn get_info_replies_parse_from_their_bytes() {
        let aie = [2, 0, 0, 0, 1, 0, 0, 0];
        assert_eq!(
            AieVersion::from_le_bytes(&aie),
            AieVersion { major: 2, minor: 1 }
        );
        #[rustfmt::skip]
        let firmware = [1, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0, 0x7c, 0x01, 0, 0];
        assert_eq!(
            FirmwareVersion::from_le_bytes(&firmware),
            FirmwareVersion {
                major: 1,
                minor: 5,
                patch: 2,
                build: 380
            }
        );
        #[rustfmt::skip]
        let metadata: [u8; 64] = [
            0x00, 0x00, 0x10, 0x00, // col_size 0x100000
            8, 0, 6, 0,             // cols 8, rows 6
            2, 0, 0, 0, 1, 0, 0, 0, // version 2.1
            4, 0, 2, 0, 4, 0, 16, 0, 11, 0, 0, 0, 0, 0, 0, 0, // core
            1, 0, 1, 0, 12, 0, 64, 0, 12, 0, 0, 0, 0, 0, 0, 0, // mem
            1, 0, 0, 0, 4, 0, 16, 0, 12, 0, 0xff, 0xff, 0, 0, 0, 0, // shim
        ];
        let m = AieMetadata::from_le_bytes(&metadata);
        assert_eq!((m.col_size, m.cols, m.rows), (0x10_0000, 8, 6));
        assert_eq!(m.version, AieVersion { major: 2, minor: 1 });
        let tile = |row_count, row_start, dma, locks, events| TileMetadata {
            row_count,
            row_start,
            dma_channel_count: dma,
            lock_count: locks,
            event_reg_count: events,
            pad: [0; 3],
        };
        assert_eq!(m.core, tile(4, 2, 4, 16, 11));
        assert_eq!(m.mem, tile(1, 1, 12, 64, 12));
        // Padding is not read.
        assert_eq!(m.shim, tile(1, 0, 4, 16, 12));
    }

    #[test]
    fn ranges_are_checked_without_overflow() {
        assert!(check_range(0, 4, 4).is_ok());
        assert!(check_range(4, 0, 4).is_ok());
        assert_eq!(
            check_range(1, 4, 4),
            Err(OutOfRange {
                at: 1,
                len: 4,
                size: 4
            })
        );
        assert!(check_range(usize::MAX, 2, 4).is_err());
    }

    #[test]
    fn the_monotonic_clock_advances() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(a > 0 && b >= a);
    }
}
