#!/usr/bin/env python3
"""The first values of the scenario binding random(bf16, 4, seed=1, min=-1, max=1) under the
rule of docs/semantics.md ("The random generator"), as hex bit patterns. Python 3 stdlib only.

    splitmix_check.py            # the four bf16 bit patterns, one per line
    splitmix_check.py --verbose  # also the SplitMix64 outputs, u, v and the f32 step
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ next to the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gated_projection import bf16_bits_from_f32_bits, f32_bits  # noqa: E402

MASK = (1 << 64) - 1


def splitmix64(seed):
    state = seed & MASK
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def random_binding(element, count, seed, minimum, maximum):
    """Yields (out, u, v, f32 bits, element bits) for each element."""
    outputs = splitmix64(seed)
    for _ in range(count):
        out = next(outputs)
        u = (out >> 11) * 2.0 ** -53
        v = minimum + (maximum - minimum) * u  # double
        bits32 = f32_bits(v)
        yield out, u, v, bits32, (bf16_bits_from_f32_bits(bits32) if element == 'bf16' else bits32)


def main():
    # Known SplitMix64 outputs (Vigna's splitmix64.c): seed 0 starts 0xe220a8397b1dcdaf.
    first = next(splitmix64(0))
    if first != 0xE220A8397B1DCDAF:
        sys.exit('splitmix64 self-test failed: seed 0 gave 0x%016x' % first)
    verbose = '--verbose' in sys.argv[1:]
    for k, (out, u, v, bits32, bits) in enumerate(random_binding('bf16', 4, 1, -1.0, 1.0)):
        if verbose:
            print('%d: out=0x%016x u=%r v=%r f32=0x%08x bf16=0x%04x' % (k, out, u, v, bits32, bits))
        else:
            print('0x%04x' % bits)
    return 0


if __name__ == '__main__':
    sys.exit(main())
