"""Run every compile-pipeline pass alone on every given module and check that
it succeeds and leaves a module that parses and verifies again.

Each pass must accept any valid module, so that a pipeline can be cut
anywhere (`loom-opt --NAME`) and its stages compared.

Usage: each-pass.py MODULE...   (loom-opt on PATH)
"""
import subprocess
import sys

PASSES = [
    "--loom-specialize-config",
    "--loom-inline",
    "--loom-canonicalize",
    "--loom-cse",
    "--loom-structured-to-cfg",
    "--loom-resolve-target=target=amd.xdna.aie2p:amd.xdna.strix_halo.17f0_11",
    "--outline-pipeline-strands",
]

failures = 0
for module in sys.argv[1:]:
    for flag in PASSES:
        run = subprocess.run(["loom-opt", "--split-input-file", module, flag],
                             capture_output=True, text=True)
        again = run.returncode == 0 and subprocess.run(
            ["loom-opt", "--split-input-file", "-"], input=run.stdout,
            capture_output=True, text=True)
        if run.returncode != 0 or again.returncode != 0:
            failures += 1
            err = run.stderr if run.returncode != 0 else again.stderr
            print(f"FAILED: loom-opt {module} {flag}\n{err}")
print(f"{len(sys.argv) - 1} modules x {len(PASSES)} passes, {failures} failed")
sys.exit(1 if failures else 0)
