"""Set the argument index of the first DDR_PATCH op in an .xdna's control
code: python3 ddr-patch-index.py IN.xdna OUT.xdna INDEX

A DDR_PATCH op is 12 words: 0x81 and its size 48, four zero words, the
patched address, 0, the argument index, 0, and the 64-bit offset."""
import struct
import sys

src, dst, index = sys.argv[1], sys.argv[2], int(sys.argv[3], 0)
data = bytearray(open(src, "rb").read())
for at in range(0, len(data) - 48, 4):
    if struct.unpack_from("<6I", data, at) == (0x81, 48, 0, 0, 0, 0):
        struct.pack_into("<I", data, at + 32, index)
        open(dst, "wb").write(data)
        break
else:
    sys.exit("no DDR_PATCH op found")
