#!/usr/bin/env python3
"""Checks that keep the compiler's structure: one place per fact.

1. No code decides on a graph node's op by its name: comparisons of `op` or
   `.op` with a string that names an op of include/nxc/Sema/Ops.def belong
   nowhere but Ops.def (code compares with Op values or switches over them).
2. No source file in lib/ grows past MAX_LINES lines.
3. The command line stays thin: no file of tools/nxc/ past CLI_MAX_LINES
   lines but CommandLine.cpp, the table of options and their help; what a
   command decides lives in lib/ (lib/Build, lib/Jit).
4. No line of C/C++ source (lib/, tools/, include/, runtime/) is longer than
   MAX_COLUMNS, the .clang-format limit.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_LINES = 800
MAX_COLUMNS = 120
CLI_MAX_LINES = 130
# Files allowed above MAX_LINES, with the most lines each may have (none
# today: a file that outgrows the limit is split by family instead).
LONG_FILES = {}


def sources(*dirs):
    for d in dirs:
        for base, _, files in os.walk(os.path.join(ROOT, d)):
            for f in files:
                if f.endswith((".cpp", ".h", ".c")):
                    yield os.path.join(base, f)


def main():
    names = set(re.findall(r'^NXC_OP\(\w+, "(\w+)"', open(os.path.join(ROOT, "include/nxc/Sema/Ops.def")).read(), re.M))
    assert len(names) > 100, "Ops.def lists the ops"
    # A node's op, an MLIR op's name, or opName(...) against a string literal.
    compare = re.compile(r'(?:\.op|\bop|\bopName\([^)]*\)|stripDialect\(\)(?:\.str\(\))?)\s*[!=]=\s*"(\w+)"')
    for sample in ('n.op == "exp"', 'if (op != "dot")', 'op->getName().stripDialect() == "sum"'):
        assert compare.search(sample), sample  # the check itself finds what it looks for
    problems = []
    for path in sources("lib", "tools", "include", "runtime"):
        rel = os.path.relpath(path, ROOT)
        text = open(path, encoding="utf-8").read()
        for number, line in enumerate(text.splitlines(), 1):
            if len(line) > MAX_COLUMNS:
                problems.append(f"{rel}:{number}: {len(line)} columns, more than {MAX_COLUMNS} (clang-format it)")
            for m in compare.finditer(line):
                if m.group(1) in names:
                    problems.append(f"{rel}:{number}: compares an op by its name \"{m.group(1)}\" (use Op::...)")
        if rel.startswith("lib/"):
            lines = text.count("\n")
            most = LONG_FILES.get(rel, MAX_LINES)
            if lines > most:
                problems.append(f"{rel}: {lines} lines, more than {most}: split it by family")
        if rel.startswith("tools/nxc/") and not rel.endswith("CommandLine.cpp"):
            lines = text.count("\n")
            if lines > CLI_MAX_LINES:
                problems.append(f"{rel}: {lines} lines, more than {CLI_MAX_LINES}: move the decisions into lib/")
    for rel, most in LONG_FILES.items():
        path = os.path.join(ROOT, rel)
        if os.path.exists(path) and open(path).read().count("\n") <= MAX_LINES:
            problems.append(f"{rel}: now within {MAX_LINES} lines: take it off LONG_FILES")
    for p in problems:
        print(p)
    print(f"structure: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
