//! The AIE2P code generator's machine layer, below instruction selection:
//! machine functions over virtual registers of the AIE2P register classes
//! (`function`, built through `builder`), register allocation with
//! regalloc2 (`regalloc`), list scheduling into VLIW bundles from the
//! itineraries (`timing`, `scheduler`), and emission of bytes, a symbol
//! map, a line table and a core ELF with its start-up (`emit`). Every
//! emitted image passes `loom_aie2p_isa::rules::check` and the latency
//! checker (`hazard`), else compilation fails with an internal error.
//!
//! No MLIR: the MLIR-facing selection (in targets/xdna-backend) builds
//! machine functions through this crate's API. docs/code-generator.md
//! describes the layers and where each rule is enforced.

#![deny(unsafe_code)]

mod builder;
mod class;
mod dead;
mod emit;
mod error;
mod function;
pub mod hazard;
mod join;
mod layout;
mod location;
pub mod reference;
mod regalloc;
mod rename;
mod scheduler;
mod timing;

#[cfg(test)]
mod tests;

pub use builder::FunctionBuilder;
pub use class::{Part, RegClass};
pub use emit::{compile, LineEntry, Options, Program, StackRegion, Symbol};
pub use error::{BuildError, CodegenError};
pub use function::{
    Block, BlockId, MachineFunction, MachineInst, MachineOperand, Terminator, VReg,
};
pub use location::SourceLocation;
