//! The bytes the real device passes the kernel, request by request.
//!
//! `XdnaDevice::over` puts a recording `Syscall` under the audited layer,
//! so each test sees the raw request number, the argument's bytes and the
//! blocks the kernel reads through the addresses in them, exactly as the
//! kernel would. Each is checked against the field offsets of the linux uapi
//! header, written out here by hand from the header (not from `uapi.rs`'s
//! structs, whose layout is what is under test):
//! - torvalds/linux @03c318a0 `include/uapi/drm/amdxdna_accel.h`: every
//!   amdxdna struct below (the same offsets in amd/xdna-driver @856409ca
//!   `include/uapi/drm/amdxdna_accel.h`);
//! - torvalds/linux @c87866ed `include/uapi/drm/drm.h`:
//!   `struct drm_syncobj_timeline_wait` with its `deadline_nsec` tail.
//!
//! A field the device puts at the wrong offset, or two it swaps, changes
//! the bytes: `a_swapped_field_fails_the_byte_test` shows the check naming
//! both fields of such a swap.

use super::context::{Context, ContextConfig};
use super::device::{BoInfo, BoKind, Device, SyncDirection, XdnaDevice};
use super::ioctl::{monotonic_ns, RawIoctl, Syscall};
use super::uapi::*;
use rustix::io::Errno;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

/// A C struct as its header lays it out: each field's name, byte offset
/// and size.
struct Layout {
    name: &'static str,
    size: usize,
    fields: &'static [(&'static str, usize, usize)],
}

// linux @03c318a0 include/uapi/drm/amdxdna_accel.h, struct by struct.
const CREATE_HWCTX: Layout = Layout {
    name: "amdxdna_drm_create_hwctx",
    size: 56,
    fields: &[
        ("ext", 0, 8),
        ("ext_flags", 8, 8),
        ("qos_p", 16, 8),
        ("umq_bo", 24, 4),
        ("log_buf_bo", 28, 4),
        ("max_opc", 32, 4),
        ("num_tiles", 36, 4),
        ("mem_size", 40, 4),
        ("umq_doorbell", 44, 4),
        ("handle", 48, 4),
        ("syncobj_handle", 52, 4),
    ],
};
const QOS_INFO: Layout = Layout {
    name: "amdxdna_qos_info",
    size: 24,
    fields: &[
        ("gops", 0, 4),
        ("fps", 4, 4),
        ("dma_bandwidth", 8, 4),
        ("latency", 12, 4),
        ("frame_exec_time", 16, 4),
        ("priority", 20, 4),
    ],
};
const DESTROY_HWCTX: Layout = Layout {
    name: "amdxdna_drm_destroy_hwctx",
    size: 8,
    fields: &[("handle", 0, 4), ("pad", 4, 4)],
};
const CONFIG_HWCTX: Layout = Layout {
    name: "amdxdna_drm_config_hwctx",
    size: 24,
    fields: &[
        ("handle", 0, 4),
        ("param_type", 4, 4),
        ("param_val", 8, 8),
        ("param_val_size", 16, 4),
        ("pad", 20, 4),
    ],
};
/// `amdxdna_hwctx_param_config_cu` with two `amdxdna_cu_config`s
/// (`cu_configs` from byte 8, 8 bytes each).
const CONFIG_CU_2: Layout = Layout {
    name: "amdxdna_hwctx_param_config_cu",
    size: 24,
    fields: &[
        ("num_cus", 0, 2),
        ("pad", 2, 6),
        ("cu_configs[0].cu_bo", 8, 4),
        ("cu_configs[0].cu_func", 12, 1),
        ("cu_configs[0].pad", 13, 3),
        ("cu_configs[1].cu_bo", 16, 4),
        ("cu_configs[1].cu_func", 20, 1),
        ("cu_configs[1].pad", 21, 3),
    ],
};
const CREATE_BO: Layout = Layout {
    name: "amdxdna_drm_create_bo",
    size: 32,
    fields: &[
        ("flags", 0, 8),
        ("vaddr", 8, 8),
        ("size", 16, 8),
        ("type", 24, 4),
        ("handle", 28, 4),
    ],
};
const GET_BO_INFO: Layout = Layout {
    name: "amdxdna_drm_get_bo_info",
    size: 48,
    fields: &[
        ("ext", 0, 8),
        ("ext_flags", 8, 8),
        ("handle", 16, 4),
        ("pad", 20, 4),
        ("map_offset", 24, 8),
        ("vaddr", 32, 8),
        ("xdna_addr", 40, 8),
    ],
};
const SYNC_BO: Layout = Layout {
    name: "amdxdna_drm_sync_bo",
    size: 24,
    fields: &[
        ("handle", 0, 4),
        ("direction", 4, 4),
        ("offset", 8, 8),
        ("size", 16, 8),
    ],
};
const EXEC_CMD: Layout = Layout {
    name: "amdxdna_drm_exec_cmd",
    size: 56,
    fields: &[
        ("ext", 0, 8),
        ("ext_flags", 8, 8),
        ("hwctx", 16, 4),
        ("type", 20, 4),
        ("cmd_handles", 24, 8),
        ("args", 32, 8),
        ("cmd_count", 40, 4),
        ("arg_count", 44, 4),
        ("seq", 48, 8),
    ],
};
const GET_INFO: Layout = Layout {
    name: "amdxdna_drm_get_info",
    size: 16,
    fields: &[("param", 0, 4), ("buffer_size", 4, 4), ("buffer", 8, 8)],
};
// linux @c87866ed include/uapi/drm/drm.h.
const TIMELINE_WAIT: Layout = Layout {
    name: "drm_syncobj_timeline_wait",
    size: 48,
    fields: &[
        ("handles", 0, 8),
        ("points", 8, 8),
        ("timeout_nsec", 16, 8),
        ("count_handles", 24, 4),
        ("flags", 28, 4),
        ("first_signaled", 32, 4),
        ("pad", 36, 4),
        ("deadline_nsec", 40, 8),
    ],
};

/// The ioctl numbers as the headers define them: `DRM_IOWR(nr, struct)`,
/// direction 3 in bits 30-31, the struct's size in 16-29, 'd' in 8-15.
fn iowr(nr: u32, layout: &Layout) -> u32 {
    3 << 30 | (layout.size as u32) << 16 | u32::from(b'd') << 8 | nr
}

impl Layout {
    fn field(&self, name: &str) -> (usize, usize) {
        let &(_, at, size) = self
            .fields
            .iter()
            .find(|(n, _, _)| *n == name)
            .unwrap_or_else(|| panic!("{} has no field {name}", self.name));
        (at, size)
    }

    /// The struct's bytes with `values` in their fields (little-endian, the
    /// byte order of the NPU hosts, which the kernel reads) and zeroes
    /// elsewhere.
    fn bytes(&self, values: &[(&str, u64)]) -> Vec<u8> {
        let mut out = vec![0u8; self.size];
        for &(name, value) in values {
            let (at, size) = self.field(name);
            assert!(size == 8 || value >> (8 * size) == 0, "{name} = {value:#x}");
            out[at..at + size].copy_from_slice(&value.to_le_bytes()[..size]);
        }
        out
    }

    /// The value of field `name` in `bytes`.
    fn get(&self, bytes: &[u8], name: &str) -> u64 {
        let (at, size) = self.field(name);
        let mut word = [0u8; 8];
        word[..size].copy_from_slice(&bytes[at..at + size]);
        u64::from_le_bytes(word)
    }

    /// Whether `got` is `bytes(values)`, naming each field that differs.
    fn check(&self, got: &[u8], values: &[(&str, u64)]) -> Result<(), String> {
        if got.len() != self.size {
            return Err(format!(
                "{}: {} bytes, the header's struct has {}",
                self.name,
                got.len(),
                self.size
            ));
        }
        let want = self.bytes(values);
        let wrong: Vec<String> = self
            .fields
            .iter()
            .filter(|(_, at, size)| got[*at..at + size] != want[*at..at + size])
            .map(|(name, at, size)| {
                format!(
                    "{name} (bytes {at}..{}): {:02x?}, header wants {:02x?}",
                    at + size,
                    &got[*at..at + size],
                    &want[*at..at + size]
                )
            })
            .collect();
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(format!("{}: {}", self.name, wrong.join("; ")))
        }
    }

    fn assert(&self, got: &[u8], values: &[(&str, u64)]) {
        if let Err(e) = self.check(got, values) {
            panic!("{e}");
        }
    }

    /// Writes `value` into field `name` of `bytes`, as the kernel answers.
    fn put(&self, bytes: &mut [u8], name: &str, value: u64) {
        let (at, size) = self.field(name);
        bytes[at..at + size].copy_from_slice(&value.to_le_bytes()[..size]);
    }
}

/// One ioctl as the seam saw it.
#[derive(Clone, Debug)]
struct Captured {
    name: &'static str,
    number: u32,
    arg: Vec<u8>,
    /// Each block read through an address: the address and its bytes.
    reads: Vec<(u64, Vec<u8>)>,
    reply_len: Option<usize>,
}

#[derive(Default)]
struct Log {
    ioctls: Vec<Captured>,
    mmaps: Vec<(u64, usize, usize)>,
}

/// Answers as a driver would, at the header's offsets.
const HWCTX: u64 = 0x11;
const SYNCOBJ: u64 = 0x22;
const BO: u64 = 0x33;
const MAP_OFFSET: u64 = 0x1_0000_2000;
const XDNA_ADDR: u64 = 0x4000;
const SEQ: u64 = 0x55;

/// A `Syscall` that records every request and answers it as a driver
/// would, at the header's offsets (so the device's reading of the output
/// fields is checked too).
struct Recorder(Rc<RefCell<Log>>);

impl Syscall for Recorder {
    fn ioctl(&self, r: &mut RawIoctl<'_>) -> Result<(), Errno> {
        let captured = Captured {
            name: r.name(),
            number: r.number(),
            arg: r.arg().to_vec(),
            reads: r.reads().map(|(at, b)| (at, b.to_vec())).collect(),
            reply_len: None,
        };
        let number = r.number();
        let arg = r.arg_mut();
        if number == DRM_IOCTL_AMDXDNA_CREATE_HWCTX {
            CREATE_HWCTX.put(arg, "handle", HWCTX);
            CREATE_HWCTX.put(arg, "syncobj_handle", SYNCOBJ);
        } else if number == DRM_IOCTL_AMDXDNA_CREATE_BO {
            CREATE_BO.put(arg, "handle", BO);
        } else if number == DRM_IOCTL_AMDXDNA_GET_BO_INFO {
            GET_BO_INFO.put(arg, "map_offset", MAP_OFFSET);
            GET_BO_INFO.put(arg, "vaddr", INVALID_ADDR);
            GET_BO_INFO.put(arg, "xdna_addr", XDNA_ADDR);
        } else if number == DRM_IOCTL_AMDXDNA_EXEC_CMD {
            EXEC_CMD.put(arg, "seq", SEQ);
        }
        let mut captured = captured;
        if let Some(reply) = r.reply_mut() {
            captured.reply_len = Some(reply.len());
            for (i, b) in reply.iter_mut().enumerate() {
                *b = i as u8 + 1;
            }
        }
        self.0.borrow_mut().ioctls.push(captured);
        Ok(())
    }

    fn mmap(&self, offset: u64, len: usize, align: usize) -> Result<(), Errno> {
        self.0.borrow_mut().mmaps.push((offset, len, align));
        Ok(())
    }
}

fn recording() -> (XdnaDevice, Rc<RefCell<Log>>) {
    let log = Rc::new(RefCell::new(Log::default()));
    (XdnaDevice::over(Box::new(Recorder(log.clone()))), log)
}

/// The one ioctl `run` made.
fn only(log: &Rc<RefCell<Log>>) -> Captured {
    let log = log.borrow();
    assert_eq!(log.ioctls.len(), 1, "{:?}", log.ioctls);
    log.ioctls[0].clone()
}

fn u32s(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn create_hwctx_sends_the_qos_block_and_tile_count_at_the_header_offsets() {
    let (dev, log) = recording();
    let qos = QosInfo {
        gops: 1,
        fps: 2,
        dma_bandwidth: 3,
        latency: 4,
        frame_exec_time: 5,
        priority: 6,
    };
    let hwctx = dev.create_hwctx(&qos, 2048, 16).unwrap();
    assert_eq!(
        (hwctx.handle, hwctx.syncobj),
        (HWCTX as u32, SYNCOBJ as u32)
    );
    let c = only(&log);
    assert_eq!(
        (c.name, c.number),
        ("CREATE_HWCTX", iowr(0x40, &CREATE_HWCTX))
    );
    let (qos_at, qos_bytes) = &c.reads[0];
    CREATE_HWCTX.assert(
        &c.arg,
        &[("qos_p", *qos_at), ("max_opc", 2048), ("num_tiles", 16)],
    );
    QOS_INFO.assert(
        qos_bytes,
        &[
            ("gops", 1),
            ("fps", 2),
            ("dma_bandwidth", 3),
            ("latency", 4),
            ("frame_exec_time", 5),
            ("priority", 6),
        ],
    );
}

#[test]
fn destroy_hwctx_sends_the_handle() {
    let (dev, log) = recording();
    dev.destroy_hwctx(7).unwrap();
    let c = only(&log);
    assert_eq!(
        (c.name, c.number),
        ("DESTROY_HWCTX", iowr(0x41, &DESTROY_HWCTX))
    );
    DESTROY_HWCTX.assert(&c.arg, &[("handle", 7)]);
    assert!(c.reads.is_empty());
}

#[test]
fn config_cu_sends_the_cu_block_by_address_and_size() {
    let (dev, log) = recording();
    let cus = [
        CuConfig {
            cu_bo: 9,
            cu_func: 0,
            pad: [0; 3],
        },
        CuConfig {
            cu_bo: 10,
            cu_func: 1,
            pad: [0; 3],
        },
    ];
    dev.config_cu(5, &cus).unwrap();
    let c = only(&log);
    assert_eq!(
        (c.name, c.number),
        ("CONFIG_HWCTX", iowr(0x42, &CONFIG_HWCTX))
    );
    let (block_at, block) = &c.reads[0];
    CONFIG_HWCTX.assert(
        &c.arg,
        &[
            ("handle", 5),
            ("param_type", 0),
            ("param_val", *block_at),
            ("param_val_size", 24),
        ],
    );
    CONFIG_CU_2.assert(
        block,
        &[
            ("num_cus", 2),
            ("cu_configs[0].cu_bo", 9),
            ("cu_configs[0].cu_func", 0),
            ("cu_configs[1].cu_bo", 10),
            ("cu_configs[1].cu_func", 1),
        ],
    );
}

#[test]
fn assign_debug_bo_sends_the_bo_handle_as_the_value() {
    let (dev, log) = recording();
    dev.assign_debug_bo(5, 11).unwrap();
    let c = only(&log);
    assert_eq!(c.number, iowr(0x42, &CONFIG_HWCTX));
    CONFIG_HWCTX.assert(
        &c.arg,
        &[("handle", 5), ("param_type", 1), ("param_val", 11)],
    );
    assert!(c.reads.is_empty());
}

#[test]
fn create_bo_sends_the_size_and_type_and_reads_the_handle() {
    for (kind, raw) in [
        (BoKind::Shmem, 1),
        (BoKind::DevHeap, 2),
        (BoKind::Dev, 3),
        (BoKind::Cmd, 4),
    ] {
        let (dev, log) = recording();
        assert_eq!(dev.create_bo(0x3000, kind).unwrap(), BO as u32);
        let c = only(&log);
        assert_eq!((c.name, c.number), ("CREATE_BO", iowr(0x43, &CREATE_BO)));
        CREATE_BO.assert(&c.arg, &[("size", 0x3000), ("type", raw)]);
    }
}

#[test]
fn get_bo_info_sends_the_handle_and_reads_the_three_addresses() {
    let (dev, log) = recording();
    let info = dev.bo_info(12).unwrap();
    assert_eq!(
        info,
        BoInfo {
            handle: 12,
            map_offset: MAP_OFFSET,
            vaddr: INVALID_ADDR,
            xdna_addr: XDNA_ADDR,
        }
    );
    let c = only(&log);
    assert_eq!(
        (c.name, c.number),
        ("GET_BO_INFO", iowr(0x44, &GET_BO_INFO))
    );
    GET_BO_INFO.assert(&c.arg, &[("handle", 12)]);
}

#[test]
fn sync_bo_sends_handle_direction_offset_and_size() {
    for (direction, raw) in [(SyncDirection::ToDevice, 0), (SyncDirection::FromDevice, 1)] {
        let (dev, log) = recording();
        dev.sync_bo(12, direction, 8, 100).unwrap();
        let c = only(&log);
        assert_eq!((c.name, c.number), ("SYNC_BO", iowr(0x45, &SYNC_BO)));
        SYNC_BO.assert(
            &c.arg,
            &[
                ("handle", 12),
                ("direction", raw),
                ("offset", 8),
                ("size", 100),
            ],
        );
    }
}

#[test]
fn exec_cmd_sends_the_command_inline_and_the_handles_by_address() {
    let (dev, log) = recording();
    assert_eq!(dev.exec_cmd(5, 13, &[14, 15, 16]).unwrap(), SEQ);
    let c = only(&log);
    assert_eq!((c.name, c.number), ("EXEC_CMD", iowr(0x46, &EXEC_CMD)));
    let (args_at, handles) = &c.reads[0];
    EXEC_CMD.assert(
        &c.arg,
        &[
            ("hwctx", 5),
            ("type", 0),
            ("cmd_handles", 13),
            ("args", *args_at),
            ("cmd_count", 1),
            ("arg_count", 3),
        ],
    );
    assert_eq!(handles, &u32s(&[14, 15, 16]));
}

#[test]
fn the_syncobj_wait_sends_handle_point_deadline_and_wait_for_submit() {
    let (dev, log) = recording();
    let before = monotonic_ns();
    dev.wait_syncobj(3, 9, Duration::from_secs(1)).unwrap();
    let after = monotonic_ns();
    let c = only(&log);
    assert_eq!(
        (c.name, c.number),
        ("SYNCOBJ_TIMELINE_WAIT", iowr(0xCA, &TIMELINE_WAIT))
    );
    // An absolute CLOCK_MONOTONIC deadline a second from the call.
    let deadline = TIMELINE_WAIT.get(&c.arg, "timeout_nsec") as i64;
    assert!(
        (before + 1_000_000_000..=after + 1_000_000_000).contains(&deadline),
        "{deadline}"
    );
    let [(handles_at, handles), (points_at, points)] = &c.reads[..] else {
        panic!("{:?}", c.reads);
    };
    TIMELINE_WAIT.assert(
        &c.arg,
        &[
            ("handles", *handles_at),
            ("points", *points_at),
            ("timeout_nsec", deadline as u64),
            ("count_handles", 1),
            // DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT (1 << 1).
            ("flags", 2),
        ],
    );
    assert_eq!(handles, &u32s(&[3]));
    assert_eq!(points, &9u64.to_le_bytes());
}

#[test]
fn get_info_sends_param_size_and_the_reply_address() {
    let (dev, log) = recording();
    // The typed queries: each reply's parameter and size, parsed from the
    // bytes the seam wrote (1, 2, 3, ... as little-endian words).
    assert_eq!(
        dev.aie_version().unwrap(),
        AieVersion {
            major: 0x0403_0201,
            minor: 0x0807_0605
        }
    );
    assert_eq!(dev.firmware_version().unwrap().build, 0x100f_0e0d);
    assert_eq!(dev.aie_metadata().unwrap().cols, 0x0605);
    // A raw query by number and size.
    let raw = dev.query(5, 100).unwrap();
    assert_eq!(raw, (1..=100).collect::<Vec<u8>>());
    let log = log.borrow();
    let sent: Vec<_> = log
        .ioctls
        .iter()
        .map(|c| (c.name, GET_INFO.get(&c.arg, "param"), c.reply_len))
        .collect();
    assert_eq!(
        sent,
        [
            ("GET_INFO(AIE_VERSION)", 2, Some(8)),
            ("GET_INFO(FIRMWARE_VERSION)", 8, Some(16)),
            ("GET_INFO(AIE_METADATA)", 1, Some(64)),
            ("GET_INFO(HW_CONTEXTS)", 5, Some(100)),
        ]
    );
    for c in &log.ioctls {
        assert_eq!(c.number, iowr(0x47, &GET_INFO));
        let size = c.reply_len.unwrap() as u64;
        let buffer = GET_INFO.get(&c.arg, "buffer");
        assert_ne!(buffer, 0);
        GET_INFO.assert(
            &c.arg,
            &[
                ("param", GET_INFO.get(&c.arg, "param")),
                ("buffer_size", size),
                ("buffer", buffer),
            ],
        );
    }
}

/// The mmap of a BO goes to the offset GET_BO_INFO gave it: `Context::open`
/// over the seam makes the heap, asks its offset, maps it there at 64 MiB,
/// then opens the context.
#[test]
fn the_heap_is_mapped_at_the_offset_get_bo_info_reports() {
    let (dev, log) = recording();
    let metadata = AieMetadata {
        core: TileMetadata {
            row_count: 4,
            ..Default::default()
        },
        ..Default::default()
    };
    let ctx = Context::open(&dev, ContextConfig::columns(&metadata, 2)).unwrap();
    let (heap, host, at) = ctx.heap();
    assert_eq!((heap, at), (BO as u32, XDNA_ADDR));
    assert_eq!(host % (64 << 20), 0);
    {
        let log = log.borrow();
        let names: Vec<_> = log.ioctls.iter().map(|c| c.name).collect();
        assert_eq!(names, ["CREATE_BO", "GET_BO_INFO", "CREATE_HWCTX"]);
        CREATE_BO.assert(&log.ioctls[0].arg, &[("size", 64 << 20), ("type", 2)]);
        GET_BO_INFO.assert(&log.ioctls[1].arg, &[("handle", BO)]);
        assert_eq!(log.mmaps, [(MAP_OFFSET, 64 << 20, 64 << 20)]);
        let qos_at = log.ioctls[2].reads[0].0;
        CREATE_HWCTX.assert(
            &log.ioctls[2].arg,
            &[("qos_p", qos_at), ("max_opc", 2048), ("num_tiles", 8)],
        );
    }
    // A SHMEM buffer is mapped at its own offset, wherever the kernel puts it.
    let info = dev.bo_info(12).unwrap();
    let map = dev.map_bo(&info, 4096, 1).unwrap();
    map.write(0, b"seam").unwrap();
    assert_eq!(log.borrow().mmaps[1], (MAP_OFFSET, 4096, 1));
    ctx.close().unwrap();
    let log = log.borrow();
    let last = log.ioctls.last().unwrap();
    assert_eq!(last.name, "DESTROY_HWCTX");
    DESTROY_HWCTX.assert(&last.arg, &[("handle", HWCTX)]);
}

/// A device that put two fields in each other's places fails the byte
/// check, which names both. The bytes are what the real device sent, with
/// the swap a wrong struct field order (or a wrong argument order) would
/// make; `docs/xdna-runtime.md` records the same swap made in `device.rs`
/// itself and the test that failed.
#[test]
fn a_swapped_field_fails_the_byte_test() {
    fn swap(bytes: &[u8], layout: &Layout, a: &str, b: &str) -> Vec<u8> {
        let (at_a, size) = layout.field(a);
        let (at_b, size_b) = layout.field(b);
        assert_eq!(size, size_b);
        let mut out = bytes.to_vec();
        out[at_a..at_a + size].copy_from_slice(&bytes[at_b..at_b + size]);
        out[at_b..at_b + size].copy_from_slice(&bytes[at_a..at_a + size]);
        out
    }
    let (dev, log) = recording();
    dev.create_hwctx(&QosInfo::default(), 2048, 16).unwrap();
    dev.exec_cmd(5, 13, &[14, 15, 16]).unwrap();
    dev.sync_bo(12, SyncDirection::FromDevice, 8, 100).unwrap();
    let log = log.borrow();
    let (hwctx, exec, sync) = (&log.ioctls[0], &log.ioctls[1], &log.ioctls[2]);
    let hwctx_fields = [
        ("qos_p", hwctx.reads[0].0),
        ("max_opc", 2048),
        ("num_tiles", 16),
    ];
    let exec_fields = [
        ("hwctx", 5),
        ("cmd_handles", 13),
        ("args", exec.reads[0].0),
        ("cmd_count", 1),
        ("arg_count", 3),
    ];
    let sync_fields = [
        ("handle", 12),
        ("direction", 1),
        ("offset", 8),
        ("size", 100),
    ];
    // As sent, each passes.
    CREATE_HWCTX.check(&hwctx.arg, &hwctx_fields).unwrap();
    EXEC_CMD.check(&exec.arg, &exec_fields).unwrap();
    SYNC_BO.check(&sync.arg, &sync_fields).unwrap();
    // Swapped, each fails, naming both fields.
    for (layout, arg, fields, a, b) in [
        (
            &CREATE_HWCTX,
            &hwctx.arg,
            &hwctx_fields[..],
            "max_opc",
            "num_tiles",
        ),
        (
            &EXEC_CMD,
            &exec.arg,
            &exec_fields[..],
            "cmd_count",
            "arg_count",
        ),
        (
            &EXEC_CMD,
            &exec.arg,
            &exec_fields[..],
            "cmd_handles",
            "args",
        ),
        (&SYNC_BO, &sync.arg, &sync_fields[..], "offset", "size"),
        (&SYNC_BO, &sync.arg, &sync_fields[..], "handle", "direction"),
    ] {
        let e = layout.check(&swap(arg, layout, a, b), fields).unwrap_err();
        assert!(
            e.contains(&format!("{a} (")) && e.contains(&format!("{b} (")),
            "{e}"
        );
    }
    // And a struct of the wrong size fails whatever its fields.
    assert!(SYNC_BO.check(&sync.arg[..16], &sync_fields).is_err());
}

/// The struct sizes the tables above use are `uapi.rs`'s, and its ioctl
/// numbers the header's `DRM_IOWR`s.
#[test]
fn the_header_tables_agree_with_the_ioctl_numbers() {
    for (layout, nr, number) in [
        (&CREATE_HWCTX, 0x40, DRM_IOCTL_AMDXDNA_CREATE_HWCTX),
        (&DESTROY_HWCTX, 0x41, DRM_IOCTL_AMDXDNA_DESTROY_HWCTX),
        (&CONFIG_HWCTX, 0x42, DRM_IOCTL_AMDXDNA_CONFIG_HWCTX),
        (&CREATE_BO, 0x43, DRM_IOCTL_AMDXDNA_CREATE_BO),
        (&GET_BO_INFO, 0x44, DRM_IOCTL_AMDXDNA_GET_BO_INFO),
        (&SYNC_BO, 0x45, DRM_IOCTL_AMDXDNA_SYNC_BO),
        (&EXEC_CMD, 0x46, DRM_IOCTL_AMDXDNA_EXEC_CMD),
        (&GET_INFO, 0x47, DRM_IOCTL_AMDXDNA_GET_INFO),
        (&TIMELINE_WAIT, 0xCA, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT),
    ] {
        assert_eq!(iowr(nr, layout), number, "{}", layout.name);
        // The fields tile the struct, back to back, with no gap.
        let mut end = 0;
        for &(name, at, size) in layout.fields {
            assert_eq!(at, end, "{}.{name}", layout.name);
            end = at + size;
        }
        assert_eq!(end, layout.size, "{}", layout.name);
    }
}
