//! The reference interpreter: the `interp` device of `loom-test`.
//!
//! `program` turns a verified module into a graph of blocks per function,
//! pipeline and strand; `machine` runs one pipeline invocation with strands
//! as tasks under a deterministic or seeded random scheduler.

pub mod machine;
pub mod program;
pub mod value;

pub use machine::{run, Options, Outcome, RuntimeError, Schedule};
pub use program::{translate, Program, TranslateError};
