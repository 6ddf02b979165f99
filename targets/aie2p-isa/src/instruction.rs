//! One instruction of one slot: its opcode and operand values, to and from
//! the slot's bits. Registers are read by their encoding within the
//! operand's class; composite register operands by the tag of their
//! alternative; immediates by width, signedness and scale (the tables'
//! operand encoders).

use crate::bits;
use crate::error::IsaError;
use crate::schedule::{Itinerary, RegisterClassItinerary};
use crate::tables::{isa, Alternative, Immediate, Opcode, Operand, OperandKind};
use std::fmt;

/// An operand's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// By its assembly name, e.g. `r31`.
    Register(String),
    Immediate(i64),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Register(name) => f.write_str(name),
            Value::Immediate(v) => write!(f, "{v}"),
        }
    }
}

/// An instruction: its opcode and the value of each operand that has a
/// field, by the field operand's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    pub opcode: &'static Opcode,
    pub operands: Vec<(String, Value)>,
}

fn ones(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

fn bad(opcode: &Opcode, operand: &Operand, reason: String) -> IsaError {
    IsaError::BadOperand {
        instruction: opcode.name.clone(),
        operand: operand.name.clone(),
        reason,
    }
}

/// The inclusive range of values an immediate class holds, and its step.
pub(crate) fn immediate_range(imm: &Immediate) -> (i64, i64, i64) {
    let w = imm.width.min(62);
    let (lo, hi) = if imm.kind == "address" {
        (0, (1i64 << w) - 1)
    } else if imm.always_negative {
        (-(1i64 << w), -1)
    } else if imm.signed {
        (-(1i64 << (w - 1)), (1i64 << (w - 1)) - 1)
    } else {
        (0, (1i64 << w) - 1)
    };
    let (lo, hi) = (lo * imm.scale, hi * imm.scale);
    if imm.negated {
        (-hi, -lo, imm.scale)
    } else {
        (lo, hi, imm.scale)
    }
}

fn decode_immediate(imm: &Immediate, field: u64) -> i64 {
    let w = imm.width;
    if imm.kind == "address" {
        return field as i64;
    }
    // An always-negative field holds value + 2^w; a signed one is two's
    // complement.
    let negative = imm.always_negative || (imm.signed && field >> (w - 1) & 1 == 1);
    let value = if negative {
        field as i64 - (1i64 << w)
    } else {
        field as i64
    } * imm.scale;
    if imm.negated {
        -value
    } else {
        value
    }
}

fn encode_immediate(imm: &Immediate, value: i64) -> Option<u64> {
    let (lo, hi, step) = immediate_range(imm);
    if value < lo || value > hi || value % step != 0 {
        return None;
    }
    let v = if imm.negated { -value } else { value } / imm.scale;
    let field = if imm.always_negative {
        v + (1i64 << imm.width)
    } else {
        v
    };
    Some(field as u64 & ones(imm.width))
}

impl Operand {
    /// The value this operand's field holds.
    fn decode(&self, opcode: &Opcode, field: u64) -> Result<Value, IsaError> {
        let isa = isa();
        match self.kind {
            OperandKind::Register => {
                let mask = ones(self.width);
                let mut names: Vec<&str> = isa
                    .class(&self.class)
                    .iter()
                    .filter_map(|m| isa.register(m))
                    .filter(|r| u64::from(r.encoding) & mask == field)
                    .map(|r| r.asm.as_str())
                    .collect();
                names.sort_unstable();
                names.dedup();
                match names.as_slice() {
                    [name] => Ok(Value::Register(name.to_string())),
                    [] => Err(bad(
                        opcode,
                        self,
                        format!("no register of {} has encoding {field}", self.class),
                    )),
                    many => Err(bad(
                        opcode,
                        self,
                        format!(
                            "encoding {field} is ambiguous in {}: {}",
                            self.class,
                            many.join(", ")
                        ),
                    )),
                }
            }
            OperandKind::Composite => {
                let mut names: Vec<&str> = isa
                    .composite(&self.class)
                    .iter()
                    .filter_map(|a| match a {
                        Alternative::Fixed { register, value } => {
                            (*value == field).then_some(register.as_str())
                        }
                        // The member at index `field >> shift` of the class.
                        Alternative::Class {
                            class,
                            shift,
                            tag,
                            tag_width,
                        } => (field & ones(*tag_width) == *tag)
                            .then(|| isa.class(class).get((field >> shift) as usize))
                            .flatten()
                            .map(String::as_str),
                    })
                    .filter_map(|record| isa.register(record).map(|r| r.asm.as_str()))
                    .collect();
                names.sort_unstable();
                names.dedup();
                match names.as_slice() {
                    [name] => Ok(Value::Register(name.to_string())),
                    _ => Err(bad(
                        opcode,
                        self,
                        format!("{field:#x} is no single register of {}", self.class),
                    )),
                }
            }
            OperandKind::Immediate => {
                let imm = isa.immediate(&self.class).ok_or_else(|| {
                    bad(
                        opcode,
                        self,
                        format!("unknown immediate class {}", self.class),
                    )
                })?;
                if imm.width != self.width {
                    return Err(bad(
                        opcode,
                        self,
                        format!(
                            "the field has {} bits, {} holds {}",
                            self.width, self.class, imm.width
                        ),
                    ));
                }
                Ok(Value::Immediate(decode_immediate(imm, field)))
            }
        }
    }

    /// The field that holds `value` (column 0: the caller places errors).
    fn encode(&self, value: &Value) -> Result<u64, IsaError> {
        let isa = isa();
        let wrong = |register: &str| IsaError::WrongRegister {
            column: 0,
            operand: self.name.clone(),
            register: register.to_string(),
            class: self.class.clone(),
        };
        match (&self.kind, value) {
            (OperandKind::Register, Value::Register(name)) => isa
                .class(&self.class)
                .iter()
                .filter_map(|m| isa.register(m))
                .find(|r| r.asm == *name)
                .map(|r| u64::from(r.encoding) & ones(self.width))
                .ok_or_else(|| wrong(name)),
            (OperandKind::Composite, Value::Register(name)) => isa
                .composite(&self.class)
                .iter()
                .find_map(|a| match a {
                    Alternative::Fixed { register, value } => isa
                        .register(register)
                        .filter(|r| r.asm == *name)
                        .map(|_| *value),
                    Alternative::Class {
                        class, shift, tag, ..
                    } => isa
                        .class(class)
                        .iter()
                        .position(|m| isa.register(m).is_some_and(|r| r.asm == *name))
                        .map(|index| (index as u64) << shift | tag),
                })
                .ok_or_else(|| wrong(name)),
            (OperandKind::Immediate, Value::Immediate(v)) => {
                let imm = isa
                    .immediate(&self.class)
                    .ok_or_else(|| IsaError::BadOperand {
                        instruction: String::new(),
                        operand: self.name.clone(),
                        reason: format!("unknown immediate class {}", self.class),
                    })?;
                encode_immediate(imm, *v).ok_or_else(|| {
                    let (min, max, step) = immediate_range(imm);
                    IsaError::OutOfRange {
                        column: 0,
                        operand: self.name.clone(),
                        value: *v,
                        min,
                        max,
                        step,
                    }
                })
            }
            (_, Value::Immediate(v)) => Err(wrong(&v.to_string())),
            (OperandKind::Immediate, Value::Register(name)) => Err(IsaError::WrongRegister {
                column: 0,
                operand: self.name.clone(),
                register: name.clone(),
                class: format!("immediate {}", self.class),
            }),
        }
    }
}

impl Operand {
    /// Whether the operand's field holds `value`: a register of its class,
    /// an immediate in its range and on its steps (the encoder's own check,
    /// for a code generator's builder).
    pub fn admits(&self, value: &Value) -> Result<(), IsaError> {
        self.encode(value).map(|_| ())
    }
}

impl Instruction {
    /// The instruction of `slot` that `bits` hold: the most specific
    /// opcode whose fixed bits match and whose fields all hold operands of
    /// their classes (encodings overlap where a field's value is no
    /// register of its class; findings in scripts/aie2p-isa/README.md).
    pub fn decode(slot: &str, bits: u64) -> Result<Instruction, IsaError> {
        let mut refusal = None;
        for opcode in isa()
            .opcodes_of_slot(slot)
            .filter(|o| bits & o.fixed_mask == o.fixed_bits)
        {
            match Instruction::read(opcode, bits) {
                Ok(instruction) => return Ok(instruction),
                Err(e) => {
                    refusal.get_or_insert(e);
                }
            }
        }
        Err(refusal.unwrap_or_else(|| IsaError::UnknownInstruction {
            slot: slot.to_string(),
            bits,
        }))
    }

    fn read(opcode: &'static Opcode, bits: u64) -> Result<Instruction, IsaError> {
        // An assembly operand without a field is read by a C++ rule of
        // llvm-aie's disassembler (the FIFO loads' lf/r24-r25), which the
        // tables do not hold: refuse rather than print a placeholder.
        if !opcode.fields_cover_text() {
            return Err(IsaError::BadOperand {
                instruction: opcode.name.clone(),
                operand: opcode.asm_operands().join(", "),
                reason: "an operand has no encoding field; llvm-aie's disassembler derives it in \
                         C++, which the tables do not hold"
                    .into(),
            });
        }
        let operands: Vec<(String, Value)> = opcode
            .operands
            .iter()
            .filter(|o| !o.bits.is_empty())
            .map(|o| {
                let field = bits::extract(u128::from(bits), &o.bits) as u64;
                Ok((o.name.clone(), o.decode(opcode, field)?))
            })
            .collect::<Result<_, IsaError>>()?;
        Ok(Instruction { opcode, operands })
    }

    /// The slot's bits.
    pub fn encode(&self) -> Result<u64, IsaError> {
        let mut word = u128::from(self.opcode.fixed_bits);
        for operand in self.opcode.operands.iter().filter(|o| !o.bits.is_empty()) {
            let value = self
                .value(&operand.name)
                .ok_or_else(|| bad(self.opcode, operand, "has no value".into()))?;
            word = bits::insert(word, &operand.bits, u128::from(operand.encode(&value)?));
        }
        Ok(word as u64)
    }

    /// The itinerary of this instruction with its registers: the first of
    /// its opcode's per-register-class itineraries whose every operand holds
    /// a register of its class, else the class the opcode names (llvm-aie's
    /// ItineraryRegPairs; AIEVariableInstrItineraryEmitter keeps the list
    /// order).
    pub fn itinerary(&self) -> Option<&'static Itinerary> {
        let isa = isa();
        let applies = |choice: &RegisterClassItinerary| {
            choice.operands.iter().all(|(operand, class)| {
                matches!(self.value(operand), Some(Value::Register(name))
                if isa.class(class).iter().any(|member| {
                    isa.register(member).is_some_and(|r| r.asm == name)
                }))
            })
        };
        match self
            .opcode
            .itinerary_by_register_class
            .iter()
            .find(|c| applies(c))
        {
            Some(choice) => isa.schedule.itinerary(&choice.itinerary),
            None => isa.itinerary(self.opcode),
        }
    }

    /// The value of the operand that carries `name`'s field, or of the
    /// register `name` is derived from (`index_from`).
    pub fn value(&self, name: &str) -> Option<Value> {
        let field = self.opcode.field_of(name)?;
        if let Some(from) = field
            .index_from
            .as_deref()
            .filter(|_| field.bits.is_empty())
        {
            let source = self.opcode.operand(from)?;
            let index = source.encode(&self.value(from)?).ok()? as usize;
            let isa = isa();
            let member = isa.class(&field.class).get(index)?;
            return isa.register(member).map(|r| Value::Register(r.asm.clone()));
        }
        self.operands
            .iter()
            .find(|(n, _)| *n == field.name)
            .map(|(_, v)| v.clone())
    }

    /// An instruction of `opcode` from the values of its assembly operands,
    /// in the order the text lists them; `columns[i]` is where operand i
    /// starts, for errors.
    pub fn from_asm(
        opcode: &'static Opcode,
        values: Vec<Value>,
        columns: &[usize],
    ) -> Result<Instruction, IsaError> {
        let mut operands: Vec<(String, Value)> = Vec::new();
        let mut derived = Vec::new();
        for ((name, value), &column) in opcode.asm_operands().into_iter().zip(values).zip(columns) {
            let Some(field) = opcode.field_of(name) else {
                continue;
            };
            if field.bits.is_empty() {
                if field.index_from.is_some() {
                    derived.push((field, value, column));
                }
                continue;
            }
            field.encode(&value).map_err(|e| e.at(column))?;
            // A tied operand (`mac r7, r7, ...`: the accumulator read and
            // written) shares its field: it is the field's value once, and
            // the text must name the same register twice.
            if let Some((_, first)) = operands.iter().find(|(n, _)| *n == field.name) {
                if *first != value {
                    return Err(IsaError::Tied {
                        column,
                        operand: name.to_string(),
                        tied_to: field.name.clone(),
                        register: value.to_string(),
                        expected: first.to_string(),
                    });
                }
                continue;
            }
            operands.push((field.name.clone(), value));
        }
        let instruction = Instruction { opcode, operands };
        // A derived register must be the one its source field picks.
        for (operand, value, column) in derived {
            {
                let expected = instruction.value(&operand.name);
                if expected.as_ref() != Some(&value) {
                    return Err(IsaError::WrongRegister {
                        column,
                        operand: operand.name.clone(),
                        register: value.to_string(),
                        class: format!(
                            "{} (the ${} field picks {})",
                            operand.class,
                            operand.index_from.as_deref().unwrap_or_default(),
                            expected.map_or_else(|| "none".into(), |v| v.to_string())
                        ),
                    });
                }
            }
        }
        Ok(instruction)
    }
}
