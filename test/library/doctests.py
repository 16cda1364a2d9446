#!/usr/bin/env python3
"""A library's own doctests, as they ship, through `nxc repl`.

Each doctest of the library's files (the `iex>` examples of @doc and
@moduledoc, a blank line ending one test, as ExUnit.DocTest reads them) runs
in a fresh `nxc repl` that has loaded the whole library (`:load DIR`); the
text each expression prints is compared with the doctest's expected output,
whitespace aside and numbers to f32 precision (the doctests were written when
Nx printed f32 values with 16 digits; Nx 0.13 prints the shortest). An expected
result written as an expression (`Nx.tensor([1.0, 2.0])`, a struct literal) is
evaluated in the same session, as ExUnit evaluates it, and the two printed
values compared. Prints the tests that differ or fail, then the counts per
file and in all.

With --results FILE, also writes `pass REL:LINE` or `fail REL:LINE: why` per
test to FILE (inventory.py reads it).

Usage: test/library/doctests.py LIB_DIR [--nxc NXC] [-k SUBSTRING] [-j JOBS] [--results FILE]
"""
import argparse, concurrent.futures, os, re, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
MARK_VALUE = 987654321
MARK = f"Nx.tensor({MARK_VALUE})"


def doctests(path):
    """[(line, [(expression, expected or None)])] of one file."""
    tests, current, expr, expected, start = [], [], None, [], None
    in_doc = False

    def close_expr():
        nonlocal expr, expected
        if expr is not None:
            current.append((expr, "\n".join(expected).strip() or None))
        expr, expected = None, []

    def close_test():
        nonlocal current, start
        close_expr()
        if current:
            tests.append((start, current))
        current, start = [], None

    for number, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.strip()
        if line.startswith('@doc """') or line.startswith('@moduledoc """') or line.startswith('@doc ~S"""'):
            in_doc = True
            continue
        if in_doc and line == '"""':
            close_test()
            in_doc = False
            continue
        if not in_doc:
            continue
        if line.startswith("iex>") and line[4:].strip().startswith("#"):
            continue  # a comment line of the example
        if line.startswith("iex>"):
            close_expr()
            if start is None:
                start = number
            expr = line[4:].strip()
        elif line.startswith("...>") and expr is not None:
            expr += "\n" + line[4:].strip()
        elif line == "":
            close_test()
        elif expr is not None:
            expected.append(line)
    close_test()
    return tests


NUMBER = re.compile(r"-?(?:\d+\.\d+(?:e[-+]?\d+)?|\d+(?:e[-+]?\d+)?|Inf|NaN)")


def normalize(text):
    return re.sub(r"\s+", " ", text).strip()


def same(got, expected):
    """Equal text, whitespace aside, and numbers equal to f32 precision (bf16
    and f16: to theirs): the doctests were written when Nx printed floats
    with 16 digits."""
    g, e = normalize(got), normalize(expected)
    tolerance = 1e-2 if re.search(r"\b(bf16|f16)\[", e) else 1e-6
    if NUMBER.sub("#", g) != NUMBER.sub("#", e):
        return False
    for a, b in zip(NUMBER.findall(g), NUMBER.findall(e)):
        if a == b:
            continue
        if "NaN" in (a, b) or "Inf" in a or "Inf" in b:
            return False
        x, y = float(a), float(b)
        if abs(x - y) > tolerance * max(abs(x), abs(y)) + 1e-7:
            return False
    return True


LITERAL = re.compile(r"^(-?[\d.e+-]+|:[\w?!]+|\[[^\]]*\]|true|false|nil|\".*\")$", re.S)


def is_expression(expected):
    """An expected result (not an exception, `** (Error) message`) that ExUnit evaluates and compares with ===, as
    `Nx.tensor([1.0])` or a struct literal, rather than text it compares
    with inspect's output (`#Nx.Tensor<...>`) or a literal."""
    return (expected is not None and not expected.startswith("#") and not expected.startswith("** (") and
            not LITERAL.match(expected.strip()))


def run(nxc, lib, test):
    lines = [f":load {lib}"]
    for expr, expected in test:
        lines += [expr, MARK]
        if is_expression(expected):
            # Evaluated in the same session; its printed value is what the
            # expression's must print.
            lines += [expected, MARK]
    try:
        out = subprocess.run([nxc, "repl"], input="\n".join(lines) + "\n", capture_output=True, text=True,
                             timeout=300)
    except subprocess.TimeoutExpired:
        return False, "timed out"
    body = re.sub(r"^loaded .*\n", "", out.stdout, flags=re.M)
    segments = re.split(r"#Nx\.Tensor<\s*s\d+\s*" + str(MARK_VALUE) + r"\s*>", body)
    k = 0
    for expr, expected in test:
        got = segments[k] if k < len(segments) else ""
        k += 1
        if expected is None:
            continue
        if expected.startswith("** ("):
            # An exception the example expects: nxc reports it as an error.
            if normalize(expected) not in normalize(out.stderr):
                return False, f"{expr.splitlines()[0]}: expected {expected.splitlines()[0]}"
            continue
        if is_expression(expected):
            expected = segments[k] if k < len(segments) else ""
            k += 1
            if not expected.strip():
                why = out.stderr.strip().split("\n")[0] if out.stderr.strip() else "the expected expression"
                return False, f"{expr.splitlines()[0]}: {why}"
        if not same(got, expected):
            why = out.stderr.strip().split("\n")[0] if out.stderr.strip() else normalize(got)[:200]
            return False, f"{expr.splitlines()[0]}: {why}"
    return True, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--nxc", default=os.path.join(here, "../../build/tools/nxc/nxc"))
    ap.add_argument("-k", default="")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--results")
    args = ap.parse_args()
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(args.lib) for f in fs if f.endswith(".ex"))
    jobs = [(f, line, test) for f in files if args.k in f for line, test in doctests(f)]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        futures = {pool.submit(run, args.nxc, args.lib, t): (f, line) for f, line, t in jobs}
        for fut in concurrent.futures.as_completed(futures):
            results[futures[fut]] = fut.result()
    per_file = {}
    record = open(args.results, "w", encoding="utf-8") if args.results else None
    for (f, line), (ok, why) in sorted(results.items()):
        rel = os.path.relpath(f, args.lib)
        if record:
            record.write(f"pass {rel}:{line}\n" if ok else f"fail {rel}:{line}: {why}\n")
        per_file.setdefault(rel, [0, 0])[0 if ok else 1] += 1
        if not ok:
            print(f"DIFFERS {rel}:{line}: {why}")
    print()
    for rel, (ok, bad) in sorted(per_file.items()):
        print(f"{rel}: {ok} of {ok + bad}")
    total = sum(ok for ok, _ in per_file.values()), sum(ok + bad for ok, bad in per_file.values())
    print(f"{total[0]} of {total[1]} doctests agree with Nx's documented results")


if __name__ == "__main__":
    main()
