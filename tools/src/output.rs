//! Atomic output: a tool never leaves a partial file behind. Output goes to a
//! temporary file in the target's directory, which is renamed over the
//! target only once everything has been written.

use crate::{error, Failure};
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to standard output. A reader that went away (a closed
/// pipe, as under `| head`) ends the tool quietly with status 141, as
/// SIGPIPE ends a C tool, rather than with a panic or an error report.
pub fn say(bytes: &[u8]) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(141),
        Err(e) => Err(error("<stdout>", format!("cannot write: {e}"))),
    }
}

/// Write `bytes` to `path` (`-` is standard output) atomically.
pub fn write_atomically(path: &str, bytes: &[u8]) -> Result<(), Failure> {
    if path == "-" {
        return say(bytes);
    }
    let target = Path::new(path);
    // A device, pipe or socket (`-o /dev/null`) is written in place: renaming
    // a file over it would replace the device node.
    if let Ok(meta) = std::fs::metadata(target) {
        if !meta.is_file() && !meta.is_dir() {
            let fail = |e: std::io::Error| error(path, format!("cannot write: {e}"));
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .open(target)
                .map_err(fail)?;
            return file.write_all(bytes).map_err(fail);
        }
    }
    let dir = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    // Report the OS error alone: the temporary file's name means nothing to
    // the user.
    let fail = |e: std::io::Error| error(path, format!("cannot write: {}", os_reason(&e)));
    let mut temp = tempfile::Builder::new()
        .prefix(".loom-")
        .tempfile_in(dir)
        .map_err(fail)?;
    temp.write_all(bytes).map_err(fail)?;
    temp.as_file().sync_all().map_err(fail)?;
    // Keep the permissions of a file that is being replaced.
    if let Ok(meta) = std::fs::metadata(target) {
        std::fs::set_permissions(temp.path(), meta.permissions()).map_err(fail)?;
    }
    temp.persist(target).map_err(|e| fail(e.error))?;
    Ok(())
}

/// The OS's description of an error, without the temporary file's path that
/// tempfile appends ("... at path \"/dir/.loom-XXXX\"").
fn os_reason(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" at path ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_target_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.loom");
        std::fs::write(&path, "old").unwrap();
        write_atomically(path.to_str().unwrap(), b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn writes_devices_in_place() {
        write_atomically("/dev/null", b"discarded").unwrap();
        let meta = std::fs::metadata("/dev/null").unwrap();
        assert!(!meta.is_file(), "/dev/null must stay a device");
    }

    #[test]
    fn reports_a_missing_directory() {
        let err = write_atomically("/nonexistent-dir/x.loom", b"x").unwrap_err();
        assert_eq!(
            err.0,
            "/nonexistent-dir/x.loom: error: cannot write: No such file or directory (os error 2)"
        );
    }
}
