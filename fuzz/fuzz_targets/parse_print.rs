//! parse_print: parse + verify + print, and the round trips the tools promise.
//!
//! For every input that parses and verifies (`Session::parse`, any input form:
//! Loom text, generic MLIR or bytecode, detected from the bytes), print it as
//! Loom text, MLIR bytecode and generic MLIR, and check that
//!
//! 1. each printed form parses and verifies again,
//! 2. Loom text is a fixed point: print(parse(text)) == text,
//! 3. bytecode and generic MLIR read back to the same Loom text
//!    (README: "Text -> bytecode -> text and text -> generic MLIR -> text give
//!    back the same text, including SSA names and comments").
//!
//! Inputs that do not parse are fine (the diagnostics are the product); a
//! crash, hang or failed check is a bug. Like the tools, the target runs on a
//! thread with `limits::TOOL_STACK_BYTES` of stack (MLIR recurses once per
//! nesting level). See docs/fuzzing.md.

use libfuzzer_sys::fuzz_target;
use loom_driver::{limits, Format, Session};
use std::ffi::{c_char, c_int, CString};

// Not `#![no_main]`: libFuzzer's `main` lives in an archive member, and so
// does another one, mlir-opt's, in Debian's libMLIRMlirOptMain.a (mlir-sys
// links every MLIR library). The linker took mlir-opt's, and the "fuzzer"
// ran mlir-opt. A `main` in this crate's own object always wins; it hands
// over to libFuzzer's driver exactly as libFuzzer's `main` does.
extern "C" {
    fn LLVMFuzzerRunDriver(
        argc: *mut c_int,
        argv: *mut *mut *mut c_char,
        callback: unsafe extern "C" fn(*const u8, usize) -> c_int,
    ) -> c_int;
    // Defined by libfuzzer-sys (it calls the `fuzz_target!` body).
    fn LLVMFuzzerTestOneInput(data: *const u8, size: usize) -> c_int;
}

/// ASan defaults, read when the process starts (ASAN_OPTIONS still overrides).
/// The Loom C++ is compiled with -fsanitize=address (cc-rs inherits it from
/// the rustflags) but Debian's MLIR is not. Inline LLVM code compiled into
/// Loom's objects poisons allocator memory that MLIR's uninstrumented copies
/// never unpoison: without `allow_user_poisoning=0`, every MLIRContext
/// creation reports a false use-after-poison in Dialect::addType.
#[no_mangle]
pub extern "C" fn __asan_default_options() -> *const c_char {
    c"allow_user_poisoning=0".as_ptr()
}

fn main() {
    use std::os::unix::ffi::OsStringExt;
    let args: Vec<CString> = std::env::args_os()
        .map(|arg| CString::new(arg.into_vec()).expect("NUL in an argument"))
        .collect();
    // libFuzzer keeps argv for the whole run (fork mode re-executes it).
    let mut argv: Vec<*mut c_char> = args.into_iter().map(CString::into_raw).collect();
    let mut argc = argv.len() as c_int;
    argv.push(std::ptr::null_mut());
    let mut argv = std::mem::ManuallyDrop::new(argv).as_mut_ptr();
    // SAFETY: argc/argv are a C argument vector that lives until exit.
    let status = unsafe { LLVMFuzzerRunDriver(&mut argc, &mut argv, LLVMFuzzerTestOneInput) };
    std::process::exit(status);
}

fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

fuzz_target!(|data: &[u8]| {
    let data = data.to_vec();
    limits::run_with_stack(move || check(&data));
});

fn check(data: &[u8]) {
    let session = Session::new();
    let Ok(source) = session.parse(data, "fuzz.loom") else {
        return;
    };
    let text = session.print(&source.module, Format::Text);
    let bytecode = session.print(&source.module, Format::Bytecode);
    let generic = session.print(&source.module, Format::Generic);

    // 1 + 2: Loom text parses again and prints the same text. (Each form
    // gets its own buffer name: diagnostics find their source line by name.)
    let reparsed = match session.parse(&text, "printed.loom") {
        Ok(module) => module,
        Err(e) => panic!(
            "printed Loom text does not parse again:\n{e}\n--- printed text ---\n{}",
            lossy(&text)
        ),
    };
    let text_again = session.print(&reparsed.module, Format::Text);
    if text_again != text {
        panic!(
            "Loom text is not a fixed point (text -> parse -> text changed it)\n\
             --- first print ---\n{}\n--- second print ---\n{}",
            lossy(&text),
            lossy(&text_again)
        );
    }

    // 1 + 3: bytecode and generic MLIR parse again and give back the text.
    for (form, name, printed) in [
        ("bytecode", "printed.loombc", &bytecode),
        ("generic MLIR", "printed.mlir", &generic),
    ] {
        let module = match session.parse(printed, name) {
            Ok(module) => module,
            Err(e) => panic!(
                "printed {form} does not parse again:\n{e}\n--- Loom text of the module ---\n{}",
                lossy(&text)
            ),
        };
        let back = session.print(&module.module, Format::Text);
        if back != text {
            panic!(
                "Loom text -> {form} -> Loom text changed the text\n\
                 --- text ---\n{}\n--- through {form} ---\n{}",
                lossy(&text),
                lossy(&back)
            );
        }
    }
}
