//! Embed every device profile in `xdna/profiles/`: adding a profile is adding
//! a file, with no code change.

use std::fmt::Write;

fn main() {
    // The manifest directory of this build, read when the script runs: a
    // script compiled once can be reused for another checkout of the crate
    // sharing the target directory (a git worktree), and env! would have
    // fixed the first checkout's path in it.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = std::path::Path::new(&manifest).join("xdna/profiles");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("targets/xdna/profiles exists")
        .map(|e| e.expect("a readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = String::from("/// (file name, contents) of every profile.\npub const PROFILE_FILES: &[(&str, &str)] = &[\n");
    for file in files {
        println!("cargo:rerun-if-changed={}", file.display());
        let name = file
            .file_name()
            .expect("a file name")
            .to_string_lossy()
            .into_owned();
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            file.display().to_string()
        )
        .expect("writing a String");
    }
    out.push_str("];\n");
    let target = std::path::Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("profiles.rs");
    std::fs::write(target, out).expect("OUT_DIR is writable");
}
