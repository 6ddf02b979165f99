//! `--split-input-file`: one input holding several independent modules,
//! separated by lines `// -----`, as in MLIR's test files.

const SEPARATOR: &str = "// -----";

/// The chunks of `bytes`. Each chunk is padded with the newlines that precede
/// it, so diagnostics keep the line numbers of the whole file.
pub fn split_input(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut chunks = Vec::new();
    let mut current = Vec::new();
    let mut line = 0usize;
    let mut chunk_start = 0usize;
    for piece in bytes.split_inclusive(|&b| b == b'\n') {
        let is_separator = std::str::from_utf8(piece)
            .map(|text| text.trim() == SEPARATOR)
            .unwrap_or(false);
        line += 1;
        if is_separator {
            chunks.push(padded(chunk_start, std::mem::take(&mut current)));
            chunk_start = line;
        } else {
            current.extend_from_slice(piece);
        }
    }
    chunks.push(padded(chunk_start, current));
    chunks
}

fn padded(lines_before: usize, chunk: Vec<u8>) -> Vec<u8> {
    let mut out = vec![b'\n'; lines_before];
    out.extend(chunk);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_line_numbers() {
        let chunks = split_input(b"a\n// -----\nb\nc\n  // -----  \nd");
        assert_eq!(
            chunks,
            vec![
                b"a\n".to_vec(),
                b"\n\nb\nc\n".to_vec(),
                b"\n\n\n\n\nd".to_vec()
            ]
        );
    }
}
