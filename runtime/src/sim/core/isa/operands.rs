//! An instruction's operands as executing uses them, resolved once at
//! decode: each register operand (and implicit register) to its one-word
//! leaf with the cycle its itinerary reads or writes it at, each immediate
//! to its value; and each name the semantics ask for (`Name`) to its
//! operand's index, so executing looks nothing up by text.

use super::registers::{RegisterFile, Run, WINDOW};
use super::timing::Bypass;
use super::words::MAX_WORDS;
use loom_aie2p_isa::{isa, Instruction, Itinerary, OperandKind, Value};

/// An operand as executing reads or writes it, resolved at decode.
#[derive(Debug, Clone)]
pub(super) enum Resolved {
    /// A one-word register: its leaf (a run of one), the cycle after issue
    /// it is read or written at, and the bypass that operand names.
    Register {
        run: Run,
        cycle: u32,
        bypass: Bypass,
    },
    /// A register of several words (a pair, a vector, an accumulator): its
    /// leaves as runs, lowest first, as `Register`.
    Wide {
        runs: Box<[Run]>,
        words: usize,
        cycle: u32,
        bypass: Bypass,
    },
    Immediate(u32),
    /// Why executing cannot use it (a register the tables do not name, no
    /// cycle in the itinerary).
    Unusable(String),
}

/// The operand names the semantics use (llvm-aie's operand and implicit
/// register names), each found in an instruction's operands once at decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Name {
    A,
    Acc,
    Acc1,
    Acc2,
    CrRnd,
    D,
    D0,
    Dj,
    Dst,
    I,
    Id,
    Idx,
    Imm,
    Lr,
    Mod,
    Ptr,
    PtrOut,
    S0,
    S1,
    S2,
    Sp,
    Src,
    SrCarry,
}

impl Name {
    const ALL: [Name; 23] = [
        Name::A,
        Name::Acc,
        Name::Acc1,
        Name::Acc2,
        Name::CrRnd,
        Name::D,
        Name::D0,
        Name::Dj,
        Name::Dst,
        Name::I,
        Name::Id,
        Name::Idx,
        Name::Imm,
        Name::Lr,
        Name::Mod,
        Name::Ptr,
        Name::PtrOut,
        Name::S0,
        Name::S1,
        Name::S2,
        Name::Sp,
        Name::Src,
        Name::SrCarry,
    ];

    /// The name as the instruction tables spell it.
    pub fn text(self) -> &'static str {
        match self {
            Name::A => "a",
            Name::Acc => "acc",
            Name::Acc1 => "acc1",
            Name::Acc2 => "acc2",
            Name::CrRnd => "crRnd",
            Name::D => "d",
            Name::D0 => "d0",
            Name::Dj => "dj",
            Name::Dst => "dst",
            Name::I => "i",
            Name::Id => "id",
            Name::Idx => "idx",
            Name::Imm => "imm",
            Name::Lr => "lr",
            Name::Mod => "mod",
            Name::Ptr => "ptr",
            Name::PtrOut => "ptr_out",
            Name::S0 => "s0",
            Name::S1 => "s1",
            Name::S2 => "s2",
            Name::Sp => "sp",
            Name::Src => "src",
            Name::SrCarry => "srCarry",
        }
    }
}

/// No operand has the name.
const ABSENT: u8 = u8::MAX;

/// An instruction's resolved operands: explicit ones in the opcode's
/// order, then its implicit defs and uses (by record name).
#[derive(Debug, Clone)]
pub(super) struct Operands {
    pub(super) list: Vec<(String, Resolved)>,
    /// Per `Name`, the index of the first operand so named, or `ABSENT`.
    by_name: [u8; Name::ALL.len()],
    /// Per implicit use and def, the first operand named as its record
    /// (what a lookup by the record's name finds).
    pub(super) implicit_uses: Vec<usize>,
    pub(super) implicit_defs: Vec<usize>,
}

impl Operands {
    fn new(list: Vec<(String, Resolved)>, instruction: &Instruction) -> Operands {
        let first = |name: &str| list.iter().position(|(n, _)| n == name);
        let mut by_name = [ABSENT; Name::ALL.len()];
        for name in Name::ALL {
            if let Some(k) = first(name.text()) {
                by_name[name as usize] = u8::try_from(k).unwrap_or(ABSENT);
            }
        }
        let opcode = instruction.opcode;
        let (implicit_uses, implicit_defs) = if list.is_empty() {
            (Vec::new(), Vec::new()) // refused before it executes
        } else {
            let index = |records: &[String]| records.iter().filter_map(|r| first(r)).collect();
            (index(&opcode.implicit_uses), index(&opcode.implicit_defs))
        };
        Operands {
            by_name,
            implicit_uses,
            implicit_defs,
            list,
        }
    }

    /// Every register leaf of its operands.
    pub(super) fn leaves(&self) -> impl Iterator<Item = usize> + '_ {
        self.list.iter().flat_map(|(_, r)| {
            let runs: &[Run] = match r {
                Resolved::Register { run, .. } => std::slice::from_ref(run),
                Resolved::Wide { runs, .. } => runs,
                Resolved::Immediate(_) | Resolved::Unusable(_) => &[],
            };
            runs.iter().flat_map(|r| r.leaves())
        })
    }

    /// The operand called `name`, if the instruction has one.
    pub(super) fn get(&self, name: Name) -> Option<&Resolved> {
        self.list
            .get(usize::from(self.by_name[name as usize]))
            .map(|(_, r)| r)
    }
}

/// The register an operand names: its field's value, or the only member
/// of its class (e.g. `r27` of `sel.nez`).
fn register_of(instruction: &Instruction, operand: &str) -> Result<String, String> {
    match instruction.value(operand) {
        Some(Value::Register(name)) => Ok(name),
        Some(Value::Immediate(v)) => Err(format!("operand `{operand}` is the immediate {v}")),
        None => {
            let class = instruction
                .opcode
                .operand(operand)
                .map_or("", |o| o.class.as_str());
            match isa().class(class) {
                [only] => isa()
                    .register(only)
                    .map(|r| r.asm.clone())
                    .ok_or_else(|| format!("class {class} names no register")),
                _ => Err(format!("operand `{operand}` has no value")),
            }
        }
    }
}

fn register_operand(
    register: Result<String, String>,
    name: &str,
    itinerary: &'static Itinerary,
) -> Resolved {
    let resolved = register.and_then(|r| {
        let leaves = RegisterFile::leaves(&r).ok_or_else(|| format!("no register is named {r}"))?;
        let cycle = itinerary.cycle(name).ok_or_else(|| {
            format!(
                "its itinerary {} gives no cycle for operand `{name}`",
                itinerary.name
            )
        })?;
        // The register file lands a write the cycle after its issue at
        // once, as every later read is a cycle after that.
        if cycle == 0 {
            return Err(format!(
                "its itinerary {} gives operand `{name}` cycle 0, before the first cycle after \
                 issue the isa core reads and writes operands at",
                itinerary.name
            ));
        }
        if u64::from(cycle) >= WINDOW {
            return Err(format!(
                "its itinerary {} gives operand `{name}` cycle {cycle}, past the {WINDOW} cycles \
                 the isa core's register file holds writes for",
                itinerary.name
            ));
        }
        let bypass = Bypass::named(itinerary.bypass(name));
        let words: usize = leaves.iter().map(|&l| RegisterFile::words(l)).sum();
        if words > MAX_WORDS {
            return Err(format!(
                "register {r} is {} bits wide, more than the isa core's widest ({})",
                32 * words,
                32 * MAX_WORDS
            ));
        }
        let runs = RegisterFile::runs(leaves);
        Ok(match leaves {
            [leaf] if RegisterFile::is_word(*leaf) => Resolved::Register {
                run: runs[0],
                cycle,
                bypass,
            },
            _ => Resolved::Wide {
                runs: runs.into(),
                words,
                cycle,
                bypass,
            },
        })
    });
    resolved.unwrap_or_else(Resolved::Unusable)
}

/// Every operand and implicit register of `instruction`.
pub(super) fn resolve(
    instruction: &Instruction,
    itinerary: Option<&'static Itinerary>,
) -> Operands {
    let Some(itinerary) = itinerary else {
        return Operands::new(Vec::new(), instruction); // refused before it executes
    };
    let opcode = instruction.opcode;
    let explicit = opcode.operands.iter().map(|op| {
        let resolved = if op.kind == OperandKind::Immediate {
            match instruction.value(&op.name) {
                Some(Value::Immediate(v)) => Resolved::Immediate(v as u32),
                _ => Resolved::Unusable(format!("immediate `{}` has no value", op.name)),
            }
        } else {
            register_operand(register_of(instruction, &op.name), &op.name, itinerary)
        };
        (op.name.clone(), resolved)
    });
    let implicit = opcode
        .implicit_defs
        .iter()
        .chain(&opcode.implicit_uses)
        .map(|record| {
            let resolved = register_operand(Ok(record.clone()), record, itinerary);
            (record.clone(), resolved)
        });
    Operands::new(explicit.chain(implicit).collect(), instruction)
}
