//! The array's cores as the simulator drives them. A core model runs each
//! enabled core's tile image until it blocks or finishes, says what it
//! waits on, and keeps each core's modelled clock. Today's model runs the
//! images' Low IR in the interpreter ([`lowir`]); the instruction-level
//! model ([`isa`]) executes the AIE2P machine code of core ELF images.

pub mod isa;
pub mod lowir;

use super::array::Array;
use loom_diagnostic::Diagnostic;
use loom_targets::Tile;

// A core's timeline is the interpreter's type: the Low IR core hands its
// workers' timelines on as they are, and another core model fills the same.
pub use crate::interp::timeline::{LockStall, Timeline};

/// Every core of one run, as one model runs them.
pub trait Cores {
    /// Start the worker of tile image `image` on the core at `tile`, whose
    /// core was enabled at modelled cycle `at`.
    fn start(&mut self, image: &str, tile: Tile, at: u64) -> Result<(), Diagnostic>;
    /// Run every started core until it blocks or finishes, taking and
    /// giving lock credits on `array`; whether any core ran.
    fn run(&mut self, array: &mut Array) -> Result<bool, Diagnostic>;
    /// Cores that have not finished: where each waits (a location, or "")
    /// and why.
    fn unfinished(&self) -> Vec<(String, String)>;
    /// Operations (or instructions) the cores executed.
    fn steps(&self) -> u64;
    /// Each core's name, the modelled cycle it finished (or stopped), and
    /// the cycles it spent executing.
    fn clocks(&self) -> Vec<(String, u64, u64)>;
    /// Keep each core's lock stalls from now on (for a trace; off unless
    /// asked, so an untraced run pays nothing).
    fn record_stalls(&mut self);
    /// Each started core's timeline, with its stalls if they were recorded.
    fn timelines(&self) -> Vec<Timeline>;
    /// The data memory of `tile` (`bytes` long), made zeroed at first use:
    /// the cores hold it, the DMA engines reach it here.
    fn tile_memory(&mut self, tile: Tile, bytes: u64) -> &mut [u8];
}
