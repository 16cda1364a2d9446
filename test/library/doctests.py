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

With --elixir 'elixir -pa ...' (an Elixir command line that has Nx and the
library loaded), the oracle is real Nx instead of the documentation: every
doctest's expressions run in Elixir first (doctest_oracle.exs) and each
result nxc prints is compared with what Nx's value inspects to; a doctest
that Nx itself cannot run (a dataset download, an alias of ExUnit's test
module) is reported as not run, and an expected exception is still the
documented one.

With --results FILE, also writes `pass REL:LINE`, `fail REL:LINE: why` or
`skip REL:LINE: why` per test to FILE (inventory.py reads it).

Usage: test/library/doctests.py LIB_DIR [--nxc NXC] [-k SUBSTRING] [-j JOBS] [--results FILE]
                                [--with DEPENDENCY_DIR]... [--elixir 'elixir -pa DIR ...']
"""
import argparse, concurrent.futures, json, os, re, shlex, subprocess, sys, tempfile

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
    # A closure prints as #Function<...> with BEAM's numbers, or (in nxc's
    # struct fields, which keep the capture's source) as &Mod.fun(&1, p: 1).
    text = re.sub(r"#Function<[^>]*>", "#Function<>", text)
    text = re.sub(r"&[\w.]+\((?:[^()]|\([^()]*\))*\)", "#Function<>", text)
    # Line breaks and indentation as inspect's pretty printing puts them, or
    # not: none next to brackets and commas.
    text = re.sub(r"\s*([\[\]{}(),<>])\s*", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


# Against the documentation's 16 digits: f32's precision. Against Nx's own
# results (--elixir): the library scripts' tolerance (same_results.py), as
# Nx's BinaryBackend computes each f32 operation in f64 and rounds once,
# where compiled code computes in f32 (a few ulps apart, more after a
# cancellation).
RTOL, ATOL = 1e-6, 1e-7


def same(got, expected):
    """Equal text, whitespace aside, and numbers equal to f32 precision (bf16
    and f16: to theirs): the doctests were written when Nx printed floats
    with 16 digits."""
    g, e = normalize(got), normalize(expected)
    tolerance = 1e-2 if re.search(r"\b(bf16|f16)\[", e) else RTOL
    if NUMBER.sub("#", g) != NUMBER.sub("#", e):
        return False
    for a, b in zip(NUMBER.findall(g), NUMBER.findall(e)):
        if a == b:
            continue
        if "NaN" in (a, b) or "Inf" in a or "Inf" in b:
            return False
        x, y = float(a), float(b)
        if abs(x - y) > tolerance * max(abs(x), abs(y)) + ATOL:
            return False
    return True


LITERAL = re.compile(r"^(-?[\d.e+-]+|:[\w?!]+|\[[^\]]*\]|true|false|nil|\".*\")$", re.S)


def is_expression(expected):
    """An expected result (not an exception, `** (Error) message`) that ExUnit evaluates and compares with ===, as
    `Nx.tensor([1.0])` or a struct literal, rather than text it compares
    with inspect's output (`#Nx.Tensor<...>`) or a literal."""
    return (expected is not None and not expected.startswith("#") and not expected.startswith("** (") and
            not LITERAL.match(expected.strip()))


def with_oracle(test, oracle):
    """The test with Nx's printed results as the expected ones, or None
    (and why) when Nx itself cannot run it."""
    if oracle is None:
        return test, ""
    if "error" in oracle:
        at = oracle["at"]
        documented = test[at][1]
        if not (documented and documented.startswith("** (")):
            return None, f"Nx raises at {test[at][0].splitlines()[0]}: {oracle['error'].splitlines()[0]}"
    outputs = oracle.get("outputs", [])
    return [(expr, outputs[k] if expected is not None and not expected.startswith("** (") and k < len(outputs)
             else expected) for k, (expr, expected) in enumerate(test)], ""


def run_oracle(command, jobs, lib):
    """{(file, line): oracle entry} from doctest_oracle.exs over every test."""
    with tempfile.TemporaryDirectory() as d:
        tests = [{"id": f"{f}:{line}", "exprs": [e for e, _ in t]} for f, line, t in jobs]
        with open(os.path.join(d, "in.json"), "w") as out:
            json.dump(tests, out)
        subprocess.run(shlex.split(command) + [os.path.join(here, "doctest_oracle.exs"), os.path.join(d, "in.json"),
                                               os.path.join(d, "out.json")],
                       check=True, cwd=os.path.dirname(os.path.abspath(lib)), timeout=3600)
        with open(os.path.join(d, "out.json")) as f:
            results = json.load(f)
    return {(f, line): results.get(f"{f}:{line}") for f, line, _ in jobs}


def run(nxc, lib, test, oracle=None, also=()):
    test, why = with_oracle(test, oracle)
    if test is None:
        return None, why
    lines = [f":load {d}" for d in (lib, *also)]
    for expr, expected in test:
        lines += [expr, MARK]
        if oracle is None and is_expression(expected):
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
        if oracle is None and is_expression(expected):
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
    ap.add_argument("--with", dest="also", action="append", default=[],
                    help="another library directory the repl loads (the library's dependencies)")
    ap.add_argument("--elixir", help="an Elixir command line with Nx and the library: Nx's results are the oracle")
    args = ap.parse_args()
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(args.lib) for f in fs if f.endswith(".ex"))
    jobs = [(f, line, test) for f in files if args.k in f for line, test in doctests(f)]
    oracles = run_oracle(args.elixir, jobs, args.lib) if args.elixir else {}
    if args.elixir:
        global RTOL, ATOL
        RTOL, ATOL = 1e-5, 1e-6
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        futures = {pool.submit(run, args.nxc, args.lib, t, oracles.get((f, line)) if args.elixir else None,
                               args.also): (f, line)
                   for f, line, t in jobs}
        for fut in concurrent.futures.as_completed(futures):
            results[futures[fut]] = fut.result()
    per_file = {}
    record = open(args.results, "w", encoding="utf-8") if args.results else None
    skipped = 0
    for (f, line), (ok, why) in sorted(results.items()):
        rel = os.path.relpath(f, args.lib)
        if ok is None:
            # Nx itself cannot run it.
            skipped += 1
            print(f"NOT RUN {rel}:{line}: {why}")
            if record:
                record.write(f"skip {rel}:{line}: {why}\n")
            continue
        if record:
            record.write(f"pass {rel}:{line}\n" if ok else f"fail {rel}:{line}: {why}\n")
        per_file.setdefault(rel, [0, 0])[0 if ok else 1] += 1
        if not ok:
            print(f"DIFFERS {rel}:{line}: {why}")
    if record:
        record.close()
    print()
    for rel, (ok, bad) in sorted(per_file.items()):
        print(f"{rel}: {ok} of {ok + bad}")
    total = sum(ok for ok, _ in per_file.values()), sum(ok + bad for ok, bad in per_file.values())
    oracle = "Nx's results" if args.elixir else "Nx's documented results"
    print(f"{total[0]} of {total[1]} doctests agree with {oracle}" +
          (f" ({skipped} that Nx itself cannot run left out)" if skipped else ""))


if __name__ == "__main__":
    main()
