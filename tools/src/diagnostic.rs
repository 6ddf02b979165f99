//! MLIR-style rendering of diagnostics that do not come from MLIR itself
//! (the interpreter's run-time errors): `file:line:col: error: message`,
//! the source line and a caret, then the notes the same way.

use std::rc::Rc;

/// The source line a `file:line:col` location points at, with a caret.
fn snippet(loc: &str) -> String {
    let mut parts = loc.rsplitn(3, ':');
    let (Some(col), Some(line), Some(file)) = (parts.next(), parts.next(), parts.next()) else {
        return String::new();
    };
    let (Ok(col), Ok(line)) = (col.parse::<usize>(), line.parse::<usize>()) else {
        return String::new();
    };
    let Ok(text) = std::fs::read_to_string(file) else {
        return String::new();
    };
    match text.lines().nth(line.saturating_sub(1)) {
        Some(source) => format!("{source}\n{}^\n", " ".repeat(col.saturating_sub(1))),
        None => String::new(),
    }
}

fn one(loc: &str, severity: &str, message: &str) -> String {
    let at = if loc.is_empty() {
        "<unknown>".to_string()
    } else {
        loc.to_string()
    };
    format!("{at}: {severity}: {message}\n{}", snippet(loc))
}

/// An error and its notes.
pub fn render(loc: &str, severity: &str, message: &str, notes: &[(Rc<str>, String)]) -> String {
    let mut out = one(loc, severity, message);
    for (note_loc, note) in notes {
        out.push_str(&one(note_loc, "note", note));
    }
    out
}
