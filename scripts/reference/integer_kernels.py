#!/usr/bin/env python3
"""Independent reference of the integer kernels of test/sim/Inputs/integers.loom:
each kernel's inputs and the outputs its pipeline must produce, computed here
from the integer semantics of docs/semantics.md ("Integers"), not by running
Loom. Python 3 standard library only.

    integer_kernels.py KERNEL --out DIR
    integer_kernels.py --self-check

Writes DIR/input.npy and DIR/output.npy (and DIR/output8.npy for gemv), C
order, signed little-endian integers ('|i1', '<i2', '<i4'). Inputs come from
random.Random(seed), uniform over the type's whole range unless noted.

  copy   64 i8 values, unchanged
  scale  32 i16 values times 3, wrapped to i16
  add    a 2 x 16 i32 record; the output is its two rows' sum, wrapped to i32
  scalars  64 i8 values; the output is 8 i8 scalars computed one element at
         a time: their wrapped sum, the wrapped product of the first 8, the
         wrapped x0 - x1 - ... - x63, then x[3..8] times 3, wrapped
  gemv   a 17 x 32 i8 record: rows 0-15 are A transposed (A is 32 x 16),
         lanes 0-15 of row 16 are x; output.npy is y = A x in i32 (32
         values), output8.npy is y shifted right by 5, rounded to nearest
         with ties to even and clamped to i8
"""

import argparse
import os
import random
import struct
import sys

CODES = {8: ('|i1', 'b'), 16: ('<i2', 'h'), 32: ('<i4', 'i')}


def wrap(v, bits):
    """The low `bits` bits of v, read as signed."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def srs(v, shift, bits):
    """v / 2^shift rounded to nearest, ties to even, clamped to `bits`."""
    if shift:
        floor, rest = v >> shift, v & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        v = floor + (1 if rest > half or (rest == half and floor & 1) else 0)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return max(lo, min(hi, v))


def values(rng, count, bits):
    return [rng.randint(-(1 << (bits - 1)), (1 << (bits - 1)) - 1) for _ in range(count)]


def copy(rng):
    x = values(rng, 64, 8)
    return {'input': (8, x), 'output': (8, list(x))}


def scale(rng):
    x = values(rng, 32, 16)
    return {'input': (16, x), 'output': (16, [wrap(3 * v, 16) for v in x])}


def add(rng):
    x = values(rng, 32, 32)
    return {'input': (32, x), 'output': (32, [wrap(x[i] + x[16 + i], 32) for i in range(16)])}


def scalars(rng):
    x = values(rng, 64, 8)
    total, product, difference = 0, 1, x[0]
    for v in x:
        total = wrap(total + v, 8)
    for v in x[:8]:
        product = wrap(product * v, 8)
    for v in x[1:]:
        difference = wrap(difference - v, 8)
    tail = [wrap(3 * v, 8) for v in x[3:8]]
    return {'input': (8, x), 'output': (8, [total, product, difference] + tail)}


def gemv(rng):
    a_t = values(rng, 16 * 32, 8)              # a_t[k * 32 + r] = A[r][k]
    x = values(rng, 16, 8) + [0] * 16          # row 16, lanes 16-31 unused
    y = [wrap(sum(a_t[k * 32 + r] * x[k] for k in range(16)), 32) for r in range(32)]
    return {'input': (8, a_t + x), 'output': (32, y),
            'output8': (8, [srs(v, 5, 8) for v in y])}


KERNELS = {'copy': (copy, 1), 'scale': (scale, 2), 'add': (add, 3), 'scalars': (scalars, 5),
           'gemv': (gemv, 4)}


def write_npy(path, bits, data):
    """A version 1.0 .npy file of signed integers, shape (len(data),)."""
    descr, code = CODES[bits]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(data))
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + ' ' * pad + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1'))
        f.write(struct.pack('<%d%s' % (len(data), code), *data))


def self_check():
    assert wrap(127 + 1, 8) == -128 and wrap(-32768 * 3, 16) == -32768
    assert [srs(v, 2, 8) for v in (5, 6, 7, -5, -6, -7, 2, 4000)] == [1, 2, 2, -1, -2, -2, 0, 127]
    assert srs(-70000, 0, 16) == -32768
    print('self-check passed')


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('kernel', nargs='?', choices=sorted(KERNELS))
    parser.add_argument('--out')
    parser.add_argument('--self-check', action='store_true')
    args = parser.parse_args(argv)
    if args.self_check:
        self_check()
        return 0
    if not args.kernel or not args.out:
        parser.error('KERNEL and --out are needed')
    make, seed = KERNELS[args.kernel]
    os.makedirs(args.out, exist_ok=True)
    for name, (bits, data) in make(random.Random(seed)).items():
        write_npy(os.path.join(args.out, name + '.npy'), bits, data)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
