#!/usr/bin/env python3
"""The artifacts every program in the repository compiles to, as a manifest.

For each public pipeline root of every `.loom` file under `test/` and
`examples/`, with each configuration its TEST-SCENARIO lines give it (found
anywhere in the tree, since scenario files may stand apart from the module),
and for each device profile, run

    loom-compile FILE --root=@ROOT --target=amd.xdna.aie2p:PROFILE
                 [--config=NAME=VALUE ...] --format=xdna -o OUT

and print one line: the SHA-256 of the `.xdna` bytes, or `refused` and the
SHA-256 of the diagnostics, then the case. A structural change that must not
change behaviour keeps the manifest byte-identical:

    scripts/artifact-manifest.py > before.txt
    ... change ...
    scripts/artifact-manifest.py > after.txt && diff before.txt after.txt

Environment: LOOM_BIN_DIR (default target/debug).
"""

import hashlib
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILES = ["amd.xdna.strix.17f0_10", "amd.xdna.strix_halo.17f0_11"]
PUBLIC = re.compile(r"^(?:pipeline|func)\.def\S*\s+public\b.*?@([\w.$-]+)\(", re.M)
SCENARIO = re.compile(r"TEST-SCENARIO:\s*\S+\s+entry=@([\w.$-]+)(?:\s+config=(\S+))?")


def sources():
    for top in ("test", "examples"):
        for directory, _, files in os.walk(os.path.join(ROOT, top)):
            for name in sorted(files):
                if name.endswith(".loom"):
                    yield os.path.join(directory, name)


def main():
    binary = os.path.join(os.environ.get("LOOM_BIN_DIR", os.path.join(ROOT, "target", "debug")), "loom-compile")
    files = sorted(sources())
    texts = {path: open(path, encoding="utf-8", errors="replace").read() for path in files}
    configs = {}
    for text in texts.values():
        for entry, config in SCENARIO.findall(text):
            configs.setdefault(entry, set()).add(config or "")
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "a.xdna")
        for path in files:
            for root in sorted(set(PUBLIC.findall(texts[path]))):
                for config in sorted(configs.get(root, {""})):
                    for profile in PROFILES:
                        command = [binary, os.path.relpath(path, ROOT), f"--root=@{root}",
                                   f"--target=amd.xdna.aie2p:{profile}", "--format=xdna", "-o", out]
                        command += [f"--config={c}" for c in config.split(",") if c]
                        if os.path.exists(out):
                            os.remove(out)
                        run = subprocess.run(command, cwd=ROOT, capture_output=True)
                        if run.returncode == 0:
                            digest = hashlib.sha256(open(out, "rb").read()).hexdigest()
                        else:
                            digest = "refused " + hashlib.sha256(run.stderr).hexdigest()[:16]
                        case = f"{os.path.relpath(path, ROOT)} @{root} [{config}] {profile}"
                        print(f"{digest} {case}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
