//! llvm-aie's golden encodings (`data/golden.json`: every (bytes, text)
//! pair of llvm/test/CodeGen/AIE/aie2p/BinaryOutput/*.mir, with its file;
//! provenance in the file) decode to llvm-objdump's text, re-encode to the
//! same bytes, and the text parses back to the same instructions.

use crate::{decode_one, parse_bundle, print_bundle, Bundle};
use regex::Regex;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct Golden {
    pairs: Vec<Pair>,
}

#[derive(Deserialize)]
struct Pair {
    bytes: String,
    asm: String,
    family: String,
}

/// FileCheck's reading of a CHECK text: a whitespace run matches any
/// whitespace run, `{{re}}` is a regular expression (`.*`, and the nop
/// files' `(nop;?)*`), and the pattern may match anywhere in the line.
fn check_pattern(check: &str) -> Regex {
    let mut pattern = String::new();
    let mut rest = check;
    while !rest.is_empty() {
        let (literal, regex, tail) = match rest.find("{{") {
            Some(open) => {
                let close = rest[open..]
                    .find("}}")
                    .map(|c| open + c)
                    .expect("an unclosed {{ in a CHECK text");
                (&rest[..open], &rest[open + 2..close], &rest[close + 2..])
            }
            None => (rest, "", ""),
        };
        for (i, word) in literal.split(char::is_whitespace).enumerate() {
            if i > 0 && !pattern.ends_with("\\s+") {
                pattern.push_str("\\s+");
            }
            pattern.push_str(&regex::escape(word));
        }
        if !regex.is_empty() {
            pattern.push_str(&format!("(?:{regex})"));
        }
        rest = tail;
    }
    Regex::new(&pattern).expect("a CHECK text FileCheck would accept")
}

fn check_matches(check: &str, line: &str) -> bool {
    if check.contains("{{") {
        return check_pattern(check).is_match(line);
    }
    // Most texts hold no pattern: comparing words is enough, and fast.
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    words(line).contains(&words(check))
}

#[test]
fn every_golden_pair_decodes_prints_encodes_and_parses_back() {
    let golden: Golden = serde_json::from_str(include_str!("../data/golden.json")).unwrap();
    let mut total: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    for pair in &golden.pairs {
        let bytes: Vec<u8> = pair
            .bytes
            .split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).unwrap())
            .collect();
        let entry = total.entry(&pair.family).or_default();
        entry.0 += 1;
        let outcome = (|| {
            let (bundle, size) = decode_one(&bytes, 0).map_err(|e| e.to_string())?;
            if size != bytes.len() {
                return Err(format!("decoded {size} of {} bytes", bytes.len()));
            }
            let text = print_bundle(&bundle);
            if !check_matches(&pair.asm, &text) {
                return Err(format!("printed {text:?}"));
            }
            let again = bundle.encode().map_err(|e| e.to_string())?;
            if again != bytes {
                return Err(format!("re-encoded {again:02x?}"));
            }
            let parsed = parse_bundle(&text).map_err(|e| format!("parsing {text:?}: {e}"))?;
            let mut want = bundle.instructions.clone();
            let mut got = Bundle::pack(parsed)
                .map_err(|e| e.to_string())?
                .instructions;
            let key = |i: &crate::Instruction| i.opcode.slot.clone();
            want.sort_by_key(key);
            got.sort_by_key(key);
            if got != want {
                return Err(format!("{text:?} parses to other instructions"));
            }
            Ok(())
        })();
        match outcome {
            Ok(()) => entry.1 += 1,
            Err(why) => misses.push(format!(
                "{} [{}] {}: {why}",
                pair.bytes, pair.family, pair.asm
            )),
        }
    }
    for (family, (pairs, good)) in &total {
        eprintln!("{family}: {good}/{pairs}");
    }
    assert!(
        misses.is_empty(),
        "{} misses:\n{}",
        misses.len(),
        misses.join("\n")
    );
}

/// Regression (fuzz/artifacts, isa_decode): a register pair's text
/// `r31:r30` parses back.
#[test]
fn a_register_pair_parses_back() {
    let bytes = [0x64, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f];
    let (bundle, _) = decode_one(&bytes, 0).unwrap();
    let text = print_bundle(&bundle);
    assert_eq!(
        text,
        "rel\tr1, r7 ; vextract.64\tr31:r30, x1, #3, vaddsign1"
    );
    // The text gives the same bundle (its don't-care bits written as 0).
    let again = Bundle::pack(parse_bundle(&text).unwrap()).unwrap();
    let (decoded, _) = decode_one(&again.encode().unwrap(), 0).unwrap();
    assert_eq!(decoded, bundle);
}

/// Regression (golden mac/vaddmac/vaddmsc): a tied operand named twice in
/// the text is one operand of the instruction, and naming two registers
/// for it is an error at the second.
#[test]
fn a_tied_operand_parses_once() {
    let bytes = [0x18, 0x36, 0x0e, 0x17];
    let (bundle, _) = decode_one(&bytes, 0).unwrap();
    let text = print_bundle(&bundle);
    assert_eq!(text, "mac\tr7, r7, r28, r3");
    let parsed = Bundle::pack(parse_bundle(&text).unwrap()).unwrap();
    assert_eq!(parsed.instructions, bundle.instructions);
    let error = parse_bundle("mac\tr7, r8, r28, r3")
        .unwrap_err()
        .to_string();
    assert!(error.contains("must be `r7`"), "{error}");
}
