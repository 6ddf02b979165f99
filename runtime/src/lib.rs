//! The devices that run Loom pipelines. Today: the reference interpreter,
//! which executes Loom IR at every stage the compiler produces (authored
//! source, inlined, `cfg` form, outlined) with the semantics of
//! `docs/semantics.md`. The array simulator and the amdxdna HAL arrive with
//! their issues.

pub mod interp;
pub mod numerics;
pub mod sim;
