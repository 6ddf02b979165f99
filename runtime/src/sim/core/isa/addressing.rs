//! How loads and stores form their data address (llvm-aie's addressing
//! modes, AIE2PInstrPatterns.td and the instruction records): pointer plus
//! an immediate or `dj` (indexed), the pointer then advanced by the
//! immediate or `m` (post-modify), or the stack pointer plus a negative
//! immediate (spills). Pointers are 20 bits (eP), so addresses wrap at 2^20.

use super::exec::Exec;
use super::operands::Name;

/// How a load or store forms its address.
pub enum Address {
    /// Pointer plus an immediate or register operand.
    Offset(Name),
    /// The pointer, then advanced by the operand.
    Post(Name),
    /// The stack pointer plus the (negative) immediate.
    Stack,
}

pub const POINTER_MASK: u32 = 0xF_FFFF;

pub fn address(x: &mut Exec, how: &Address) -> Result<u32, String> {
    match how {
        Address::Offset(by) => {
            let (p, d) = (x.read(Name::Ptr)?, x.read(*by)?);
            Ok(p.wrapping_add(d) & POINTER_MASK)
        }
        Address::Post(by) => {
            let (p, d) = (x.read(Name::Ptr)?, x.read(*by)?);
            x.write(Name::PtrOut, p.wrapping_add(d) & POINTER_MASK)?;
            Ok(p)
        }
        Address::Stack => {
            let (sp, d) = (x.read_implicit(Name::Sp)?, x.read(Name::Imm)?);
            Ok(sp.wrapping_add(d) & POINTER_MASK)
        }
    }
}
