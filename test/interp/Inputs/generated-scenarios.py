"""Print loom-test scenarios for the first N units of a module written by
scripts/gen-module.py: each unit's pipeline with its own K (the bottom of its
declared range) and record count (1 + unit % 4), seeded random inputs.

Usage: generated-scenarios.py N
"""
import sys

for u in range(int(sys.argv[1])):
    k = 512 + 32 * (u % 8)
    records = 1 + u % 4
    print(f"// TEST-SCENARIO: unit{u} entry=@ffn_gate_up_quadratic_bf16_{u} config=ffn_gate_up_{u}.input_size={k}")
    print(f"// TEST-BIND: unit{u} %input_arg = random(bf16, {records * k}, seed={2 * u + 1})")
    print(f"// TEST-BIND: unit{u} %weights_arg = random(bf16, {2 * k}, seed={2 * u + 2})")
    print(f"// TEST-BIND: unit{u} %output_arg = zeros(f32, {records})")
