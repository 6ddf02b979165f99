//! Checked-pipeline scenarios: `// TEST-...` directives in a `.loom` file
//! (full-line comments, so the file stays ordinary Loom), in the spirit of
//! lit's `// RUN:` lines. See docs/checked-pipelines.md.
//!
//! ```text
//! // TEST-SCENARIO: k512 entry=@ffn_gate_up_quadratic_bf16 config=ffn_gate_up.input_size=512
//! // TEST-BIND: k512 %input_arg = random(bf16, 512, seed=1)
//! // TEST-BIND: k512 %weights_arg = npy(k512-weights.npy)
//! // TEST-BIND: k512 %output_arg = zeros(f32, 1)
//! // TEST-EXPECT: k512 %output_arg = [0x3e800000] : f32 exact
//! ```

use crate::npy::{self, Dtype};
use std::collections::BTreeMap;
use std::path::Path;

/// Element encodings of bound and expected data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    BF16,
    F32,
    I64,
    /// Signed integers of 8, 16 and 32 bits.
    I8,
    I16,
    I32,
}

impl Element {
    pub fn size(self) -> usize {
        match self {
            Element::BF16 => 2,
            Element::F32 => 4,
            Element::I64 => 8,
            Element::I8 => 1,
            Element::I16 => 2,
            Element::I32 => 4,
        }
    }

    fn is_integer(self) -> bool {
        matches!(
            self,
            Element::I8 | Element::I16 | Element::I32 | Element::I64
        )
    }

    fn parse(text: &str) -> Result<Element, String> {
        match text.trim() {
            "bf16" => Ok(Element::BF16),
            "f32" => Ok(Element::F32),
            "i64" | "index" => Ok(Element::I64),
            "i8" => Ok(Element::I8),
            "i16" => Ok(Element::I16),
            "i32" => Ok(Element::I32),
            other => Err(format!(
                "unknown element type `{other}`; use bf16, f32, i8, i16, i32 or i64"
            )),
        }
    }

    fn of_dtype(dtype: Dtype) -> Element {
        match dtype {
            Dtype::U16 => Element::BF16,
            Dtype::F32 => Element::F32,
            Dtype::I64 => Element::I64,
            Dtype::I8 => Element::I8,
            Dtype::I16 => Element::I16,
            Dtype::I32 => Element::I32,
        }
    }

    /// One element from a decimal literal or a `0x` bit pattern.
    fn encode(self, literal: &str) -> Result<Vec<u8>, String> {
        let literal = literal.trim();
        if let Some(hex) = literal.strip_prefix("0x") {
            let bits =
                u64::from_str_radix(hex, 16).map_err(|_| format!("bad bit pattern `{literal}`"))?;
            let width = self.size() * 8;
            if width < 64 && bits >> width != 0 {
                return Err(format!(
                    "bit pattern `{literal}` is wider than {} ({width} bits)",
                    self.name()
                ));
            }
            let bytes = bits.to_le_bytes();
            return Ok(bytes[..self.size()].to_vec());
        }
        match self {
            Element::I64 | Element::I8 | Element::I16 | Element::I32 => {
                let v = literal
                    .parse::<i64>()
                    .map_err(|_| format!("`{literal}` is not an integer"))?;
                let bits = 8 * self.size() as u32;
                if bits < 64 && (v < -(1 << (bits - 1)) || v >= 1 << (bits - 1)) {
                    return Err(format!("`{literal}` is outside {}'s range", self.name()));
                }
                Ok(v.to_le_bytes()[..self.size()].to_vec())
            }
            // A decimal literal rounds once, directly to the type (f32's
            // parser rounds correctly; bf16 goes through f64, see below).
            Element::F32 => literal
                .parse::<f32>()
                .map(|v| v.to_le_bytes().to_vec())
                .map_err(|_| format!("`{literal}` is not a number")),
            Element::BF16 => {
                let v: f64 = literal
                    .parse()
                    .map_err(|_| format!("`{literal}` is not a number"))?;
                Ok(f64_to_bf16(v).to_le_bytes().to_vec())
            }
        }
    }

    /// An f64 rounded to the element (nearest, ties to even; BF16 via F32).
    fn round_f64(self, v: f64) -> Vec<u8> {
        match self {
            Element::F32 => (v as f32).to_le_bytes().to_vec(),
            Element::BF16 => loom_runtime::numerics::f32_to_bf16(v as f32)
                .to_le_bytes()
                .to_vec(),
            Element::I64 => (v as i64).to_le_bytes().to_vec(),
            Element::I8 | Element::I16 | Element::I32 => {
                (v.floor() as i64).to_le_bytes()[..self.size()].to_vec()
            }
        }
    }

    /// An element as a float (integers widened) and its bits.
    pub fn decode(self, bytes: &[u8]) -> (f64, u64) {
        match self {
            Element::BF16 => {
                let bits = u16::from_le_bytes([bytes[0], bytes[1]]);
                (
                    loom_runtime::numerics::bf16_to_f32(bits) as f64,
                    bits as u64,
                )
            }
            Element::F32 => {
                let bits = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes"));
                (f32::from_bits(bits) as f64, bits as u64)
            }
            Element::I64 => {
                let v = i64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
                (v as f64, v as u64)
            }
            Element::I8 | Element::I16 | Element::I32 => {
                let size = self.size();
                let mut word = [0u8; 8];
                word[..size].copy_from_slice(&bytes[..size]);
                let bits = u64::from_le_bytes(word);
                let shift = 64 - 8 * size as u32;
                (((bits << shift) as i64 >> shift) as f64, bits)
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Element::BF16 => "bf16",
            Element::F32 => "f32",
            Element::I64 => "i64",
            Element::I8 => "i8",
            Element::I16 => "i16",
            Element::I32 => "i32",
        }
    }
}

/// An f64 rounded to the nearest bf16, ties to even, in one rounding. Going
/// through f32 rounds twice: a value just off a bf16 tie can land on the
/// tie in f32 and then go the wrong way (1.0039062500001 is above the tie
/// 1 + 2^-8, so it rounds up to 0x3F81, not to the even 0x3F80).
fn f64_to_bf16(v: f64) -> u16 {
    let f = v as f32;
    let bits = f.to_bits();
    if !f.is_nan() && bits & 0xFFFF == 0x8000 && f as f64 != v {
        // The f32 is a bf16 tie that `v` is not: round toward `v`.
        let truncated = (bits >> 16) as u16;
        return if v.abs() > (f as f64).abs() {
            truncated + 1
        } else {
            truncated
        };
    }
    loom_runtime::numerics::f32_to_bf16(f)
}

/// How expected and actual elements are compared.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    Exact,
    Ulp(u64),
    Abs(f64),
}

impl std::fmt::Display for Tolerance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tolerance::Exact => write!(f, "exact"),
            Tolerance::Ulp(n) => write!(f, "ulp({n})"),
            Tolerance::Abs(x) => write!(f, "abs({x})"),
        }
    }
}

/// Data: the element type and the bytes.
#[derive(Clone, Debug)]
pub struct Data {
    pub element: Element,
    pub bytes: Vec<u8>,
}

#[derive(Clone, Debug)]
pub struct Expectation {
    pub data: Data,
    pub tolerance: Tolerance,
}

#[derive(Clone, Debug, Default)]
pub struct Scenario {
    pub name: String,
    pub entry: String,
    pub config: Vec<(String, i64)>,
    pub bindings: BTreeMap<String, Data>,
    pub expectations: BTreeMap<String, Expectation>,
    /// TEST-EXPECT-ERROR: the run must fail with a message containing this.
    pub expected_error: Option<String>,
    /// The line of the TEST-SCENARIO directive.
    pub line: usize,
    /// The line of each argument's TEST-BIND directive.
    pub bind_lines: BTreeMap<String, usize>,
}

impl Scenario {
    /// The scenario's configuration as `--config` gives it: NAME, VALUE.
    pub fn config_values(&self) -> Vec<(String, String)> {
        self.config
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect()
    }
}

/// A directive problem at a line of the file.
pub struct DirectiveError {
    pub line: usize,
    pub message: String,
}

/// SplitMix64: the generator `random(...)` bindings are defined with.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `key=value` arguments after the positional ones.
fn keyword(args: &[&str], key: &str) -> Option<String> {
    args.iter()
        .filter_map(|a| a.trim().split_once('='))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim().to_string())
}

/// `random(...)`, `zeros(...)`, `npy(...)` or `[...] : TYPE`; returns the
/// data and the rest of the text.
fn parse_data<'a>(text: &'a str, dir: &Path) -> Result<(Data, &'a str), String> {
    let text = text.trim_start();
    if let Some(rest) = text.strip_prefix('[') {
        let (list, rest) = rest.split_once(']').ok_or("unterminated `[`")?;
        let rest = rest
            .trim_start()
            .strip_prefix(':')
            .ok_or("a literal list needs `: TYPE`")?;
        let rest = rest.trim_start();
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let element = Element::parse(&rest[..end])?;
        let mut bytes = Vec::new();
        for item in list.split(',').filter(|i| !i.trim().is_empty()) {
            bytes.extend(element.encode(item)?);
        }
        return Ok((Data { element, bytes }, &rest[end..]));
    }
    let open = text
        .find('(')
        .ok_or_else(|| format!("expected data, got `{text}`"))?;
    // The `)` that closes this `(`: one earlier in the line closes nothing.
    let close = open + text[open..].find(')').ok_or("unterminated `(`")?;
    let (kind, inner, rest) = (&text[..open], &text[open + 1..close], &text[close + 1..]);
    let args: Vec<&str> = inner.split(',').collect();
    let data = match kind.trim() {
        "npy" => {
            // The binding states what the file must hold, so a file of
            // another type or size is refused here, not read as raw bytes.
            let (Some(file), Some(element), Some(count)) = (args.first(), args.get(1), args.get(2))
            else {
                return Err("npy(...) needs the file, its element type and its element count: npy(PATH, TYPE, COUNT)".into());
            };
            let element = Element::parse(element)?;
            let count: usize = count
                .trim()
                .parse()
                .map_err(|_| format!("the element count `{}` is not a number", count.trim()))?;
            let path = dir.join(file.trim().trim_matches('"'));
            let bytes =
                std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let array = npy::read(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
            let held = Element::of_dtype(array.dtype);
            let elements = array.data.len() / array.dtype.size();
            if held != element || elements != count {
                return Err(format!(
                    "{} holds {elements} {} elements ({}); the binding says {count} {}",
                    path.display(),
                    held.name(),
                    array.dtype.descr(),
                    element.name()
                ));
            }
            Data {
                element,
                bytes: array.data,
            }
        }
        "zeros" | "random" => {
            let element = Element::parse(args.first().ok_or("missing element type")?)?;
            let count: usize = args
                .get(1)
                .and_then(|c| c.trim().parse().ok())
                .ok_or("missing element count")?;
            if count > 1 << 28 {
                return Err(format!("{count} elements is too many"));
            }
            if kind.trim() == "zeros" {
                Data {
                    element,
                    bytes: vec![0; count * element.size()],
                }
            } else {
                let seed: u64 = keyword(&args[2..], "seed")
                    .ok_or("random(...) needs seed=N")?
                    .parse()
                    .map_err(|_| "seed must be an unsigned integer")?;
                let min: f64 = keyword(&args[2..], "min")
                    .map_or(Ok(-1.0), |v| v.parse())
                    .map_err(|_| "bad min")?;
                let max: f64 = keyword(&args[2..], "max")
                    .map_or(Ok(1.0), |v| v.parse())
                    .map_err(|_| "bad max")?;
                // Integers are drawn from min to max inclusive, each as likely.
                let span = if element.is_integer() {
                    if min.fract() != 0.0 || max.fract() != 0.0 || min > max {
                        return Err("an integer random(...) needs whole min <= max".into());
                    }
                    element.encode(&format!("{min}"))?;
                    element.encode(&format!("{max}"))?;
                    max - min + 1.0
                } else {
                    max - min
                };
                let mut rng = SplitMix64(seed);
                let mut bytes = Vec::with_capacity(count * element.size());
                for _ in 0..count {
                    let u = (rng.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
                    bytes.extend(element.round_f64(min + span * u));
                }
                Data { element, bytes }
            }
        }
        other => {
            return Err(format!(
                "unknown data `{other}(...)`; use npy, random, zeros or [..] : TYPE"
            ))
        }
    };
    Ok((data, rest))
}

fn parse_tolerance(text: &str) -> Result<Tolerance, String> {
    let text = text.trim();
    if text.is_empty() || text == "exact" {
        return Ok(Tolerance::Exact);
    }
    if let Some(n) = text.strip_prefix("ulp(").and_then(|t| t.strip_suffix(')')) {
        return n
            .trim()
            .parse()
            .map(Tolerance::Ulp)
            .map_err(|_| format!("bad ulp count `{n}`"));
    }
    if let Some(x) = text.strip_prefix("abs(").and_then(|t| t.strip_suffix(')')) {
        return x
            .trim()
            .parse()
            .map(Tolerance::Abs)
            .map_err(|_| format!("bad tolerance `{x}`"));
    }
    Err(format!(
        "unknown comparison `{text}`; use exact, ulp(N) or abs(X)"
    ))
}

/// `NAME %arg = DATA [...]`.
fn split_target(text: &str) -> Result<(&str, String, &str), String> {
    let text = text.trim();
    let (name, rest) = text
        .split_once(char::is_whitespace)
        .ok_or("expected `NAME %arg = ...`")?;
    let (arg, rest) = rest.split_once('=').ok_or("expected `%arg = ...`")?;
    let arg = arg
        .trim()
        .strip_prefix('%')
        .ok_or("expected a `%arg` name")?;
    Ok((name, arg.to_string(), rest))
}

/// Every scenario in `source`, in file order; `dir` resolves `npy(...)`.
pub fn parse(source: &str, dir: &Path) -> Result<Vec<Scenario>, DirectiveError> {
    let mut scenarios: Vec<Scenario> = Vec::new();
    for (index, line) in source.lines().enumerate() {
        let line_no = index + 1;
        let err = |message: String| DirectiveError {
            line: line_no,
            message,
        };
        let Some(directive) = line.trim_start().strip_prefix("// TEST-") else {
            continue;
        };
        let (kind, body) = directive
            .split_once(':')
            .ok_or_else(|| err("expected `// TEST-KIND: ...`".into()))?;
        let find = |scenarios: &mut Vec<Scenario>, name: &str| -> Result<usize, DirectiveError> {
            scenarios
                .iter()
                .position(|s| s.name == name)
                .ok_or_else(|| DirectiveError {
                    line: line_no,
                    message: format!("no TEST-SCENARIO `{name}` above this line"),
                })
        };
        match kind {
            "SCENARIO" => {
                let mut words = body.split_whitespace();
                let name = words.next().ok_or_else(|| err("a scenario needs a name".into()))?;
                if scenarios.iter().any(|s| s.name == name) {
                    return Err(err(format!("scenario `{name}` is defined twice")));
                }
                let mut scenario = Scenario {
                    name: name.to_string(),
                    line: line_no,
                    ..Scenario::default()
                };
                for word in words {
                    let (key, value) = word.split_once('=').ok_or_else(|| err(format!("expected key=value, got `{word}`")))?;
                    match key {
                        "entry" => scenario.entry = value.trim_start_matches('@').to_string(),
                        "config" => {
                            for item in value.split(',') {
                                let (k, v) = item.rsplit_once('=').ok_or_else(|| err(format!("config `{item}` is not NAME=VALUE")))?;
                                let v = v.parse().map_err(|_| err(format!("config value `{v}` is not an integer")))?;
                                scenario.config.push((k.trim_start_matches('@').to_string(), v));
                            }
                        }
                        other => return Err(err(format!("unknown scenario key `{other}`; use entry= and config="))),
                    }
                }
                if scenario.entry.is_empty() {
                    return Err(err("a scenario needs entry=@PIPELINE".into()));
                }
                scenarios.push(scenario);
            }
            "BIND" => {
                let (name, arg, rest) = split_target(body).map_err(err)?;
                let at = find(&mut scenarios, name)?;
                let (data, rest) = parse_data(rest, dir).map_err(err)?;
                if !rest.trim().is_empty() {
                    return Err(err(format!("unexpected `{}` after the data", rest.trim())));
                }
                if scenarios[at].bindings.insert(arg.clone(), data).is_some() {
                    return Err(err(format!("%{arg} is bound twice")));
                }
                scenarios[at].bind_lines.insert(arg, line_no);
            }
            "EXPECT" => {
                let (name, arg, rest) = split_target(body).map_err(err)?;
                let at = find(&mut scenarios, name)?;
                let (data, rest) = parse_data(rest, dir).map_err(err)?;
                let tolerance = parse_tolerance(rest).map_err(err)?;
                if scenarios[at].expectations.insert(arg.clone(), Expectation { data, tolerance }).is_some() {
                    return Err(err(format!("%{arg} has two expectations")));
                }
            }
            "EXPECT-ERROR" => {
                let (name, text) = body.trim().split_once(char::is_whitespace).ok_or_else(|| err("expected `NAME TEXT`".into()))?;
                let at = find(&mut scenarios, name)?;
                scenarios[at].expected_error = Some(text.trim().to_string());
            }
            other => {
                return Err(err(format!(
                    "unknown directive TEST-{other}; use TEST-SCENARIO, TEST-BIND, TEST-EXPECT or TEST-EXPECT-ERROR"
                )))
            }
        }
    }
    Ok(scenarios)
}

/// An element that differs: its index, then expected and actual as (value,
/// bits).
pub type Mismatch = (usize, (f64, u64), (f64, u64));

/// Elements of `actual` that differ from the expectation.
pub fn mismatches(expectation: &Expectation, actual: &[u8]) -> Vec<Mismatch> {
    let element = expectation.data.element;
    let size = element.size();
    let mut found = Vec::new();
    for (i, (e, a)) in expectation
        .data
        .bytes
        .chunks(size)
        .zip(actual.chunks(size))
        .enumerate()
    {
        let (ev, eb) = element.decode(e);
        let (av, ab) = element.decode(a);
        let same = match expectation.tolerance {
            Tolerance::Exact => eb == ab,
            Tolerance::Abs(x) => (ev - av).abs() <= x || eb == ab,
            Tolerance::Ulp(n) => {
                let ordered = |bits: u64, v: f64| -> i128 {
                    let width = size * 8;
                    let sign = 1u64 << (width - 1);
                    if v.is_sign_negative() {
                        -((bits & !sign) as i128)
                    } else {
                        bits as i128
                    }
                };
                eb == ab
                    || (!ev.is_nan()
                        && !av.is_nan()
                        && (ordered(eb, ev) - ordered(ab, av)).unsigned_abs() <= n as u128)
            }
        };
        if !same {
            found.push((i, (ev, eb), (av, ab)));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (found by scripts/fuzz-campaign.py): a `)` before the
    /// data's `(` sliced the line backwards and panicked.
    #[test]
    fn a_closing_parenthesis_before_the_data_is_an_error() {
        let err = parse_data("512) bf16, npy(data/input.npy, bf16, 512)", Path::new("."))
            .err()
            .unwrap();
        assert!(err.contains("unknown data `512) bf16, npy(...)`"), "{err}");
        assert!(parse_data("zeros(f32, 1)", Path::new(".")).is_ok());
    }

    #[test]
    fn integer_literals_are_signed_and_in_range() {
        assert_eq!(Element::I8.encode("-128"), Ok(vec![0x80]));
        assert_eq!(Element::I8.encode("0xFF"), Ok(vec![0xFF]));
        assert_eq!(Element::I16.encode("-2"), Ok(vec![0xFE, 0xFF]));
        assert!(Element::I8
            .encode("128")
            .unwrap_err()
            .contains("outside i8's range"));
        assert!(Element::I32.encode("1.5").is_err());
        assert_eq!(Element::I8.decode(&[0xFE]), (-2.0, 0xFE));
        assert_eq!(
            Element::I32.decode(&(-7i32).to_le_bytes()),
            (-7.0, 0xFFFF_FFF9)
        );
    }

    #[test]
    fn integer_random_covers_its_inclusive_range() {
        let (data, _) =
            parse_data("random(i8, 4000, seed=3, min=-2, max=2)", Path::new(".")).unwrap();
        let mut seen = [0usize; 5];
        for &b in &data.bytes {
            let v = b as i8;
            assert!((-2..=2).contains(&v), "{v}");
            seen[(v + 2) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 600), "{seen:?}");
        assert!(parse_data("random(i8, 4, seed=3, min=0, max=200)", Path::new(".")).is_err());
        assert!(parse_data("random(i16, 4, seed=3, min=0.5, max=2)", Path::new(".")).is_err());
    }
}
