"""Edit one op of an .xdna's .ctrltext (the TXN control code), keeping its
size, for the array simulator's fault-injection tests:

  python3 txn-edit.py IN.xdna OUT.xdna value ADDRESS VALUE
      the first WRITE or MASKWRITE of ADDRESS (full address) writes VALUE
  python3 txn-edit.py IN.xdna OUT.xdna swap I
      ops I and I + 1 trade places
  python3 txn-edit.py IN.xdna OUT.xdna program BYTE VALUE
      the word at program-memory byte offset BYTE of the first core's
      program BLOCKWRITE (tile offset 0x20000) becomes VALUE

Op sizes (targets/src/xdna/txn.rs): WRITE 24 bytes (value in word 4),
MASKWRITE 28 (value in word 4), BLOCKWRITE its word 3, LOADPDI 16, SYNC 16,
DDR_PATCH 48, after a 16-byte header.
"""
import struct
import sys

from ctrltext import ctrltext

SIZES = {0x00: 24, 0x03: 28, 0x04: 28, 0x08: 16, 0x80: 16, 0x81: 48}

src, dst, command = sys.argv[1], sys.argv[2], sys.argv[3]
data = bytearray(open(src, "rb").read())
base, size = ctrltext(data)

# (offset, size) of every op.
ops = []
at = base + 16
while at < base + size:
    opcode = data[at]
    length = struct.unpack_from("<I", data, at + 12)[0] if opcode == 0x01 else SIZES[opcode]
    ops.append((at, length))
    at += length

if command == "value":
    address, value = int(sys.argv[4], 0), int(sys.argv[5], 0)
    for at, _ in ops:
        if data[at] in (0x00, 0x03) and struct.unpack_from("<I", data, at + 8)[0] == address:
            struct.pack_into("<I", data, at + 16, value)
            break
    else:
        sys.exit(f"no WRITE or MASKWRITE of {address:#x}")
elif command == "swap":
    i = int(sys.argv[4])
    (a, la), (b, lb) = ops[i], ops[i + 1]
    data[a:b + lb] = data[b:b + lb] + data[a:a + la]
elif command == "program":
    byte, value = int(sys.argv[4], 0), int(sys.argv[5], 0)
    for at, _ in ops:
        # BLOCKWRITE: opcode, 0, address, size, then the words.
        if data[at] == 0x01 and struct.unpack_from("<I", data, at + 8)[0] & 0xFFFFF == 0x20000:
            struct.pack_into("<I", data, at + 16 + byte, value)
            break
    else:
        sys.exit("no BLOCKWRITE of a core's program memory")
else:
    sys.exit(f"unknown command {command}")
open(dst, "wb").write(data)
