"""Writes firmware images for test/xdna/firmware.test into the directory given:
an xclbin with no sections (so no PDI), a truncated xclbin, an empty file and
a raw PDI (bytes loom-test takes as they are)."""
import pathlib
import sys

out = pathlib.Path(sys.argv[1])
# XRT axlf: "xclbin2\0" magic, m_numSections (u32) at 448, section headers at 456.
header = bytearray(456)
header[:8] = b"xclbin2\0"
(out / "no-pdi.xclbin").write_bytes(bytes(header))
(out / "truncated.xclbin").write_bytes(b"xclbin2\0" + bytes(100))
(out / "empty.pdi").write_bytes(b"")
(out / "raw.pdi").write_bytes(bytes(range(64)))
