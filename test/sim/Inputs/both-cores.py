"""The differential oracle of the simulator's two cores (test/sim/both-cores.test).

For each program given, on each profile: loom-test runs its scenarios on the
instruction-level core (machine code), on the Low IR core and on the
interpreter, each saving every buffer it finished with (--save-buffers); the
three runs must end the same way (the same verdict per scenario) and leave the
same bytes in every buffer. Prints one line per program and profile, or the
first difference, and exits 1 if there was one.

usage: both-cores.py LOOM_TEST WORK [--target T]... -- [--sim-only] PROGRAM [ARGS...] [-- ...]

--sim-only: the program is an artifact or a native module, which the
interpreter does not run: the two cores are compared with each other only.
"""
import filecmp
import os
import re
import subprocess
import sys


def run(loom_test, program, extra, device, out):
    command = [loom_test, program, *extra, *device, f"--save-buffers={out}"]
    done = subprocess.run(command, capture_output=True, text=True)
    verdicts = re.findall(r"^(PASS|FAIL) (\S+)", done.stdout, re.M)
    return done.returncode, verdicts, done.stdout + done.stderr


def files(root):
    found = []
    for folder, _, names in os.walk(root):
        found += [os.path.relpath(os.path.join(folder, n), root) for n in names]
    return sorted(found)


def main(argv):
    loom_test, work, rest = argv[0], argv[1], argv[2:]
    targets = []
    while rest and rest[0] == "--target":
        targets.append(rest[1])
        rest = rest[2:]
    programs, current = [], None
    for word in rest:
        if word == "--":
            current = []
            programs.append(current)
        else:
            current.append(word)
    failed = False
    for n, words in enumerate(programs):
        sim_only = words[0] == "--sim-only"
        program, *extra = words[1:] if sim_only else words
        for target in targets:
            base = os.path.join(work, f"{n}-{target.split(':')[-1]}")
            devices = {
                "isa": ["--device=sim", "--core=isa", f"--target={target}"],
                "lowir": ["--device=sim", "--core=lowir", f"--target={target}"],
            }
            if not sim_only:
                devices["interp"] = ["--device=interp"]
            runs = {k: run(loom_test, program, extra, d, os.path.join(base, k)) for k, d in devices.items()}
            name = os.path.basename(program)
            code, verdicts, text = runs["isa"]
            if not verdicts:
                print(f"DIFFERENT {name} on {target}: no scenario ran on the isa core:\n{text}")
                failed = True
                continue
            difference = None
            for other in list(devices)[1:]:
                o_code, o_verdicts, o_text = runs[other]
                if (o_code, o_verdicts) != (code, verdicts):
                    difference = f"isa core {verdicts} (exit {code}) but {other} {o_verdicts} (exit {o_code}):\n{text}{o_text}"
                    break
                mine, theirs = os.path.join(base, "isa"), os.path.join(base, other)
                listed = files(mine) if os.path.isdir(mine) else []
                if listed != (files(theirs) if os.path.isdir(theirs) else []):
                    difference = f"the isa core saved {listed}, {other} others"
                    break
                for f in listed:
                    if not filecmp.cmp(os.path.join(mine, f), os.path.join(theirs, f), shallow=False):
                        difference = f"buffer {f} differs between the isa core and {other}"
                        break
                if difference:
                    break
            if difference:
                print(f"DIFFERENT {name} on {target}: {difference}")
                failed = True
            else:
                size = sum(os.path.getsize(os.path.join(base, "isa", f)) for f in files(os.path.join(base, "isa"))) if os.path.isdir(os.path.join(base, "isa")) else 0
                passed = sum(1 for v, _ in verdicts if v == "PASS")
                print(f"same {name} on {target.split(':')[-1]}: {len(verdicts)} scenarios ({passed} pass), {size} buffer bytes on {', '.join(devices)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
