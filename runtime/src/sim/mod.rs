//! The array simulator: runs `.xdna` artifacts without an NPU.

pub mod array;
pub mod core;
pub mod memory;
pub mod run;
