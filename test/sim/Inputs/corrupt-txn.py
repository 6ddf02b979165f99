"""Overwrite one 32-bit word of an .xdna's .ctrltext (the TXN control code):
python3 corrupt-txn.py IN.xdna OUT.xdna BYTE_OFFSET VALUE

BYTE_OFFSET counts from the start of .ctrltext; VALUE is the new word
(decimal or 0x...). For the array simulator's fault-injection tests.
"""
import struct
import sys

src, dst, offset, value = sys.argv[1], sys.argv[2], int(sys.argv[3], 0), int(sys.argv[4], 0)
data = bytearray(open(src, "rb").read())
shoff, = struct.unpack_from("<I", data, 0x20)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x2E)


def section(i):
    name, _, _, _, off, size = struct.unpack_from("<IIIIII", data, shoff + i * shentsize)
    return name, off, size


_, strtab, _ = section(shstrndx)
for i in range(shnum):
    name, off, size = section(i)
    end = data.index(b"\0", strtab + name)
    if data[strtab + name:end] == b".ctrltext":
        assert offset + 4 <= size, "offset past .ctrltext"
        struct.pack_into("<I", data, off + offset, value)
        open(dst, "wb").write(data)
        break
else:
    sys.exit("no .ctrltext section")
