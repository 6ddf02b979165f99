#!/usr/bin/env python3
"""Independent reference of the data-movement examples (examples/*.loom ported
from mlir-aie's programming_examples/basic): each example's input and the
output its pipeline must produce, computed here from what the example means,
not by running Loom. Python 3 standard library only.

    data_movement.py EXAMPLE --out DIR
    data_movement.py --self-check

EXAMPLE is one of the names below. Writes DIR/input.npy and DIR/output.npy
(float32, '<f4', C order). The input values come from random.Random(seed),
uniform in [-8, 8) in double and rounded to f32 (nearest even). Every
operation the examples do is an f32 addition: computed in double and rounded
to f32 it is correctly rounded, as the language's vector.addf is
(docs/semantics.md).

  passthrough-memtile  2,048 values through a memory tile, unchanged
  pipeline-far-cores   128 values through three cores that are not
                       neighbours: (x + 1) doubled, + 3
  broadcast-column     128 values to the four cores of a column; core row r
                       adds r - 1; the output is the four results, row 2
                       first
  split-columns        256 values split over two columns: the first half
                       doubled, the second + 1
  transpose-tiles      a 64 x 32 row-major matrix; the output is its
                       32 x 64 transpose, row-major
"""

import argparse
import os
import random
import struct
import sys


def f32(x):
    """Round a double to the nearest binary32 value (ties to even)."""
    return struct.unpack('<f', struct.pack('<f', x))[0]


def add(a, b):
    return f32(a + b)


def values(count, seed):
    rng = random.Random(seed)
    return [f32(rng.random() * 16 - 8) for _ in range(count)]


def passthrough_memtile():
    x = values(2048, seed=21)
    return x, list(x)


def pipeline_far_cores():
    x = values(128, seed=22)
    y = []
    for v in x:
        a = add(v, 1.0)
        b = add(a, a)
        y.append(add(b, 3.0))
    return x, y


def broadcast_column():
    x = values(128, seed=23)
    y = []
    for row in (2, 3, 4, 5):
        y += [add(v, float(row - 1)) for v in x]
    return x, y


def split_columns():
    x = values(256, seed=24)
    first, second = x[:128], x[128:]
    return x, [add(v, v) for v in first] + [add(v, 1.0) for v in second]


def transpose(matrix, rows, columns):
    """The columns x rows transpose of a row-major rows x columns matrix."""
    return [matrix[r * columns + c] for c in range(columns) for r in range(rows)]


def transpose_tiles():
    a = values(64 * 32, seed=25)
    return a, transpose(a, 64, 32)


EXAMPLES = {
    'passthrough-memtile': passthrough_memtile,
    'pipeline-far-cores': pipeline_far_cores,
    'broadcast-column': broadcast_column,
    'split-columns': split_columns,
    'transpose-tiles': transpose_tiles,
}


def write_npy(path, data):
    """A version 1.0 .npy file of float32 values, shape (len(data),)."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(data)
    # Magic, version, header length, then the header padded with spaces to a
    # multiple of 64 bytes, ending in a newline.
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + ' ' * pad + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1'))
        f.write(struct.pack('<%df' % len(data), *data))


def self_check():
    assert f32(0.1) == struct.unpack('<f', b'\xcd\xcc\xcc\x3d')[0]
    assert add(2.0 ** 24, 1.0) == 2.0 ** 24, 'ties to even at 2^24'
    x, y = pipeline_far_cores()
    assert y[0] == add(add(add(x[0], 1.0), add(x[0], 1.0)), 3.0)
    _, y = broadcast_column()
    assert len(y) == 512
    assert transpose([1, 2, 3, 4, 5, 6], 2, 3) == [1, 4, 2, 5, 3, 6]
    a, t = transpose_tiles()
    assert t[1] == a[32] and t[64] == a[1]
    print('self-check passed')


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('example', nargs='?', choices=sorted(EXAMPLES))
    parser.add_argument('--out')
    parser.add_argument('--self-check', action='store_true')
    args = parser.parse_args(argv)
    if args.self_check:
        self_check()
        return 0
    if not args.example or not args.out:
        parser.error('give EXAMPLE and --out DIR, or --self-check')
    x, y = EXAMPLES[args.example]()
    os.makedirs(args.out, exist_ok=True)
    write_npy(os.path.join(args.out, 'input.npy'), x)
    write_npy(os.path.join(args.out, 'output.npy'), y)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
