//! The xdna target's back end: from the native realization (the module
//! `aie2p-lower-pipeline` leaves) to the `.xdna` artifact. `emit` turns the
//! configuration function's instructions into TXN control code and packs
//! the tile images, the entry and the argument patches into the artifact;
//! `report` gives the realization section of the compile report; `select`
//! is the AIE2P code generator's instruction selection (Low IR worker
//! functions to the machine functions of `loom-aie2p-codegen`, which
//! allocates, schedules and emits them; docs/code-generator.md).

#![deny(unsafe_code)]

mod attributes;
mod bring_up;
mod emit;
mod report;
mod select;

pub use emit::{emit, Built, Options, WorkerCode, NOT_LOADABLE, UNVERIFIED};
