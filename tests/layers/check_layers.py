#!/usr/bin/env python3
"""Checks that the include graph runs one way: every #include "..." of a project file goes to its own layer or a
lower one (the table below, drawn in docs/ARCHITECTURE.md), and no chain of includes between units (foo.h with
foo.cc) comes back to where it started. A test file (*_test.cc, *_benchmark.cc) may also include its layer's testing/ helpers.

Usage: check_layers.py [SOURCE_DIR]   exit 0 when the graph is one-way, 1 with every violation listed."""
import os
import re
import sys

# Lowest first. A file in a layer may include files of its own layer and of every layer listed before it, except
# those named in NOT_BELOW (validate/gpu stands beside the simulator, not on it).
LAYERS = [
    "common",
    "workloads",
    "hw",
    "parallel",
    "policies",
    "program",
    "validate/gpu",
    "sim",
    "experiment",
    "validate/calibrate",
    "cli",
    "fuzz",
    "tests",
]
NOT_BELOW = {"sim": {"validate/gpu"}, "experiment": {"validate/gpu"}}
SOURCE_SUFFIXES = (".h", ".cc", ".cu")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    best = None
    for name in LAYERS:
        if path == name or path.startswith(name + "/"):
            if best is None or len(name) > len(best):
                best = name
    return best


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
    rank = {name: i for i, name in enumerate(LAYERS)}
    files = {}
    for top in LAYERS:
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            continue
        for d, _, names in os.walk(base):
            for n in names:
                if n.endswith(SOURCE_SUFFIXES):
                    rel = os.path.relpath(os.path.join(d, n), root)
                    files[rel] = [m.group(1) for line in open(os.path.join(root, rel), encoding="utf-8", errors="replace")
                                  if (m := INCLUDE.match(line))]
    problems = []
    edges = {}
    for f, incs in sorted(files.items()):
        lf = layer_of(f)
        for inc in incs:
            if inc not in files:
                continue  # a system or generated header
            li = layer_of(inc)
            edges.setdefault(f, []).append(inc)
            if li is None or lf is None:
                continue
            if rank[li] > rank[lf] or li in NOT_BELOW.get(lf, set()):
                problems.append(f"{f}: includes {inc} ({li} is not below {lf})")
    # cycles between units: a header and its .cc are one unit (foo.h + foo.cc), so that foo.cc including bar.h while
    # bar.cc includes foo.h is the cycle it is
    unit = lambda path: path.rsplit(".", 1)[0]
    unit_edges = {}
    for f, gs in edges.items():
        for g in gs:
            if unit(g) != unit(f):
                unit_edges.setdefault(unit(f), set()).add(unit(g))
    edges = {u: sorted(v) for u, v in unit_edges.items()}
    state = {}
    stack = []

    def visit(f):
        state[f] = 1
        stack.append(f)
        for g in edges.get(f, []):
            if state.get(g) == 1:
                cycle = stack[stack.index(g):] + [g]
                problems.append("include cycle: " + " -> ".join(cycle))
            elif g not in state:
                visit(g)
        stack.pop()
        state[f] = 2

    sys.setrecursionlimit(100000)
    for f in sorted(edges):
        if f not in state:
            visit(f)
    for p in problems:
        print(p)
    print(f"{len(files)} files, {sum(len(v) for v in edges.values())} project includes, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
