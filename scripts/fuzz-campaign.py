#!/usr/bin/env python3
"""A bad-input campaign against the Loom tools (`make fuzz-artifacts`).

Mutates `.xdna` artifacts (TXN words, tile images, ELF headers and section
tables, truncation, appended bytes), MLIR bytecode and Loom text, runs each
mutant through `loom-test --device=sim`, `loom-format`, `loom-opt` or
`loom-compile` under a time limit, and classifies every run:

  pass            exit 0
  clean error     exit 1 with an MLIR-style `error:` and no panic
  reported fail   loom-test exit 1 with a FAIL line for a scenario
  panic           a Rust panic message, whatever the exit status
  crash           ended by a signal, or an exit status other than 0/1
  hang            still running at the time limit (killed)
  leftover        a failed run left its output, or any run left a
                  temporary `.loom-*` file

The contract (docs/fuzzing.md) is no panic, crash, hang or leftover. Each
such finding is kept under --findings with the command that reproduces it.

    scripts/fuzz-campaign.py [--runs N] [--seed S] [--jobs J] [--timeout SECONDS]

Environment: LOOM_BIN_DIR (default target/release, else target/debug).
"""

import argparse
import collections
import concurrent.futures
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "gated-projection.loom")
SCENARIOS = ["--scenario-file=" + EXAMPLE, "--scenario=k512"]
ROOT_FLAG = "--root=@ffn_gate_up_quadratic_bf16"
CONFIG = "--config=ffn_gate_up.input_size=512"
PROFILES = ["amd.xdna.strix.17f0_10", "amd.xdna.strix_halo.17f0_11"]
BAD = ("panic", "crash", "hang", "leftover")


def binaries():
    given = os.environ.get("LOOM_BIN_DIR")
    for candidate in [given] if given else [os.path.join(ROOT, "target", p) for p in ("release", "debug")]:
        if candidate and os.path.exists(os.path.join(candidate, "loom-test")):
            return candidate
    sys.exit("fuzz-campaign: no loom binaries; run `make build` (or set LOOM_BIN_DIR)")


def tool(name):
    return os.path.join(BIN, name)


def seeds(work):
    """The inputs mutated: artifacts of both profiles, bytecode, text."""
    artifacts = []
    for profile in PROFILES:
        out = os.path.join(work, f"{profile}.xdna")
        subprocess.run([tool("loom-compile"), EXAMPLE, ROOT_FLAG, CONFIG, "--format=xdna",
                        f"--target=amd.xdna.aie2p:{profile}", "-o", out], check=True)
        artifacts.append(open(out, "rb").read())
    bytecode = os.path.join(work, "example.loombc")
    subprocess.run([tool("loom-format"), EXAMPLE, "--to=bc", "-o", bytecode], check=True)
    return artifacts, open(bytecode, "rb").read(), open(EXAMPLE, "rb").read()


def elf_sections(data):
    """(name, offset, size) of each section of an ELF32 file."""
    shoff, shnum, shstrndx = struct.unpack_from("<IHH", data, 32)[0], *struct.unpack_from("<HH", data, 48)
    strtab = struct.unpack_from("<I", data, shoff + 40 * shstrndx + 16)[0]
    found = []
    for i in range(shnum):
        name, _, _, _, offset, size = struct.unpack_from("<IIIIII", data, shoff + 40 * i)
        end = data.index(0, strtab + name)
        found.append((data[strtab + name:end].decode(), offset, size))
    return found


INTERESTING = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]


def mutate_bytes(rng, data, region=None):
    data = bytearray(data)
    start, size = region or (0, len(data))
    size = max(size, 1)
    kind = rng.choice(["flip", "byte", "word", "truncate", "append", "zero"])
    at = start + rng.randrange(size)
    if kind == "flip" and at < len(data):
        data[at] ^= 1 << rng.randrange(8)
    elif kind == "byte" and at < len(data):
        data[at] = rng.randrange(256)
    elif kind == "word" and at + 4 <= len(data):
        struct.pack_into("<I", data, at & ~3, rng.choice(INTERESTING + [rng.getrandbits(32)]))
    elif kind == "truncate":
        del data[rng.randrange(len(data)):]
    elif kind == "append":
        data += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    else:
        for i in range(at, min(at + rng.randrange(1, 32), len(data))):
            data[i] = 0
    return kind, bytes(data)


def mutate_artifact(rng, data):
    sections = {name: (offset, size) for name, offset, size in elf_sections(data)}
    regions = {
        "txn": sections.get(".ctrltext"),
        "tile image": next((v for k, v in sections.items() if k.startswith(".tile.")), None),
        "elf header": (0, 52),
        "program headers": (52, 96),
        "section table": (struct.unpack_from("<I", data, 32)[0], 40 * struct.unpack_from("<H", data, 48)[0]),
        "anywhere": None,
    }
    where = rng.choice(list(regions))
    kind, mutant = mutate_bytes(rng, data, regions[where])
    return f"xdna {where} {kind}", mutant


def mutate_text(rng, text):
    lines = text.decode().split("\n")
    kind = rng.choice(["delete line", "duplicate line", "digits", "swap tokens", "insert", "truncate"])
    i = rng.randrange(len(lines))
    if kind == "delete line":
        del lines[i]
    elif kind == "duplicate line":
        lines.insert(i, lines[i])
    elif kind == "digits":
        line = lines[i]
        digits = [j for j, c in enumerate(line) if c.isdigit()]
        if digits:
            j = rng.choice(digits)
            replacement = rng.choice(["0", "9" * rng.randrange(1, 30), "-1", str(rng.getrandbits(64))])
            lines[i] = line[:j] + replacement + line[j + 1:]
    elif kind == "swap tokens":
        words = lines[i].split(" ")
        if len(words) > 2:
            a, b = rng.randrange(len(words)), rng.randrange(len(words))
            words[a], words[b] = words[b], words[a]
            lines[i] = " ".join(words)
    elif kind == "insert":
        line = lines[i]
        j = rng.randrange(len(line) + 1)
        lines[i] = line[:j] + rng.choice(["{", "}", "(", ")", "<", ">", "%", "@", ":", ",", "\"", "\\0", "\u00e9"]) + line[j:]
    else:
        lines = lines[:i]
    return f"text {kind}", "\n".join(lines).encode()


def command(rng, family, path, out):
    """The tool run on a mutant, writing (when it writes) to `out`."""
    if family == "xdna":
        return [tool("loom-test"), path, "--device=sim"] + SCENARIOS
    if family == "bytecode":
        choice = rng.choice(["format", "opt", "compile"])
    else:
        choice = rng.choice(["format", "opt", "compile", "compile-xdna", "test"])
    return {
        "format": [tool("loom-format"), path, "-o", out],
        "opt": [tool("loom-opt"), path, "-o", out],
        "compile": [tool("loom-compile"), path, ROOT_FLAG, CONFIG, "-o", out],
        "compile-xdna": [tool("loom-compile"), path, ROOT_FLAG, CONFIG, "--format=xdna",
                         f"--target=amd.xdna.aie2p:{rng.choice(PROFILES)}", "-o", out],
        "test": [tool("loom-test"), path, "--device=sim", "--scenario=k512"],
    }[choice]


def classify(run, timed_out, directory, out, wrote):
    stderr = run.stderr.decode(errors="replace") if run else ""
    left = [n for n in os.listdir(directory) if n.startswith(".loom-")]
    if timed_out:
        return "hang"
    if "panicked" in stderr:
        return "panic"
    if run.returncode not in (0, 1):
        return "crash"
    if left or (run.returncode != 0 and wrote and os.path.exists(out)):
        return "leftover"
    if run.returncode == 0:
        return "pass"
    if "FAIL " in run.stdout.decode(errors="replace"):
        return "reported fail"
    return "clean error" if "error:" in stderr else "crash"


def one(job):
    index, seed, family, mutation, data, timeout, findings = job
    rng = random.Random(seed)
    directory = tempfile.mkdtemp(prefix="loom-fuzz-")
    try:
        suffix = {"xdna": ".xdna", "bytecode": ".loombc", "text": ".loom"}[family]
        path = os.path.join(directory, "input" + suffix)
        open(path, "wb").write(data)
        out = os.path.join(directory, "out.result")
        argv = command(rng, family, path, out)
        timed_out, run = False, None
        try:
            run = subprocess.run(argv, capture_output=True, timeout=timeout, cwd=directory)
        except subprocess.TimeoutExpired:
            timed_out = True
        verdict = classify(run, timed_out, directory, out, "-o" in argv)
        if verdict in BAD:
            keep = os.path.join(findings, f"{verdict}-{index}")
            os.makedirs(keep, exist_ok=True)
            shutil.copy(path, keep)
            stderr = run.stderr.decode(errors="replace") if run else ""
            open(os.path.join(keep, "command"), "w").write(
                " ".join(argv).replace(directory, ".") + f"\n# {mutation}\n{stderr[-2000:]}")
        return family, mutation, verdict
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--findings", default=os.path.join(ROOT, "target", "fuzz-findings"))
    args = parser.parse_args()
    global BIN
    built = binaries()
    os.makedirs(args.findings, exist_ok=True)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as work:
        # A copy of the binaries: a rebuild during the campaign must not
        # change (or remove) what it runs.
        BIN = os.path.join(work, "bin")
        os.makedirs(BIN)
        for name in ("loom-format", "loom-opt", "loom-compile", "loom-test"):
            shutil.copy2(os.path.join(built, name), BIN)
        artifacts, bytecode, text = seeds(work)
        jobs = []
        for index in range(args.runs):
            family = rng.choice(["xdna", "xdna", "bytecode", "text"])
            if family == "xdna":
                mutation, data = mutate_artifact(rng, rng.choice(artifacts))
            elif family == "bytecode":
                kind, data = mutate_bytes(rng, bytecode)
                mutation = f"bytecode {kind}"
            else:
                mutation, data = mutate_text(rng, text)
            jobs.append((index, rng.getrandbits(32), family, mutation, data, args.timeout, args.findings))
        started = time.monotonic()
        verdicts = collections.Counter()
        by_family = collections.defaultdict(collections.Counter)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for family, mutation, verdict in pool.map(one, jobs):
                verdicts[verdict] += 1
                by_family[family][verdict] += 1
        seconds = time.monotonic() - started
    print(f"{args.runs} runs (seed {args.seed}, {args.jobs} jobs, {seconds:.0f} s, binaries {os.path.relpath(built, ROOT)})")
    for family in sorted(by_family):
        print(f"  {family:9} " + ", ".join(f"{v}: {n}" for v, n in sorted(by_family[family].items())))
    bad = sum(verdicts[v] for v in BAD)
    print("  " + ", ".join(f"{v}: {verdicts[v]}" for v in BAD) + (f"; findings in {args.findings}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
