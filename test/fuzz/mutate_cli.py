#!/usr/bin/python3
"""Mutation fuzzing of nxc's front end through the CLI: no input may crash nxc.

Takes the .nx files under examples/ and test/, applies random byte-level and
token-level mutations, runs `nxc aot FILE --fn SIG --emit expr`, and fails if
nxc exits with anything but 0 (accepted) or 1 (a located user error), or if an
error message lacks the FILE:LINE:COL: (or nxc: error:) prefix.

Usage: test/fuzz/mutate_cli.py --nxc build/tools/nxc/nxc [--runs N] [--seed S]
"""
import argparse
import glob
import os
import random
import subprocess
import sys
import tempfile

TOKENS = ["(", ")", "[", "]", "{", "}", ",", "|>", "**", "-", "+", "/", "*", "=", "do", "end", "defn",
          "Nx.sum", "axes:", "[0]", "keep_axes:", "true", "1_000", "1.0e-3", ":f32", "Nx.dot", "x", "\n",
          "#", "@a", "&", "\\\\", "..", "0x", "1e5", "_", "not", "and", "<=", "&&&", "Nx.tensor([1, [2]])"]
SIGNATURES = ["softmax(f32[10])", "MyDefn.softmax(s32[3])", "f(f32[2,3])", "f(f32[2], f32[2])",
              "f({f32[2], f32[3]})", "g(u8[4])", "predict({f32[4,3], f32[3]}, f32[2,4])", "f(f32[])"]


def mutate(text, rng):
    data = list(text)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(4)
        pos = rng.randrange(len(data) + 1)
        if op == 0 and data:
            del data[min(pos, len(data) - 1)]
        elif op == 1:
            data[pos:pos] = list(rng.choice(TOKENS))
        elif op == 2 and data:
            n = rng.randint(1, 20)
            del data[pos:pos + n]
        else:
            data[pos:pos] = [chr(rng.randrange(1, 256))]
    return "".join(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nxc", required=True)
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--emit", default="expr", help="the stage to stop at (expr: front end only; llvm: all)")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    corpus = [open(p, encoding="utf-8").read() for p in
              sorted(glob.glob(os.path.join(root, "examples", "**", "*.nx"), recursive=True) +
                     glob.glob(os.path.join(root, "test", "**", "*.nx"), recursive=True))]
    rng = random.Random(args.seed)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fuzz.nx")
        for i in range(args.runs):
            text = mutate(rng.choice(corpus), rng)
            sig = rng.choice(SIGNATURES)
            if rng.random() < 0.2:
                sig = mutate(sig, rng)
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(text)
            try:
                p = subprocess.run([args.nxc, "aot", path, "--fn", sig, "--emit", args.emit],
                                   capture_output=True, text=True, errors="replace", timeout=60)
            except subprocess.TimeoutExpired:
                p = subprocess.CompletedProcess([], -1, "", "timed out after 60 s")
            bad = p.returncode not in (0, 1)
            if p.returncode == 1 and not (p.stderr.startswith(path + ":") or p.stderr.startswith("--fn#1:")
                                          or p.stderr.startswith("nxc: error:")):
                bad = True
            if bad:
                failures += 1
                keep = os.path.join(tempfile.gettempdir(), f"nxc-fuzz-{args.seed}-{i}.nx")
                with open(keep, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(text)
                print(f"FAIL run {i}: exit {p.returncode} for --fn {sig!r}; input kept in {keep}\n{p.stderr[-2000:]}")
    print(f"{args.runs} runs, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
