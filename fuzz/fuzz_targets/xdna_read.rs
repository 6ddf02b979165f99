//! The `.xdna` reader on any bytes: `elf::read` either gives an artifact or
//! an error, never a panic, an abort or a hang. An artifact it gives must
//! write back, and its control code decodes or is refused cleanly, as the
//! simulator and the HAL read it.

#![no_main]

use libfuzzer_sys::fuzz_target;
use loom_targets::xdna::elf;
use loom_targets::xdna::txn::Txn;

fuzz_target!(|bytes: &[u8]| {
    let Ok(artifact) = elf::read(bytes) else {
        return;
    };
    let _ = Txn::decode(&artifact.ctrltext);
    let written = elf::write(&artifact).expect("an artifact the reader accepts writes back");
    let again = elf::read(&written).expect("a written artifact reads back");
    assert_eq!(again, artifact, "read(write(artifact)) changed the artifact");
});
