//! The reference interpreter: the `interp` device of `loom-test`.
//!
//! `program` is a module as a graph of blocks per function, pipeline and
//! strand (loom-translate reads a verified module into it); `machine` runs
//! one pipeline invocation with strands as tasks under a deterministic or
//! seeded random scheduler, or a native realization's workers on an array
//! that `tiles` describes (the array simulator's Low IR cores), whose
//! stalls `timeline` keeps for a trace.

pub mod integers;
pub mod machine;
pub mod matmul;
pub mod program;
pub mod tiles;
pub mod timeline;
pub mod value;

pub use machine::{run, Options, Outcome, Schedule, Workers};
pub use program::Program;
pub use tiles::Tiles;
