#!/usr/bin/env python3
"""Every Catch2 test case's name can be a CTest test's name: catch_discover_tests hands each name to CTest, which
splits a name at ';' into two tests that match no Catch2 case and fail with "No tests ran" (it happened twice in
session 11). Prints each offending TEST_CASE with its file and line and exits 1.

  tests/names/check_test_names.py SOURCE_ROOT
"""
import pathlib
import re
import sys

# TEST_CASE("name" ...) and SCENARIO("name" ...), the name a plain string literal (escaped quotes allowed).
CASE = re.compile(r'\b(?:TEST_CASE|SCENARIO|TEST_CASE_METHOD\s*\(\s*\w+\s*,)\s*\(?\s*"((?:[^"\\]|\\.)*)"')
SKIP = {"build", ".git", "third_party"}


def offending(root):
    for path in sorted(root.rglob("*.cc")):
        if SKIP & set(path.relative_to(root).parts):
            continue
        text = path.read_text(errors="replace")
        for m in CASE.finditer(text):
            if ";" in m.group(1):
                line = text.count("\n", 0, m.start()) + 1
                yield f"{path.relative_to(root)}:{line}: test case name holds ';' (CTest splits it): {m.group(1)}"


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    bad = list(offending(pathlib.Path(sys.argv[1])))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
