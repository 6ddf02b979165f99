//! Property: for random instructions in every slot of every format,
//! decoding the encoded bundle gives the bundle back. A fixed-seed
//! xorshift keeps the run deterministic.

use crate::bundle::{decode_one, Bundle};
use crate::instruction::{immediate_range, Instruction, Value};
use crate::tables::{isa, Alternative, Opcode, OperandKind};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A random value `operand` can hold, if its class has any.
fn random_value(rng: &mut Rng, class: &str, kind: &OperandKind) -> Option<Value> {
    let isa = isa();
    let asm = |record: &String| isa.register(record).map(|r| Value::Register(r.asm.clone()));
    match kind {
        OperandKind::Register => {
            let members = isa.class(class);
            (!members.is_empty())
                .then(|| asm(&members[rng.below(members.len())]))
                .flatten()
        }
        OperandKind::Composite => {
            let alternatives = isa.composite(class);
            if alternatives.is_empty() {
                return None;
            }
            match &alternatives[rng.below(alternatives.len())] {
                Alternative::Fixed { register, .. } => asm(register),
                Alternative::Class { class, .. } => {
                    let members = isa.class(class);
                    (!members.is_empty())
                        .then(|| asm(&members[rng.below(members.len())]))
                        .flatten()
                }
            }
        }
        OperandKind::Immediate => {
            let (lo, hi, step) = immediate_range(isa.immediate(class)?);
            let steps = ((hi - lo) / step) as u64 + 1;
            Some(Value::Immediate(lo + (rng.next() % steps) as i64 * step))
        }
    }
}

fn random_instruction(rng: &mut Rng, opcode: &'static Opcode) -> Option<Instruction> {
    let mut operands = Vec::new();
    for o in opcode.operands.iter().filter(|o| !o.bits.is_empty()) {
        operands.push((o.name.clone(), random_value(rng, &o.class, &o.kind)?));
    }
    Some(Instruction { opcode, operands })
}

#[test]
fn random_bundles_of_every_format_decode_to_themselves() {
    let isa = isa();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut checked = 0;
    for format in &isa.formats {
        for _ in 0..50 {
            let mut instructions = Vec::new();
            for slot in &format.slots {
                let opcodes: Vec<&'static Opcode> = isa.opcodes_of_slot(&slot.slot).collect();
                let opcode = opcodes[rng.below(opcodes.len())];
                let Some(instruction) = random_instruction(&mut rng, opcode) else {
                    panic!("{}: no value fits an operand", opcode.name);
                };
                instructions.push(instruction);
            }
            let bundle = Bundle {
                format,
                instructions,
            };
            let bytes = bundle.encode().unwrap();
            assert_eq!(bytes.len(), format.size_bytes);
            let (decoded, size) = decode_one(&bytes, 0).unwrap();
            assert_eq!(size, bytes.len());
            assert_eq!(decoded, bundle, "{} {:02x?}", format.name, bytes);
            checked += 1;
        }
    }
    assert_eq!(checked, 50 * isa.formats.len());
    // Every instruction's text is covered by its fields (the FIFO loads'
    // registers through `index_from`).
    assert!(isa.opcodes.iter().all(|o| o.fields_cover_text()));
}
