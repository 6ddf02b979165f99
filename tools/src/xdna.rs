//! The `.xdna` paths the tools share: compiling a module to an artifact
//! (the whole pipeline, then the xdna back end), and turning an artifact's
//! tile images into the program the simulator's cores run.

use crate::Failure;
use loom_dialects::ir;
use loom_targets::xdna::elf::{self, Artifact};

/// The program of an artifact's tile images (their Low IR), for the cores
/// of the array simulator. Each image is read on its own, so that a
/// location names the artifact (`name`), the image's section and a line of
/// that image; their ops then share one module.
pub fn tile_program(
    session: &crate::Session,
    artifact: &Artifact,
    name: &str,
) -> Result<loom_runtime::interp::Program, Failure> {
    // An artifact without cores has no images: an empty program.
    let merged = session.parse(b"", name)?;
    let body = ir::body(merged.module.as_operation().to_raw());
    for image in &artifact.tile_images {
        let place = format!("{name}, {}", elf::tile_section_name(image));
        let parsed = session.parse(&image.bytes, &place)?;
        for op in ir::ops_of(ir::body(parsed.module.as_operation().to_raw())) {
            ir::move_to_end(op, body);
        }
    }
    loom_translate::translate(merged.module.as_operation().to_raw()).map_err(Failure::from)
}

/// The `.xdna` bytes `module` compiles to for `root` on `target`
/// (TARGET:PROFILE) with the `config` values and worker images in the form
/// `worker_code`: the whole compile pipeline, then the artifact (what
/// loom-test's devices and the simulator bench run).
pub fn compile(
    session: &crate::Session,
    module: &mut melior::ir::Module,
    root: &str,
    target: &str,
    config: &[(String, String)],
    worker_code: loom_xdna_backend::WorkerCode,
) -> Result<Vec<u8>, Failure> {
    let request = crate::compile::Request {
        root,
        target: Some(target),
        config,
        lower: true,
    };
    let steps = crate::compile::plan(&request, module, crate::compile::Stage::of(module))
        .map_err(|m| crate::error(crate::tool_name(), m))?;
    crate::compile::run(session, module, &steps, &mut |_, _| Ok(()))?;
    let options = loom_xdna_backend::Options { worker_code };
    let built = loom_xdna_backend::emit(module.as_operation().to_raw(), root, &options)
        .map_err(Failure::from)?;
    built
        .elf()
        .map_err(|e| crate::error(crate::tool_name(), format!("writing the .xdna ELF: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Session;
    use loom_runtime::hal::fake::Call;
    use loom_runtime::hal::invoke::{InvokeError, DDR_AIE_ADDR_OFFSET};
    use loom_runtime::hal::packet::preempt_elf_packet;
    use loom_runtime::hal::{Device, FakeDevice};
    use loom_targets::xdna::txn::{Txn, TxnOp};
    use loom_xdna_backend::NOT_LOADABLE;
    use std::time::Duration;

    /// The walkthrough's artifact with `worker_code` images, compiled for
    /// Strix at K = 512 and read back from its bytes.
    fn walkthrough_artifact(worker_code: loom_xdna_backend::WorkerCode) -> Artifact {
        loom_passes::register_all();
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/gated-projection.loom"
        );
        let session = Session::new();
        let source = std::fs::read(path).unwrap();
        let mut module = session.parse(&source, path).unwrap().module;
        let config = vec![("ffn_gate_up.input_size".to_string(), "512".to_string())];
        let bytes = compile(
            &session,
            &mut module,
            "@ffn_gate_up_quadratic_bf16",
            "amd.xdna.aie2p:amd.xdna.strix.17f0_10",
            &config,
            worker_code,
        )
        .unwrap();
        elf::read(&bytes).unwrap()
    }

    fn word(code: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(code[at..at + 4].try_into().unwrap())
    }

    /// The compiler's real artifact through the HAL on the recording fake:
    /// with Low IR images it is refused with its reason before any device
    /// call; with machine code (the default) it is device-loadable and runs
    /// without a firmware image (it carries its PDIs): its entry's
    /// arguments become buffers, each of its patches lands on a shim
    /// descriptor it wrote, each LOADPDI holds the address of a buffer
    /// holding its PDI, and START_NPU_PREEMPT_ELF carries the code.
    #[test]
    fn the_walkthrough_artifact_runs_through_the_hal() {
        let strix = &loom_targets::profiles()[0];
        let dev = FakeDevice::of_profile(strix);
        let args = vec![vec![1u8; 1024], vec![2u8; 2048], vec![0u8; 4]];
        let timeout = Duration::from_secs(1);
        let run = |artifact: &Artifact, firmware: &[u8]| {
            loom_runtime::hal::run_artifact(&dev, strix, artifact, firmware, args.clone(), timeout)
        };
        let low_ir = walkthrough_artifact(loom_xdna_backend::WorkerCode::LowIr);
        let refused = run(&low_ir, &[]).unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!("the artifact is not device-loadable: {NOT_LOADABLE}")
        );
        assert!(dev.calls().is_empty());

        let artifact = walkthrough_artifact(loom_xdna_backend::WorkerCode::Machine);
        assert!(
            artifact.device_loadable,
            "{:?}",
            artifact.not_loadable_reason
        );
        let ids: Vec<u16> = artifact.pdis.iter().map(|p| p.id).collect();
        assert_eq!(ids, [0, 1]);
        // Its PDIs are its firmware: an image from the caller is refused.
        let both = run(&artifact, b"pdi image").unwrap_err();
        assert_eq!(both, InvokeError::FirmwareWithPdis { pdis: vec![0, 1] });
        assert!(dev.calls().is_empty());
        let out = run(&artifact, &[]).unwrap();
        // The fake NPU writes nothing: the buffers come back as they went.
        assert_eq!(out, args);
        let calls = dev.calls();
        assert!(!calls.iter().any(|c| matches!(c, Call::ConfigCu { .. })));
        let sent = dev.submissions();
        let [ctrl, input, weights, output] = sent[0].bos[..] else {
            panic!("{:?}", sent[0].bos);
        };
        let at = |bo| dev.bo_info(bo).unwrap().xdna_addr;
        let code = dev.synced_bytes(ctrl).unwrap();
        assert_eq!(code.len(), artifact.ctrltext.len());
        let packet = preempt_elf_packet(at(ctrl), code.len() as u64, at(input));
        assert_eq!(sent[0].packet, packet.unwrap());
        // One patch per shim descriptor, each on the argument its
        // DDR_PATCH names: words 1 and 2 now hold the buffer's address
        // plus the DDR offset (the compiler wrote address 0). Five: the
        // weights and the input are striped, a descriptor per lane.
        assert_eq!(artifact.patches.len(), 5);
        let buffers = [at(input), at(weights), at(output)];
        for p in &artifact.patches {
            let site = p.ctrltext_offset as usize;
            assert_eq!(word(&artifact.ctrltext, site + 4), 0);
            let expected =
                buffers[p.arg_index as usize] + u64::from(p.addend) + DDR_AIE_ADDR_OFFSET;
            assert_eq!(u64::from(word(&code, site + 4)), expected & 0xFFFF_FFFC);
            assert_eq!(u64::from(word(&code, site + 8) & 0xFFFF), expected >> 32);
        }
        let ops = Txn::decode(&code).unwrap().ops;
        let ddr_patches: Vec<u32> = ops
            .iter()
            .filter_map(|op| match op {
                TxnOp::DdrPatch { arg_index, .. } => Some(*arg_index),
                _ => None,
            })
            .collect();
        let mut patched: Vec<u32> = artifact.patches.iter().map(|p| p.arg_index).collect();
        patched.sort_unstable();
        let mut named = ddr_patches.clone();
        named.sort_unstable();
        assert_eq!(named, patched);
        // The code opens with LOADPDI 0 and ends with LOADPDI 1, each at
        // the device address of a buffer that holds its PDI.
        let loads: Vec<(u16, u64)> = ops
            .iter()
            .filter_map(|op| match op {
                TxnOp::LoadPdi { id, address, .. } => Some((*id, *address)),
                _ => None,
            })
            .collect();
        assert!(matches!(ops.first(), Some(TxnOp::LoadPdi { id: 0, .. })));
        assert!(matches!(ops.last(), Some(TxnOp::LoadPdi { id: 1, .. })));
        let holding = |address: u64| {
            calls.iter().find_map(|c| match c {
                Call::BoInfo { bo } if at(*bo) == address => dev.synced_bytes(*bo),
                _ => None,
            })
        };
        for (id, address) in loads {
            let pdi = artifact.pdis.iter().find(|p| p.id == id).unwrap();
            assert_eq!(holding(address), Some(pdi.bytes.clone()), "LOADPDI {id}");
        }
    }
}
