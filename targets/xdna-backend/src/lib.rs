//! The xdna target's back end: from the native realization (the module
//! `aie2p-lower-pipeline` leaves) to the `.xdna` artifact. `emit` turns the
//! configuration function's instructions into TXN control code and packs
//! the tile images, the entry and the argument patches into the artifact;
//! `report` gives the realization section of the compile report. The AIE2P
//! code generator (Low IR worker functions to machine code) will live here
//! too, on the MLIR-free instruction-set crate (docs/architecture.md).

#![deny(unsafe_code)]

mod attributes;
mod bring_up;
mod emit;
mod report;

pub use emit::{emit, Built, NOT_LOADABLE};
