"""Overwrite one 32-bit word of an .xdna's .ctrltext (the TXN control code):
python3 corrupt-txn.py IN.xdna OUT.xdna BYTE_OFFSET VALUE

BYTE_OFFSET counts from the start of .ctrltext; VALUE is the new word
(decimal or 0x...). For the array simulator's fault-injection tests.
"""
import struct
import sys

from ctrltext import ctrltext

src, dst, offset, value = sys.argv[1], sys.argv[2], int(sys.argv[3], 0), int(sys.argv[4], 0)
data = bytearray(open(src, "rb").read())
off, size = ctrltext(data)
assert offset + 4 <= size, "offset past .ctrltext"
struct.pack_into("<I", data, off + offset, value)
open(dst, "wb").write(data)
