//! The array simulator: runs `.xdna` artifacts without an NPU.
//!
//! `array` is the model of the AIE2P array (its façade `Array`), with one
//! file per part under `array/`: `registers`, `locks`, `dma`, `switch`,
//! `timing`; `error` is what it reports; `memory` is what its DMA engines
//! address; `core` is the core model a run chooses; `run` drives them all
//! through an artifact; `trace` records a run's timeline and writes it as a
//! Chrome/Perfetto trace.

pub mod array;
pub mod core;
pub mod error;
pub mod memory;
pub mod run;
pub mod trace;
