//! Loom's targets. Today: the device profiles of the xdna target, as data
//! (`xdna/profiles/*.json`, one file per profile, embedded at build time).
//! The aie2p lowering, TXN configuration code and the ELF writer will live
//! here too (the xdna target issue).

#![deny(unsafe_code)]

mod profile;
mod tile;
pub mod xdna;

pub use profile::{profiles, targets, DeviceProfile};
pub use tile::Tile;
