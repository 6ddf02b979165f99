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
    /// `VEC512`: x0-x11, 512-bit vectors; their halves (`wl`, `wh`) are
    /// `Part`s.
    Vector,
    /// `ACC2048`: dm0-dm4, 2048-bit accumulators (what `vmac.f`, `vadd.f`
    /// and `vclr` take whole). Their halves (`cml`, `cmh`) and quarters
    /// (`bmll` ... `bmhh`) are `Part`s of one, not registers of their own:
    /// regalloc2 has no aliasing classes, so the allocator hands out whole
    /// dm registers.
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
            RegClass::Accumulator => "ACC2048",
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

    /// Bytes a spill slot of the class takes.
    pub fn spill_bytes(self) -> u32 {
        match self {
            RegClass::Vector => 64,
            RegClass::Accumulator => 256,
            _ => 4,
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

/// A part of a register: a half or, of an accumulator, a quarter, by the
/// register tables' subregister order (x: wl, wh; dm: cml, cmh; cml: bmll,
/// bmlh; cmh: bmhl, bmhh).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    Low,
    High,
    LowLow,
    LowHigh,
    HighLow,
    HighHigh,
}

impl Part {
    fn path(self) -> &'static [usize] {
        match self {
            Part::Low => &[0],
            Part::High => &[1],
            Part::LowLow => &[0, 0],
            Part::LowHigh => &[0, 1],
            Part::HighLow => &[1, 0],
            Part::HighHigh => &[1, 1],
        }
    }

    /// The part of register `name` (by assembly name), if it has one.
    pub fn of(self, name: &str) -> Option<String> {
        let isa = isa();
        let mut record = name.to_string();
        for &i in self.path() {
            record = isa.register(&record)?.subregs.get(i)?.clone();
        }
        isa.register(&record).map(|r| r.asm.clone())
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Part::Low => "low",
            Part::High => "high",
            Part::LowLow => "low.low",
            Part::LowHigh => "low.high",
            Part::HighLow => "high.low",
            Part::HighHigh => "high.high",
        })
    }
}
