"""Write a copy of INPUT with byte OFFSET set to VALUE (a one-byte mutant)."""
import sys

source, offset, value, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 0), sys.argv[4]
data = bytearray(open(source, "rb").read())
data[offset] = value
open(out, "wb").write(data)
