//! Builds the Loom dialects: every `<dir>/<Name>.td` goes through `mlir-tblgen`
//! (dialect, type, op and interface declarations and definitions), then the
//! hand-written C++ next to it is compiled against the generated code into one
//! static library linked with the same static MLIR that `mlir-sys` links.
//! The op names the generated declarations define become Rust constants
//! (`names.rs` in OUT_DIR, included by `src/names.rs`), so Rust code names
//! an op through them and a renamed op fails to compile.

use std::path::{Path, PathBuf};
use std::process::Command;

/// (directory, TableGen file stem, dialect name, has types)
const DIALECTS: &[(&str, &str, &str, bool)] = &[
    ("buffer", "Buffer", "buffer", true),
    ("pipeline", "Pipeline", "pipeline", true),
    ("view", "View", "view", true),
    ("channel", "Channel", "channel", true),
    ("kernel", "Kernel", "kernel", true),
    ("aie2p", "Aie2p", "aie2p", false),
    ("func", "Func", "func", false),
    ("scf", "Scf", "scf", false),
    ("cfg", "Cfg", "cfg", false),
    ("index", "Index", "index", false),
    ("scalar", "Scalar", "scalar", false),
    ("vector", "Vector", "vector", false),
    ("config", "Config", "config", false),
];

fn main() {
    let prefix = PathBuf::from(
        std::env::var("LOOM_LLVM_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".into()),
    );
    let tblgen = prefix.join("bin/mlir-tblgen");
    let llvm_include = prefix.join("include");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let gen = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("gen");
    std::fs::create_dir_all(&gen).unwrap();

    println!("cargo:rerun-if-env-changed=LOOM_LLVM_PREFIX");
    println!("cargo:rerun-if-changed=include");
    println!("cargo:rerun-if-changed=common");

    let run = |td: &Path, args: &[&str], out: &Path| {
        let status = Command::new(&tblgen)
            .args(args)
            .arg("-I")
            .arg(&llvm_include)
            .arg("-I")
            .arg(&manifest)
            .arg(td)
            .arg("-o")
            .arg(out)
            .status()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", tblgen.display()));
        assert!(
            status.success(),
            "mlir-tblgen {args:?} failed on {}",
            td.display()
        );
    };

    let base = manifest.join("common/LoomBase.td");
    run(
        &base,
        &["-gen-op-interface-decls"],
        &gen.join("LoomInterfaces.h.inc"),
    );
    run(
        &base,
        &["-gen-op-interface-defs"],
        &gen.join("LoomInterfaces.cpp.inc"),
    );

    let mut build = cc::Build::new();
    let mut names = String::new();
    for (dir, stem, name, has_types) in DIALECTS {
        println!("cargo:rerun-if-changed={dir}");
        let td = manifest.join(dir).join(format!("{stem}.td"));
        let out = |suffix: &str| gen.join(format!("{stem}{suffix}"));
        let dialect_flag = format!("-dialect={name}");
        run(
            &td,
            &["-gen-dialect-decls", &dialect_flag],
            &out("Dialect.h.inc"),
        );
        run(
            &td,
            &["-gen-dialect-defs", &dialect_flag],
            &out("Dialect.cpp.inc"),
        );
        run(&td, &["-gen-op-decls"], &out("Ops.h.inc"));
        names.push_str(&op_name_constants(name, &out("Ops.h.inc")));
        run(&td, &["-gen-op-defs"], &out("Ops.cpp.inc"));
        if *has_types {
            let types_flag = format!("-typedefs-dialect={name}");
            run(
                &td,
                &["-gen-typedef-decls", &types_flag],
                &out("Types.h.inc"),
            );
            run(
                &td,
                &["-gen-typedef-defs", &types_flag],
                &out("Types.cpp.inc"),
            );
        }
        build.file(manifest.join(dir).join(format!("{stem}.cpp")));
    }
    for file in [
        "Syntax.cpp",
        "Names.cpp",
        "Dims.cpp",
        "Signature.cpp",
        "Comments.cpp",
        "Ownership.cpp",
        "Inliner.cpp",
        "Passes.cpp",
        "Api.cpp",
    ] {
        build.file(manifest.join("common").join(file));
    }

    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out_dir.join("names.rs"), names).unwrap();

    build
        .cpp(true)
        .std("c++17")
        .include(&llvm_include)
        .include(&gen)
        .include(manifest.join("include"))
        .flag("-fno-rtti")
        .flag("-fno-exceptions")
        .flag("-fvisibility-inlines-hidden")
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-comment")
        .warnings(false)
        .compile("loom_dialects");
}

/// `pub mod DIALECT { pub const OP: &str = "dialect.op"; ... }` for every op
/// the generated declarations in `decls` name (`getOperationName`).
fn op_name_constants(dialect: &str, decls: &Path) -> String {
    let text = std::fs::read_to_string(decls).unwrap();
    let marker = "getOperationName() {\n    return ::llvm::StringLiteral(\"";
    let mut out = format!("/// The `{dialect}` dialect's op names.\npub mod {dialect} {{\n");
    for (at, _) in text.match_indices(marker) {
        let rest = &text[at + marker.len()..];
        let full = &rest[..rest.find('"').expect("a closed string literal")];
        let op = full
            .strip_prefix(&format!("{dialect}."))
            .unwrap_or_else(|| panic!("{full} is not an op of {dialect}"));
        let constant = op.replace('.', "_").to_uppercase();
        out.push_str(&format!("    pub const {constant}: &str = \"{full}\";\n"));
    }
    out.push_str("}\n");
    out
}
