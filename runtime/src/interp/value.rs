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
    /// Signless integers, held sign-extended (docs/semantics.md).
    I8,
    I16,
    I32,
    /// An element type views may have but the interpreter cannot load or
    /// store (`i1`, `f16`, ...): its name and its size in bytes. Such a view
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
            Elem::I8 => 1,
            Elem::I16 => 2,
            Elem::I32 => 4,
            Elem::Other(_, size) => size,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::BF16 => "bf16",
            Elem::Index => "index",
            Elem::I8 => "i8",
            Elem::I16 => "i16",
            Elem::I32 => "i32",
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
            "i8" => Elem::I8,
            "i16" => Elem::I16,
            "i32" => Elem::I32,
            "i64" => Elem::Other("i64", 8),
            "f16" => Elem::Other("f16", 2),
            "f64" => Elem::Other("f64", 8),
            _ => return None,
        })
    }

    /// Whether this is one of the integer types arithmetic takes.
    pub fn is_integer(self) -> bool {
        matches!(self, Elem::I8 | Elem::I16 | Elem::I32)
    }

    /// `v` wrapped to this integer type: its low bits, sign-extended.
    pub fn wrap(self, v: i64) -> i32 {
        match self {
            Elem::I8 => v as i8 as i32,
            Elem::I16 => v as i16 as i32,
            _ => v as i32,
        }
    }

    /// `v` clamped to this integer type's signed range.
    pub fn saturate(self, v: i64) -> i32 {
        let bits = 8 * self.size() as u32;
        let (lo, hi) = (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1);
        v.clamp(lo, hi) as i32
    }
}

/// A typed window on a buffer: row-major and contiguous, or with a strided
/// layout.
#[derive(Clone, Debug)]
pub struct View {
    pub buffer: u32,
    /// Byte offset of element 0 in the buffer.
    pub offset: usize,
    pub shape: Rc<[usize]>,
    pub elem: Elem,
    /// Element strides, one per dimension (`strided<[...]>`); None for
    /// row-major and contiguous.
    pub strides: Option<Rc<[usize]>>,
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

    /// The bytes from the view's start to the end of its farthest element.
    pub fn span(&self) -> usize {
        Self::checked_span(&self.shape, self.strides.as_deref(), self.elem).unwrap_or(usize::MAX)
    }

    /// The bytes a view of `shape`, `strides` and `elem` reaches from its
    /// start (every element's, for a contiguous one), if it fits in usize.
    pub fn checked_span(shape: &[usize], strides: Option<&[usize]>, elem: Elem) -> Option<usize> {
        let Some(strides) = strides else {
            return shape
                .iter()
                .try_fold(elem.size(), |bytes, &d| bytes.checked_mul(d));
        };
        if shape.contains(&0) {
            return Some(0);
        }
        let farthest = shape
            .iter()
            .zip(strides)
            .try_fold(0usize, |sum, (&n, &s)| {
                sum.checked_add((n - 1).checked_mul(s)?)
            })?;
        farthest.checked_add(1)?.checked_mul(elem.size())
    }

    /// The element offset from the view's start of the element at `index`
    /// (one position per dimension, each within it).
    pub fn element_at(&self, index: &[usize]) -> usize {
        match &self.strides {
            Some(strides) => index.iter().zip(strides.iter()).map(|(i, s)| i * s).sum(),
            None => index
                .iter()
                .zip(self.shape.iter())
                .fold(0, |element, (i, n)| element * n + i),
        }
    }

    /// The byte offsets in the buffer of every element, in row-major index
    /// order (what a copy moves element by element).
    pub fn element_offsets(&self) -> Vec<usize> {
        let mut index = vec![0usize; self.shape.len()];
        let mut out = Vec::with_capacity(self.elements());
        for _ in 0..self.elements() {
            out.push(self.offset + self.element_at(&index) * self.elem.size());
            for d in (0..index.len()).rev() {
                index[d] += 1;
                if index[d] < self.shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        out
    }

    /// `view<2x4xf32>`, `view<4x64xf32, strided<[1, 64]>>`.
    pub fn type_text(&self) -> String {
        let mut text = String::from("view<");
        for d in self.shape.iter() {
            text.push_str(&format!("{d}x"));
        }
        text.push_str(self.elem.name());
        if let Some(strides) = &self.strides {
            let list: Vec<String> = strides.iter().map(|s| s.to_string()).collect();
            text.push_str(&format!(", strided<[{}]>", list.join(", ")));
        }
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
    /// An i8, i16 or i32 scalar, sign-extended.
    Integer(Elem, i32),
    /// Lanes of an i8, i16 or i32 vector, each sign-extended.
    VecInt(Elem, Rc<[i32]>),
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
            Value::Integer(elem, v) => {
                Value::VecInt(*elem, std::iter::repeat_n(*v, lanes).collect())
            }
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
            Value::Integer(Elem::I8, _) => "an i8",
            Value::Integer(Elem::I16, _) => "an i16",
            Value::Integer(..) => "an i32",
            Value::VecInt(Elem::I8, _) => "an i8 vector",
            Value::VecInt(Elem::I16, _) => "an i16 vector",
            Value::VecInt(..) => "an i32 vector",
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

#[cfg(test)]
mod tests {
    use super::{Elem, View};
    use std::rc::Rc;

    fn view(shape: &[usize], strides: Option<&[usize]>) -> View {
        View {
            buffer: 0,
            offset: 8,
            shape: shape.into(),
            elem: Elem::F32,
            strides: strides.map(Rc::from),
            owner: None,
            origin: "here".into(),
        }
    }

    #[test]
    fn a_strided_view_addresses_by_its_strides() {
        // The transpose of a row-major 3 x 2 matrix: element (i, j) at i + 2 j.
        let transposed = view(&[2, 3], Some(&[1, 2]));
        assert_eq!(transposed.element_at(&[1, 2]), 5);
        assert_eq!(transposed.span(), 6 * 4);
        assert_eq!(
            transposed.element_offsets(),
            [0, 2, 4, 1, 3, 5].map(|e| 8 + 4 * e)
        );
        assert_eq!(transposed.type_text(), "view<2x3xf32, strided<[1, 2]>>");
        let rows = view(&[2, 3], None);
        assert_eq!(rows.element_at(&[1, 2]), 5);
        assert_eq!(
            rows.element_offsets(),
            [0, 1, 2, 3, 4, 5].map(|e| 8 + 4 * e)
        );
    }

    #[test]
    fn a_sub_view_spans_to_its_farthest_element() {
        // A 2 x 2 window on rows of 10: elements 0, 1, 10 and 11.
        let window = view(&[2, 2], Some(&[10, 1]));
        assert_eq!(window.span(), 12 * 4);
        assert_eq!(
            View::checked_span(&[0, 4], Some(&[10, 1]), Elem::F32),
            Some(0)
        );
        assert_eq!(
            View::checked_span(&[2, 2], Some(&[usize::MAX, 1]), Elem::F32),
            None
        );
    }
}
