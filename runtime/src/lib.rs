//! The devices that run Loom pipelines: the reference interpreter (`interp`),
//! which executes Loom IR at every stage the compiler produces with the
//! semantics of `docs/semantics.md`; the AIE2P array simulator (`sim`), which
//! runs `.xdna` artifacts (docs/array-simulator.md); and the amdxdna HAL
//! (`hal`, docs/xdna-runtime.md: discovery, contexts, buffers, control code,
//! submission; tested against a fake of the driver, never run on an NPU).
//!
//! `unsafe` lives in one audited FFI module, `hal/ioctl.rs`.

#![deny(unsafe_code)]

pub mod hal;
pub mod interp;
pub mod numerics;
pub mod sim;
