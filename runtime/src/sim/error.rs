//! What went wrong in the array model, and where.

use loom_targets::Tile;
use std::fmt;

/// What went wrong, where: the TXN op (for DMA errors, the op that queued
/// the task), the tile, and the register or channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimError {
    pub txn_op: Option<usize>,
    pub tile: Option<Tile>,
    pub register: Option<String>,
    pub message: String,
}

impl SimError {
    pub(super) fn new(message: impl Into<String>) -> SimError {
        SimError {
            txn_op: None,
            tile: None,
            register: None,
            message: message.into(),
        }
    }

    pub(super) fn op(mut self, index: usize) -> SimError {
        self.txn_op = Some(index);
        self
    }

    pub(super) fn tile(mut self, tile: Tile) -> SimError {
        self.tile = Some(tile);
        self
    }

    pub(super) fn register(mut self, name: impl Into<String>) -> SimError {
        self.register = Some(name.into());
        self
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(op) = self.txn_op {
            write!(f, "TXN op {op}: ")?;
        }
        match (self.tile, &self.register) {
            (Some(tile), Some(register)) => write!(f, "tile {} {register}: ", tile)?,
            (Some(tile), None) => write!(f, "tile {}: ", tile)?,
            (None, Some(register)) => write!(f, "{register}: ")?,
            (None, None) => {}
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for SimError {}
