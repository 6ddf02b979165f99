//! The amdxdna HAL: running compiled artifacts on a Strix or Strix Halo NPU
//! through the amdxdna kernel driver (spec:
//! `shared/reference/amdxdna-runtime-api.txt`, uapi facts:
//! `shared/reference/xdna-hardware-facts.md` §6).
//!
//! In this slice:
//! - `uapi`: the ioctl arguments, GET_INFO replies, syncobj timeline wait,
//!   ERT header and START_NPU head as `#[repr(C)]` types, every size and
//!   offset pinned at compile time, the ioctl numbers as constants.
//! - `ioctl`: the only `unsafe` in the HAL (the rest of it denies
//!   `unsafe_code`): typed ioctls, GET_INFO queries and BO mappings, each
//!   failure a `HalError` naming the call and its errno.
//! - `device`: the `Device` trait (queries, hardware contexts, buffers, sync,
//!   submit, syncobj wait, mapping), the real `XdnaDevice`, the recording
//!   `FakeDevice`, and `discover`, which finds amdxdna nodes and maps their
//!   PCI id and revision to a Loom profile through `loom_targets::profiles()`.
//!
//! Not yet: the context layer (heap, contexts, buffers, load, run, submit and
//! finish with command-state checks), the START_NPU and ELF-form packet
//! builders, the TXN builder, the xclbin parser, `.ctrltext` extraction, and
//! `loom-test --device=xdna`.
#![deny(unsafe_code)]

pub mod device;
pub mod ioctl;
pub mod uapi;

pub use device::{discover, discover_system, Device, FakeDevice, NoDevice, Npu, XdnaDevice};
pub use ioctl::HalError;

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
