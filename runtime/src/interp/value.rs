//! Runtime values: integers, floats, vectors, and handles to the interpreter's
//! buffers, views, channels, records, copies and groups.

use crate::numerics::{bf16_to_f32, f32_to_bf16};
use std::rc::Rc;

/// Element types the interpreter stores and computes with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    F32,
    BF16,
    Index,
}

impl Elem {
    pub fn size(self) -> usize {
        match self {
            Elem::F32 => 4,
            Elem::BF16 => 2,
            Elem::Index => 8,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::BF16 => "bf16",
            Elem::Index => "index",
        }
    }
}

/// A typed window on a buffer: row-major, contiguous.
#[derive(Clone, Debug)]
pub struct View {
    pub buffer: u32,
    /// Byte offset of element 0 in the buffer.
    pub offset: usize,
    pub shape: Rc<[usize]>,
    pub elem: Elem,
    /// The record whose payload this is; the view dies with the record.
    pub owner: Option<u32>,
}

impl View {
    pub fn elements(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn bytes(&self) -> usize {
        self.elements() * self.elem.size()
    }
}

#[derive(Clone, Debug)]
pub enum Value {
    Undef,
    Int(i64),
    Bool(bool),
    F32(f32),
    BF16(u16),
    VecF32(Rc<[f32]>),
    VecBF16(Rc<[u16]>),
    View(Rc<View>),
    Buffer(u32),
    Pool,
    Channel(u32),
    Write(u32),
    Read(u32),
    Token(u32),
    Group(u32),
}

impl Value {
    /// A float of `elem`, rounded from F32.
    pub fn float(elem: Elem, value: f32) -> Value {
        match elem {
            Elem::BF16 => Value::BF16(f32_to_bf16(value)),
            _ => Value::F32(value),
        }
    }

    pub fn splat(scalar: &Value, lanes: usize) -> Value {
        match scalar {
            Value::BF16(bits) => Value::VecBF16(vec![*bits; lanes].into()),
            Value::F32(v) => Value::VecF32(vec![*v; lanes].into()),
            _ => Value::Undef,
        }
    }

    /// The value as F32 (BF16 widened exactly).
    pub fn as_f32(&self) -> Option<f32> {
        match self {
            Value::F32(v) => Some(*v),
            Value::BF16(b) => Some(bf16_to_f32(*b)),
            _ => None,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Value::Undef => "an undefined value",
            Value::Int(_) => "an integer",
            Value::Bool(_) => "an i1",
            Value::F32(_) => "an f32",
            Value::BF16(_) => "a bf16",
            Value::VecF32(_) => "an f32 vector",
            Value::VecBF16(_) => "a bf16 vector",
            Value::View(_) => "a view",
            Value::Buffer(_) => "a buffer",
            Value::Pool => "a pool",
            Value::Channel(_) => "a channel",
            Value::Write(_) => "a write obligation",
            Value::Read(_) => "a read obligation",
            Value::Token(_) => "an async token",
            Value::Group(_) => "an async group",
        }
    }
}
