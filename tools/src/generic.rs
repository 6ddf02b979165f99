//! Loom's generic MLIR form.
//!
//! Loom's `func`, `scf`, `index` and `vector` dialects share their names with
//! upstream MLIR dialects that stock tools (`mlir-opt`) always register, and
//! some op names collide (`index.constant`, `vector.load`, `scf.for`). In the
//! generic form written by `--to=mlir`, ops of those dialects are therefore
//! spelled `"loom.func.def"`, `"loom.index.constant"`, ...: an unregistered
//! `loom` namespace that `mlir-opt --allow-unregistered-dialect` accepts.
//! Reading generic MLIR maps the names back, padding with spaces after the
//! name so that every line and column (and so every diagnostic) stays where
//! it was in the user's text.

const RENAMED: &[&str] = &["func", "scf", "index", "vector"];
const PREFIX: &str = "loom.";

/// Where a generic op line's quoted name starts (after indentation and an
/// optional `%results =`), if the line is an op line.
fn op_name_start(line: &str) -> Option<usize> {
    let indent = line.len() - line.trim_start().len();
    let rest = &line[indent..];
    if rest.starts_with('"') {
        return Some(indent + 1);
    }
    if rest.starts_with('%') {
        let eq = rest.find(" = \"")?;
        // Result lists hold only `%name`, `%name:N` and commas.
        if rest[..eq]
            .chars()
            .all(|c| c.is_alphanumeric() || "%:,_$.- #".contains(c))
        {
            return Some(indent + eq + 4);
        }
    }
    None
}

/// Whether the quoted op name at the start of `name` belongs to a renamed
/// dialect, spelled with `prefix` in front of the dialect.
fn is_renamed(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix).is_some_and(|rest| {
        RENAMED
            .iter()
            .any(|d| rest.strip_prefix(d).is_some_and(|r| r.starts_with('.')))
    })
}

/// Add (`insert`) or remove the `loom.` prefix of renamed op names.
fn map_lines(text: &str, insert: bool) -> String {
    let prefix = if insert { "" } else { PREFIX };
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for line in text.split_inclusive('\n') {
        match op_name_start(line) {
            Some(at) if is_renamed(&line[at..], prefix) => {
                out.push_str(&line[..at]);
                if insert {
                    out.push_str(PREFIX);
                    out.push_str(&line[at..]);
                } else {
                    let name = &line[at + PREFIX.len()..];
                    let quote = name.find('"').map_or(name.len(), |q| q + 1);
                    out.push_str(&name[..quote]);
                    out.push_str(&" ".repeat(PREFIX.len()));
                    out.push_str(&name[quote..]);
                }
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// Generic MLIR as printed by MLIR -> Loom's generic form.
pub fn export(text: &str) -> String {
    map_lines(text, true)
}

/// Loom's generic form -> generic MLIR that the Loom dialects parse.
pub fn import(text: &str) -> String {
    map_lines(text, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_only_colliding_op_names() {
        let text = "  %0 = \"index.constant\"() <{value = 1 : i64}> : () -> index\n  \"channel.publish\"(%1) : (!channel.write<!channel.tile<1xf32>>) -> ()\n  %a:2 = \"scf.for\"(%x) ({\n";
        let exported = export(text);
        assert!(exported.contains("\"loom.index.constant\""));
        assert!(exported.contains("\"channel.publish\""));
        assert!(exported.contains("%a:2 = \"loom.scf.for\""));
        let imported = import(&exported);
        assert_eq!(imported.replace("\"     (", "\"("), text);
        for (a, b) in imported.lines().zip(exported.lines()) {
            assert_eq!(a.len(), b.len(), "columns move: {a}");
        }
    }

    #[test]
    fn leaves_strings_and_locations_alone() {
        let text = "#loc1 = loc(\"func.x\"(#loc))\n  %0 = \"pipeline.memory\"() {note = \"index.constant\"} : () -> !pipeline.pool\n";
        assert_eq!(export(text), text);
    }
}
