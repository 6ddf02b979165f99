#!/usr/bin/env python3
"""Structure rules that `make check` enforces (docs/architecture.md):

- no import cycle between the modules of a crate: module A uses B (a `use`
  or a path through `crate::` or `super::`) and B uses A, directly or
  through others. A module's own submodules extending it (`array/dma.rs`
  adding methods to `Array`) are its parts, not a cycle: a child's use of
  an ancestor does not count. Test modules and comments are left out.
- the interpreter does not import the simulator (`runtime/src/interp/`
  names no `crate::sim`).
- the crates that must not link MLIR do not depend on it (`cargo tree`).

Prints each violation and exits 1, or prints a one-line summary.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(ROOT)
CRATES = {
    "loom-dialects": "dialects/src",
    "loom-passes": "passes/src",
    "loom-runtime": "runtime/src",
    "loom-translate": "runtime/translate/src",
    "loom-targets": "targets/src",
    "loom-aie2p-isa": "targets/aie2p-isa/src",
    "loom-aie2p-codegen": "targets/aie2p-codegen/src",
    "loom-xdna-backend": "targets/xdna-backend/src",
    "loom-diagnostic": "tools/diagnostic/src",
    "loom-tools": "tools/src",
    "loom-isa-tools": "tools/isa/src",
}
WITHOUT_MLIR = ["loom-runtime", "loom-targets", "loom-aie2p-isa", "loom-aie2p-codegen", "loom-isa-tools", "loom-diagnostic"]


def module_name(root, path):
    parts = os.path.relpath(path, root)[:-3].split("/")
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return "::".join(parts)


def uses(module, source, names):
    """The modules of this crate that `module` uses (not its ancestors)."""
    cut = source.find("#[cfg(test)]")
    source = source if cut < 0 else source[:cut]
    source = re.sub(r"//[^\n]*", "", source)
    found = set()
    for kind, path in re.findall(r"\b(crate|super)((?:::\w+)+)", source):
        segments = path.strip(":").split("::")
        base = []
        if kind == "super":
            base = module.split("::")[:-1]
            while segments and segments[0] == "super":
                base, segments = base[:-1], segments[1:]
        full = base + segments
        for k in range(len(full), 0, -1):
            candidate = "::".join(full[:k])
            if candidate in names:
                if candidate != module and not module.startswith(candidate + "::"):
                    found.add(candidate)
                break
    return found


def cycles(edges):
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main():
    problems = []
    modules = 0
    for crate, root in CRATES.items():
        sources = {}
        for directory, _, files in os.walk(root):
            if "bin" in directory.split("/"):
                continue
            for name in files:
                if name.endswith(".rs"):
                    path = os.path.join(directory, name)
                    sources[module_name(root, path)] = open(path, encoding="utf-8").read()
        modules += len(sources)
        edges = {m: uses(m, s, set(sources)) for m, s in sources.items()}
        for component in cycles(edges):
            problems.append(f"{crate}: import cycle between modules {', '.join(component)}")
    for directory, _, files in os.walk("runtime/src/interp"):
        for name in files:
            path = os.path.join(directory, name)
            if "crate::sim" in re.sub(r"//[^\n]*", "", open(path, encoding="utf-8").read()):
                problems.append(f"{path}: the interpreter imports the simulator")
    for crate in WITHOUT_MLIR:
        tree = subprocess.run(["cargo", "tree", "-p", crate, "-e", "normal", "--prefix", "none"],
                              capture_output=True, text=True, check=True).stdout
        if re.search(r"^(mlir-sys|melior) ", tree, re.M):
            problems.append(f"{crate}: depends on MLIR (cargo tree -p {crate})")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"structure: {len(CRATES)} crates, {modules} modules, no import cycle; "
          f"the interpreter does not import the simulator; {', '.join(WITHOUT_MLIR)} link no MLIR")
    return 0


if __name__ == "__main__":
    sys.exit(main())
