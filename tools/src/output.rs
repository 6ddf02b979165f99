//! Atomic output: a tool never leaves a partial file behind, and the files
//! of one run appear together or not at all. Each file is written to a
//! temporary file in its target's directory as it is staged; `commit`
//! renames them over their targets once every one is written. A run that
//! fails before then, or is stopped by SIGINT, SIGTERM or SIGHUP, removes its
//! temporary files.

use crate::{error, Failure};
use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};

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
    let mut outputs = Outputs::default();
    outputs.stage(path, bytes)?;
    outputs.commit()
}

/// The outputs of one run, committed together.
#[derive(Default)]
pub struct Outputs {
    staged: Vec<Staged>,
}

enum Staged {
    Stdout(Vec<u8>),
    /// A device, pipe or socket (`-o /dev/null`) is written in place at
    /// commit: renaming a file over it would replace the device node.
    Device(String, Vec<u8>),
    File {
        path: String,
        temp: Temporary,
        target: PathBuf,
    },
}

impl Outputs {
    /// Write `bytes` for `path` (`-` is standard output), to appear at
    /// `commit`.
    pub fn stage(&mut self, path: &str, bytes: &[u8]) -> Result<(), Failure> {
        if path == "-" {
            self.staged.push(Staged::Stdout(bytes.to_vec()));
            return Ok(());
        }
        // Write through symbolic links (`loom-format -i link.loom`), as an
        // editor does: the link stays a link.
        let target = resolve_links(Path::new(path));
        if let Ok(meta) = std::fs::metadata(&target) {
            if !meta.is_file() && !meta.is_dir() {
                self.staged
                    .push(Staged::Device(path.to_string(), bytes.to_vec()));
                return Ok(());
            }
        }
        let dir = match target.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // Report the OS error alone: the temporary file's name means nothing
        // to the user.
        let fail = |e: std::io::Error| error(path, format!("cannot write: {}", os_reason(&e)));
        // A new file gets the mode the umask leaves of 0666, as `open` gives
        // it; a replaced file keeps its own.
        let temp = Temporary::create(&dir).map_err(fail)?;
        if let Ok(meta) = std::fs::metadata(&target) {
            std::fs::set_permissions(&temp.path, meta.permissions()).map_err(fail)?;
        }
        let file = temp.file.as_ref().expect("a staged file is open");
        let mut handle = file.as_file();
        handle.write_all(bytes).map_err(fail)?;
        handle.sync_all().map_err(fail)?;
        self.staged.push(Staged::File {
            path: path.to_string(),
            temp,
            target,
        });
        Ok(())
    }

    /// Put every staged output in place: files first (renamed over their
    /// targets), then devices and standard output.
    pub fn commit(self) -> Result<(), Failure> {
        let mut rest = Vec::new();
        for staged in self.staged {
            match staged {
                Staged::File { path, temp, target } => temp
                    .persist(&target)
                    .map_err(|e| error(&path, format!("cannot write: {}", os_reason(&e))))?,
                other => rest.push(other),
            }
        }
        for staged in rest {
            match staged {
                Staged::Stdout(bytes) => say(&bytes)?,
                Staged::Device(path, bytes) => {
                    let fail = |e: std::io::Error| error(&path, format!("cannot write: {e}"));
                    std::fs::OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .and_then(|mut file| file.write_all(&bytes))
                        .map_err(fail)?;
                }
                Staged::File { .. } => unreachable!("files were committed first"),
            }
        }
        Ok(())
    }
}

/// `path` with its symbolic links followed (a dangling link names the file
/// it would create).
fn resolve_links(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    // The kernel's own limit on links followed in one lookup.
    for _ in 0..40 {
        match std::fs::read_link(&current) {
            Ok(next) => {
                current = match current.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                }
            }
            Err(_) => break,
        }
    }
    current
}

/// A temporary file beside a target, known to the signal handler until it is
/// renamed into place or removed.
struct Temporary {
    file: Option<tempfile::NamedTempFile>,
    path: PathBuf,
}

/// The temporary files of this process that a signal must remove.
static LIVE: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

impl Temporary {
    fn create(dir: &Path) -> std::io::Result<Temporary> {
        remove_on_signal();
        let file = tempfile::Builder::new()
            .prefix(".loom-")
            .permissions(std::fs::Permissions::from_mode(0o666))
            .tempfile_in(dir)?;
        let path = file.path().to_path_buf();
        LIVE.lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(path.clone());
        Ok(Temporary {
            file: Some(file),
            path,
        })
    }

    fn persist(mut self, target: &Path) -> std::io::Result<()> {
        // A signal that arrived while the thread below had not run yet must
        // still stop the rename.
        stop_if_signalled();
        let file = self.file.take().expect("persisted once");
        file.persist(target).map(drop).map_err(|e| e.error)
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        // Removes the file unless it was renamed into place.
        drop(self.file.take());
        LIVE.lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.path);
    }
}

/// The signal that stops the tool, once one arrived (0 before): set in the
/// signal handler itself, so a rename can check it at once.
static SIGNALLED: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

/// Once per process: on SIGINT, SIGTERM or SIGHUP, the live temporary files
/// are removed and the tool ends with the signal's status, by a thread
/// (while the tool is busy elsewhere) or by the next rename (which the
/// signal must stop even before that thread runs).
fn remove_on_signal() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let signalled = SIGNALLED.get_or_init(|| Arc::new(AtomicUsize::new(0)));
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            let _ = signal_hook::flag::register_usize(signal, signalled.clone(), signal as usize);
        }
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                stop(signal);
            }
        });
    });
}

/// End the tool if a signal asked for it.
fn stop_if_signalled() {
    if let Some(signal) = SIGNALLED
        .get()
        .map(|s| s.load(Ordering::SeqCst))
        .filter(|&s| s != 0)
    {
        stop(signal as i32);
    }
}

/// Remove the live temporary files and end with the signal's status.
fn stop(signal: i32) -> ! {
    for path in LIVE.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        let _ = std::fs::remove_file(path);
    }
    std::process::exit(128 + signal)
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
            "/nonexistent-dir/x.loom: error: cannot write: No such file or directory (os error 2)\n"
        );
    }

    #[test]
    fn a_failed_stage_leaves_no_file_of_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("first.xdna");
        let mut outputs = Outputs::default();
        outputs.stage(first.to_str().unwrap(), b"artifact").unwrap();
        assert!(outputs
            .stage("/nonexistent-dir/report.json", b"{}")
            .is_err());
        drop(outputs);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn writes_through_a_symbolic_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.loom");
        let link = dir.path().join("link.loom");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink("real.loom", &link).unwrap();
        write_atomically(link.to_str().unwrap(), b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn a_new_file_gets_the_mode_the_umask_leaves() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.loom");
        write_atomically(path.to_str().unwrap(), b"x").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        // Whatever the umask, group and others may read unless it says no;
        // tempfile's own default would be 0600.
        let umask = std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .map(|v| u32::from_str_radix(v.trim(), 8).unwrap())
            .unwrap();
        assert_eq!(mode, 0o666 & !umask);
    }
}
