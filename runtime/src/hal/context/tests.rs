use super::*;
use crate::hal::device::HeapSlot;
use crate::hal::fake::{Call, FakeDevice, FakeMap};
use crate::hal::txn::{tile, DmaOptions, ShimDma, TxnBuilder, MM2S, S2MM};
use loom_targets::xdna::elf::{ArgKind, Artifact, Entry, EntryArg, Patch, PatchSchema};
use rustix::io::Errno;

const PDI: &[u8] = b"a firmware image, padded to words..";

fn strix() -> &'static loom_targets::DeviceProfile {
    &loom_targets::profiles()[0]
}

fn config() -> ContextConfig {
    ContextConfig::columns(&FakeDevice::of_profile(strix()).metadata, 4)
}

fn kernel(ctrl: &[u8]) -> Kernel<'_> {
    Kernel { pdi: PDI, ctrl }
}

/// Runs `check` on a context opened on a fresh fake device.
fn opened(check: impl FnOnce(&FakeDevice, Context<'_, FakeDevice>)) {
    let dev = FakeDevice::new();
    check(&dev, Context::open(&dev, config()).unwrap());
}

/// Runs `check` on `insts()`, loaded in an `opened` context.
fn loaded(
    check: impl FnOnce(&FakeDevice, &Context<'_, FakeDevice>, Program<'_, FakeDevice>, &[u8]),
) {
    opened(|dev, ctx| {
        let code = insts();
        let p = ctx.load(&kernel(&code)).unwrap();
        check(dev, &ctx, p, &code);
    });
}

/// mlir-aie-style control code: input from argument 0, output to
/// argument 1, wait for the output.
fn insts() -> Vec<u8> {
    let mut b = TxnBuilder::new(strix()).unwrap();
    let input = ShimDma {
        arg: 0,
        direction: MM2S,
        tile: tile(0, 0).unwrap(),
        bd: 0,
        channel: 0,
    };
    let output = ShimDma {
        arg: 1,
        direction: S2MM,
        bd: 1,
        ..input
    };
    b.copy(&input, 0, 256, &DmaOptions::default()).unwrap();
    b.copy(&output, 0, 256, &DmaOptions::default()).unwrap();
    b.wait(output.tile, S2MM, 0).unwrap();
    b.code()
}

fn artifact(loadable: bool) -> Artifact {
    Artifact {
        profile: strix().name.clone(),
        columns: 1,
        ctrltext: insts(),
        patches: vec![],
        entries: vec![Entry {
            name: "scale".into(),
            args: vec![EntryArg {
                name: "data".into(),
                kind: ArgKind::Buffer,
            }],
        }],
        tile_images: vec![],
        pdis: vec![],
        device_loadable: loadable,
        not_loadable_reason: (!loadable).then(|| "untested encodings".to_string()),
        caveat: None,
    }
}

/// A little-endian ELF32 with the given (name, type, bytes) sections
/// after the null one, and `.shstrtab` last: what XRT's loaders read.
fn elf32(sections: &[(&str, u32, &[u8])]) -> Vec<u8> {
    let mut names = vec![0u8];
    let mut name_at = vec![];
    for (name, _, _) in sections.iter().chain([(".shstrtab", 3, &[][..])].iter()) {
        name_at.push(names.len() as u32);
        names.extend_from_slice(name.as_bytes());
        names.push(0);
    }
    let mut out = vec![0u8; 52];
    out[..8].copy_from_slice(&[0x7f, b'E', b'L', b'F', 1, 1, 1, 0x45]);
    out[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    out[20..24].copy_from_slice(&1u32.to_le_bytes());
    out[40..42].copy_from_slice(&52u16.to_le_bytes());
    let mut placed = vec![];
    for (_, _, bytes) in sections {
        placed.push((out.len() as u32, bytes.len() as u32));
        out.extend_from_slice(bytes);
    }
    placed.push((out.len() as u32, names.len() as u32));
    out.extend_from_slice(&names);
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
    let shoff = out.len() as u32;
    out.extend_from_slice(&[0u8; 40]); // the null section
    let kinds = sections.iter().map(|s| s.1).chain([3]);
    for ((kind, (offset, size)), name) in kinds.zip(&placed).zip(&name_at) {
        let mut h = [0u8; 40];
        h[0..4].copy_from_slice(&name.to_le_bytes());
        h[4..8].copy_from_slice(&kind.to_le_bytes());
        h[16..20].copy_from_slice(&offset.to_le_bytes());
        h[20..24].copy_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&h);
    }
    let count = sections.len() as u16 + 2;
    out[32..36].copy_from_slice(&shoff.to_le_bytes());
    out[46..48].copy_from_slice(&40u16.to_le_bytes());
    out[48..50].copy_from_slice(&count.to_le_bytes());
    out[50..52].copy_from_slice(&(count - 1).to_le_bytes());
    out
}

fn kernel_error(call: &'static str, kernel: &'static str, errno: Errno) -> ContextError {
    ContextError {
        call,
        kind: ErrorKind::Kernel(HalError::new(kernel, errno.raw_os_error())),
    }
}

/// A device whose GET_BO_INFO places DEV buffers past the heap.
struct Misplacing(FakeDevice);

impl Device for Misplacing {
    type Map = FakeMap;
    fn query(&self, param: u32, size: usize) -> Result<Vec<u8>, HalError> {
        self.0.query(param, size)
    }
    fn heap_slot(&self) -> &HeapSlot<FakeMap> {
        self.0.heap_slot()
    }
    fn create_hwctx(&self, q: &QosInfo, opc: u32, tiles: u32) -> Result<Hwctx, HalError> {
        self.0.create_hwctx(q, opc, tiles)
    }
    fn destroy_hwctx(&self, hwctx: u32) -> Result<(), HalError> {
        self.0.destroy_hwctx(hwctx)
    }
    fn config_cu(&self, hwctx: u32, cus: &[CuConfig]) -> Result<(), HalError> {
        self.0.config_cu(hwctx, cus)
    }
    fn assign_debug_bo(&self, hwctx: u32, bo: u32) -> Result<(), HalError> {
        self.0.assign_debug_bo(hwctx, bo)
    }
    fn create_bo(&self, size: u64, kind: BoKind) -> Result<u32, HalError> {
        self.0.create_bo(size, kind)
    }
    fn bo_info(&self, bo: u32) -> Result<BoInfo, HalError> {
        let mut info = self.0.bo_info(bo)?;
        if info.map_offset == u64::MAX {
            info.vaddr += HEAP_SIZE;
        }
        Ok(info)
    }
    fn sync_bo(&self, bo: u32, d: SyncDirection, at: u64, n: u64) -> Result<(), HalError> {
        self.0.sync_bo(bo, d, at, n)
    }
    fn exec_cmd(&self, hwctx: u32, cmd: u32, bos: &[u32]) -> Result<u64, HalError> {
        self.0.exec_cmd(hwctx, cmd, bos)
    }
    fn wait_syncobj(&self, s: u32, point: u64, t: Duration) -> Result<(), HalError> {
        self.0.wait_syncobj(s, point, t)
    }
    fn map_bo(&self, info: &BoInfo, len: usize, align: usize) -> Result<FakeMap, HalError> {
        self.0.map_bo(info, len, align)
    }
}

#[test]
fn a_buffer_outside_the_heap_mapping_is_refused() {
    let dev = Misplacing(FakeDevice::new());
    let ctx = Context::open(&dev, config()).unwrap();
    let e = ctx.load(&kernel(&insts())).err().unwrap();
    let vaddr = ctx.heap().1 + HEAP_SIZE;
    assert_eq!(
        e,
        ContextError {
            call: "load",
            kind: ErrorKind::OutsideHeap {
                // The firmware's, after the heap (1), the context and
                // its syncobj.
                bo: 4,
                vaddr,
                size: PDI.len() as u64
            }
        }
    );
    assert!(
        e.to_string().contains("outside the mapped device heap"),
        "{e}"
    );
    // Nothing was written or synced for it.
    assert_eq!(dev.0.call_names().last(), Some(&"GET_BO_INFO"));
    assert_eq!(dev.0.aie_version(), dev.aie_version());
    assert!(dev.firmware_version().is_ok() && dev.aie_metadata().is_ok());
}

#[test]
fn the_config_asks_for_the_columns_core_tiles() {
    let c = config();
    assert_eq!((c.max_opc, c.num_tiles), (2048, 16));
    assert_eq!(c.qos, QosInfo::default());
    // The core rows are the metadata's, not a constant.
    let mut metadata = FakeDevice::of_profile(strix()).metadata;
    metadata.core.row_count = 3;
    assert_eq!(ContextConfig::columns(&metadata, 2).num_tiles, 6);
    metadata.core.row_count = 0;
    assert_eq!(ContextConfig::columns(&metadata, 2).num_tiles, 0);
}

#[test]
fn open_maps_the_heap_before_the_context() {
    opened(|dev, ctx| {
        assert_eq!(
            dev.calls(),
            [
                Call::CreateBo {
                    size: HEAP_SIZE,
                    kind: BoKind::DevHeap
                },
                Call::BoInfo { bo: 1 },
                Call::MapBo {
                    bo: 1,
                    len: HEAP_SIZE as usize,
                    align: HEAP_ALIGN
                },
                Call::CreateHwctx {
                    qos: QosInfo::default(),
                    max_opc: 2048,
                    num_tiles: 16
                },
            ]
        );
        assert_eq!(ctx.heap().1 % HEAP_ALIGN as u64, 0);
        let second = ctx.more().unwrap();
        // Only a hardware context: the heap is shared.
        assert_eq!(dev.call_names()[4..], ["CREATE_HWCTX"]);
        assert_eq!(second.heap(), ctx.heap());
        assert_ne!(second.hwctx(), ctx.hwctx());
        let (first, other) = (ctx.hwctx().handle, second.hwctx().handle);
        second.close().unwrap();
        drop(ctx);
        // `close` and dropping an open context each destroy their own.
        assert_eq!(
            dev.calls()[5..],
            [
                Call::DestroyHwctx { hwctx: other },
                Call::DestroyHwctx { hwctx: first }
            ]
        );
    });
}

#[test]
fn without_the_heap_the_driver_refuses_the_context() {
    // What `open` avoids: the fake holds the driver's ENOENT.
    let dev = FakeDevice::new();
    let e = dev.create_hwctx(&QosInfo::default(), 2048, 16).unwrap_err();
    assert_eq!(e.errno, Errno::NOENT.raw_os_error());
}

#[test]
fn buffers_are_touched_zeroed_and_synced_each_way() {
    opened(|dev, ctx| {
        let size = 3 * 4096 + 1;
        let bo = ctx.buffer(size).unwrap();
        assert_eq!((bo.size, bo.kind, bo.offset), (size, BoKind::Shmem, 0));
        // Under PASID the driver has no device address for it before
        // its mmap; the NPU then uses this process's address.
        assert_eq!(bo.at, bo.host);
        assert_eq!(
            dev.calls()[4..],
            [
                Call::CreateBo {
                    size,
                    kind: BoKind::Shmem
                },
                Call::BoInfo { bo: bo.handle },
                Call::MapBo {
                    bo: bo.handle,
                    len: size as usize,
                    align: ANY_PAGE
                },
                Call::SyncBo {
                    bo: bo.handle,
                    direction: SyncDirection::ToDevice,
                    offset: 0,
                    size
                },
            ]
        );
        assert_eq!(dev.bo_bytes(bo.handle).unwrap(), vec![0; size as usize]);
        // SYNC_BO from byte 0 (the reference's request has no offset)
        // through the last byte written.
        ctx.upload(&bo, b"loom", 4096).unwrap();
        assert_eq!(
            dev.calls().last(),
            Some(&Call::SyncBo {
                bo: bo.handle,
                direction: SyncDirection::ToDevice,
                offset: 0,
                size: 4100
            })
        );
        let before = dev.calls().len();
        assert_eq!(ctx.download(&bo, 6, 4095).unwrap(), b"\0loom\0");
        // The caches are dropped before the copy out.
        assert_eq!(
            dev.calls()[before..],
            [Call::SyncBo {
                bo: bo.handle,
                direction: SyncDirection::FromDevice,
                offset: 0,
                size: 4101
            }]
        );
        let mut into = [0xFFu8; 4];
        ctx.download_into(&bo, &mut into, size - 4).unwrap();
        assert_eq!(into, [0; 4]);
        // Out of range, or a made-up buffer outside the heap: typed errors.
        let e = ctx.upload(&bo, b"xy", size - 1).unwrap_err();
        assert_eq!(e.call, "upload");
        assert!(matches!(e.kind, ErrorKind::Range(_)), "{e}");
        let e = ctx.download(&bo, u64::MAX, 0).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Range(_)), "{e}");
        assert_eq!(dev.bo_info(bo.handle).unwrap().xdna_addr, bo.at);
        let wild = Bo { offset: 1, ..bo };
        let e = ctx.download_into(&wild, &mut into, 0).unwrap_err();
        assert_eq!(e.call, "download_into");
        assert!(matches!(e.kind, ErrorKind::Range(_)), "{e}");
        let unmapped = Bo { handle: 99, ..bo };
        let e = ctx.upload(&unmapped, b"x", 0).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotMapped { bo: 99 });
        assert_eq!(
            e.to_string(),
            "upload: buffer 99 is not a buffer this context mapped"
        );
        let e = ctx.buffer(0).unwrap_err();
        assert_eq!((e.call, e.kind), ("buffer", ErrorKind::Empty("buffer")));
    });
}

#[test]
fn without_pasid_a_buffer_runs_at_the_address_the_driver_reports() {
    let mut dev = FakeDevice::of_profile(strix());
    dev.pasid = false;
    let ctx = Context::open(&dev, config()).unwrap();
    let bo = ctx.buffer(4096).unwrap();
    assert_eq!(bo.at, dev.bo_info(bo.handle).unwrap().xdna_addr);
    assert_ne!(bo.at, bo.host);
    ctx.upload(&bo, b"dma", 0).unwrap();
    assert_eq!(&dev.bo_bytes(bo.handle).unwrap()[..3], b"dma");
}

#[test]
fn load_follows_the_reference_order() {
    loaded(|dev, ctx, p, code| {
        assert!(!p.is_elf());
        assert_eq!(p.size(), code.len() as u64);
        let (pdi, ctrl, debug) = (p.firmware(), p.ctrl(), p.debug_bo());
        let hwctx = ctx.hwctx().handle;
        let sync = |bo: &Bo| Call::SyncBo {
            bo: bo.handle,
            direction: SyncDirection::ToDevice,
            offset: 0,
            size: bo.size,
        };
        let dev_bo = |bo: &Bo| Call::CreateBo {
            size: bo.size,
            kind: BoKind::Dev,
        };
        assert_eq!(
            dev.calls()[4..],
            [
                dev_bo(&pdi),
                Call::BoInfo { bo: pdi.handle },
                sync(&pdi),
                dev_bo(&ctrl),
                Call::BoInfo { bo: ctrl.handle },
                sync(&ctrl),
                Call::ConfigCu {
                    hwctx,
                    cus: vec![CuConfig {
                        cu_bo: pdi.handle,
                        cu_func: 0,
                        pad: [0; 3]
                    }]
                },
                dev_bo(&debug),
                Call::BoInfo { bo: debug.handle },
                sync(&debug),
                Call::AssignDebugBo {
                    hwctx,
                    bo: debug.handle
                },
                Call::CreateBo {
                    size: COMMAND_SIZE,
                    kind: BoKind::Cmd
                },
                Call::BoInfo { bo: p.command().bo },
                Call::MapBo {
                    bo: p.command().bo,
                    len: COMMAND_SIZE as usize,
                    align: ANY_PAGE
                },
            ]
        );
        // The images are where the device reads them.
        assert_eq!(ctx.download(&pdi, PDI.len() as u64, 0).unwrap(), PDI);
        assert_eq!(ctx.download(&ctrl, ctrl.size, 0).unwrap(), code);
        // The driver configures a context's CU once: a second kernel needs
        // `another` or another context.
        let e = ctx.load(&kernel(code)).err().unwrap();
        assert_eq!(e, kernel_error("load", "CONFIG_HWCTX", Errno::INVAL));
    });
}

#[test]
fn an_instruction_list_runs_as_a_start_cu_packet() {
    loaded(|dev, ctx, p, code| {
        let (a, b) = (ctx.buffer(256).unwrap(), ctx.buffer(256).unwrap());
        let args = [3, a.at, b.at];
        p.run(&args, &[a, b]).unwrap();
        let sent = dev.submissions();
        assert_eq!(sent.len(), 1);
        let expected = start_packet(p.ctrl().at, code.len() as u64, &args).unwrap();
        assert_eq!(sent[0].packet, expected);
        assert_eq!(sent[0].bos, [p.ctrl().handle, a.handle, b.handle]);
        assert_eq!((sent[0].hwctx, sent[0].point), (ctx.hwctx().handle, 1));
        assert!(sent[0].untouched.is_empty());
        // Submit, then the wait on the context's syncobj for that point.
        let calls = dev.calls();
        assert_eq!(
            calls[calls.len() - 2..],
            [
                Call::ExecCmd {
                    hwctx: ctx.hwctx().handle,
                    cmd: p.command().bo,
                    bos: vec![p.ctrl().handle, a.handle, b.handle]
                },
                Call::WaitSyncobj {
                    syncobj: ctx.hwctx().syncobj,
                    point: 1,
                    timeout: config().timeout
                },
            ]
        );
        assert_eq!(p.command().state(), Ok(ErtState::Completed));
        assert_ne!(p.command().at(), 0);
        // A packet that cannot be built is refused before EXEC_CMD.
        let e = p.run(&[], &[]).unwrap_err();
        assert_eq!(
            e,
            ContextError {
                call: "run",
                kind: ErrorKind::Packet(PacketError::NoOpcode)
            }
        );
        assert_eq!(dev.submissions().len(), 1);
    });
}

#[test]
fn a_buffer_not_made_by_buffer_is_seen_untouched() {
    // What `buffer` prevents: a DEV buffer whose pages were never
    // written goes to the device with pages the NPU cannot write.
    loaded(|dev, ctx, p, _| {
        let raw = dev.create_bo(8192, BoKind::Dev).unwrap();
        let unmapped = dev.create_bo(8192, BoKind::Shmem).unwrap();
        let touched = ctx.buffer(8192).unwrap();
        let mut fake = touched;
        fake.handle = raw;
        let mut other = touched;
        other.handle = unmapped;
        p.run(&[3, 0, 0], &[touched, fake, other]).unwrap();
        assert_eq!(dev.submissions()[0].untouched, [raw, unmapped]);
    });
}

#[test]
fn commands_in_flight_finish_in_order() {
    loaded(|dev, ctx, p, _| {
        let second = ctx.command().unwrap();
        let a = ctx.buffer(256).unwrap();
        let one = p.submit(p.command(), &[3, a.at], &[a]).unwrap();
        let two = p.submit(&second, &[3, a.at], &[a]).unwrap();
        assert_eq!((one, two), (1, 2));
        // Before the wait the headers still say NEW: the state is only read
        // after the syncobj reaches the point.
        assert_eq!(p.command().state(), Ok(ErtState::New));
        assert_eq!(second.state(), Ok(ErtState::New));
        ctx.finish(two, &[p.command(), &second]).unwrap();
        assert_eq!(second.state(), Ok(ErtState::Completed));
        assert_eq!(dev.call_names().last(), Some(&"SYNCOBJ_TIMELINE_WAIT"));
        // A point never submitted times out (ETIME) as a typed error.
        let e = ctx.finish(3, &[&second]).unwrap_err();
        assert_eq!(
            e,
            kernel_error("finish", "SYNCOBJ_TIMELINE_WAIT", Errno::TIME)
        );
    });
}

#[test]
fn a_failed_command_state_is_its_own_error() {
    let cases = [
        (ErtState::Error, "CommandError"),
        (ErtState::Abort, "CommandAborted"),
        (ErtState::Timeout, "CommandTimedOut"),
        (ErtState::NoResponse, "NotCompleted"),
    ];
    for (state, name) in cases {
        loaded(|dev, _, p, _| {
            dev.complete_next_with(state);
            let e = p.run(&[3], &[]).unwrap_err();
            let cmd = p.command().bo;
            let expected = match state {
                ErtState::Error => ErrorKind::CommandError { cmd },
                ErtState::Abort => ErrorKind::CommandAborted { cmd },
                ErtState::Timeout => ErrorKind::CommandTimedOut { cmd },
                other => ErrorKind::NotCompleted { cmd, state: other },
            };
            assert_eq!(
                e,
                ContextError {
                    call: "run",
                    kind: expected
                },
                "{name}"
            );
            // The next run completes again.
            p.run(&[3], &[]).unwrap();
        });
    }
}

#[test]
fn an_elf_runs_as_a_start_npu_packet() {
    opened(|dev, ctx| {
        let file = elf::write(&artifact(true)).unwrap();
        let p = ctx.load(&kernel(&file)).unwrap();
        assert!(p.is_elf());
        assert_eq!(ctx.download(&p.ctrl(), p.size(), 0).unwrap(), insts());
        let data = ctx.buffer(256).unwrap();
        p.run(&[data.at], &[data]).unwrap();
        let expected = npu_packet(p.ctrl().at, p.size(), &[data.at]).unwrap();
        assert_eq!(dev.submissions()[0].packet, expected);
    });
}

#[test]
fn an_xdna_file_that_is_not_loadable_is_refused() {
    opened(|dev, ctx| {
        let file = elf::write(&artifact(false)).unwrap();
        let before = dev.calls().len();
        let e = ctx.load(&kernel(&file)).err().unwrap();
        assert_eq!(
            e,
            ContextError {
                call: "load",
                kind: ErrorKind::Code(CodeError::NotLoadable("untested encodings".into()))
            }
        );
        assert_eq!(
            e.to_string(),
            "load: the .xdna file is not loadable: untested encodings"
        );
        // Refused before any buffer was made.
        assert_eq!(dev.calls().len(), before);
        // A damaged Loom file is an ELF error, not a crash.
        let file = elf::write(&artifact(true)).unwrap();
        for cut in 16..file.len() {
            assert!(
                matches!(
                    control_code(&file[..cut]),
                    Err(CodeError::Loom(_) | CodeError::Malformed(_))
                ),
                "cut at {cut}"
            );
        }
    });
}

#[test]
fn other_elfs_give_their_ctrltext() {
    let code = insts();
    let xrt = elf32(&[(".ctrltext", 1, &code), (".ctrldata", 1, b"data")]);
    assert_eq!(ctrl_text(&xrt), Ok(Some(code.clone())));
    assert_eq!(
        control_code(&xrt),
        Ok(ControlCode {
            bytes: code.clone(),
            elf: true
        })
    );
    // A `.xdna` file the xdna target's writer made gives back exactly
    // the control code put in.
    let file = elf::write(&artifact(true)).unwrap();
    assert_eq!(ctrl_text(&file), Ok(Some(insts())));
    // One with argument patches is refused: loaded unpatched its
    // descriptors would address 0.
    let mut patched = artifact(true);
    patched.patches.push(Patch {
        arg_index: 0,
        ctrltext_offset: 0,
        schema: PatchSchema::Address64,
        addend: 0,
    });
    assert_eq!(
        control_code(&elf::write(&patched).unwrap()),
        Err(CodeError::NeedsPatches(1))
    );
    // Not an ELF: none; an instruction list must be whole words.
    assert_eq!(ctrl_text(&code), Ok(None));
    assert_eq!(control_code(&[1, 2, 3]), Err(CodeError::NotWords(3)));
    assert_eq!(
        control_code(&elf32(&[(".text", 1, b"code")])),
        Err(CodeError::NoCtrlText)
    );
    assert_eq!(
        ctrl_text(&elf32(&[(".ctrltext", 8, &[])])),
        Err(CodeError::NoCtrlText)
    );
    let mut wide = xrt.clone();
    wide[4] = 2;
    assert_eq!(
        ctrl_text(&wide),
        Err(CodeError::NotElf32 { class: 2, data: 1 })
    );
    // Every truncation of the file fails typed, never by panicking.
    for cut in 4..xrt.len() {
        assert!(ctrl_text(&xrt[..cut]).is_err(), "cut at {cut}");
    }
    let mut wild = xrt.clone();
    wild[32..36].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(ctrl_text(&wild), Err(CodeError::Malformed(_))));
    // No section table at all.
    let mut bare = xrt.clone();
    bare[32..36].copy_from_slice(&0u32.to_le_bytes());
    assert_eq!(ctrl_text(&bare), Err(CodeError::NoCtrlText));
}

#[test]
fn code_replaces_in_place_and_grows() {
    loaded(|dev, ctx, mut p, code| {
        let first = p.ctrl();
        let shorter = &code[..code.len() - 16];
        let before = dev.calls().len();
        p.code(shorter).unwrap();
        assert_eq!(p.ctrl(), first);
        assert_eq!(p.size(), shorter.len() as u64);
        assert_eq!(dev.call_names()[before..], ["SYNC_BO"]);
        let mut longer = code.to_vec();
        longer.extend_from_slice(&code[16..]);
        p.code(&longer).unwrap();
        assert_ne!(p.ctrl().handle, first.handle);
        assert_eq!(p.ctrl().size, longer.len() as u64);
        assert_eq!(ctx.download(&p.ctrl(), p.size(), 0).unwrap(), longer);
        // An ELF switches the program to START_NPU packets.
        p.code(&elf::write(&artifact(true)).unwrap()).unwrap();
        assert!(p.is_elf());
        let e = p.code(&[0; 3]).unwrap_err();
        assert_eq!(
            e,
            ContextError {
                call: "code",
                kind: ErrorKind::Code(CodeError::NotWords(3))
            }
        );
        assert_eq!(
            p.code(&[]).unwrap_err().kind,
            ErrorKind::Empty("control code")
        );
    });
}

#[test]
fn another_program_shares_the_firmware_and_context() {
    loaded(|dev, _, p, code| {
        let before = dev.calls().len();
        let q = p.another(&code[..code.len() - 16]).unwrap();
        assert!(!dev.call_names()[before..].contains(&"CONFIG_HWCTX"));
        assert_eq!((q.firmware(), q.debug_bo()), (p.firmware(), p.debug_bo()));
        assert_ne!(q.ctrl().handle, p.ctrl().handle);
        assert_ne!(q.command().bo, p.command().bo);
        q.run(&[3], &[]).unwrap();
        p.run(&[3], &[]).unwrap();
        let sent = dev.submissions();
        assert_eq!(sent[0].bos, [q.ctrl().handle]);
        assert_eq!((sent[0].point, sent[1].point), (1, 2));
        assert_eq!(p.another(&[1]).err().map(|e| e.call), Some("another"));
    });
}

#[test]
fn the_debug_buffer_is_read_after_a_sync_from_the_device() {
    loaded(|dev, _, p, _| {
        assert_eq!(p.debug().unwrap(), vec![0; DEBUG_SIZE as usize]);
        assert_eq!(
            dev.calls().last(),
            Some(&Call::SyncBo {
                bo: p.debug_bo().handle,
                direction: SyncDirection::FromDevice,
                offset: 0,
                size: DEBUG_SIZE
            })
        );
        dev.fail_next("SYNC_BO", Errno::IO);
        assert_eq!(
            p.debug().unwrap_err(),
            kernel_error("debug", "SYNC_BO", Errno::IO)
        );
    });
}

/// Every library call once, in an order a user would make them; `marks`
/// gets each call's name and the kernel call count after it.
fn scenario(dev: &FakeDevice, marks: &mut Vec<(&'static str, usize)>) -> Result<(), ContextError> {
    let mut mark = |name| marks.push((name, dev.calls().len()));
    let ctx = Context::open(dev, config())?;
    mark("open");
    let other = ctx.more()?;
    mark("more");
    other.close()?;
    mark("close");
    let bo = ctx.buffer(4096)?;
    mark("buffer");
    ctx.upload(&bo, &[1, 2, 3, 4], 0)?;
    mark("upload");
    let code = insts();
    let mut p = ctx.load(&kernel(&code))?;
    mark("load");
    let cmd = ctx.command()?;
    mark("command");
    let point = p.submit(&cmd, &[3, bo.at], &[bo])?;
    mark("submit");
    ctx.finish(point, &[&cmd])?;
    mark("finish");
    p.run(&[3, bo.at], &[bo])?;
    mark("run");
    let mut longer = code.clone();
    longer.extend_from_slice(&code[16..]);
    p.code(&longer)?;
    mark("code");
    p.another(&code)?;
    mark("another");
    ctx.download(&bo, 4, 0)?;
    mark("download");
    let mut into = [0u8; 4];
    ctx.download_into(&bo, &mut into, 0)?;
    mark("download_into");
    p.debug()?;
    mark("debug");
    drop(p);
    ctx.close()?;
    mark("close");
    Ok(())
}

/// Each kernel call of the scenario, failing in turn, surfaces as a
/// typed error naming it and the library call it was made for.
#[test]
fn every_failed_kernel_call_is_a_typed_error() {
    let dev = FakeDevice::new();
    let mut marks = vec![];
    scenario(&dev, &mut marks).unwrap();
    let names = dev.call_names();
    assert_eq!(marks.last().map(|m| m.1), Some(names.len()));
    for (index, name) in names.iter().enumerate() {
        let dev = FakeDevice::new();
        dev.fail_at(index, Errno::IO);
        let e = scenario(&dev, &mut vec![]).unwrap_err();
        let phase = marks.iter().find(|(_, end)| index < *end).unwrap().0;
        assert_eq!(e, kernel_error(phase, name, Errno::IO), "call {index}");
        assert!(e
            .to_string()
            .starts_with(&format!("{phase}: {name} failed: EIO")));
    }
    // Every phase made a kernel call, so each was failed once above.
    assert_eq!(marks.len(), 16);
    assert!(marks.windows(2).all(|w| w[0].1 < w[1].1), "{marks:?}");
    assert!(marks[0].1 > 0);
}

/// The driver keeps a descriptor's heap until the descriptor closes and
/// refuses a second one (EBUSY; xdna-driver `amdxdna_drm_create_dev_heap_bo`),
/// so an `open` that fails after making the heap leaves it to the retry, and
/// the retry, on the same descriptor, uses it: one heap, made and mapped
/// once, whichever later call failed.
#[test]
fn a_failed_open_leaves_its_heap_to_the_retry() {
    for failing in ["GET_BO_INFO", "mmap", "CREATE_HWCTX"] {
        let dev = FakeDevice::new();
        dev.fail_next(failing, Errno::NOMEM);
        let e = Context::open(&dev, config()).err().unwrap();
        assert_eq!(e, kernel_error("open", failing, Errno::NOMEM));
        let ctx = Context::open(&dev, config()).unwrap();
        let heaps = dev
            .calls()
            .iter()
            .filter(|c| {
                matches!(
                    c,
                    Call::CreateBo {
                        kind: BoKind::DevHeap,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(heaps, 1, "{failing}: {:?}", dev.call_names());
        let maps = dev.call_names().iter().filter(|n| **n == "mmap").count();
        // Mapped once: a failed mmap is retried, a made mapping kept.
        let want = if failing == "mmap" { 2 } else { 1 };
        assert_eq!(maps, want, "{failing}: {:?}", dev.call_names());
        // The retried context works on that heap.
        let p = ctx.load(&kernel(&insts())).unwrap();
        p.run(&[3], &[]).unwrap();
        ctx.close().unwrap();
    }
}

/// A new context on the descriptor after `close` uses the heap the first
/// one made, and its buffers still live in it.
#[test]
fn a_second_open_on_one_descriptor_reuses_its_heap() {
    let dev = FakeDevice::new();
    let first = Context::open(&dev, config()).unwrap();
    let heap = first.heap();
    let a = first.buffer(64).unwrap();
    first.upload(&a, b"kept", 0).unwrap();
    first.close().unwrap();
    let second = Context::open(&dev, config()).unwrap();
    assert_eq!(second.heap(), heap);
    let p = second.load(&kernel(&insts())).unwrap();
    p.run(&[3], &[]).unwrap();
    assert_eq!(&dev.synced_bytes(a.handle).unwrap()[..4], b"kept");
    let heaps = dev
        .calls()
        .into_iter()
        .filter(|c| {
            matches!(
                c,
                Call::CreateBo {
                    kind: BoKind::DevHeap,
                    ..
                }
            )
        })
        .count();
    assert_eq!(heaps, 1);
}
