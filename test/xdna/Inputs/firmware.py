"""Writes firmware images for test/xdna/firmware.test into the directory given:
xclbins with no PDI, one PDI, two PDIs and one empty PDI, a truncated xclbin,
an empty file and a raw PDI (bytes loom-test takes as they are)."""
import pathlib
import struct
import sys

out = pathlib.Path(sys.argv[1])

# XRT axlf (xclbin.h): "xclbin2\0" magic, m_numSections (u32) at 448, 40-byte
# section headers from 456 (kind u32 at 0, offset u64 at 24, size u64 at 32).
# An AIE_PARTITION (kind 32) section holds its aie_pdi array (count, offset
# from the section's start) at 120; each 96-byte aie_pdi holds its image's
# (size, offset) at 16.
AIE_PARTITION = 32


def xclbin(images):
    section = bytearray(128)
    records_at = len(section)
    section += bytes(96 * len(images))
    struct.pack_into("<II", section, 120, len(images), records_at)
    for i, image in enumerate(images):
        struct.pack_into("<II", section, records_at + 96 * i + 16, len(image), len(section))
        section += image
    header = bytearray(456 + 40)
    header[:8] = b"xclbin2\0"
    struct.pack_into("<I", header, 448, 1)
    struct.pack_into("<I", header, 456, AIE_PARTITION)
    struct.pack_into("<QQ", header, 456 + 24, len(header), len(section))
    return bytes(header + section)


no_pdi = bytearray(456)
no_pdi[:8] = b"xclbin2\0"
(out / "no-pdi.xclbin").write_bytes(bytes(no_pdi))
(out / "one-pdi.xclbin").write_bytes(xclbin([b"PDI image words."]))
(out / "two-pdi.xclbin").write_bytes(xclbin([b"first", b"second"]))
(out / "empty-pdi.xclbin").write_bytes(xclbin([b""]))
(out / "truncated.xclbin").write_bytes(b"xclbin2\0" + bytes(100))
(out / "empty.pdi").write_bytes(b"")
(out / "raw.pdi").write_bytes(bytes(range(64)))
