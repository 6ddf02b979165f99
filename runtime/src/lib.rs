//! The devices that run Loom pipelines: the reference interpreter (`interp`),
//! which executes Loom IR at every stage the compiler produces with the
//! semantics of `docs/semantics.md`; the AIE2P array simulator (`sim`), which
//! runs `.xdna` artifacts (docs/array-simulator.md); and the first layer of
//! the amdxdna HAL (`hal`: uapi types, the audited ioctl layer, device
//! discovery; running on an NPU is not implemented yet).

pub mod hal;
pub mod interp;
pub mod numerics;
pub mod sim;
