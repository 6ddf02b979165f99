//! The xdna target: AIE2P register map, TXN configuration code, the `.xdna`
//! ELF.

pub mod elf;
#[cfg(test)]
mod golden;
pub mod pdi;
pub mod regs;
pub mod route;
pub mod txn;
