//! Input limits checked before MLIR sees the input. MLIR's parser, verifier
//! and printer recurse once per nesting level, so unbounded nesting would
//! exhaust the stack; and MLIR's parser converts a number literal in time
//! quadratic in its length (10,000 digits take a second, 100,000 do not end
//! within a minute). Loom refuses both with a diagnostic instead.

use crate::Failure;

/// The deepest nesting of `{ ( [ <` that Loom text or generic MLIR may use.
pub const MAX_NESTING: usize = 256;

/// The longest number literal Loom text or generic MLIR may hold: far more
/// than any value of Loom's types needs (an i64 has 20 digits, an f64 in
/// hexadecimal 18 characters).
pub const MAX_NUMBER_CHARS: usize = 100;

/// The stack the tools run on: comfortably more than `MAX_NESTING` levels of
/// MLIR recursion need, even in debug builds.
pub const TOOL_STACK_BYTES: usize = 512 << 20;

/// An MLIR-style error at byte `offset` of `text`: `name:line:col: error:`,
/// the source line and a caret.
pub fn error_at(name: &str, text: &str, offset: usize, message: &str) -> Failure {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    let source_line = text[line_start..].lines().next().unwrap_or("");
    Failure(format!(
        "{name}:{line}:{column}: error: {message}\n{source_line}\n{:>width$}\n",
        "^",
        width = column
    ))
}

/// Whether `c` may continue a name (`%x1`, `@f.2`, `i32`), so that digits
/// after it are part of the name, not a number.
fn continues_name(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '%' | '@' | '#' | '^' | '!')
}

/// Refuse text nested deeper than `MAX_NESTING` or with a number literal
/// longer than `MAX_NUMBER_CHARS`, ignoring string literals and `//`
/// comments.
pub fn check_text(name: &str, bytes: &[u8]) -> Result<(), Failure> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(()); // bytecode: MLIR's reader does not recurse per level of text
    };
    let mut depth = 0usize;
    let mut previous = '\0';
    let mut chars = text.char_indices().peekable();
    while let Some((offset, c)) = chars.next() {
        let arrow = previous == '-' && c == '>';
        let before = previous;
        previous = c;
        match c {
            '"' => {
                while let Some((_, s)) = chars.next() {
                    match s {
                        '\\' => {
                            chars.next();
                        }
                        '"' | '\n' => break,
                        _ => {}
                    }
                }
            }
            '/' if matches!(chars.peek(), Some((_, '/'))) => {
                for (_, s) in chars.by_ref() {
                    if s == '\n' {
                        break;
                    }
                }
            }
            '{' | '(' | '[' | '<' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(error_at(
                        name,
                        text,
                        offset,
                        &format!("nesting deeper than {MAX_NESTING} levels is not supported"),
                    ));
                }
            }
            '0'..='9' if !continues_name(before) => {
                let mut length = 1;
                while let Some(&(_, n)) = chars.peek() {
                    let sign = matches!(n, '+' | '-') && matches!(previous, 'e' | 'E');
                    if !(n.is_ascii_alphanumeric() || n == '.' || n == '_' || sign) {
                        break;
                    }
                    previous = n;
                    length += 1;
                    chars.next();
                }
                if length > MAX_NUMBER_CHARS {
                    return Err(error_at(
                        name,
                        text,
                        offset,
                        &format!("a number literal of {length} characters is longer than any value Loom represents (at most {MAX_NUMBER_CHARS})"),
                    ));
                }
            }
            // `->` is an arrow, not a closing bracket.
            '>' if arrow => {}
            '}' | ')' | ']' | '>' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Run a tool's `main` on a thread with `TOOL_STACK_BYTES` of stack.
pub fn run_with_stack<T: Send + 'static>(main: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .name("loom".into())
        .stack_size(TOOL_STACK_BYTES)
        .spawn(main)
        .expect("cannot start the tool thread")
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_nesting_and_ignores_strings_and_comments() {
        let text = format!("a {{ \"{}\" // {}\n }}", "(".repeat(1000), "[".repeat(1000));
        assert!(check_text("x", text.as_bytes()).is_ok());
    }

    #[test]
    fn arrows_do_not_close_brackets() {
        let text = "{ -> ".repeat(MAX_NESTING + 1);
        assert!(check_text("x", text.as_bytes()).is_err());
    }

    #[test]
    fn refuses_deep_nesting_with_a_located_error() {
        let text = format!("f\n  {}", "{".repeat(MAX_NESTING + 1));
        let err = check_text("deep.loom", text.as_bytes()).unwrap_err().0;
        let column = 3 + MAX_NESTING;
        assert!(err.starts_with(&format!("deep.loom:2:{column}: error: nesting deeper than")));
    }

    #[test]
    fn refuses_long_number_literals_but_not_long_names() {
        let long = format!(
            "%x = index.constant {} : index",
            "9".repeat(MAX_NUMBER_CHARS + 1)
        );
        let err = check_text("n.loom", long.as_bytes()).unwrap_err().0;
        assert!(err.starts_with("n.loom:1:21: error: a number literal of 101 characters"));
        let fits = format!("x = {} : f64 {}", "1".repeat(MAX_NUMBER_CHARS), "2.5e-10");
        assert!(check_text("n.loom", fits.as_bytes()).is_ok());
        let names = format!(
            "%v{0} = @f{0} \"{1}\" // {1}",
            "7".repeat(500),
            "8".repeat(500)
        );
        assert!(check_text("n.loom", names.as_bytes()).is_ok());
    }
}
