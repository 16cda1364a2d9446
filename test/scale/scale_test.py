#!/usr/bin/python3
"""Resource bounds on large programs: what nxc may spend on deep nesting.

Generated programs, each far larger than hand-written code, that once cost
memory or time out of proportion to their size:
  - scopes nested 3,000 deep (a runtime `if` inside each branch, a new
    variable per level) trace with --emit expr in bounded memory: each scope
    holds its own bindings, not a copy of every binding above it (a copy per
    level took 1.5 GB here);
  - while loops nested 128 deep compile to the traced graph; 129 deep is an
    error at the 129th `while`, since the loop passes after it take time
    that grows faster than the depth (300 levels took a minute).
Peak memory is the child's own (os.wait4), not a timing.

Usage: /usr/bin/python3 test/scale/scale_test.py --nxc PATH --work DIR
"""
import argparse
import os
import subprocess
import sys

MAX_NESTED_SCOPES_RSS_MB = 400


def run_measured(nxc, args):
    """Like run, with the peak RSS of this child alone."""
    pid = os.fork()
    if pid == 0:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
        os.execv(nxc, [nxc] + args)
    _, status, usage = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024


def nested_scopes(depth):
    lines = ["defmodule M do", "  import Nx.Defn", "  defn f(x) do"]
    for d in range(depth):
        lines.append(f"v{d} = x + {d}")
        lines.append(f"if Nx.sum(v{d}) > 0 do")
    lines.append("x")
    for d in range(depth):
        lines.append(f"else x end")
    lines += ["  end", "end"]
    return "\n".join(lines) + "\n"


def nested_whiles(depth):
    lines = ["defmodule M do", "  import Nx.Defn", "  defn f(x) do"]
    for d in range(depth):
        lines.append(f"while x, Nx.sum(x) < {d} do")
    lines.append("x + 1")
    lines += ["end"] * depth
    lines += ["  end", "end"]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nxc", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    failures = []

    scopes = os.path.join(a.work, "scopes.nx")
    with open(scopes, "w") as f:
        f.write(nested_scopes(3000))
    rc, rss = run_measured(a.nxc, ["aot", scopes, "--fn", "f(f32[4])", "--emit", "expr"])
    print(f"3000 nested scopes: exit {rc}, peak RSS {rss:.0f} MB (bound {MAX_NESTED_SCOPES_RSS_MB} MB)")
    if rc != 0:
        failures.append(f"3000 nested scopes: exit {rc}")
    if rss > MAX_NESTED_SCOPES_RSS_MB:
        failures.append(f"3000 nested scopes: peak RSS {rss:.0f} MB > {MAX_NESTED_SCOPES_RSS_MB} MB")

    for depth in (128, 129):
        path = os.path.join(a.work, f"whiles{depth}.nx")
        with open(path, "w") as f:
            f.write(nested_whiles(depth))
        p = subprocess.run([a.nxc, "aot", path, "--fn", "f(f32[4])", "--emit", "expr"], capture_output=True,
                           text=True)
        print(f"{depth} nested whiles: exit {p.returncode}")
        if depth == 128:
            if p.returncode != 0 or p.stdout.count("while") < 128:
                failures.append(f"128 nested whiles should trace: {p.stderr.strip()[:300]}")
        else:
            want = f"{path}:{3 + depth}:1: error: while loops nested more than 128 deep"
            if p.returncode != 1 or want not in p.stderr:
                failures.append(f"129 nested whiles: want '{want}', got exit {p.returncode}: {p.stderr.strip()[:300]}")

    for f in failures:
        print("FAIL:", f)
    print("scale:", "FAILED" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
