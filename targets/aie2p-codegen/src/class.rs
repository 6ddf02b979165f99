//! The register classes machine functions allocate over, by the names the
//! instruction tables give them, with their physical registers.

use loom_aie2p_isa::isa;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RegClass {
    /// `eR`: r0-r31, 32-bit scalars.
    Scalar,
    /// `eP`: p0-p7, 20-bit pointers.
    Pointer,
    /// `eM`: m0-m7, pointer modifiers.
    Modifier,
    /// `VEC512`: x0-x11, 512-bit vectors.
    Vector,
    /// `ACC512`: the bm registers, 512-bit accumulators.
    Accumulator,
}

impl RegClass {
    pub const ALL: [RegClass; 5] = [
        RegClass::Scalar,
        RegClass::Pointer,
        RegClass::Modifier,
        RegClass::Vector,
        RegClass::Accumulator,
    ];

    /// The instruction tables' name of the class.
    pub fn table_name(self) -> &'static str {
        match self {
            RegClass::Scalar => "eR",
            RegClass::Pointer => "eP",
            RegClass::Modifier => "eM",
            RegClass::Vector => "VEC512",
            RegClass::Accumulator => "ACC512",
        }
    }

    /// The class's registers by assembly name, in the tables' order.
    pub fn registers(self) -> Vec<&'static str> {
        let isa = isa();
        isa.class(self.table_name())
            .iter()
            .filter_map(|record| isa.register(record))
            .map(|r| r.asm.as_str())
            .collect()
    }

    /// Registers a callee preserves (AIE2PCallingConv.td, as
    /// xdna-hardware-facts §7 lists them: r8-r15, p6, p7; lr is no class
    /// here). The allocator takes them last.
    pub fn callee_saved(self) -> &'static [&'static str] {
        match self {
            RegClass::Scalar => &["r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"],
            RegClass::Pointer => &["p6", "p7"],
            _ => &[],
        }
    }

    /// The class a physical register belongs to, if any.
    pub fn of_register(name: &str) -> Option<RegClass> {
        RegClass::ALL
            .into_iter()
            .find(|c| c.registers().contains(&name))
    }
}

impl fmt::Display for RegClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.table_name())
    }
}
