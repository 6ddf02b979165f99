//! The instruction-set tables (`data/*.json`), read once into typed form
//! with the indexes the decoder and the assembler use. The files are derived
//! from llvm-aie's TableGen by `scripts/aie2p-isa/extract.py`; each names its
//! sources, their commits and license in its `provenance` object.

use crate::schedule::{Itinerary, RegisterClassItinerary, Schedule};
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::OnceLock;

/// A piece of a field: `width` bits at `lsb` of the container hold bits
/// `field_lsb..` of the field's value.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
pub struct Run {
    pub lsb: u32,
    pub width: u32,
    pub field_lsb: u32,
}

/// Where one slot sits in a bundle format.
#[derive(Debug, Clone, Deserialize)]
pub struct FormatSlot {
    pub slot: String,
    pub bits: Vec<Run>,
}

/// A bundle format: its size, the bits that identify it, its slots.
#[derive(Debug, Clone)]
pub struct Format {
    pub name: String,
    pub size_bytes: usize,
    pub fixed_mask: u128,
    pub fixed_value: u128,
    /// In the order llvm-objdump prints them.
    pub slots: Vec<FormatSlot>,
}

/// How an operand's field is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperandKind {
    /// A register of a class, by its encoding.
    Register,
    /// A register of one of several classes, told apart by a tag.
    Composite,
    /// An immediate of the named operand class.
    Immediate,
}

/// One operand of an instruction.
#[derive(Debug, Clone)]
pub struct Operand {
    pub name: String,
    pub kind: OperandKind,
    /// Register class, composite operand class or immediate class.
    pub class: String,
    /// Field width in bits (0 when the operand has no field).
    pub width: u32,
    pub bits: Vec<Run>,
    /// An output tied to an input, which carries the field.
    pub tied_to: Option<String>,
    /// Written by the instruction.
    pub output: bool,
    /// No field: the member of the class at the index the named operand's
    /// field holds (llvm-aie's decoder methods read the FIFO loads' lf/r24
    /// registers so; scripts/aie2p-isa/README.md).
    pub index_from: Option<String>,
}

/// One encodable instruction of a slot.
#[derive(Debug, Clone)]
pub struct Opcode {
    /// llvm-aie's record name, e.g. `ACQ_mLockId_imm`.
    pub name: String,
    pub mnemonic: String,
    pub slot: String,
    pub fixed_mask: u64,
    pub fixed_bits: u64,
    /// The assembly operands as the printer writes them, `$name` for each.
    pub asm_args: String,
    pub operands: Vec<Operand>,
    /// llvm-aie's scheduling class, if it has one.
    pub itinerary: Option<String>,
    /// A control transfer, taking effect after the delay slots.
    pub has_delay_slot: bool,
    /// Registers it writes and reads beyond its operands (record names,
    /// e.g. `srCarry`, `lr`), as llvm-aie's `Defs`/`Uses` list them.
    pub implicit_defs: Vec<String>,
    pub implicit_uses: Vec<String>,
    /// A slot's NOP (`isSlotNOP`): it reads and writes nothing.
    pub is_slot_nop: bool,
    /// Itineraries chosen by the registers of the operands, in the order
    /// llvm-aie tries them; `itinerary` when none applies.
    pub itinerary_by_register_class: Vec<RegisterClassItinerary>,
}

impl Opcode {
    pub fn operand(&self, name: &str) -> Option<&Operand> {
        self.operands.iter().find(|o| o.name == name)
    }

    /// The operand whose field carries `name`'s value (following ties).
    pub fn field_of(&self, name: &str) -> Option<&Operand> {
        let mut operand = self.operand(name)?;
        for _ in 0..self.operands.len() {
            match (&operand.tied_to, operand.bits.is_empty()) {
                (Some(other), true) => operand = self.operand(other)?,
                _ => return Some(operand),
            }
        }
        None
    }

    /// Whether every assembly operand has a field or is derived from one
    /// (else its value comes from a rule the tables lack).
    pub fn fields_cover_text(&self) -> bool {
        self.asm_operands().into_iter().all(|name| {
            self.field_of(name).is_some_and(|o| {
                !o.bits.is_empty()
                    || o.index_from
                        .as_deref()
                        .and_then(|from| self.operand(from))
                        .is_some_and(|from| !from.bits.is_empty())
            })
        })
    }

    /// The operand names in the order the assembly text lists them.
    pub fn asm_operands(&self) -> Vec<&str> {
        placeholders(&self.asm_args)
            .into_iter()
            .map(|(_, _, name)| name)
            .collect()
    }
}

/// `$name` and `${name}` placeholders of an asm string: (start, end, name).
pub(crate) fn placeholders(text: &str) -> Vec<(usize, usize, &str)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let braced = bytes.get(i + 1) == Some(&b'{');
        let start = i + 1 + usize::from(braced);
        let mut end = start;
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
            end += 1;
        }
        let close = end + usize::from(braced);
        out.push((i, close, &text[start..end]));
        i = close.max(i + 1);
    }
    out
}

#[derive(Debug, Clone, Deserialize)]
pub struct Register {
    pub asm: String,
    pub encoding: u32,
    /// The records of the registers this one is made of (`x0` is `wl0`
    /// and `wh0`, `dm0` is `cml0` and `cmh0`), empty for a leaf.
    pub subregs: Vec<String>,
}

/// One alternative of a composite register operand: either one fixed
/// register (`value` is its whole field) or a class, whose member
/// `field >> shift` is meant when the low `tag_width` bits equal `tag`.
#[derive(Debug, Clone)]
pub enum Alternative {
    Fixed {
        register: String,
        value: u64,
    },
    Class {
        /// The class's register records, in its order.
        class: String,
        shift: u32,
        tag: u64,
        tag_width: u32,
    },
}

/// An immediate operand class.
#[derive(Debug, Clone, Deserialize)]
pub struct Immediate {
    pub kind: String,
    pub width: u32,
    pub signed: bool,
    pub scale: i64,
    #[serde(default)]
    pub always_negative: bool,
    #[serde(default)]
    pub negated: bool,
}

/// The whole instruction set.
#[derive(Debug)]
pub struct Isa {
    pub formats: Vec<Format>,
    pub opcodes: Vec<Opcode>,
    pub slot_widths: HashMap<String, u32>,
    registers: HashMap<String, Register>,
    /// Per assembly name, the leaf registers it covers (see `leaves`).
    leaves: HashMap<String, Vec<String>>,
    classes: HashMap<String, Vec<String>>,
    composites: HashMap<String, Vec<Alternative>>,
    immediates: HashMap<String, Immediate>,
    /// Per slot, opcode indices from the most specific fixed mask down.
    by_slot: HashMap<String, Vec<usize>>,
    /// Per mnemonic, opcode indices.
    by_mnemonic: HashMap<String, Vec<usize>>,
    /// Per size in bytes, format indices.
    by_size: HashMap<usize, Vec<usize>>,
    /// The itineraries: operand cycles, bypasses, functional units.
    pub schedule: Schedule,
}

// The raw file layouts.
#[derive(Deserialize)]
struct SlotsFile {
    slots: Vec<RawSlot>,
}
#[derive(Deserialize)]
struct RawSlot {
    name: String,
    width: u32,
}
#[derive(Deserialize)]
struct FormatsFile {
    formats: Vec<RawFormat>,
}
#[derive(Deserialize)]
struct RawFormat {
    name: String,
    size_bytes: usize,
    fixed_mask: String,
    fixed_value: String,
    slots: Vec<FormatSlot>,
}
#[derive(Deserialize)]
struct InstructionsFile {
    instructions: Vec<RawOpcode>,
}
#[derive(Deserialize)]
struct RawOpcode {
    name: String,
    mnemonic: String,
    slot: String,
    fixed_mask: String,
    fixed_bits: String,
    asm_args: String,
    operands: Vec<RawOperand>,
    #[serde(default)]
    itinerary: Option<String>,
    #[serde(default)]
    flags: Vec<String>,
}
#[derive(Deserialize)]
struct RawOperand {
    name: String,
    kind: String,
    class: String,
    #[serde(default)]
    regclass: Option<String>,
    #[serde(default)]
    width: u32,
    #[serde(default)]
    bits: Vec<Run>,
    #[serde(default)]
    tied_to: Option<String>,
    dir: String,
    #[serde(default)]
    index_from: Option<String>,
}
#[derive(Deserialize)]
struct ScheduleFile {
    instructions: HashMap<String, RawSchedule>,
    itineraries: HashMap<String, crate::schedule::RawItinerary>,
    register_class_itineraries: HashMap<String, crate::schedule::RawItinerary>,
    delay_slots: crate::schedule::RawDelaySlots,
}
#[derive(Deserialize)]
struct RawSchedule {
    #[serde(default)]
    has_delay_slot: bool,
    #[serde(default)]
    defs: Vec<String>,
    #[serde(default)]
    uses: Vec<String>,
    #[serde(default)]
    itinerary_by_register_class: Vec<RegisterClassItinerary>,
}
#[derive(Deserialize)]
struct RegistersFile {
    registers: Vec<RawRegister>,
    classes: HashMap<String, RawClass>,
    composite_operands: HashMap<String, RawComposite>,
}
#[derive(Deserialize)]
struct RawRegister {
    record: String,
    asm: String,
    encoding: u32,
    #[serde(default)]
    subregs: Vec<String>,
}
#[derive(Deserialize)]
struct RawClass {
    members: Vec<String>,
}
#[derive(Deserialize)]
struct RawComposite {
    alternatives: Option<Vec<RawAlternative>>,
}
#[derive(Deserialize)]
struct RawAlternative {
    #[serde(default)]
    register: Option<String>,
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    regclass: Option<String>,
    #[serde(default)]
    shift: u32,
    #[serde(default)]
    tag: Option<String>,
    #[serde(default)]
    tag_width: u32,
}
#[derive(Deserialize)]
struct OperandsFile {
    immediates: HashMap<String, Immediate>,
}

fn hex(text: &str) -> u128 {
    u128::from_str_radix(text.trim_start_matches("0x"), 16).expect("tables hold hex masks")
}

fn binary(text: &str) -> u64 {
    u64::from_str_radix(text, 2).expect("tables hold binary tags")
}

fn parse<T: for<'de> Deserialize<'de>>(name: &str, text: &str) -> T {
    // The tables are part of the crate: a bad one is a build defect, which
    // the crate's tests catch.
    serde_json::from_str(text).unwrap_or_else(|e| panic!("data/{name}: {e}"))
}

fn build() -> Isa {
    let slots: SlotsFile = parse("slots.json", include_str!("../data/slots.json"));
    let formats: FormatsFile = parse("formats.json", include_str!("../data/formats.json"));
    let instructions: InstructionsFile = parse(
        "instructions.json",
        include_str!("../data/instructions.json"),
    );
    let registers: RegistersFile = parse("registers.json", include_str!("../data/registers.json"));
    let operands: OperandsFile = parse("operands.json", include_str!("../data/operands.json"));
    let mut schedule: ScheduleFile = parse("schedule.json", include_str!("../data/schedule.json"));

    let formats: Vec<Format> = formats
        .formats
        .into_iter()
        .map(|f| Format {
            name: f.name,
            size_bytes: f.size_bytes,
            fixed_mask: hex(&f.fixed_mask),
            fixed_value: hex(&f.fixed_value),
            slots: f.slots,
        })
        .collect();
    let opcodes: Vec<Opcode> = instructions
        .instructions
        .into_iter()
        .map(|i| Opcode {
            has_delay_slot: schedule
                .instructions
                .get(&i.name)
                .is_some_and(|s| s.has_delay_slot),
            implicit_defs: schedule
                .instructions
                .get(&i.name)
                .map_or_else(Vec::new, |s| s.defs.clone()),
            implicit_uses: schedule
                .instructions
                .get(&i.name)
                .map_or_else(Vec::new, |s| s.uses.clone()),
            is_slot_nop: i.flags.iter().any(|f| f == "isSlotNOP"),
            itinerary_by_register_class: schedule
                .instructions
                .get_mut(&i.name)
                .map(|s| std::mem::take(&mut s.itinerary_by_register_class))
                .unwrap_or_default(),
            name: i.name,
            mnemonic: i.mnemonic,
            slot: i.slot,
            fixed_mask: hex(&i.fixed_mask) as u64,
            fixed_bits: hex(&i.fixed_bits) as u64,
            asm_args: i.asm_args,
            operands: i
                .operands
                .into_iter()
                .map(|o| Operand {
                    kind: match o.kind.as_str() {
                        "reg" => OperandKind::Register,
                        "reg_composite" => OperandKind::Composite,
                        _ => OperandKind::Immediate,
                    },
                    class: match o.kind.as_str() {
                        "reg" => o.regclass.unwrap_or(o.class),
                        _ => o.class,
                    },
                    name: o.name,
                    width: o.width,
                    bits: o.bits,
                    tied_to: o.tied_to,
                    output: o.dir == "out",
                    index_from: o.index_from,
                })
                .collect(),
            itinerary: i.itinerary,
        })
        .collect();
    let composites = registers
        .composite_operands
        .into_iter()
        .map(|(name, c)| {
            let alternatives = c
                .alternatives
                .unwrap_or_default()
                .into_iter()
                .map(|a| match (a.register, a.value) {
                    (Some(register), Some(value)) => Alternative::Fixed {
                        register,
                        value: binary(&value),
                    },
                    _ => Alternative::Class {
                        class: a.regclass.unwrap_or_default(),
                        shift: a.shift,
                        tag: a.tag.as_deref().map_or(0, binary),
                        tag_width: a.tag_width,
                    },
                })
                .collect();
            (name, alternatives)
        })
        .collect();

    let mut by_slot: HashMap<String, Vec<usize>> = HashMap::new();
    let mut by_mnemonic: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, o) in opcodes.iter().enumerate() {
        by_slot.entry(o.slot.clone()).or_default().push(i);
        by_mnemonic.entry(o.mnemonic.clone()).or_default().push(i);
    }
    for list in by_slot.values_mut() {
        list.sort_by_key(|&i| std::cmp::Reverse(opcodes[i].fixed_mask.count_ones()));
    }
    let mut by_size: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, f) in formats.iter().enumerate() {
        by_size.entry(f.size_bytes).or_default().push(i);
    }
    let registers_by_record: HashMap<String, Register> = registers
        .registers
        .into_iter()
        .map(|r| {
            (
                r.record,
                Register {
                    asm: r.asm,
                    encoding: r.encoding,
                    subregs: r.subregs,
                },
            )
        })
        .collect();
    let leaves = leaves_by_asm(&registers_by_record);
    Isa {
        formats,
        opcodes,
        slot_widths: slots.slots.into_iter().map(|s| (s.name, s.width)).collect(),
        registers: registers_by_record,
        leaves,
        classes: registers
            .classes
            .into_iter()
            .map(|(name, c)| (name, c.members))
            .collect(),
        composites,
        immediates: operands.immediates,
        by_slot,
        by_mnemonic,
        by_size,
        schedule: crate::schedule::build(
            schedule.itineraries,
            schedule.register_class_itineraries,
            schedule.delay_slots,
        ),
    }
}

/// Per assembly name, the leaf registers (by assembly name, sorted) of
/// every record that prints so: `d0` names both the modifier group
/// (m0, dn0, dj0, dc0) and the 3-d pair (d0, d4), so it covers both.
fn leaves_by_asm(registers: &HashMap<String, Register>) -> HashMap<String, Vec<String>> {
    fn walk(
        registers: &HashMap<String, Register>,
        record: &str,
        depth: u32,
        out: &mut Vec<String>,
    ) {
        match registers.get(record) {
            // The tables' trees are a few levels deep; the bound keeps a
            // bad table from recursing forever.
            Some(r) if !r.subregs.is_empty() && depth < 8 => {
                for s in &r.subregs {
                    walk(registers, s, depth + 1, out);
                }
            }
            Some(r) => out.push(r.asm.clone()),
            None => out.push(record.to_string()),
        }
    }
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let mut records: Vec<&String> = registers.keys().collect();
    records.sort();
    for record in records {
        let mut leaves = Vec::new();
        walk(registers, record, 0, &mut leaves);
        let entry = out.entry(registers[record].asm.clone()).or_default();
        entry.extend(leaves);
        entry.sort();
        entry.dedup();
    }
    out
}

/// The instruction set, read on first use.
pub fn isa() -> &'static Isa {
    static ISA: OnceLock<Isa> = OnceLock::new();
    ISA.get_or_init(build)
}

impl Isa {
    pub fn formats_of_size(&self, bytes: usize) -> impl Iterator<Item = &Format> {
        self.by_size
            .get(&bytes)
            .into_iter()
            .flatten()
            .map(|&i| &self.formats[i])
    }

    /// The slot's opcodes, the most specific first.
    pub fn opcodes_of_slot(&self, slot: &str) -> impl Iterator<Item = &Opcode> {
        self.by_slot
            .get(slot)
            .into_iter()
            .flatten()
            .map(|&i| &self.opcodes[i])
    }

    pub fn opcodes_named(&self, mnemonic: &str) -> impl Iterator<Item = &Opcode> {
        self.by_mnemonic
            .get(mnemonic)
            .into_iter()
            .flatten()
            .map(|&i| &self.opcodes[i])
    }

    pub fn register(&self, record: &str) -> Option<&Register> {
        self.registers.get(record)
    }

    /// The leaf registers a register (by assembly name) is made of, by
    /// assembly name: `x0` is `wh0` and `wl0`, `y0` the leaves of `x0` and
    /// `x1`, `dm0` its four `bm` quarters, `r1:r0` both scalars; a leaf or
    /// an unknown name is itself. Two registers overlap when their leaves
    /// meet, which is how the scheduler and the latency checker see
    /// aliasing.
    pub fn leaves(&self, asm: &str) -> Vec<String> {
        if let Some(l) = self.leaves.get(asm) {
            return l.clone();
        }
        let mut parts: Vec<String> = asm
            .split(':')
            .flat_map(|part| match self.leaves.get(part) {
                Some(l) => l.clone(),
                None => vec![part.to_string()],
            })
            .collect();
        parts.sort();
        parts.dedup();
        parts
    }

    pub fn class(&self, name: &str) -> &[String] {
        self.classes.get(name).map_or(&[], Vec::as_slice)
    }

    pub fn composite(&self, name: &str) -> &[Alternative] {
        self.composites.get(name).map_or(&[], Vec::as_slice)
    }

    /// The itinerary class `opcode` names: its operand cycles, bypasses and
    /// units, whatever its registers.
    pub fn itinerary(&self, opcode: &Opcode) -> Option<&Itinerary> {
        self.schedule.itinerary(opcode.itinerary.as_deref()?)
    }

    pub fn immediate(&self, name: &str) -> Option<&Immediate> {
        self.immediates.get(name)
    }

    /// Every register record and its assembly name, encoding and
    /// sub-registers.
    pub fn registers(&self) -> impl Iterator<Item = (&str, &Register)> {
        self.registers.iter().map(|(k, v)| (k.as_str(), v))
    }
}

// Formats and opcodes are the tables' own, one per name.
impl PartialEq for Format {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for Format {}

impl PartialEq for Opcode {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for Opcode {}

#[cfg(test)]
mod tests {
    use super::isa;

    #[test]
    fn registers_alias_through_their_leaves() {
        let isa = isa();
        assert_eq!(isa.leaves("x0"), ["wh0", "wl0"]);
        assert_eq!(isa.leaves("y0"), ["wh0", "wh1", "wl0", "wl1"]);
        assert_eq!(isa.leaves("dm2"), ["bmhh2", "bmhl2", "bmlh2", "bmll2"]);
        assert_eq!(isa.leaves("cmh2"), ["bmhh2", "bmhl2"]);
        assert_eq!(isa.leaves("r1:r0"), ["r0", "r1"]);
        assert_eq!(isa.leaves("r3"), ["r3"]);
        // d0 prints for the modifier group and for the 3-d pair.
        assert!(isa.leaves("d0").contains(&"m0".to_string()));
        assert!(isa.leaves("d0").contains(&"m4".to_string()));
    }

    /// What the instruction-level core reads beside the itineraries
    /// (schedule_facts.rs pins those): `add` defines srCarry, `jl` lr; slot
    /// NOPs are marked; pairs name their halves.
    #[test]
    fn implicit_registers_nop_flags_and_subregisters_are_read() {
        let isa = isa();
        let named = |name: &str| isa.opcodes.iter().find(|o| o.name == name).unwrap();
        assert_eq!(named("ADD_add_r_ri").implicit_defs, ["srCarry"]);
        assert_eq!(named("JL_lng").implicit_defs, ["lr"]);
        assert!(named("NOPA").is_slot_nop);
        assert!(!named("ADD_add_r_ri").is_slot_nop);
        assert_eq!(isa.register("l0").unwrap().subregs, ["r0", "r1"]);
    }
}
