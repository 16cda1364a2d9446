#!/usr/bin/env python3
"""Which public functions of a library nxc compiles with Nx's results.

Lists, per file of LIB_DIR, the library's public functions (`defn` and
`deftransform` by default; `--kinds` adds `def` for a library whose API is
plain functions, as an optimizer library's constructors are), leaving out
modules marked `@moduledoc false`, functions marked `@doc false`, the
examples inside documentation and the functions a `for` comprehension
generates (`deftransform unquote(name)(...)`: their names are values). Each function's status comes from the
results the library scripts wrote:

  --cases FILE     lines `agree FN` / `differs FN: why` (oracle_env.sh's
                   run_cases with RESULTS=FILE; polaris.sh the same), FN the
                   --fn text, its options and arguments ignored here
  --doctests FILE  lines `pass REL:LINE` / `fail REL:LINE: why` (doctests.py
                   --results FILE); a doctest counts for the first public
                   function its documentation precedes

A function agrees when a case calling it agreed with Nx, or when it has
doctests and every one of them printed Nx's documented result; it differs
when a case or a doctest of it did not; otherwise nothing exercised it.
Prints each file's functions that do not agree, with the reason, then per
file and in all how many agree.

Usage: test/library/inventory.py LIB_DIR [--cases FILE]... [--doctests FILE]...
                                 [--kinds defn,deftransform,def] [--list]
"""
import argparse, os, re, sys

DEF = re.compile(r"^\s*(defn|deftransform|def)\s+([a-z_][a-zA-Z0-9_?!]*)")
MODULE = re.compile(r"^\s*defmodule\s+([A-Z][\w.]*)\s+do")


def public_functions(path, kinds):
    """[(module, name, line)] of one file, in order; [] for an internal module."""
    found, seen = [], set()
    module, in_heredoc, doc_false, internal = None, False, False, False
    for number, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.strip()
        if in_heredoc:
            if line.startswith('"""'):
                in_heredoc = False
            continue
        if line.endswith('"""') and line.count('"""') == 1:
            in_heredoc = True
            continue
        m = MODULE.match(raw)
        if m:
            module = m.group(1) if module is None or "." in m.group(1) else f"{module}.{m.group(1)}"
            continue
        if line.startswith("@moduledoc false"):
            internal = True
        if line.startswith("@doc false"):
            doc_false = True
            continue
        m = DEF.match(raw)
        if m and module:
            kind, name = m.groups()
            # `unquote(...)`: functions a `for` generates, named only when it runs.
            if kind in kinds and name != "unquote" and not doc_false and (module, name) not in seen:
                seen.add((module, name))
                found.append((module, name, number))
            doc_false = False
    return [] if internal else found


def read_cases(paths):
    """{(module, name): [ok, ...]} from run_cases' result lines."""
    results = {}
    for path in paths:
        for line in open(path, encoding="utf-8"):
            verdict, _, rest = line.strip().partition(" ")
            fn, _, why = rest.partition(": ") if verdict == "differs" else (rest, "", "")
            m = re.match(r"([A-Z][\w.]*)\.([a-z_][\w?!]*)", fn)
            if m and verdict in ("agree", "differs"):
                results.setdefault((m.group(1), m.group(2)), []).append((verdict == "agree", f"case {fn}: {why}"))
    return results


def read_doctests(paths):
    """{(rel, line): (ok, why)} from doctests.py's result lines."""
    results = {}
    for path in paths:
        for line in open(path, encoding="utf-8"):
            verdict, _, rest = line.strip().partition(" ")
            where, _, why = rest.partition(": ")
            rel, _, number = where.rpartition(":")
            if verdict in ("pass", "fail") and number.isdigit():
                results[(rel, int(number))] = (verdict == "pass", f"doctest line {number}: {why}")
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("lib")
    ap.add_argument("--cases", action="append", default=[])
    ap.add_argument("--doctests", action="append", default=[])
    ap.add_argument("--kinds", default="defn,deftransform")
    ap.add_argument("--list", action="store_true", help="also list the functions that agree")
    args = ap.parse_args()
    kinds = set(args.kinds.split(","))
    cases, docs = read_cases(args.cases), read_doctests(args.doctests)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(args.lib) for f in fs if f.endswith(".ex"))
    totals, rows = [0, 0], []
    for path in files:
        rel = os.path.relpath(path, args.lib)
        functions = public_functions(path, kinds)
        if not functions:
            continue
        agree = 0
        for i, (module, name, line) in enumerate(functions):
            start = functions[i - 1][2] if i > 0 else 0
            # The doctests between the previous function and this one document it.
            evidence = list(cases.get((module, name), []))
            evidence += [v for (r, n), v in docs.items() if r == rel and start < n < line]
            if evidence and (any(ok for ok, _ in cases.get((module, name), [])) or
                             all(ok for ok, _ in evidence)):
                agree += 1
                if args.list:
                    print(f"  agrees   {rel}:{line} {module}.{name}")
                continue
            failed = [why for ok, why in evidence if not ok]
            if failed:
                print(f"  differs   {rel}:{line} {module}.{name}: {failed[0]}")
            else:
                print(f"  unchecked {rel}:{line} {module}.{name}")
        rows.append((rel, agree, len(functions)))
        totals[0] += agree
        totals[1] += len(functions)
    print()
    for rel, agree, n in rows:
        print(f"{rel}: {agree} of {n}")
    share = 100.0 * totals[0] / totals[1] if totals[1] else 0.0
    print(f"{totals[0]} of {totals[1]} public functions ({share:.0f}%) agree with Nx")


if __name__ == "__main__":
    sys.exit(main())
