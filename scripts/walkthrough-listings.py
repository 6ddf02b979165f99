#!/usr/bin/env python3
"""Print one complete Loom listing of the walkthrough, exactly as written there.

Usage: walkthrough-listings.py WALKTHROUGH NAME
NAME: fill-input | drain-output | pipeline-body | outlined-module
Used by lit tests to prove that the project's copies are verbatim.
"""
import sys

def block(lines, first, stop):
    start = next(i for i, l in enumerate(lines) if l.startswith(first))
    out = []
    for line in lines[start:]:
        out.append(line)
        if stop(line, out):
            break
    return out

def main():
    path, name = sys.argv[1], sys.argv[2]
    lines = open(path, encoding="utf-8").read().split("\n")
    if name == "fill-input":
        out = block(lines, "func.def inline @fill_input", lambda l, o: l == "}")
    elif name == "drain-output":
        out = block(lines, "func.def inline @drain_output", lambda l, o: l == "}")
    elif name == "pipeline-body":
        out = block(lines, "pipeline.def<kernel> public retain target(@npu)", lambda l, o: l == "}")
    elif name == "outlined-module":
        out = block(lines, "aie2p.target<array> @npu",
                    lambda l, o: l.startswith("aie2p.target<core> @__loom_target_context_1_1"))
    else:
        sys.exit(f"unknown listing {name}")
    sys.stdout.write("\n".join(out) + "\n")

main()
