#!/usr/bin/env python3
"""Independent reference model of the gated projection (examples/gated-projection.loom).

Computes, for each input record x of K bf16 values,

    gate * (0.5 + 0.25 * gate) * up,   gate = <x, w_gate>, up = <x, w_up>

with exactly the rounding steps of the Loom program (helpers @gate_up_tile and
@multiply_bf16), as specified in docs/semantics.md. Python 3 standard library only.

    gated_projection.py --k K [--records R] [--seed S] [--trace] --out DIR
    gated_projection.py --self-check

writes DIR/input.npy (R*K raw bf16 bit patterns, '<u2'), DIR/weights.npy (2*K raw
bf16 bit patterns, '<u2': the K gate weights, then the K up weights) and
DIR/output.npy (R float32 results, '<f4'), and prints one line per record:

    record N: DECIMAL 0xBITS

Inputs and weights come from random.Random(seed): each value is uniform in
[-1, 1) (random() * 2 - 1 in double), rounded to f32 and then to bf16, both to
nearest even (the same two-step rounding as the interpreter's random(...)
bindings), so a value just below 1 can become 1.0. The input records are drawn
first (record 0 element 0 first), then the gate row, then the up row.

--trace also prints each record's intermediate values (the f32 row sums
gate_sum and up_sum, then the bf16 steps). The final result rounds gate and up
to bf16, which hides most differences in the F32 accumulation order: compare
gate_sum/up_sum, or test vector.dot2f directly, to pin that order down.

Number representation: an f32 or bf16 value is a Python float holding exactly
that value. f32(x) rounds a double to binary32 (nearest even). A single +, - or *
of two f32 values computed in double and then rounded to f32 is correctly
rounded, because double has at least 2*24+2 significand bits; the product of two
bf16 values is exact in double.
"""

import argparse
import math
import os
import random
import struct
import sys
from fractions import Fraction

# ---------------------------------------------------------------------------
# f32 and bf16 helpers


def f32(x):
    """Round a double to the nearest binary32 value (ties to even), as a float."""
    try:
        return struct.unpack('<f', struct.pack('<f', x))[0]
    except OverflowError:
        # struct refuses finite values that round to infinity; under
        # round-to-nearest-even they round to a signed infinity.
        return math.copysign(math.inf, x)


def f32_bits(x):
    """The binary32 bit pattern of f32(x)."""
    try:
        return struct.unpack('<I', struct.pack('<f', x))[0]
    except OverflowError:
        return 0xFF800000 if x < 0 else 0x7F800000


def f32_from_bits(bits):
    return struct.unpack('<f', struct.pack('<I', bits & 0xFFFFFFFF))[0]


def bf16_bits_from_f32_bits(bits):
    """Round an f32 bit pattern to a bf16 bit pattern: nearest even, NaN kept quiet."""
    bits &= 0xFFFFFFFF
    if (bits & 0x7FFFFFFF) > 0x7F800000:  # NaN: truncate and set the quiet bit
        return ((bits >> 16) | 0x0040) & 0xFFFF
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def bf16_value(bits16):
    """The value of a bf16 bit pattern (exact widening to f32)."""
    return f32_from_bits((bits16 & 0xFFFF) << 16)


def bf16_bits(x):
    """f32(x) rounded to bf16, as a bit pattern."""
    return bf16_bits_from_f32_bits(f32_bits(x))


def bf16(x):
    """f32(x) rounded to bf16, as a float holding the bf16 value."""
    return bf16_value(bf16_bits(x))


# ---------------------------------------------------------------------------
# The Loom program


LANES = 16
STEP = 2 * LANES  # elements per vector.dot2f


def dot2f(acc, x, w):
    """vector.dot2f: lane i = ((acc[i] + x[2i]*w[2i]) + x[2i+1]*w[2i+1]), every step in f32."""
    out = []
    for i in range(len(acc)):
        first = f32(acc[i] + f32(x[2 * i] * w[2 * i]))
        out.append(f32(first + f32(x[2 * i + 1] * w[2 * i + 1])))
    return out


def row_sum(x, w):
    """One row of @gate_up_tile: 16 F32 partial sums over K, then a sequential F32 reduction."""
    k = len(x)
    acc = [0.0] * LANES
    for p in range(0, k, STEP):
        acc = dot2f(acc, x[p:p + STEP], w[p:p + STEP])
    total = 0.0
    for part in acc:
        total = f32(total + part)
    return total


def multiply_bf16(a, b):
    """@multiply_bf16 on one lane: interleave with zeros, dot2f into a zero accumulator, fptrunc."""
    return bf16(dot2f([0.0], [a, 0.0], [b, 0.0])[0])  # = bf16(f32(f32(0.0 + f32(a*b)) + f32(0.0*0.0)))


def gated_projection(x, w_gate, w_up):
    """Returns (result, trace) for one record; result is the f32 value written to the output."""
    gate_sum = row_sum(x, w_gate)
    up_sum = row_sum(x, w_up)
    gate = bf16(gate_sum)
    up = bf16(up_sum)
    linear = multiply_bf16(gate, bf16(0.25))
    scale = bf16(f32(0.5 + f32(linear)))
    gated = multiply_bf16(gate, scale)
    projected = multiply_bf16(gated, up)
    result = f32(projected)
    trace = [('gate_sum', gate_sum), ('up_sum', up_sum), ('gate', gate), ('up', up),
             ('linear', linear), ('scale', scale), ('gated', gated), ('projected', projected)]
    return result, trace


# ---------------------------------------------------------------------------
# Data


def random_bf16_bits(rng, count):
    return [bf16_bits(rng.random() * 2.0 - 1.0) for _ in range(count)]


def npy_bytes(descr, count, payload):
    """A .npy v1.0 file holding a one-dimensional array of `count` elements."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, count)
    pad = (-(10 + len(header) + 1)) % 64
    header = (header + ' ' * pad + '\n').encode('latin1')
    assert (10 + len(header)) % 64 == 0
    return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header + payload


def write_file(path, data):
    tmp = path + '.tmp'
    with open(tmp, 'wb') as f:
        f.write(data)
    os.replace(tmp, path)


def fmt(value):
    return '%r 0x%08x' % (value, f32_bits(value))


def run(args):
    k, records = args.k, args.records
    if k <= 0 or k % STEP:
        sys.exit('error: --k must be a positive multiple of %d, got %d' % (STEP, k))
    if records <= 0:
        sys.exit('error: --records must be positive, got %d' % records)
    if not 512 <= k <= 4096:
        print('warning: K=%d is outside the range 512..4096 of @ffn_gate_up.input_size' % k,
              file=sys.stderr)
    rng = random.Random(args.seed)
    input_bits = random_bf16_bits(rng, records * k)
    weight_bits = random_bf16_bits(rng, 2 * k)
    x_all = [bf16_value(b) for b in input_bits]
    w_gate = [bf16_value(b) for b in weight_bits[:k]]
    w_up = [bf16_value(b) for b in weight_bits[k:]]

    results = []
    for n in range(records):
        result, trace = gated_projection(x_all[n * k:(n + 1) * k], w_gate, w_up)
        results.append(result)
        print('record %d: %s' % (n, fmt(result)))
        if args.trace:
            for name, value in trace:
                print('  %-9s %s' % (name, fmt(value)))

    os.makedirs(args.out, exist_ok=True)
    write_file(os.path.join(args.out, 'input.npy'),
               npy_bytes('<u2', len(input_bits), struct.pack('<%dH' % len(input_bits), *input_bits)))
    write_file(os.path.join(args.out, 'weights.npy'),
               npy_bytes('<u2', len(weight_bits), struct.pack('<%dH' % len(weight_bits), *weight_bits)))
    write_file(os.path.join(args.out, 'output.npy'),
               npy_bytes('<f4', len(results), struct.pack('<%df' % len(results), *results)))
    return 0


# ---------------------------------------------------------------------------
# Self-check


def round_fraction(q, mantissa_bits, min_exponent, max_exponent):
    """Round an exact rational to a binary float format (nearest, ties to even), independently
    of the bit tricks above. Returns a Fraction, or +-inf as a float."""
    if q == 0:
        return Fraction(0)
    sign = -1 if q < 0 else 1
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    if a >= Fraction(2) ** (e + 1):
        e += 1
    e = max(e, min_exponent)  # subnormal range: fixed quantum
    quantum = Fraction(2) ** (e - mantissa_bits)
    m = round(a / quantum)  # Fraction rounding is ties-to-even
    r = m * quantum
    if r >= Fraction(2) ** (max_exponent + 1):
        return sign * math.inf
    return sign * r


def reference_f32(q):
    r = round_fraction(q, 23, -126, 127)
    return r if isinstance(r, float) else float(r)


def reference_bf16_bits(bits):
    """Independent f32 -> bf16 rounding of a finite f32 bit pattern, through exact rationals."""
    r = round_fraction(Fraction(f32_from_bits(bits)), 7, -126, 127)
    if isinstance(r, float):
        return 0xFF80 if r < 0 else 0x7F80
    if r == 0:
        return 0x8000 if bits & 0x80000000 else 0x0000
    return f32_bits(float(r)) >> 16


def exact_model(x, w_gate, w_up):
    """The same program evaluated with exact rationals and round_fraction (no struct, no double
    arithmetic): a second route to the result for the self-check."""
    def r32(q):
        r = round_fraction(q, 23, -126, 127)
        assert not isinstance(r, float), 'overflow'
        return r

    def r16(q):
        r = round_fraction(r32(q), 7, -126, 127)
        assert not isinstance(r, float), 'overflow'
        return r

    def row(w):
        acc = [Fraction(0)] * LANES
        for p in range(0, len(x), STEP):
            for i in range(LANES):
                j = p + 2 * i
                acc[i] = r32(r32(acc[i] + r32(Fraction(x[j]) * Fraction(w[j])))
                             + r32(Fraction(x[j + 1]) * Fraction(w[j + 1])))
        total = Fraction(0)
        for part in acc:
            total = r32(total + part)
        return total

    def mul(a, b):
        return r16(r32(r32(0 + r32(a * b)) + r32(Fraction(0) * 0)))

    gate, up = r16(row(w_gate)), r16(row(w_up))
    linear = mul(gate, r16(Fraction(1, 4)))
    scale = r16(r32(Fraction(1, 2) + linear))
    return float(mul(mul(gate, scale), up))


def self_check():
    failures = 0

    def check(what, got, expected, hex16=False):
        nonlocal failures
        ok = got == expected
        if not ok:
            failures += 1
        shown = lambda v: ('0x%04x' % v) if hex16 else repr(v)
        print('%s %-52s got %-12s expected %s' % ('ok  ' if ok else 'FAIL', what, shown(got),
                                                 shown(expected)))

    bf16_cases = [
        (0x3F800000, 0x3F80, '1.0 exact'),
        (0x3F807FFF, 0x3F80, 'below the tie rounds down'),
        (0x3F808000, 0x3F80, 'tie, even below: rounds down'),
        (0x3F808001, 0x3F81, 'above the tie rounds up'),
        (0x3F818000, 0x3F82, 'tie, odd below: rounds up to even'),
        (0xBF818000, 0xBF82, 'negative tie rounds away to even'),
        (0x3FFF8000, 0x4000, 'tie carries into the exponent'),
        (0x7FC00000, 0x7FC0, 'quiet NaN'),
        (0x7F800001, 0x7FC0, 'signalling NaN stays NaN (quieted)'),
        (0x7FFFFFFF, 0x7FFF, 'NaN with full payload'),
        (0xFF812345, 0xFFC1, 'negative NaN keeps sign and top payload'),
        (0x7F800000, 0x7F80, '+infinity'),
        (0xFF800000, 0xFF80, '-infinity'),
        (0x7F7F7FFF, 0x7F7F, 'largest value below the overflow tie'),
        (0x7F7F8000, 0x7F80, 'overflow tie rounds to +infinity'),
        (0x7F7FFFFF, 0x7F80, 'f32 max overflows to +infinity'),
        (0xFF7FFFFF, 0xFF80, '-f32 max overflows to -infinity'),
        (0x00000001, 0x0000, 'smallest subnormal rounds to zero'),
        (0x00008000, 0x0000, 'subnormal tie, even below: zero'),
        (0x0000C000, 0x0001, 'subnormal above the tie'),
        (0x00018000, 0x0002, 'subnormal tie, odd below: up'),
        (0x00012345, 0x0001, 'subnormal rounds down'),
        (0x807FFFFF, 0x8080, 'largest negative subnormal -> -min normal'),
        (0x80000000, 0x8000, '-0.0'),
    ]
    for bits, expected, what in bf16_cases:
        check('bf16(0x%08x) %s' % (bits, what), bf16_bits_from_f32_bits(bits), expected, True)

    f32_cases = [
        (1.0 + 2.0 ** -24, 1.0, 'f32 tie to even (down)'),
        (1.0 + 3 * 2.0 ** -24, 1.0 + 2.0 ** -22, 'f32 tie to even (up)'),
        (2.0 ** 128 - 2.0 ** 103, math.inf, 'f32 overflow tie -> inf'),
        (-(2.0 ** 128), -math.inf, 'f32 overflow -> -inf'),
        (2.0 ** 128 - 2.0 ** 104, 2.0 ** 128 - 2.0 ** 104, 'f32 max exact'),
        (2.0 ** -150, 0.0, 'half the smallest subnormal -> 0'),
        (3 * 2.0 ** -150, 2.0 ** -148, 'subnormal tie -> even'),
        (0.1, 13421773 * 2.0 ** -27, '0.1 -> f32'),
    ]
    for value, expected, what in f32_cases:
        check('f32(%r) %s' % (value, what), f32(value), expected)

    # bf16(0.25), multiply_bf16 and the literal form.
    check('bf16(0.25)', bf16_bits(0.25), 0x3E80, True)
    check('multiply_bf16(1.5, 1.5) = 2.25', multiply_bf16(1.5, 1.5), 2.25)
    check('multiply_bf16(1+2^-4, 1+2^-4): tie, even below', multiply_bf16(1 + 2 ** -4, 1 + 2 ** -4),
          1.125)
    check('multiply_bf16(1+2^-7, 1.5): tie, odd below', multiply_bf16(1 + 2 ** -7, 1.5),
          1.5 + 2 ** -6)
    check('multiply_bf16(-1, 0) = +0 (0.0 + -0.0)', math.copysign(1, multiply_bf16(-1.0, 0.0)), 1.0)

    # End to end on a hand-computable record (K = 32): gate_sum = 16, up_sum = 8,
    # linear = 4, scale = 4.5, gated = 72, projected = 576.
    result, _ = gated_projection([1.0] * 32, [0.5] * 32, [0.25] * 32)
    check('gated_projection(ones, 0.5, 0.25), K = 32', result, 576.0)
    # The lane order: lane 0 adds 1 then 2^-24 (a tie, stays 1); the other lanes are 0.
    check('row_sum lane rounding order', row_sum([1.0, 2.0 ** -24] + [0.0] * 30, [1.0] * 32), 1.0)
    check('row_sum reduction order', row_sum([2.0 ** 24, 0.0, 1.0, 0.0, 1.0] + [0.0] * 27,
                                             [1.0] * 32), 2.0 ** 24)

    # The whole model against the exact-rational route, on random records.
    rng = random.Random(7)
    mismatches = 0
    for k in (32, 512, 1024):
        for _ in range(3):
            x = [bf16_value(b) for b in random_bf16_bits(rng, k)]
            wg = [bf16_value(b) for b in random_bf16_bits(rng, k)]
            wu = [bf16_value(b) for b in random_bf16_bits(rng, k)]
            if gated_projection(x, wg, wu)[0] != exact_model(x, wg, wu):
                mismatches += 1
    check('model vs exact-rational model, 9 random records', mismatches, 0)

    # The .npy header layout.
    for n in (1, 512, 4096 * 8, 10 ** 9):
        data = npy_bytes('<u2', n, b'')
        check('npy header length for shape (%d,) %% 64' % n, len(data) % 64, 0)

    # Random cross-checks against exact rational rounding.
    rng = random.Random(20240601)
    mismatches = 0
    for _ in range(20000):
        exponent = rng.randrange(0, 255)
        bits = (rng.randrange(2) << 31) | (exponent << 23) | rng.randrange(1 << 23)
        # Most cases at or next to a rounding tie.
        bits = (bits & 0xFFFF0000) | rng.choice([bits & 0xFFFF, 0x8000, 0x8000, 0x7FFF, 0x8001])
        if exponent == 255:
            continue
        if bf16_bits_from_f32_bits(bits) != reference_bf16_bits(bits):
            mismatches += 1
            if mismatches <= 5:
                print('FAIL bf16 rounding of 0x%08x: 0x%04x, exact rounding gives 0x%04x'
                      % (bits, bf16_bits_from_f32_bits(bits), reference_bf16_bits(bits)))
    check('bf16 rounding vs exact rationals, 20000 random f32', mismatches, 0)

    mismatches = 0
    for trial in range(20000):
        # Two bf16 products (exact) and f32 sums at nearby or far exponents.
        a = f32_from_bits(rng.getrandbits(32) & 0xBFFFFFFF)  # finite, |a| < 2
        scale = rng.choice([1.0, 2.0 ** -10, 2.0 ** -24, 2.0 ** -30, 2.0 ** 20])
        b = f32(rng.uniform(-2, 2) * scale)
        x, w = bf16(rng.uniform(-4, 4)), bf16(rng.uniform(-4, 4))
        for got, exact, what in ((f32(a + b), Fraction(a) + Fraction(b), 'sum'),
                                 (f32(a - b), Fraction(a) - Fraction(b), 'difference'),
                                 (f32(a * b), Fraction(a) * Fraction(b), 'product'),
                                 (f32(x * w), Fraction(x) * Fraction(w), 'bf16 product')):
            expected = reference_f32(exact)
            if got != expected:
                mismatches += 1
                if mismatches <= 5:
                    print('FAIL f32 %s of %r and %r: %r, exact rounding gives %r'
                          % (what, a, b, got, expected))
    check('f32 +, -, * vs exact rationals, 80000 cases', mismatches, 0)

    print('self-check: %s' % ('passed' if failures == 0 else '%d FAILED' % failures))
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--k', type=int, help='row width K (multiple of 32; 512..4096 in the example)')
    parser.add_argument('--records', type=int, default=1, help='number of input records (default 1)')
    parser.add_argument('--seed', type=int, default=0, help='random.Random seed (default 0)')
    parser.add_argument('--out', help='directory for input.npy, weights.npy, output.npy')
    parser.add_argument('--trace', action='store_true', help='print the intermediate values')
    parser.add_argument('--self-check', action='store_true', help='check the rounding helpers')
    args = parser.parse_args()
    if args.self_check:
        return self_check()
    if args.k is None or args.out is None:
        parser.error('--k and --out are required (or --self-check)')
    return run(args)


if __name__ == '__main__':
    sys.exit(main())
