//! Loom's targets: the device profiles of the xdna target, as data
//! (`xdna/profiles/*.json`, one file per profile, embedded at build time),
//! and what the xdna target reads and writes (`xdna`): the register map,
//! stream routes, TXN control code and the `.xdna` ELF.

#![deny(unsafe_code)]

mod profile;
mod tile;
pub mod xdna;

pub use profile::{profiles, targets, DeviceProfile};
pub use tile::Tile;
