//! The array simulator: runs `.xdna` artifacts without an NPU.
//!
//! `array` is the model of the AIE2P array (its façade `Array`), with one
//! file per part: `registers`, `locks`, `dma`, `switch`, `timing`, and
//! `error`; `memory` is what its DMA engines address; `core` is the core
//! model a run chooses; `run` drives them all through an artifact.

pub mod array;
pub mod core;
mod dma;
pub mod error;
mod locks;
pub mod memory;
mod registers;
pub mod run;
mod switch;
#[cfg(test)]
mod testing;
mod timing;
