use super::*;
use crate::profiles;

const ALL: u32 = u32::MAX;
const KINDS: [TileKind; 3] = [TileKind::Shim, TileKind::Memory, TileKind::Core];

fn at(column: u32, row: u32, channel: u32) -> Endpoint {
    Endpoint {
        column,
        row,
        channel,
    }
}

fn set(column: u32, row: u32, offset: u32, value: u32, mask: u32, what: &str) -> SwitchSetting {
    SwitchSetting {
        column,
        row,
        offset,
        value,
        mask,
        what: what.to_string(),
    }
}

/// The master connections only, which name the route.
fn masters(settings: &[SwitchSetting]) -> Vec<&str> {
    settings
        .iter()
        .map(|s| s.what.as_str())
        .filter(|what| what.contains(" master "))
        .collect()
}

// Expected offsets are the aie-rt register names of
// driver/src/global/xaie2pgbl_params.h (PL_MODULE_ for the shim,
// MEM_TILE_MODULE_, CORE_MODULE_ ..._STREAM_SWITCH_{MASTER,SLAVE}_CONFIG_*);
// a master holds bit 31 | the slave's index = (slave register - slave
// base) / 4 (driver/src/stream_switch/xaie_ss.c
// _XAie_StreamSwitchConfigureCct, driver/src/common/xaie_helper.c
// _XAie_GetSlaveIdx); a slave holds bit 31. Shim DMA MM2S0 enters on
// South3 and S2MM0 leaves on South2, selected by mux bits 11:10 and demux
// bits 5:4 = 1 (driver/src/pl/xaie_plif.c; mlir-aie
// lib/Dialect/AIE/Transforms/AIECreatePathFindFlows.cpp).
#[test]
fn shim_mm2s_to_core_s2mm_goes_straight_north() {
    let expected = vec![
        set(
            0,
            0,
            0x1F000,
            0x400,
            0xC00,
            "shim [0,0] mux South3 <- DMA MM2S0",
        ),
        // MASTER_CONFIG_NORTH0 <- SLAVE_CONFIG_SOUTH_3 (0x3F114, index 5).
        set(
            0,
            0,
            0x3F030,
            0x8000_0005,
            ALL,
            "shim [0,0] master North0 <- slave South3",
        ),
        set(
            0,
            0,
            0x3F114,
            0x8000_0000,
            ALL,
            "shim [0,0] slave South3 enable",
        ),
        // MASTER_CONFIG_NORTH0 <- SLAVE_CONFIG_SOUTH_0 (0xB011C, index 7).
        set(
            0,
            1,
            0xB002C,
            0x8000_0007,
            ALL,
            "mem [0,1] master North0 <- slave South0",
        ),
        set(
            0,
            1,
            0xB011C,
            0x8000_0000,
            ALL,
            "mem [0,1] slave South0 enable",
        ),
        // MASTER_CONFIG_NORTH0 <- SLAVE_CONFIG_SOUTH_0 (0x3F114, index 5).
        set(
            0,
            2,
            0x3F034,
            0x8000_0005,
            ALL,
            "core [0,2] master North0 <- slave South0",
        ),
        set(
            0,
            2,
            0x3F114,
            0x8000_0000,
            ALL,
            "core [0,2] slave South0 enable",
        ),
        // MASTER_CONFIG_DMA0 <- SLAVE_CONFIG_SOUTH_0.
        set(
            0,
            3,
            0x3F004,
            0x8000_0005,
            ALL,
            "core [0,3] master DMA0 <- slave South0",
        ),
        set(
            0,
            3,
            0x3F114,
            0x8000_0000,
            ALL,
            "core [0,3] slave South0 enable",
        ),
    ];
    for p in profiles() {
        let mut used = Used::default();
        let got = route(p, at(0, 0, 0), at(0, 3, 0), &mut used).unwrap();
        assert_eq!(got, expected, "{}", p.name);
        assert_eq!(used.ports.len(), 8);
    }
}

#[test]
fn core_mm2s_to_shim_s2mm_goes_straight_south() {
    let expected = vec![
        // MASTER_CONFIG_SOUTH0 <- SLAVE_CONFIG_DMA_0 (0x3F104, index 1).
        set(
            0,
            3,
            0x3F014,
            0x8000_0001,
            ALL,
            "core [0,3] master South0 <- slave DMA0",
        ),
        set(
            0,
            3,
            0x3F104,
            0x8000_0000,
            ALL,
            "core [0,3] slave DMA0 enable",
        ),
        // MASTER_CONFIG_SOUTH0 <- SLAVE_CONFIG_NORTH_0 (0x3F13C, index 15).
        set(
            0,
            2,
            0x3F014,
            0x8000_000F,
            ALL,
            "core [0,2] master South0 <- slave North0",
        ),
        set(
            0,
            2,
            0x3F13C,
            0x8000_0000,
            ALL,
            "core [0,2] slave North0 enable",
        ),
        // MASTER_CONFIG_SOUTH0 <- SLAVE_CONFIG_NORTH_0 (0xB0134, index 13).
        set(
            0,
            1,
            0xB001C,
            0x8000_000D,
            ALL,
            "mem [0,1] master South0 <- slave North0",
        ),
        set(
            0,
            1,
            0xB0134,
            0x8000_0000,
            ALL,
            "mem [0,1] slave North0 enable",
        ),
        // MASTER_CONFIG_SOUTH2 <- SLAVE_CONFIG_NORTH_0 (0x3F138, index 14).
        set(
            0,
            0,
            0x3F010,
            0x8000_000E,
            ALL,
            "shim [0,0] master South2 <- slave North0",
        ),
        set(
            0,
            0,
            0x3F138,
            0x8000_0000,
            ALL,
            "shim [0,0] slave North0 enable",
        ),
        set(
            0,
            0,
            0x1F004,
            0x10,
            0x30,
            "shim [0,0] demux South2 -> DMA S2MM0",
        ),
    ];
    for p in profiles() {
        let got = route(p, at(0, 3, 0), at(0, 0, 0), &mut Used::default()).unwrap();
        assert_eq!(got, expected, "{}", p.name);
    }
}

#[test]
fn routes_through_the_same_tiles_get_distinct_ports() {
    for p in profiles() {
        let mut used = Used::default();
        let first = route(p, at(0, 0, 0), at(0, 3, 0), &mut used).unwrap();
        let second = route(p, at(0, 0, 1), at(0, 3, 1), &mut used).unwrap();
        // Shim MM2S1 enters on South7 (index 9), mux bits 15:14; then index 1
        // on every link.
        let expected = vec![
            set(
                0,
                0,
                0x1F000,
                0x4000,
                0xC000,
                "shim [0,0] mux South7 <- DMA MM2S1",
            ),
            set(
                0,
                0,
                0x3F034,
                0x8000_0009,
                ALL,
                "shim [0,0] master North1 <- slave South7",
            ),
            set(
                0,
                0,
                0x3F124,
                0x8000_0000,
                ALL,
                "shim [0,0] slave South7 enable",
            ),
            set(
                0,
                1,
                0xB0030,
                0x8000_0008,
                ALL,
                "mem [0,1] master North1 <- slave South1",
            ),
            set(
                0,
                1,
                0xB0120,
                0x8000_0000,
                ALL,
                "mem [0,1] slave South1 enable",
            ),
            set(
                0,
                2,
                0x3F038,
                0x8000_0006,
                ALL,
                "core [0,2] master North1 <- slave South1",
            ),
            set(
                0,
                2,
                0x3F118,
                0x8000_0000,
                ALL,
                "core [0,2] slave South1 enable",
            ),
            set(
                0,
                3,
                0x3F008,
                0x8000_0006,
                ALL,
                "core [0,3] master DMA1 <- slave South1",
            ),
            set(
                0,
                3,
                0x3F118,
                0x8000_0000,
                ALL,
                "core [0,3] slave South1 enable",
            ),
        ];
        assert_eq!(second, expected, "{}", p.name);
        let third = route(p, at(0, 1, 0), at(0, 2, 0), &mut used).unwrap();
        assert_eq!(
            masters(&third),
            [
                "mem [0,1] master North2 <- slave DMA0",
                "core [0,2] master DMA0 <- slave South2"
            ]
        );
        let mut registers = BTreeSet::new();
        for s in first.iter().chain(&second).chain(&third) {
            if s.mask == ALL {
                assert!(registers.insert((s.column, s.row, s.offset)), "{}", s.what);
            }
        }
    }
}

/// A memory tile passes South k on only to North k, so the shim link
/// skips index 1 (free there) for 2, the first index free on both.
#[test]
fn indices_line_up_through_the_memory_tile() {
    for p in profiles() {
        let mut used = Used::default();
        used.ports.insert((0, 0, Side::Master, 12)); // shim North0
        used.ports.insert((0, 1, Side::Master, 12)); // mem North1
        let got = route(p, at(0, 0, 0), at(0, 3, 0), &mut used).unwrap();
        assert_eq!(
            masters(&got),
            [
                "shim [0,0] master North2 <- slave South3",
                "mem [0,1] master North2 <- slave South2",
                "core [0,2] master North0 <- slave South2",
                "core [0,3] master DMA0 <- slave South0",
            ]
        );

        let mut used = Used::default();
        for north in 13..18 {
            used.ports.insert((0, 0, Side::Master, north)); // shim North1-5
        }
        used.ports.insert((0, 1, Side::Master, 11)); // mem North0
        let before = used.clone();
        let error = route(p, at(0, 0, 0), at(0, 3, 0), &mut used).unwrap_err();
        assert_eq!(
            error,
            RouteError::Misaligned {
                from: (0, 0),
                to: (0, 1)
            }
        );
        assert_eq!(
            error.to_string(),
            "no free port on the link from tile [0, 0] to tile [0, 1] lines up with the \
             rest of the route (some switches pass a port on only at the same index)"
        );
        assert_eq!(used, before);
    }
}

#[test]
fn running_out_of_ports_names_the_tile_and_port_kind() {
    for p in profiles() {
        let mut used = Used::default();
        // Six memory tile channels to six core channels above it take all
        // six North masters of the memory tile.
        let cores = [(2, 0), (2, 1), (3, 0), (3, 1), (4, 0), (4, 1)];
        for (channel, (row, core_channel)) in (0..).zip(cores) {
            route(p, at(0, 1, channel), at(0, row, core_channel), &mut used).unwrap();
        }
        let before = used.clone();
        let error = route(p, at(0, 0, 0), at(0, 5, 0), &mut used).unwrap_err();
        assert_eq!(
            error,
            RouteError::NoFreePort {
                column: 0,
                row: 1,
                side: Side::Master,
                kind: PortKind::North,
                in_use: 6
            }
        );
        assert_eq!(
            error.to_string(),
            "tile [0, 1] has no free North master port: 6 in use"
        );
        assert_eq!(used, before, "a failed route takes no ports");

        let error = route(p, at(0, 0, 0), at(0, 2, 0), &mut used).unwrap_err();
        assert_eq!(
            error.to_string(),
            "tile [0, 2] S2MM channel 0 already carries a route (master DMA0 in use)"
        );
    }
}

/// A second route from one MM2S channel branches off the first where their
/// paths part: a new master on the slave the first enters that tile by.
#[test]
fn a_second_route_from_a_source_is_a_broadcast() {
    for p in profiles() {
        let mut used = Used::default();
        let first = route(p, at(0, 0, 0), at(0, 2, 0), &mut used).unwrap();
        assert_eq!(
            masters(&first),
            [
                "shim [0,0] master North0 <- slave South3",
                "mem [0,1] master North0 <- slave South0",
                "core [0,2] master DMA0 <- slave South0",
            ]
        );
        let second = route(p, at(0, 0, 0), at(0, 4, 1), &mut used).unwrap();
        assert_eq!(
            masters(&second),
            [
                "core [0,2] master North0 <- slave South0",
                "core [0,3] master North0 <- slave South0",
                "core [0,4] master DMA1 <- slave South0",
            ]
        );
        // The branch's first slave is the first route's: not enabled again,
        // and no shim mux setting again.
        assert!(!second
            .iter()
            .any(|s| s.what == "core [0,2] slave South0 enable"));
        assert!(!second.iter().any(|s| s.what.contains("mux")));
        // A third from the memory tile on: it shares the shim and the
        // memory tile, and branches at [0, 3].
        let third = route(p, at(0, 0, 0), at(0, 3, 1), &mut used).unwrap();
        assert_eq!(masters(&third), ["core [0,3] master DMA1 <- slave South0"]);
        // Another source still gets ports of its own.
        let other = route(p, at(0, 0, 1), at(0, 2, 1), &mut used).unwrap();
        assert_eq!(
            masters(&other),
            [
                "shim [0,0] master North1 <- slave South7",
                "mem [0,1] master North1 <- slave South1",
                "core [0,2] master DMA1 <- slave South1",
            ]
        );
    }
}

#[test]
fn endpoints_must_be_dma_channels_in_the_array() {
    for p in profiles() {
        let mut used = Used::default();
        let outside = [
            (at(8, 2, 0), at(0, 2, 0), (8, 2)),
            (at(0, 2, 0), at(0, 6, 0), (0, 6)),
        ];
        for (source, destination, (column, row)) in outside {
            assert_eq!(
                route(p, source, destination, &mut used),
                Err(RouteError::OutsideArray { column, row })
            );
        }
        let error = route(p, at(0, 2, 0), at(0, 3, 2), &mut used).unwrap_err();
        assert_eq!(
            error,
            RouteError::NoSuchChannel {
                column: 0,
                row: 3,
                direction: Direction::S2mm,
                channel: 2,
                channels: 2
            }
        );
        assert_eq!(
            error.to_string(),
            "tile [0, 3] has no S2MM channel 2 (2 channels)"
        );
        let error = route(p, at(1, 0, 2), at(1, 2, 0), &mut used).unwrap_err();
        assert_eq!(
            error.to_string(),
            "tile [1, 0] has no MM2S channel 2 (2 channels)"
        );
        let error = route(p, at(1, 1, 6), at(1, 2, 0), &mut used).unwrap_err();
        assert_eq!(
            error.to_string(),
            "tile [1, 1] has no MM2S channel 6 (6 channels)"
        );
        assert_eq!(used, Used::default());

        // A memory tile S2MM and a shim S2MM are destinations like any other.
        let memory = route(p, at(0, 0, 0), at(0, 1, 5), &mut used).unwrap();
        assert_eq!(
            masters(&memory),
            [
                "shim [0,0] master North0 <- slave South3",
                "mem [0,1] master DMA5 <- slave South0",
            ]
        );
        let shim = route(p, at(0, 2, 1), at(0, 0, 1), &mut used).unwrap();
        assert_eq!(
            shim.last(),
            Some(&set(
                0,
                0,
                0x1F004,
                0x40,
                0xC0,
                "shim [0,0] demux South3 -> DMA S2MM1"
            ))
        );
        assert_eq!(
            masters(&shim),
            [
                "core [0,2] master South0 <- slave DMA1",
                "mem [0,1] master South0 <- slave North0",
                "shim [0,0] master South3 <- slave North0",
            ]
        );
    }
}

/// Within one tile: DMA to DMA only at equal channels (aie-rt
/// xaie_ss_aieml.c, mlir-aie isLegalTileConnection); shim South loops.
#[test]
fn a_route_within_one_tile_is_one_connection() {
    for p in profiles() {
        let mut used = Used::default();
        let got = route(p, at(0, 3, 0), at(0, 3, 0), &mut used).unwrap();
        assert_eq!(
            got,
            [
                set(
                    0,
                    3,
                    0x3F004,
                    0x8000_0001,
                    ALL,
                    "core [0,3] master DMA0 <- slave DMA0"
                ),
                set(
                    0,
                    3,
                    0x3F104,
                    0x8000_0000,
                    ALL,
                    "core [0,3] slave DMA0 enable"
                ),
            ]
        );
        let error = route(p, at(0, 3, 1), at(0, 3, 0), &mut Used::default()).unwrap_err();
        assert_eq!(
            error,
            RouteError::Illegal {
                column: 0,
                row: 3,
                slave: Port {
                    kind: PortKind::Dma,
                    index: 1
                },
                master: Port {
                    kind: PortKind::Dma,
                    index: 0
                }
            }
        );
        assert!(route(p, at(2, 1, 4), at(2, 1, 3), &mut used).is_err());
        assert!(route(p, at(2, 1, 4), at(2, 1, 4), &mut used).is_ok());

        let got = route(p, at(0, 0, 1), at(0, 0, 0), &mut used).unwrap();
        assert_eq!(
            got,
            [
                set(
                    0,
                    0,
                    0x1F000,
                    0x4000,
                    0xC000,
                    "shim [0,0] mux South7 <- DMA MM2S1"
                ),
                set(
                    0,
                    0,
                    0x3F010,
                    0x8000_0009,
                    ALL,
                    "shim [0,0] master South2 <- slave South7"
                ),
                set(
                    0,
                    0,
                    0x3F124,
                    0x8000_0000,
                    ALL,
                    "shim [0,0] slave South7 enable"
                ),
                set(
                    0,
                    0,
                    0x1F004,
                    0x10,
                    0x30,
                    "shim [0,0] demux South2 -> DMA S2MM0"
                ),
            ]
        );
    }
}

#[test]
fn routes_between_columns_cross_in_a_row_with_east_and_west_ports() {
    for p in profiles() {
        let mut used = Used::default();
        // Along the shim row, then north.
        let got = route(p, at(0, 0, 0), at(2, 4, 1), &mut used).unwrap();
        assert_eq!(
            masters(&got),
            [
                "shim [0,0] master East0 <- slave South3",
                "shim [1,0] master East0 <- slave West0",
                "shim [2,0] master North0 <- slave West0",
                "mem [2,1] master North0 <- slave South0",
                "core [2,2] master North0 <- slave South0",
                "core [2,3] master North0 <- slave South0",
                "core [2,4] master DMA1 <- slave South0",
            ]
        );
        // PL_MODULE MASTER_CONFIG_EAST0 <- SLAVE_CONFIG_SOUTH_3, and
        // MASTER_CONFIG_EAST0 <- SLAVE_CONFIG_WEST_0 (0x3F128, index 10).
        assert_eq!((got[1].offset, got[1].value), (0x3F048, 0x8000_0005));
        assert_eq!((got[3].offset, got[3].value), (0x3F048, 0x8000_000A));

        // Along the core row, west, then south.
        let got = route(p, at(3, 5, 0), at(1, 1, 5), &mut used).unwrap();
        assert_eq!(
            masters(&got),
            [
                "core [3,5] master West0 <- slave DMA0",
                "core [2,5] master West0 <- slave East0",
                "core [1,5] master South0 <- slave East0",
                "core [1,4] master South0 <- slave North0",
                "core [1,3] master South0 <- slave North0",
                "core [1,2] master South0 <- slave North0",
                "mem [1,1] master DMA5 <- slave North0",
            ]
        );

        // A memory tile has no East or West ports: its row crosses nowhere,
        // so memory to memory crosses in the shim row.
        let got = route(p, at(4, 1, 0), at(6, 1, 0), &mut used).unwrap();
        assert_eq!(
            masters(&got),
            [
                "mem [4,1] master South0 <- slave DMA0",
                "shim [4,0] master East0 <- slave North0",
                "shim [5,0] master East0 <- slave West0",
                "shim [6,0] master North0 <- slave West0",
                "mem [6,1] master DMA0 <- slave South0",
            ]
        );
        // And from a memory tile to a core, along the core's row.
        let got = route(p, at(7, 1, 0), at(5, 3, 0), &mut used).unwrap();
        assert_eq!(
            masters(&got),
            [
                "mem [7,1] master North0 <- slave DMA0",
                "core [7,2] master North0 <- slave South0",
                "core [7,3] master West0 <- slave South0",
                "core [6,3] master West0 <- slave East0",
                "core [5,3] master DMA0 <- slave East0",
            ]
        );
    }
}

#[test]
fn routing_is_deterministic() {
    let requests = [
        (at(0, 0, 0), at(3, 5, 1)),
        (at(2, 1, 3), at(0, 0, 1)),
        (at(5, 4, 1), at(5, 4, 1)),
    ];
    let run = |p| {
        let mut used = Used::default();
        requests
            .iter()
            .map(|&(s, d)| route(p, s, d, &mut used).unwrap())
            .collect::<Vec<_>>()
    };
    let all = profiles();
    for p in all {
        assert_eq!(run(p), run(p));
    }
    assert_eq!(run(&all[0]), run(&all[1]), "both profiles share the layout");
}

/// The port maps as mlir-aie's `validate` checks them, and what routing
/// relies on.
#[test]
fn port_maps_are_consistent() {
    for p in profiles() {
        for kind in KINDS {
            let s = &p.tile_registers(kind).stream_switch;
            assert!(!s.sources.is_empty());
            for (ports, total) in [(&s.master_ports, s.masters), (&s.slave_ports, s.slaves)] {
                // The kinds partition the physical ports.
                let mut ranges: Vec<PortRange> = ports.values().copied().collect();
                ranges.sort_by_key(|r| r.first);
                let mut next = 0;
                for r in ranges {
                    assert_eq!(r.first, next, "{} {kind:?}", p.name);
                    next += r.count;
                }
                assert_eq!(next, total, "{} {kind:?}", p.name);
            }
            assert!(s.slaves <= 1 << s.master_slave_index.width);
            for field in [s.master_enable, s.master_slave_index, s.slave_enable] {
                assert!(field.width > 0 && field.lsb + field.width <= 32);
            }
            assert_eq!(bits(s.master_enable) & bits(s.master_slave_index), 0);
            for (slave, master) in &s.same_index {
                assert!(s.slave_ports.contains_key(slave), "{kind:?} {slave:?}");
                assert!(s.master_ports.contains_key(master), "{kind:?} {master:?}");
            }
            let dma = |ports: &BTreeMap<PortKind, PortRange>| {
                ports.get(&PortKind::Dma).map_or(0, |r| r.count)
            };
            let (s2mm, mm2s) = match kind {
                TileKind::Shim => (p.shim_tile.dma_s2mm_channels, p.shim_tile.dma_mm2s_channels),
                TileKind::Memory => (
                    p.memory_tile.dma_s2mm_channels,
                    p.memory_tile.dma_mm2s_channels,
                ),
                TileKind::Core => (p.core_tile.dma_s2mm_channels, p.core_tile.dma_mm2s_channels),
            };
            match (&s.shim_dma, kind) {
                (Some(shim), TileKind::Shim) => {
                    assert_eq!((dma(&s.master_ports), dma(&s.slave_ports)), (0, 0));
                    let channels = (shim.s2mm.len() as u32, shim.mm2s.len() as u32);
                    assert_eq!(channels, (s2mm, mm2s));
                    for (list, ports) in
                        [(&shim.mm2s, &s.slave_ports), (&shim.s2mm, &s.master_ports)]
                    {
                        let mut fields = 0;
                        for port in list {
                            assert!(port.south < ports[&PortKind::South].count);
                            assert_eq!(fields & bits(port.select), 0);
                            fields |= bits(port.select);
                            assert_eq!(
                                put(port.select, shim.select_dma) >> port.select.lsb,
                                shim.select_dma
                            );
                        }
                    }
                }
                (None, TileKind::Memory | TileKind::Core) => {
                    assert_eq!((dma(&s.master_ports), dma(&s.slave_ports)), (s2mm, mm2s));
                }
                _ => panic!("{}: only the shim reaches its DMA through a mux", p.name),
            }
        }
        // A master k feeds the neighbour's opposite slave k: counts match.
        let count = |row: u32, side: Side, kind: PortKind| {
            p.tile_kind(0, row).map_or(0, |tile| {
                let s = &p.tile_registers(tile).stream_switch;
                let ports = match side {
                    Side::Master => &s.master_ports,
                    Side::Slave => &s.slave_ports,
                };
                ports.get(&kind).map_or(0, |r| r.count)
            })
        };
        use PortKind::{East, North, South, West};
        for row in 0..p.array.rows {
            assert_eq!(
                count(row, Side::Master, East),
                count(row, Side::Slave, West)
            );
            assert_eq!(
                count(row, Side::Master, West),
                count(row, Side::Slave, East)
            );
            if row + 1 < p.array.rows {
                assert_eq!(
                    count(row, Side::Master, North),
                    count(row + 1, Side::Slave, South)
                );
                assert_eq!(
                    count(row + 1, Side::Master, South),
                    count(row, Side::Slave, North)
                );
            }
        }
    }
}
