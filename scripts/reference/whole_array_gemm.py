#!/usr/bin/env python3
"""Independent reference of the whole-array GEMM (examples/whole-array-gemm-*.loom):
its inputs and the C it must produce, computed here from docs/semantics.md
("Matrix multiply-accumulate"), not by running Loom. Python 3 standard
library only.

    whole_array_gemm.py --dtype i8|bf16 --m M --n N --k K --out DIR [--seed S]
    whole_array_gemm.py --self-check

Writes DIR/a.npy (M x K), DIR/b.npy (K x N) and DIR/c.npy (M x N), C order,
little-endian: i8 inputs as '|i1' with C as '<i4'; bf16 inputs as '<u2'
(their bits) with C as '<f4'. Inputs come from random.Random(seed): i8
uniform over [-128, 127]; bf16 a sign, an exponent in [-4, 3] and 7 random
fraction bits, so no product or sum overflows or underflows.

C(i, j) is the sum over p of A(i, p) B(p, j): for i8 exact, wrapped to
32 bits; for bf16 the products (exact in f32) added in order of p from 0,
each sum rounded to f32 (round to nearest, ties to even). That order is
Loom's definition; the hardware's is not documented. So for bf16 the script
also checks c against the exact sums with the tolerance every order of f32
additions meets (an error of at most gamma_K = K u / (1 - K u), u = 2^-24,
times the sum of |products|), and prints the error.
"""

import argparse
import os
import random
import struct
import sys


def wrap32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def f32(v):
    """v rounded to binary32 (Python floats are binary64; one rounding)."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def bf16_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def random_bf16(rng):
    sign = rng.getrandbits(1)
    exponent = rng.randint(-4, 3) + 127
    return (sign << 15) | (exponent << 7) | rng.getrandbits(7)


def gemm(dtype, a, b, m, n, k):
    """C = A B under the semantics above, row by row."""
    c = []
    if dtype == "i8":
        for i in range(m):
            row = [0] * n
            for p in range(k):
                x = a[i * k + p]
                if x:
                    bp = b[p * n:(p + 1) * n]
                    row = [s + x * y for s, y in zip(row, bp)]
            c.extend(wrap32(s) for s in row)
        return c
    av = [bf16_value(v) for v in a]
    bv = [bf16_value(v) for v in b]
    for i in range(m):
        row = [0.0] * n
        for p in range(k):
            x = av[i * k + p]
            bp = bv[p * n:(p + 1) * n]
            # A bf16 product is exact in binary64 and in binary32 here (the
            # exponents are bounded), so f32(s + x*y) is the one rounding.
            row = [f32(s + x * y) for s, y in zip(row, bp)]
        c.extend(row)
    return c


def error_bound(a, b, c, m, n, k):
    """For bf16: the largest |c - C| / (sum over p of |a(i, p) b(p, j)|)
    over the elements, C the exact sum (products exact in binary64 and
    summed exactly by math.fsum). Any order of k f32 additions stays within
    gamma_k = k u / (1 - k u), u = 2^-24, of it (Higham, Accuracy and
    Stability of Numerical Algorithms, 2nd ed., section 4.2): the tolerance
    that holds whatever order the hardware's multiply-accumulate uses."""
    import math
    av = [bf16_value(v) for v in a]
    bv = [bf16_value(v) for v in b]
    worst = 0.0
    for i in range(m):
        for j in range(n):
            terms = [av[i * k + p] * bv[p * n + j] for p in range(k)]
            scale = math.fsum(abs(t) for t in terms)
            if scale:
                worst = max(worst, abs(c[i * n + j] - math.fsum(terms)) / scale)
    ku = k * 2.0 ** -24
    return worst, ku / (1 - ku)


def write_npy(path, descr, shape, values, pack):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else ""))
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), pack), *values))


def make(dtype, m, n, k, seed):
    rng = random.Random(seed)
    if dtype == "i8":
        a = [rng.randint(-128, 127) for _ in range(m * k)]
        b = [rng.randint(-128, 127) for _ in range(k * n)]
    else:
        a = [random_bf16(rng) for _ in range(m * k)]
        b = [random_bf16(rng) for _ in range(k * n)]
    return a, b, gemm(dtype, a, b, m, n, k)


def self_check():
    # i8: a 2 x 3 times 3 x 2 by hand, and the 32-bit wrap.
    assert gemm("i8", [1, 2, 3, -4, 5, -6], [7, 8, 9, 10, 11, 12], 2, 2, 3) == [58, 64, -49, -54]
    assert gemm("i8", [-128] * 4, [-128] * 4, 1, 1, 4) == [65536]
    # bf16: in order, 2^24 + 1 loses the 1 (ties to even); 2^24 - 2^24 + 1 keeps it.
    bits = lambda v: struct.unpack("<I", struct.pack("<f", v))[0] >> 16
    one, big, minus = bits(1.0), bits(16777216.0), bits(-16777216.0)
    assert gemm("bf16", [big, one, minus], [one, one, one], 1, 1, 3) == [0.0]
    assert gemm("bf16", [big, minus, one], [one, one, one], 1, 1, 3) == [1.0]
    print("whole_array_gemm.py: self-check passed")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dtype", choices=["i8", "bf16"])
    parser.add_argument("--m", type=int)
    parser.add_argument("--n", type=int)
    parser.add_argument("--k", type=int)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out")
    parser.add_argument("--self-check", action="store_true")
    args = parser.parse_args()
    if args.self_check:
        self_check()
        return
    if None in (args.dtype, args.m, args.n, args.k, args.out):
        parser.error("--dtype, --m, --n, --k and --out are needed")
    a, b, c = make(args.dtype, args.m, args.n, args.k, args.seed)
    if args.dtype == "bf16":
        worst, bound = error_bound(a, b, c, args.m, args.n, args.k)
        if worst > bound:
            sys.exit(f"whole_array_gemm.py: relative error {worst:.3g} above the bound {bound:.3g}")
        print(f"whole_array_gemm.py: bf16 relative error {worst:.3g} against the exact sums, within "
              f"the bound gamma_K = {bound:.3g} that any order of f32 additions meets")
    os.makedirs(args.out, exist_ok=True)
    if args.dtype == "i8":
        write_npy(os.path.join(args.out, "a.npy"), "|i1", (args.m, args.k), a, "b")
        write_npy(os.path.join(args.out, "b.npy"), "|i1", (args.k, args.n), b, "b")
        write_npy(os.path.join(args.out, "c.npy"), "<i4", (args.m, args.n), c, "i")
    else:
        write_npy(os.path.join(args.out, "a.npy"), "<u2", (args.m, args.k), a, "H")
        write_npy(os.path.join(args.out, "b.npy"), "<u2", (args.k, args.n), b, "H")
        write_npy(os.path.join(args.out, "c.npy"), "<f4", (args.m, args.n), c, "f")


if __name__ == "__main__":
    sys.exit(main())
