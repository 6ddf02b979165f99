//! NumPy `.npy` files (format 1.0/2.0, little-endian, C order): the data
//! files of checked-pipeline scenarios.

/// An array's element encoding as NumPy spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// `<u2`: raw 16-bit patterns (BF16 is stored this way).
    U16,
    /// `<f4`.
    F32,
    /// `<i8`.
    I64,
    /// `|i1`, `<i2`, `<i4`: signed integers of 1, 2 and 4 bytes.
    I8,
    I16,
    I32,
}

impl Dtype {
    pub fn descr(self) -> &'static str {
        match self {
            Dtype::U16 => "<u2",
            Dtype::F32 => "<f4",
            Dtype::I64 => "<i8",
            Dtype::I8 => "|i1",
            Dtype::I16 => "<i2",
            Dtype::I32 => "<i4",
        }
    }

    pub fn size(self) -> usize {
        match self {
            Dtype::U16 => 2,
            Dtype::F32 => 4,
            Dtype::I64 => 8,
            Dtype::I8 => 1,
            Dtype::I16 => 2,
            Dtype::I32 => 4,
        }
    }
}

/// The raw little-endian bytes of a one-dimensional view of the array.
pub struct Array {
    pub dtype: Dtype,
    pub data: Vec<u8>,
}

fn header_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let at = header.find(&format!("'{key}'"))? + key.len() + 2;
    let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
    Some(rest)
}

pub fn read(bytes: &[u8]) -> Result<Array, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (no \\x93NUMPY magic)".into());
    }
    let (length, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = std::str::from_utf8(bytes.get(start..start + length).ok_or("truncated header")?)
        .map_err(|_| "header is not text")?;
    let descr = header_value(header, "descr").ok_or("header has no 'descr'")?;
    let dtype = if descr.starts_with("'<u2'") {
        Dtype::U16
    } else if descr.starts_with("'<f4'") {
        Dtype::F32
    } else if descr.starts_with("'<i8'") {
        Dtype::I64
    } else if descr.starts_with("'|i1'") || descr.starts_with("'<i1'") {
        Dtype::I8
    } else if descr.starts_with("'<i2'") {
        Dtype::I16
    } else if descr.starts_with("'<i4'") {
        Dtype::I32
    } else {
        return Err(format!(
            "unsupported dtype {}; use <u2 (bf16 bits), <f4, <i8, <i4, <i2 or |i1",
            descr.split(',').next().unwrap_or(descr)
        ));
    };
    if header_value(header, "fortran_order").is_some_and(|v| v.starts_with("True")) {
        return Err("Fortran-order arrays are not supported".into());
    }
    let shape = header_value(header, "shape").ok_or("header has no 'shape'")?;
    let inner = shape
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or("malformed shape")?;
    let mut count = 1usize;
    for dim in inner.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let dim = dim
            .parse::<usize>()
            .map_err(|_| format!("malformed shape ({inner})"))?;
        count = count
            .checked_mul(dim)
            .filter(|n| n.checked_mul(dtype.size()).is_some())
            .ok_or_else(|| format!("shape ({inner}) is too large"))?;
    }
    let data = &bytes[start + length..];
    if data.len() != count * dtype.size() {
        return Err(format!(
            "holds {} bytes of data, its shape ({inner}) needs {}",
            data.len(),
            count * dtype.size()
        ));
    }
    Ok(Array {
        dtype,
        data: data.to_vec(),
    })
}

pub fn write(array: &Array) -> Vec<u8> {
    let count = array.data.len() / array.dtype.size();
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': ({count},), }}",
        array.dtype.descr()
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(&array.data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let array = Array {
            dtype: Dtype::F32,
            data: [1.5f32, -2.0]
                .iter()
                .flat_map(|f| f.to_le_bytes())
                .collect(),
        };
        let bytes = write(&array);
        assert_eq!((bytes.len() - array.data.len()) % 64, 0); // header padded
        let back = read(&bytes).unwrap();
        assert_eq!(back.dtype, Dtype::F32);
        assert_eq!(back.data, array.data);
        assert!(read(&bytes[..20]).is_err());
        // Regression: a huge shape overflowed the element count.
        let header =
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }\n";
        let mut huge = b"\x93NUMPY\x01\x00".to_vec();
        huge.extend((header.len() as u16).to_le_bytes());
        huge.extend(header.as_bytes());
        assert_eq!(
            read(&huge).err().as_deref(),
            Some("shape (4294967296, 4294967296) is too large")
        );
    }
}
