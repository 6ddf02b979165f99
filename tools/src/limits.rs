//! Input limits checked before MLIR sees the input. MLIR's parser, verifier
//! and printer recurse once per nesting level, so unbounded nesting would
//! exhaust the stack; Loom refuses it with a diagnostic instead.

use crate::Failure;

/// The deepest nesting of `{ ( [ <` that Loom text or generic MLIR may use.
pub const MAX_NESTING: usize = 256;

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

/// Refuse text nested deeper than `MAX_NESTING`, ignoring brackets inside
/// string literals and `//` comments.
pub fn check_nesting(name: &str, bytes: &[u8]) -> Result<(), Failure> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(()); // bytecode: MLIR's reader does not recurse per level of text
    };
    let mut depth = 0usize;
    let mut previous = '\0';
    let mut chars = text.char_indices().peekable();
    while let Some((offset, c)) = chars.next() {
        let arrow = previous == '-' && c == '>';
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
        assert!(check_nesting("x", text.as_bytes()).is_ok());
    }

    #[test]
    fn arrows_do_not_close_brackets() {
        let text = "{ -> ".repeat(MAX_NESTING + 1);
        assert!(check_nesting("x", text.as_bytes()).is_err());
    }

    #[test]
    fn refuses_deep_nesting_with_a_located_error() {
        let text = format!("f\n  {}", "{".repeat(MAX_NESTING + 1));
        let err = check_nesting("deep.loom", text.as_bytes()).unwrap_err().0;
        let column = 3 + MAX_NESTING;
        assert!(err.starts_with(&format!("deep.loom:2:{column}: error: nesting deeper than")));
    }
}
