//! An MLIR context with the Loom dialects, plus the sources it parsed so
//! that every diagnostic can show `file:line:col`, the source line and a
//! caret, as MLIR's own tools do.

use crate::format::{Format, InputForm};
use crate::{generic, Failure};
use loom_dialects::ffi;
use melior::dialect::DialectRegistry;
use melior::ir::Module;
use melior::Context;
use mlir_sys::{mlirOperationWriteBytecode, MlirStringRef};
use std::ffi::c_void;
use std::os::fd::FromRawFd;

/// Seconds the bytecode probe may take, plus one per MiB of input.
const PROBE_SECONDS: u32 = 3;

/// How a pass pipeline runs (MLIR's debugging options).
#[derive(Clone, Debug)]
pub struct PipelineOptions {
    pub verify_each: bool,
    pub print_after_all: bool,
    pub print_after_pass: Option<String>,
    pub print_after_only_on_change: bool,
    pub timing: bool,
}

impl Default for PipelineOptions {
    fn default() -> Self {
        PipelineOptions {
            verify_each: true,
            print_after_all: false,
            print_after_pass: None,
            print_after_only_on_change: false,
            timing: false,
        }
    }
}

pub struct Session {
    context: Context,
    raw: *mut c_void,
}

/// A parsed, verified module and the form it was read from.
pub struct SourceModule<'c> {
    pub module: Module<'c>,
    pub form: InputForm,
}

unsafe extern "C" fn append(text: MlirStringRef, user_data: *mut c_void) {
    // SAFETY: `user_data` is the `Vec<u8>` passed by `collect`, and MLIR
    // hands over `length` valid bytes at `data`.
    unsafe {
        let out = &mut *(user_data as *mut Vec<u8>);
        out.extend_from_slice(std::slice::from_raw_parts(
            text.data as *const u8,
            text.length,
        ));
    }
}

/// Run a C printing function that reports its text through a callback.
fn collect(print: impl FnOnce(mlir_sys::MlirStringCallback, *mut c_void)) -> Vec<u8> {
    let mut out = Vec::new();
    print(Some(append), &mut out as *mut Vec<u8> as *mut c_void);
    out
}

fn string_ref(bytes: &[u8]) -> MlirStringRef {
    MlirStringRef {
        data: bytes.as_ptr() as *const _,
        length: bytes.len(),
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    pub fn new() -> Self {
        loom_passes::register_all();
        let registry = DialectRegistry::new();
        loom_dialects::register(&registry);
        let context = Context::new();
        context.append_dialect_registry(&registry);
        context.load_all_available_dialects();
        // One thread: deterministic diagnostics order and no pool start-up.
        context.enable_multi_threading(false);
        // SAFETY: the context outlives the session object (dropped after it).
        let raw = unsafe { ffi::loomSessionCreate(context.to_raw()) };
        Session { context, raw }
    }

    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Diagnostics reported since the last call, as MLIR formats them.
    pub fn take_diagnostics(&self) -> String {
        // SAFETY: `raw` is a live session.
        let bytes = collect(|cb, ud| unsafe { ffi::loomSessionTakeDiagnostics(self.raw, cb, ud) });
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Parse and verify `bytes` named `name`, in whichever form they are.
    pub fn parse(&self, bytes: &[u8], name: &str) -> Result<SourceModule<'_>, Failure> {
        let form = InputForm::detect(bytes);
        crate::limits::check_text(name, bytes)?;
        let imported;
        let contents = match form {
            InputForm::Generic => match std::str::from_utf8(bytes) {
                Ok(text) => {
                    imported = generic::import(text);
                    imported.as_bytes()
                }
                Err(e) => {
                    return Err(crate::error(
                        name,
                        format!("input is neither UTF-8 text nor MLIR bytecode: {e}"),
                    ))
                }
            },
            _ => bytes,
        };
        if form == InputForm::Bytecode {
            self.probe_bytecode(contents, name)?;
        }
        // SAFETY: all handles are live; the C side copies `contents`.
        let raw = unsafe {
            ffi::loomSessionParse(
                self.raw,
                self.context.to_raw(),
                string_ref(contents),
                string_ref(if form == InputForm::Generic {
                    bytes
                } else {
                    &[]
                }),
                string_ref(name.as_bytes()),
                form == InputForm::Text,
            )
        };
        if raw.ptr.is_null() {
            let mut diagnostics = self.take_diagnostics();
            if diagnostics.is_empty() {
                diagnostics = format!("{name}: error: cannot parse input\n");
            }
            return Err(Failure(diagnostics));
        }
        // SAFETY: a non-null module freshly created in this context.
        let module = unsafe { Module::from_raw(raw) };
        Ok(SourceModule { module, form })
    }

    /// MLIR's bytecode reader trusts its input more than a command-line tool
    /// may: some corruptions abort the process or corrupt its heap. Read the
    /// bytes in a forked child first. Only input the child read successfully
    /// is read again here; otherwise the child's diagnostics (or the way it
    /// died) are the report, and this process never touches the bad bytes.
    fn probe_bytecode(&self, contents: &[u8], name: &str) -> Result<(), Failure> {
        // Some corruptions send MLIR's reader into a loop: the child has a
        // time limit (generous: a valid module reads at megabytes a second).
        let limit = PROBE_SECONDS + (contents.len() >> 20) as u32;
        let mut fds = [0; 2];
        // SAFETY: the child only parses from memory it inherited, writes its
        // diagnostics to the pipe and leaves with `_exit`, running no
        // destructors; the parent only reads the pipe and waits.
        unsafe {
            if libc::pipe(fds.as_mut_ptr()) != 0 {
                return Ok(()); // no probe possible: parse directly
            }
            let parent = libc::getpid();
            let pid = libc::fork();
            if pid < 0 {
                libc::close(fds[0]);
                libc::close(fds[1]);
                return Ok(());
            }
            if pid == 0 {
                // The child dies with its parent, and by SIGALRM at its
                // limit, so it never outlives the tool.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                libc::alarm(limit);
                libc::close(fds[0]);
                let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
                if null >= 0 {
                    libc::dup2(null, 2);
                }
                let module = ffi::loomSessionParse(
                    self.raw,
                    self.context.to_raw(),
                    string_ref(contents),
                    string_ref(&[]),
                    string_ref(name.as_bytes()),
                    false,
                );
                if !module.ptr.is_null() {
                    libc::_exit(0);
                }
                let diagnostics = self.take_diagnostics();
                let mut rest = diagnostics.as_bytes();
                while !rest.is_empty() {
                    let n = libc::write(fds[1], rest.as_ptr().cast(), rest.len());
                    if n <= 0 {
                        break;
                    }
                    rest = &rest[n as usize..];
                }
                libc::_exit(1);
            }
            libc::close(fds[1]);
            let mut reader = std::fs::File::from_raw_fd(fds[0]);
            let mut diagnostics = String::new();
            let _ = std::io::Read::read_to_string(&mut reader, &mut diagnostics);
            let mut status = 0;
            while libc::waitpid(pid, &mut status, 0) < 0 {
                if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                    break;
                }
            }
            if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
                return Ok(());
            }
            if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 1 && !diagnostics.is_empty()
            {
                return Err(Failure(diagnostics));
            }
            if libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGALRM {
                return Err(crate::error(
                    name,
                    format!("malformed MLIR bytecode: MLIR's bytecode reader did not finish within {limit} s"),
                ));
            }
            let how = if libc::WIFSIGNALED(status) {
                format!("signal {}", libc::WTERMSIG(status))
            } else {
                format!("exit status {}", libc::WEXITSTATUS(status))
            };
            Err(crate::error(
                name,
                format!("malformed MLIR bytecode: MLIR's bytecode reader failed on it ({how})"),
            ))
        }
    }

    /// Run a textual pass pipeline on `module`. IR dumps and timing reports
    /// go to `report`; failures come back as diagnostics.
    pub fn run_pipeline(
        &self,
        module: &mut Module,
        pipeline: &str,
        options: &PipelineOptions,
        report: &mut dyn FnMut(&str),
    ) -> Result<(), Failure> {
        let mut sink = |text: &str| report(text);
        let mut sink: &mut dyn FnMut(&str) = &mut sink;
        unsafe extern "C" fn forward(text: MlirStringRef, data: *mut c_void) {
            // SAFETY: `data` is the `&mut &mut dyn FnMut(&str)` below.
            unsafe {
                let sink = &mut *(data as *mut &mut dyn FnMut(&str));
                let bytes = std::slice::from_raw_parts(text.data as *const u8, text.length);
                sink(&String::from_utf8_lossy(bytes));
            }
        }
        let after = options.print_after_pass.as_deref().unwrap_or("");
        let raw = loom_passes::ffi::PipelineOptions {
            verify_each: options.verify_each,
            print_after_all: options.print_after_all,
            print_after_only_on_change: options.print_after_only_on_change,
            timing: options.timing,
            print_after_pass: string_ref(after.as_bytes()),
            print: Some(forward),
            print_user_data: &mut sink as *mut &mut dyn FnMut(&str) as *mut c_void,
        };
        // SAFETY: live module; the options and the sink outlive the call.
        let result = unsafe {
            loom_passes::ffi::loomRunPipeline(
                module.to_raw(),
                string_ref(pipeline.as_bytes()),
                &raw,
            )
        };
        if result.value == 0 {
            return Err(Failure(self.take_diagnostics()));
        }
        Ok(())
    }

    /// Verify a module, reporting problems through the session.
    pub fn verify(&self, module: &Module) -> Result<(), Failure> {
        // SAFETY: the module's operation is live.
        let result = unsafe { ffi::loomVerify(module.as_operation().to_raw()) };
        if result.value == 0 {
            return Err(Failure(self.take_diagnostics()));
        }
        Ok(())
    }

    /// Print `module` in `format`.
    pub fn print(&self, module: &Module, format: Format) -> Vec<u8> {
        match format {
            Format::Text => {
                // SAFETY: live module.
                collect(|cb, ud| unsafe { ffi::loomPrintText(module.to_raw(), cb, ud) })
            }
            Format::Generic => {
                // SAFETY: live module.
                let text =
                    collect(|cb, ud| unsafe { ffi::loomPrintGeneric(module.to_raw(), cb, ud) });
                generic::export(&String::from_utf8_lossy(&text)).into_bytes()
            }
            Format::Bytecode => collect(|cb, ud| {
                // SAFETY: live operation; the callback appends the bytes.
                unsafe { mlirOperationWriteBytecode(module.as_operation().to_raw(), cb, ud) }
            }),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: created in `new`, destroyed once, before the context.
        unsafe { ffi::loomSessionDestroy(self.raw) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loom_dialects::ops;
    use melior::ir::attribute::IntegerAttribute;
    use melior::ir::r#type::IntegerType;
    use melior::ir::{BlockLike, Location, Type};

    const FILL: &str = "func.def @f(%n: index, %v: view<[%n]xbf16>) {\n  %c0 = index.constant 0 : index\n  func.return\n}\n";

    /// Regression: unit tests create sessions on parallel threads, and two
    /// threads registering the passes at once made MLIR abort ("pass
    /// allocator creates a different pass than previously registered").
    #[test]
    fn passes_register_once_from_racing_threads() {
        let threads: Vec<_> = (0..8)
            .map(|_| std::thread::spawn(loom_passes::register_all))
            .collect();
        for thread in threads {
            thread.join().expect("registration does not panic");
        }
        assert!(loom_passes::is_registered("loom-cse"));
        assert!(loom_passes::is_registered("aie2p-lower-pipeline"));
    }

    #[test]
    fn text_bytecode_and_generic_forms_round_trip() {
        let session = Session::new();
        let source = session.parse(FILL.as_bytes(), "fill.loom").unwrap();
        assert_eq!(source.form, InputForm::Text);
        let text = session.print(&source.module, Format::Text);
        assert_eq!(String::from_utf8(text).unwrap(), FILL);
        for format in [Format::Bytecode, Format::Generic] {
            let bytes = session.print(&source.module, format);
            let again = session.parse(&bytes, "again").unwrap();
            assert_ne!(again.form, InputForm::Text);
            assert_eq!(session.print(&again.module, Format::Text), FILL.as_bytes());
        }
    }

    #[test]
    fn parse_errors_are_reported_with_the_source_line() {
        let session = Session::new();
        let err = session
            .parse(
                b"func.def @f() {\n  %x = index.nope 1 : index\n}\n",
                "bad.loom",
            )
            .err()
            .unwrap();
        assert!(
            err.0.starts_with("bad.loom:2:8: error: custom op 'index.nope' is unknown\n  %x = index.nope 1 : index\n       ^"),
            "{err}"
        );
    }

    #[test]
    fn typed_wrappers_build_loom_ops() {
        let session = Session::new();
        let context = session.context();
        let location = Location::unknown(context);
        let module = Module::new(location);
        let index = Type::index(context);
        let value = IntegerAttribute::new(IntegerType::new(context, 64).into(), 7);
        let constant = ops::index::constant(context, index, value, location);
        module.body().append_operation(constant.into());
        assert!(session.verify(&module).is_ok());
        let text = String::from_utf8(session.print(&module, Format::Text)).unwrap();
        assert_eq!(text, "%0 = index.constant 7 : index\n");
    }
}
