//! Assembly text as llvm-objdump prints AIE2P bundles: each slot's
//! instruction as `mnemonic<TAB>operands` from its asm string, the slots of
//! a bundle joined by ` ; `; and the parser that reads that text back.

use crate::bundle::Bundle;
use crate::error::IsaError;
use crate::instruction::{Instruction, Value};
use crate::tables::{isa, placeholders, Opcode};

/// One instruction's text.
pub fn print_instruction(instruction: &Instruction) -> String {
    let opcode = instruction.opcode;
    let template = opcode.asm_args.trim();
    let mut args = String::new();
    let mut last = 0;
    for (start, end, name) in placeholders(template) {
        args.push_str(&template[last..start]);
        match instruction.value(name) {
            Some(value) => args.push_str(&value.to_string()),
            None => args.push_str(&template[start..end]),
        }
        last = end;
    }
    args.push_str(&template[last..]);
    if args.is_empty() {
        opcode.mnemonic.clone()
    } else {
        format!("{}\t{args}", opcode.mnemonic)
    }
}

/// A bundle's text: its slots' instructions joined by ` ; `.
pub fn print_bundle(bundle: &Bundle) -> String {
    bundle
        .instructions
        .iter()
        .map(print_instruction)
        .collect::<Vec<_>>()
        .join(" ; ")
}

/// A token of an instruction's operand text with its column.
#[derive(Debug, Clone, PartialEq)]
enum Token<'t> {
    /// An operand: a register name or a number.
    Word(&'t str),
    /// Any other character, e.g. `,`, `[`, `#`.
    Punct(char),
}

fn tokens(text: &str, base: usize) -> Vec<(usize, Token<'_>)> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        // Register pairs are written `r31:r30`.
        let inner = |c: char| word(c) || c == ':';
        if word(c) || (c == '-' && chars.peek().is_some_and(|(_, n)| n.is_ascii_digit())) {
            let mut end = i + c.len_utf8();
            while let Some(&(j, n)) = chars.peek() {
                if !inner(n) {
                    break;
                }
                end = j + n.len_utf8();
                chars.next();
            }
            out.push((base + i, Token::Word(&text[i..end])));
        } else {
            out.push((base + i, Token::Punct(c)));
        }
    }
    out
}

fn number(text: &str) -> Option<i64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let value = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => i64::from_str_radix(hex, 16).ok()?,
        None => digits.parse::<i64>().ok()?,
    };
    Some(if negative { -value } else { value })
}

/// The operand values if `opcode`'s template reads `text`'s tokens, with
/// each value's column; `None` if the shape differs.
fn read_operands(opcode: &Opcode, text: &[(usize, Token<'_>)]) -> Option<(Vec<Value>, Vec<usize>)> {
    let template = opcode.asm_args.trim();
    let expected = tokens(template, 0);
    let (mut values, mut columns) = (Vec::new(), Vec::new());
    let mut given = text.iter();
    let mut pending = expected.iter().peekable();
    while let Some((_, want)) = pending.next() {
        match want {
            Token::Punct('$') => {
                // `$name` (or `${name}`): the next template tokens are the name.
                let _ = pending.next_if(|(_, t)| *t == Token::Punct('{'));
                pending.next();
                let _ = pending.next_if(|(_, t)| *t == Token::Punct('}'));
                let (column, token) = given.next()?;
                let Token::Word(word) = token else {
                    return None;
                };
                let value = match number(word) {
                    Some(v) => Value::Immediate(v),
                    None if word.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) => {
                        Value::Register(word.to_string())
                    }
                    None => return None,
                };
                values.push(value);
                columns.push(*column);
            }
            literal => {
                let (_, token) = given.next()?;
                if token != literal {
                    return None;
                }
            }
        }
    }
    given.next().is_none().then_some((values, columns))
}

/// An instruction from its text, `base` the column its text starts at.
fn parse_instruction(text: &str, base: usize) -> Result<Instruction, IsaError> {
    let start = text.len() - text.trim_start().len();
    let body = text.trim();
    let split = body.find(char::is_whitespace).unwrap_or(body.len());
    let mnemonic = &body[..split];
    let column = base + start;
    let forms: Vec<&'static Opcode> = isa().opcodes_named(mnemonic).collect();
    if forms.is_empty() {
        return Err(IsaError::UnknownMnemonic {
            column,
            mnemonic: mnemonic.to_string(),
        });
    }
    let operands = tokens(&body[split..], column + split);
    // The first form whose shape reads the text and whose fields hold its
    // values; if a form reads the shape but not the values, its error.
    let mut refusal = None;
    for &opcode in &forms {
        let Some((values, columns)) = read_operands(opcode, &operands) else {
            continue;
        };
        match Instruction::from_asm(opcode, values, &columns) {
            Ok(instruction) => return Ok(instruction),
            Err(e) => {
                refusal.get_or_insert(e);
            }
        }
    }
    Err(refusal.unwrap_or_else(|| {
        let mut expected: Vec<String> = forms
            .iter()
            .map(|o| {
                format!("{} {}", o.mnemonic, o.asm_args.trim())
                    .trim()
                    .to_string()
            })
            .collect();
        expected.dedup();
        IsaError::BadSyntax {
            column,
            mnemonic: mnemonic.to_string(),
            expected,
        }
    }))
}

/// The instructions of one bundle's text (slots separated by `;`), in
/// order; [`Bundle::pack`] makes the bundle.
pub fn parse_bundle(text: &str) -> Result<Vec<Instruction>, IsaError> {
    let mut out = Vec::new();
    let mut at = 0;
    for part in text.split(';') {
        if !part.trim().is_empty() {
            out.push(parse_instruction(part, at)?);
        }
        at += part.len() + 1;
    }
    Ok(out)
}
