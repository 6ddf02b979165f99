"""Write a one-dimensional .npy file without NumPy, for runtime-errors.test.

usage: write-npy.py PATH DESCR SHAPE [DATA_BYTES]

DESCR is the dtype string as NumPy spells it ('<f4', '<f8', ...), SHAPE the
header's shape tuple text ('4,' or '4294967296, 4294967296'), DATA_BYTES how
many zero bytes of data follow the header (default: what the shape needs for
4-byte elements). A DATA_BYTES that differs from the shape writes a
truncated or oversized file.
"""
import sys

path, descr, shape = sys.argv[1], sys.argv[2], sys.argv[3]
count = 1
for dim in shape.split(","):
    if dim.strip():
        count *= int(dim)
data_bytes = int(sys.argv[4]) if len(sys.argv) > 4 else 4 * count
header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, shape)
while (10 + len(header) + 1) % 64:
    header += " "
header += "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + bytes(data_bytes))
