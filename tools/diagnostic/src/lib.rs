//! The one diagnostic type every layer of Loom reports through: the
//! refusals of the passes, the interpreter's and the simulator's run-time
//! errors, the artifact readers' and the tools' own errors. It sits at the
//! bottom of the dependency graph (it depends on nothing), so a layer that
//! does not link MLIR can report through it too.
//!
//! A diagnostic renders as MLIR renders its own: `LOCATION: error: message`,
//! then the source line and a caret when the location is `file:line:col`
//! of a readable file, then each note the same way.

#![deny(unsafe_code)]

use std::fmt;

/// How bad it is (MLIR's severities).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    Note,
    Remark,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
            Severity::Remark => "remark",
        })
    }
}

/// A located message with notes.
///
/// `location` is where the user should look: `file:line:col` of a source,
/// or a named place such as a tool (`loom-compile`), a file (`a.xdna`) or a
/// part of one (`a.xdna: section .ctrltext`); empty when nothing better is
/// known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub location: String,
    pub message: String,
    pub notes: Vec<Diagnostic>,
}

impl Diagnostic {
    pub fn error(location: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            location: location.into(),
            message: message.into(),
            notes: Vec::new(),
        }
    }

    /// This diagnostic with a note at `location`.
    pub fn with_note(mut self, location: impl Into<String>, message: impl Into<String>) -> Self {
        self.notes.push(Diagnostic {
            severity: Severity::Note,
            location: location.into(),
            message: message.into(),
            notes: Vec::new(),
        });
        self
    }

    /// The MLIR-style text, source lines included, ending in a newline.
    pub fn render(&self) -> String {
        let mut out = one(&self.location, self.severity, &self.message);
        for note in &self.notes {
            out.push_str(&note.render());
        }
        out
    }
}

/// The message alone, as `Error::to_string` gives it (no location).
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}

/// `file`, `line` and `col` of a `file:line:col` location.
pub fn source_position(location: &str) -> Option<(&str, usize, usize)> {
    let mut parts = location.rsplitn(3, ':');
    let (col, line, file) = (parts.next()?, parts.next()?, parts.next()?);
    Some((file, line.parse().ok()?, col.parse().ok()?))
}

/// The text of the source line a `file:line:col` location points at, when
/// its file can be read.
pub fn source_line(location: &str) -> Option<String> {
    let (file, line, _) = source_position(location)?;
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().nth(line.saturating_sub(1)).map(str::to_string)
}

/// The source line a `file:line:col` location points at, with a caret.
fn snippet(location: &str) -> String {
    match (source_position(location), source_line(location)) {
        (Some((_, _, col)), Some(source)) => {
            format!("{source}\n{}^\n", " ".repeat(col.saturating_sub(1)))
        }
        _ => String::new(),
    }
}

fn one(location: &str, severity: Severity, message: &str) -> String {
    let at = if location.is_empty() {
        "<unknown>"
    } else {
        location
    };
    format!("{at}: {severity}: {message}\n{}", snippet(location))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_location_shows_its_line_and_a_caret() {
        let dir = std::env::temp_dir().join(format!("loom-diagnostic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a.loom");
        std::fs::write(&file, "first\n  second line\n").unwrap();
        let at = format!("{}:2:3", file.display());
        let text = Diagnostic::error(at.clone(), "bad")
            .with_note("loom-test", "while running")
            .render();
        assert_eq!(
            text,
            format!("{at}: error: bad\n  second line\n  ^\nloom-test: note: while running\n")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_named_or_missing_location_has_no_snippet() {
        assert_eq!(
            Diagnostic::error("a.xdna: section .ctrltext", "truncated").render(),
            "a.xdna: section .ctrltext: error: truncated\n"
        );
        assert_eq!(
            Diagnostic::error("", "lost").render(),
            "<unknown>: error: lost\n"
        );
        // Not a number after the last colons: not a source position.
        assert_eq!(source_position("a:b:c"), None);
        assert_eq!(source_position("f.loom:3:7"), Some(("f.loom", 3, 7)));
    }
}
