#!/usr/bin/python3
"""Conformance suite: Nx's documented results, checked through `nxc jit`.

Each defn in cases/*.nx is preceded by a comment block:

    # case: WHAT (SOURCE)         what is tested and where the expectation comes from
    # args: ARG...                 nxc jit arguments (shell words: literals or files)
    # expect:                      the exact text Nx prints for the result
    #   #Nx.Tensor<
    #     ...
    # error: MESSAGE @LINE:COL     instead of expect: the error nxc must report
    # ulps: N                      (optional) the numbers may each differ by N units in the last
                                   place of their type (of each part's, for complex types): for
                                   results that depend on the order of a float sum, which Nx
                                   leaves to the backend

The runner compiles and runs each function and compares what it prints, then
prints the pass count per case file (op family). Exit status 1 on any failure.

Usage: /usr/bin/python3 test/conformance/run.py --nxc PATH [-k FILTER]
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")


def parse(path):
    lines = open(path).read().split("\n")
    module = re.search(r"defmodule\s+([\w.]+)", "\n".join(lines)).group(1)
    cases, block = [], []
    for line in lines:
        s = line.strip()
        if s.startswith("#"):
            block.append(line)
            continue
        m = re.match(r"\s*defn\s*\(?\s*(\w+)", line)
        if m and any("# case:" in b for b in block):
            case = {"fn": f"{module}.{m.group(1)}", "expect": None, "error": None, "args": []}
            mode = None
            expect = []
            for b in block:
                body = b.strip()[1:]
                if body.strip().startswith("case:"):
                    case["what"] = body.strip()[5:].strip()
                elif body.strip().startswith("args:"):
                    case["args"] = shlex.split(body.strip()[5:])
                elif body.strip().startswith("expect:"):
                    mode = "expect"
                elif body.strip().startswith("error:"):
                    case["error"] = body.strip()[6:].strip()
                elif body.strip().startswith("ulps:"):
                    case["ulps"] = int(body.strip()[5:])
                elif mode == "expect":
                    expect.append(body[3:] if body.startswith("   ") else body.strip())
            if expect:
                case["expect"] = "\n".join(expect) + "\n"
            cases.append(case)
        block = [] if not s.startswith("#") else block
    return cases


NUMBER = re.compile(r"-?(?:\d+\.\d+(?:e[-+]?\d+)?|Inf|NaN)")
FLOAT_TYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "c64": "float32", "c128": "float64"}


def within_ulps(expected, got, ulps):
    """The texts agree once numbers are set aside, and each printed float differs by at most
    `ulps` units in the last place of the tensor's type (named on the line after #Nx.Tensor<)."""
    import numpy as np
    if NUMBER.sub("#", expected) != NUMBER.sub("#", got):
        return False
    m = re.search(r"#Nx\.Tensor<\s*(f16|f32|f64|c64|c128)", expected)
    if not m:
        return False
    dtype = np.dtype(FLOAT_TYPES[m.group(1)])
    for e, g in zip(NUMBER.findall(expected), NUMBER.findall(got)):
        a, b = np.array(float(e), dtype), np.array(float(g), dtype)
        if np.isnan(a) or np.isnan(b) or np.isinf(a) or np.isinf(b):
            if not (a == b or (np.isnan(a) and np.isnan(b))):
                return False
            continue
        if abs(float(a) - float(b)) > ulps * float(np.spacing(max(abs(a), abs(b)))):
            return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nxc", required=True)
    ap.add_argument("-k", default="")
    ap.add_argument("--device", default="cpu",
                    help="nxc jit --device: cuda-emulated runs every case through the GPU mapping")
    args = ap.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        for name in sorted(os.listdir(CASES)):
            if not name.endswith((".nx", ".exs")):
                continue
            path = os.path.join(CASES, name)
            passed = total = 0
            for case in parse(path):
                if args.k and args.k not in case["fn"]:
                    continue
                total += 1
                cmd = [args.nxc, "jit", path, "--fn", case["fn"], *case["args"]]
                if args.device != "cpu":
                    cmd += ["--device", args.device]
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
                if case["error"]:
                    m = re.match(r"(.*?)\s*@(\d+):(\d+)$", case["error"])
                    want = f"{path}:{m.group(2)}:{m.group(3)}: error: {m.group(1)}" if m else case["error"]
                    ok = p.returncode == 1 and want in p.stderr
                else:
                    ok = p.returncode == 0 and (p.stdout == case["expect"] or
                                                (case.get("ulps") and within_ulps(case["expect"], p.stdout, case["ulps"])))
                if ok:
                    passed += 1
                else:
                    failures += 1
                    print(f"FAIL {case['fn']}: {case.get('what', '')}\n  $ {shlex.join(cmd)}\n"
                          f"  exit {p.returncode}\n--- expected\n{case['expect'] or case['error']}--- got\n"
                          f"{p.stdout}{p.stderr}")
            if total:
                print(f"{os.path.splitext(name)[0]:<12} {passed}/{total} passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
