//! The amdxdna HAL as a library, against the recording fake of the driver:
//! open a context, make buffers, load a kernel (a firmware image and TXN
//! control code built with the HAL's TXN builder) and run it, as
//! `shared/reference/amdxdna-runtime-api.txt` describes (`open`, `buffer`,
//! `upload`, `load`, `run`, `download`, `close`).
//!
//! It depends on `loom-runtime` alone, which links no MLIR:
//!
//! ```sh
//! cargo run -p loom-runtime --example hal_fake
//! cargo tree -p loom-runtime -e normal | grep -E 'mlir|melior'   # nothing
//! ```
//!
//! On an NPU the same code runs with `hal::discover_system()?[0].open()?`
//! in place of the fake (the fake's device computes nothing: the output
//! buffer stays as the upload left it).

use loom_runtime::hal::{
    self, tile, AieVersion, Context, ContextConfig, Device, DmaOptions, FakeDevice, Kernel,
    ShimDma, TxnBuilder, MM2S, S2MM,
};
use std::error::Error;

/// The NPU opcode of a DPU kernel's instruction list (args[0]).
const OPCODE: u64 = 3;
const BYTES: u32 = 256;

fn main() -> Result<(), Box<dyn Error>> {
    // A Strix NPU, as its profile describes it.
    let profile = &hal::profiles()[0];
    let mut dev = FakeDevice::of_profile(profile);
    dev.aie = AieVersion { major: 2, minor: 1 };
    let info = hal::device_info(&dev)?;
    hal::check_geometry(profile, &info.metadata)?;
    println!("device: {} ({info})", profile.name);

    // The raw query the typed ones are built on: AIE_VERSION's 8 bytes.
    let raw = dev.query(2, 8)?;
    println!("GET_INFO(AIE_VERSION) reply: {raw:02x?}");

    // A context on one column, its heap mapped before CREATE_HWCTX.
    let ctx = Context::open(&dev, ContextConfig::columns(&info.metadata, 1))?;
    let input = ctx.buffer(u64::from(BYTES))?;
    let output = ctx.buffer(u64::from(BYTES))?;
    let data: Vec<u8> = (0..BYTES).map(|i| i as u8).collect();
    ctx.upload(&input, &data, 0)?;

    // Control code: argument 1 into shim (0, 0) MM2S channel 0, argument 2
    // out of its S2MM channel 0, then wait for the output's token.
    let mut txn = TxnBuilder::new(profile)?;
    let from = ShimDma {
        arg: 0,
        direction: MM2S,
        tile: tile(0, 0)?,
        bd: 0,
        channel: 0,
    };
    let to = ShimDma {
        arg: 1,
        direction: S2MM,
        bd: 1,
        ..from
    };
    txn.copy(&from, 0, BYTES, &DmaOptions::default())?;
    txn.copy(&to, 0, BYTES, &DmaOptions::default())?;
    txn.wait(to.tile, S2MM, 0)?;
    let code = txn.code();
    println!("control code: {} ops, {} bytes", txn.count(), code.len());

    // Load (firmware and code into DEV buffers, CONFIG_CU, a debug buffer,
    // a command buffer) and run once.
    let pdi = [0u8; 64];
    let program = ctx.load(&Kernel {
        pdi: &pdi,
        ctrl: &code,
    })?;
    program.run(&[OPCODE, input.at, output.at], &[input, output])?;
    let back = ctx.download(&output, u64::from(BYTES), 0)?;
    println!("ran: output buffer read back, {} bytes", back.len());

    // What the driver saw.
    let sent = dev.submissions();
    let run = sent.last().ok_or("no command was submitted")?;
    println!(
        "EXEC_CMD: context {}, command buffer {}, buffers {:?}, point {}, packet {} bytes",
        run.hwctx,
        run.cmd,
        run.bos,
        run.point,
        run.packet.len()
    );
    assert!(run.untouched.is_empty(), "every page was written first");
    assert_eq!(dev.synced_bytes(input.handle).as_deref(), Some(&data[..]));
    println!("calls: {}", dev.call_names().join(" "));
    ctx.close()?;
    Ok(())
}
