#!/usr/bin/env python3
"""Every YAML input (and config.json, which is read as YAML) goes through common/yaml_reader.h (load_yaml_file,
parse_yaml_text), whose limits (common/yaml_limits.h) refuse an alias cycle, an alias bomb and a nesting past the
limit before anything walks the tree. A direct YAML::Load, LoadFile or LoadAll in the product's code would skip
them (issue 27: an 11-byte alias cycle crashed every loader): this lists any, and fails when there is one.
Tests and benchmarks, which load their own text, are left out. Usage: check_yaml_loaders.py SOURCE_DIR"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
allowed = {"common/yaml_reader.cc", "common/yaml_limits.cc"}
skipped_dirs = {"build", "tests", ".git"}
load = re.compile(r"\bYAML::(Load|LoadFile|LoadAll|LoadAllFromFile)\s*\(")
found = []
for path in sorted(root.rglob("*")):
    rel = path.relative_to(root)
    if path.suffix not in {".cc", ".h", ".cu"} or rel.parts[0] in skipped_dirs or rel.parts[0].startswith("build"):
        continue
    if path.name.endswith(("_test.cc", "_benchmark.cc")) or str(rel) in allowed:
        continue
    for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if load.search(line):
            found.append(f"{rel}:{n}: {line.strip()}")
if found:
    print("YAML read around common/yaml_reader.h (use load_yaml_file or parse_yaml_text):", *found, sep="\n  ")
    sys.exit(1)
print("every YAML input goes through common/yaml_reader.h")
