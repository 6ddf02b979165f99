//! How a DMA descriptor addresses what a transfer moves: the elements of one
//! record as its view lays them out (`strided<[...]>` or row-major) and, for
//! a ring of the command stream, the records' offsets in the caller's
//! buffer, as dimensions of bytes; lowered to a tile kind's descriptor
//! dimensions of 32-bit words and its iteration (the walkthrough: "this
//! realization preserves supported strided record layouts").

use loom_targets::xdna::regs::TileKind;
use loom_targets::DeviceProfile;

/// `count` positions `step` bytes apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim {
    pub count: i64,
    pub step: i64,
}

/// Elements of `element` bytes at every position of `dims` (innermost
/// first), counted from the transfer's offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub element: i64,
    pub dims: Vec<Dim>,
}

/// A descriptor's addressing as its op spells it: a step (bytes) for each
/// dimension and a wrap for each but the outermost (none: linear), and the
/// iteration from one use to the next (`count` uses `step` bytes apart).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Addressing {
    pub steps: Vec<i64>,
    pub wraps: Vec<i64>,
    pub iteration: Option<Dim>,
}

impl Addressing {
    /// Uses of the descriptor that move the transfer: one, or the
    /// iteration's.
    pub fn uses(&self) -> i64 {
        self.iteration.map_or(1, |it| it.count)
    }
}

impl Access {
    /// A view of `shape` with element `strides` (row-major when None) of
    /// `element`-byte elements.
    pub fn of_layout(shape: &[i64], strides: Option<&[i64]>, element: i64) -> Access {
        let mut dims = Vec::with_capacity(shape.len());
        let mut row_major = element;
        for (d, &count) in shape.iter().enumerate().rev() {
            let step = strides.map_or(row_major, |s| s[d] * element);
            dims.push(Dim { count, step });
            row_major *= count;
        }
        Access { element, dims }
    }

    /// The same records' elements, then `records` outside them.
    pub fn with_records(mut self, records: &[Dim]) -> Access {
        self.dims.extend_from_slice(records);
        self
    }

    /// Bytes from the offset to the end of the farthest element.
    pub fn span(&self) -> i64 {
        if self.dims.iter().any(|d| d.count == 0) {
            return 0;
        }
        self.dims
            .iter()
            .map(|d| (d.count - 1) * d.step)
            .sum::<i64>()
            + self.element
    }

    /// The 32-bit words the DMA moves, as dimensions innermost first with
    /// runs of words merged: one dimension of step 4 is a linear transfer.
    pub fn words(&self) -> Result<Vec<Dim>, String> {
        let e = self.element;
        let mut dims = self.dims.iter().filter(|d| d.count != 1);
        let mut out = Vec::new();
        match dims.next() {
            // A contiguous run of elements is a run of words.
            Some(d) if d.step == e => {
                let bytes = d.count * e;
                if bytes % 4 != 0 {
                    return Err(format!("its innermost dimension is a run of {bytes} bytes; the DMA moves whole 32-bit words"));
                }
                out.push(Dim {
                    count: bytes / 4,
                    step: 4,
                });
            }
            Some(d) if e % 4 == 0 => {
                out.push(Dim {
                    count: e / 4,
                    step: 4,
                });
                out.push(*d);
            }
            Some(d) => {
                return Err(format!(
                    "its innermost dimension steps {} bytes over {e}-byte elements; the DMA moves 32-bit words, so a strided innermost dimension needs 4-byte elements",
                    d.step
                ));
            }
            None if e % 4 == 0 => out.push(Dim {
                count: e / 4,
                step: 4,
            }),
            None => {
                return Err(format!(
                    "it moves one {e}-byte element; the DMA moves whole 32-bit words"
                ))
            }
        }
        out.extend(dims.copied());
        if let Some(d) = out.iter().find(|d| d.step % 4 != 0 || d.step <= 0) {
            return Err(format!(
                "a dimension steps {} bytes; the DMA steps by whole 32-bit words, forward",
                d.step
            ));
        }
        // A dimension that continues the one inside it is one dimension.
        let mut merged: Vec<Dim> = Vec::with_capacity(out.len());
        for d in out.into_iter().filter(|d| d.count != 1) {
            match merged.last_mut() {
                Some(inner) if d.step == inner.count * inner.step => inner.count *= d.count,
                _ => merged.push(d),
            }
        }
        if merged.is_empty() {
            merged.push(Dim { count: 1, step: 4 });
        }
        Ok(merged)
    }
}

/// The record dimensions (innermost first) that put record k at
/// `offsets[k]`: nested runs at constant, positive steps, each run of the
/// ones inside it whole. None when no such dimensions give the offsets.
pub fn record_dims(offsets: &[i64]) -> Option<Vec<Dim>> {
    let n = offsets.len();
    let mut dims = Vec::new();
    let mut period = 1;
    while period < n {
        let step = offsets[period] - offsets[0];
        let mut count = 1;
        while (count + 1) * period <= n
            && (0..period).all(|k| offsets[count * period + k] == offsets[k] + count as i64 * step)
        {
            count += 1;
        }
        if count == 1 || step <= 0 {
            return None;
        }
        dims.push(Dim {
            count: count as i64,
            step,
        });
        period *= count;
    }
    Some(dims)
}

/// `words` with every dimension but the outermost that counts past
/// `most_wrap` split in two (`a` positions, then `count / a` of `a` steps,
/// `a` the largest divisor within the wrap), if that leaves at most `room`
/// dimensions; as they are otherwise (the caller names what is too wide).
fn split_wide(words: &[Dim], most_wrap: i64, room: usize) -> Vec<Dim> {
    let mut out: Vec<Dim> = Vec::with_capacity(room);
    let Some((&outer, inner)) = words.split_last() else {
        return Vec::new();
    };
    let mut pending: Vec<Dim> = inner.iter().rev().copied().collect();
    while let Some(d) = pending.pop() {
        if d.count <= most_wrap {
            out.push(d);
            continue;
        }
        let Some(a) = (2..=most_wrap).rev().find(|a| d.count % a == 0) else {
            return words.to_vec();
        };
        out.push(Dim {
            count: a,
            step: d.step,
        });
        pending.push(Dim {
            count: d.count / a,
            step: d.step * a,
        });
    }
    out.push(outer);
    if out.len() > room {
        return words.to_vec();
    }
    out
}

fn mask(width: u32) -> i64 {
    (1i64 << width) - 1
}

/// The addressing of a `kind` tile's descriptor that moves `words` (the
/// profile's `bd_layout.dimensions` and `iteration`); None for a linear
/// transfer. Unused dimensions between the pattern's inner ones and its
/// outermost wrap after one word; a pattern with one dimension more than
/// the descriptor has takes the outermost as the iteration.
pub fn descriptor_steps(
    words: &[Dim],
    profile: &DeviceProfile,
    kind: TileKind,
    iterate: bool,
) -> Result<Option<Addressing>, String> {
    let linear = |words: &[Dim]| matches!(words, [only] if only.step == 4);
    if linear(words) {
        return Ok(None);
    }
    let bd = &profile.tile_registers(kind).bd_layout;
    let kind = kind.name();
    let Some(layout) = bd.dimensions.as_ref() else {
        return Err(format!(
            "it needs {} dimensions of 32-bit words; a {kind} tile's buffer descriptors address linearly only",
            words.len()
        ));
    };
    let n = layout.list.len();
    let most_wrap = layout
        .list
        .iter()
        .filter_map(|d| d.wrap.map(|w| mask(w.width)))
        .min()
        .unwrap_or(i64::MAX);
    // A descriptor a chain uses once per record cannot iterate.
    let iteration_fields = bd.iteration.as_ref().filter(|_| iterate);
    let room = n + usize::from(iteration_fields.is_some());
    let split = split_wide(words, most_wrap, room);
    let words = split.as_slice();
    let (words, iteration) = match (words.split_last(), iteration_fields) {
        (Some((&outer, inner)), Some(fields)) if words.len() > n => {
            let unit = i64::from(fields.stride_unit_bytes);
            let (most_stride, most_uses) = (
                (mask(fields.stride.width) + 1) * unit,
                mask(fields.wrap.width) + 1,
            );
            if outer.step % unit != 0 || outer.step > most_stride {
                return Err(format!(
                    "its outermost dimension, the descriptor's iteration, steps {} bytes; a {kind} tile's iteration steps in units of {unit} bytes, at most {most_stride}",
                    outer.step
                ));
            }
            if outer.count > most_uses {
                return Err(format!(
                    "its outermost dimension, the descriptor's iteration, has {} positions; a {kind} tile's iteration wraps after at most {most_uses} uses",
                    outer.count
                ));
            }
            (inner, Some(outer))
        }
        _ => (words, None),
    };
    if words.len() > n {
        let plus = if iteration_fields.is_some() {
            " and an iteration"
        } else {
            ""
        };
        return Err(format!(
            "it needs {} dimensions of 32-bit words; a {kind} tile's buffer descriptor has {n}{plus} (the profile's bd_layout)",
            words.len() + usize::from(iteration.is_some())
        ));
    }
    if linear(words) {
        return Ok(Some(Addressing {
            steps: Vec::new(),
            wraps: Vec::new(),
            iteration,
        }));
    }
    let (inner, outer) = words.split_at(words.len() - 1);
    let mut dims: Vec<Dim> = inner.to_vec();
    dims.resize(n - 1, Dim { count: 1, step: 4 });
    dims.push(outer[0]);
    let unit = i64::from(layout.step_unit_bytes);
    let mut steps = Vec::with_capacity(n);
    let mut wraps = Vec::with_capacity(n - 1);
    for (i, (d, field)) in dims.iter().zip(&layout.list).enumerate() {
        let most = (mask(field.step.width) + 1) * unit;
        if d.step % unit != 0 || d.step > most {
            return Err(format!(
                "its dimension {i} steps {} bytes; a {kind} tile's descriptor steps in units of {unit} bytes, at most {most}",
                d.step
            ));
        }
        steps.push(d.step);
        if let Some(wrap) = field.wrap.filter(|_| i + 1 < n) {
            let most = mask(wrap.width);
            if d.count > most {
                return Err(format!(
                    "its dimension {i} wraps after {} words; a {kind} tile's descriptor wraps after at most {most}",
                    d.count
                ));
            }
            wraps.push(d.count);
        }
    }
    Ok(Some(Addressing {
        steps,
        wraps,
        iteration,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(list: &[(i64, i64)]) -> Vec<Dim> {
        list.iter()
            .map(|&(count, step)| Dim { count, step })
            .collect()
    }

    #[test]
    fn contiguous_records_are_one_run_of_words() {
        let record = Access::of_layout(&[2, 256], None, 2);
        let ring = record.with_records(&record_dims(&[0, 1024, 2048]).unwrap());
        assert_eq!(ring.words().unwrap(), dims(&[(768, 4)]));
        assert_eq!(ring.span(), 3072);
    }

    #[test]
    fn a_transposed_tile_steps_by_rows() {
        // Tile (i, j) of a 32-column f32 matrix, transposed: element (i, j)
        // at i + 32 j.
        let tile = Access::of_layout(&[16, 16], Some(&[1, 32]), 4);
        assert_eq!(tile.words().unwrap(), dims(&[(16, 128), (16, 4)]));
        // Tiles down the rows then across a block of 16 rows.
        let offsets: Vec<i64> = (0..4)
            .flat_map(|m| (0..2).map(move |k| m * 16 * 32 * 4 + k * 64))
            .collect();
        let ring = tile.with_records(&record_dims(&offsets).unwrap());
        assert_eq!(
            ring.words().unwrap(),
            dims(&[(16, 128), (32, 4), (4, 2048)])
        );
    }

    #[test]
    fn offsets_without_a_nest_of_runs_have_no_dimensions() {
        assert_eq!(record_dims(&[0, 4, 8, 20, 24]), None);
        assert_eq!(record_dims(&[0, 8, 4]), None);
        assert_eq!(record_dims(&[0, 0]), None);
        assert_eq!(
            record_dims(&[0, 4, 100, 104]),
            Some(dims(&[(2, 4), (2, 100)]))
        );
    }

    #[test]
    fn a_run_past_the_wrap_field_takes_two_dimensions() {
        // Half of each of 8 records of 8 KiB: 1,024 words, every 8 KiB.
        let half = Access::of_layout(&[2048], None, 2).with_records(&[Dim {
            count: 8,
            step: 8192,
        }]);
        let words = half.words().unwrap();
        assert_eq!(words, dims(&[(1024, 4), (8, 8192)]));
        assert_eq!(
            split_wide(&words, 1023, 4),
            dims(&[(512, 4), (2, 2048), (8, 8192)])
        );
        // A prime count has no divisor within the wrap: left as it is.
        assert_eq!(
            split_wide(&dims(&[(1031, 4), (2, 8192)]), 1023, 4),
            dims(&[(1031, 4), (2, 8192)])
        );
        // No room for the extra dimension: left as it is.
        let full = dims(&[(1024, 4), (3, 4100), (5, 20000), (7, 200000)]);
        assert_eq!(split_wide(&full, 1023, 4), full);
    }

    #[test]
    fn narrow_elements_need_a_contiguous_innermost_dimension() {
        let columns = Access::of_layout(&[4, 4], Some(&[1, 4]), 2);
        assert!(columns.words().unwrap_err().contains("4-byte elements"));
        let odd = Access::of_layout(&[3], None, 2);
        assert!(odd.words().unwrap_err().contains("32-bit words"));
    }
}
