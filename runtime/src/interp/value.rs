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
    /// An element type views may have but the interpreter cannot load or
    /// store (`i8`, `f16`, ...): its name and its size in bytes. Such a view
    /// can be made, bound and copied; accessing an element is an
    /// unsupported-op error (docs/semantics.md, "Values and storage").
    Other(&'static str, usize),
}

impl Elem {
    pub fn size(self) -> usize {
        match self {
            Elem::F32 => 4,
            Elem::BF16 => 2,
            Elem::Index => 8,
            Elem::Other(_, size) => size,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::BF16 => "bf16",
            Elem::Index => "index",
            Elem::Other(name, _) => name,
        }
    }

    /// The element type a view type spells, by name; `None` for a name that
    /// is not an integer, `index` or float type.
    pub fn named(name: &str) -> Option<Elem> {
        Some(match name {
            "f32" => Elem::F32,
            "bf16" => Elem::BF16,
            "index" => Elem::Index,
            "i1" => Elem::Other("i1", 1),
            "i8" => Elem::Other("i8", 1),
            "i16" => Elem::Other("i16", 2),
            "i32" => Elem::Other("i32", 4),
            "i64" => Elem::Other("i64", 8),
            "f16" => Elem::Other("f16", 2),
            "f64" => Elem::Other("f64", 8),
            _ => return None,
        })
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
    /// Where the view was made (its `buffer.view`, `channel.reserve` or
    /// `channel.acquire`), for the notes of an out-of-bounds access.
    pub origin: Rc<str>,
}

impl View {
    pub fn elements(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn bytes(&self) -> usize {
        self.elements() * self.elem.size()
    }

    /// The byte count of a view of `shape` and `elem`, if it fits in usize.
    pub fn checked_bytes(shape: &[usize], elem: Elem) -> Option<usize> {
        shape
            .iter()
            .try_fold(elem.size(), |bytes, &d| bytes.checked_mul(d))
    }

    /// `view<2x4xf32>`.
    pub fn type_text(&self) -> String {
        let mut text = String::from("view<");
        for d in self.shape.iter() {
            text.push_str(&format!("{d}x"));
        }
        text.push_str(self.elem.name());
        text.push('>');
        text
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
    /// `size` bytes of buffer `buffer` from byte `base`: placed storage in a
    /// tile's data memory (`aie2p.tile.buffer`).
    Window {
        buffer: u32,
        base: usize,
        size: usize,
    },
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
            Value::BF16(bits) => Value::VecBF16(std::iter::repeat_n(*bits, lanes).collect()),
            Value::F32(v) => Value::VecF32(std::iter::repeat_n(*v, lanes).collect()),
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
            Value::Buffer(_) | Value::Window { .. } => "a buffer",
            Value::Pool => "a pool",
            Value::Channel(_) => "a channel",
            Value::Write(_) => "a write obligation",
            Value::Read(_) => "a read obligation",
            Value::Token(_) => "an async token",
            Value::Group(_) => "an async group",
        }
    }
}
