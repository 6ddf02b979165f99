//! The amdxdna HAL (user guide: `docs/xdna-runtime.md`): running compiled
//! artifacts on a Strix or Strix Halo NPU
//! through the amdxdna kernel driver (spec:
//! `shared/reference/amdxdna-runtime-api.txt`, uapi facts:
//! `shared/reference/xdna-hardware-facts.md` §4-6).
//!
//! What exists:
//! - `uapi`: the ioctl arguments, GET_INFO replies, syncobj timeline wait,
//!   ERT header, START_NPU head and preempt head as `#[repr(C)]` types, every size and
//!   offset pinned at compile time, the ioctl numbers as constants.
//! - `ioctl`: the only `unsafe` in the HAL (the crate denies
//!   `unsafe_code`): typed ioctls, raw GET_INFO queries and BO mappings,
//!   each failure a `HalError` naming the call and its errno, all through
//!   one seam (`Channel`, `Syscall`: the raw request number and argument
//!   bytes) that the byte-level tests (`wire_tests`) record.
//! - `device`: the `Device` trait (a raw GET_INFO query by parameter and
//!   size with the typed ones on it, hardware contexts, buffers, sync,
//!   submit, syncobj wait, mapping), the real `XdnaDevice`, `discover`, which finds amdxdna nodes and maps their PCI id and
//!   revision to a Loom profile through `loom_targets::profiles()`, and
//!   `check_geometry`, which holds the array GET_INFO reports to it.
//! - `fake`: the recording `FakeDevice` (scripted failures by name or
//!   position, scripted command states, the packets EXEC_CMD saw, the driver
//!   rules its source shows).
//! - `context`: the reference's runtime library over any `Device`: contexts
//!   on one device heap (mapped before CREATE_HWCTX), a run's buffers as
//!   SHMEM buffers at the driver's device address or, under PASID, their
//!   process address (XRT's rule), pages touched and SYNC_BO each way, `load` (firmware + control code:
//!   an instruction list, a Loom `.xdna` ELF read by `elf::read`, or another
//!   ELF's `.ctrltext`), `code`, `another`, `run`, `submit` and `finish`
//!   (and, for a full ELF with PDIs, `pdi` buffers and `load_elf`)
//!   (syncobj wait, then the ERT state), the debug buffer and `close`; every
//!   failure a `ContextError` naming the library call.
//! - `packet`: the START_CU (instruction list; the DPU register map as a
//!   pinned `#[repr(C)]` type), START_NPU (ELF) and START_NPU_PREEMPT_ELF
//!   (full ELF with PDIs) packets.
//! - `txn`: the reference's TXN builder over `loom_targets::xdna::txn`.
//! - `xclbin`: an xclbin's AIE partition PDIs and IP layout names.
//! - `invoke`: one run of a Loom `.xdna` artifact: admission (profile,
//!   loadability, arguments), the NPU's array checked against the profile,
//!   a buffer per argument, the ELF's argument
//!   patches applied to its control code on the host as XRT's ELF flow
//!   does, the wait with a timeout, the buffers read back. An artifact that
//!   carries PDIs runs as XRT's full-ELF flow runs it (a PDI buffer each,
//!   their addresses patched into the LOADPDI ops, START_NPU_PREEMPT_ELF,
//!   no compute unit); one without runs START_NPU on a compute unit
//!   configured with a firmware image from the caller (`loom-test
//!   --firmware`).
//!
//! Not yet: preemption proper (START_NPU_PREEMPT with save/restore code),
//! freeing single buffers. Nothing here has run on an NPU: the firmware's
//! side (packet layouts as read, whether it acts on DDR_PATCH in an ELF's
//! code, whether it compares PDI addresses or contents, debug buffer
//! contents) is unverified.

pub mod context;
pub mod device;
pub mod fake;
pub mod invoke;
pub mod ioctl;
pub mod packet;
pub mod txn;
pub mod uapi;
pub mod xclbin;

/// The bytes each ioctl of the real device carries, against the linux
/// uapi header (the NPU hosts are little-endian).
#[cfg(all(test, target_endian = "little"))]
mod wire_tests;

// What a program that uses the HAL needs, in one place: it depends on
// `loom-runtime` alone (which links no MLIR; `examples/hal_fake.rs` is such
// a program), so the loom-targets types the HAL's signatures name are
// re-exported here too.
pub use context::{
    Bo, Command, Context, ContextConfig, ContextError, ElfProgram, ErrorKind, Kernel, Program,
};
pub use device::{
    check_geometry, device_info, discover, discover_system, BoInfo, BoKind, BoMap, Device,
    DeviceInfo, HeapSlot, Hwctx, NoDevice, Npu, SyncDirection, XdnaDevice,
};
pub use fake::{Call, FakeDevice, FakeMap, Submission};
pub use invoke::{patch_control_code, patch_pdi_loads, run_artifact, InvokeError, PatchError};
pub use ioctl::{HalError, RawIoctl, Syscall};
pub use loom_targets::xdna::elf::Artifact;
pub use loom_targets::xdna::regs::Direction;
pub use loom_targets::xdna::txn::{Txn, TxnOp};
pub use loom_targets::{profiles, DeviceProfile};
pub use txn::{
    tile, DmaOptions, ShimDma, Strides, TxnBuildError, TxnBuilder, AGGRESSIVE_CACHE, MM2S,
    NORMAL_CACHE, NO_CACHE, S2MM,
};
pub use uapi::{AieMetadata, AieVersion, ErtState, FirmwareVersion, QosInfo, Reply};

/// A scratch directory for tests, removed when dropped.
#[cfg(test)]
pub(crate) mod testdir {
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicU32, Ordering};

    pub struct TestDir(PathBuf);

    impl TestDir {
        pub fn new(tag: &str) -> TestDir {
            static NEXT: AtomicU32 = AtomicU32::new(0);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir =
                std::env::temp_dir().join(format!("loom-hal-{tag}-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            TestDir(dir)
        }

        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TestDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
