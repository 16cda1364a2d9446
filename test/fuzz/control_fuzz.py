#!/usr/bin/python3
"""Differential fuzzing of control flow, indexing and the structural ops.

Generates random defn programs over two s32[R][C] inputs that nest `if`,
`cond`, `while` (with a literal or an input trip count), access syntax,
slices and pads, put_slice with a dynamic start, concatenate, reverse,
cumulative sums, sort/argsort/take_along_axis, argmax and window sums, runs
them with `nxc jit`, and compares the printed result exactly with a NumPy
evaluation of the same program. Values stay small (clipped) so that s32
arithmetic never wraps; every result is exact.

Usage: /usr/bin/python3 test/fuzz/control_fuzz.py --nxc PATH [--runs N] [--seed S] [--jobs J]
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np


class Gen:
    def __init__(self, rng, rows, cols):
        self.rng, self.R, self.C = rng, rows, cols

    def expr(self, depth):
        """(elixir text, numpy function of (a, b, n) -> int64 array [R, C])."""
        rng, R, C = self.rng, self.R, self.C
        if depth <= 0 or rng.random() < 0.15:
            return rng.choice([("a", lambda a, b, n: a), ("b", lambda a, b, n: b)])
        k = rng.randrange(16)
        x = self.expr(depth - 1)
        if k == 0:
            y = self.expr(depth - 1)
            op, f = rng.choice([("+", np.add), ("-", np.subtract)])
            return f"Nx.clip({x[0]} {op} {y[0]}, -60, 60)", lambda a, b, n, x=x, y=y, f=f: np.clip(f(x[1](a, b, n), y[1](a, b, n)), -60, 60)
        if k == 1:
            y = self.expr(depth - 1)
            name, f = rng.choice([("max", np.maximum), ("min", np.minimum)])
            return f"Nx.{name}({x[0]}, {y[0]})", lambda a, b, n, x=x, y=y, f=f: f(x[1](a, b, n), y[1](a, b, n))
        if k == 2:
            ax = rng.randrange(2)
            return f"Nx.reverse({x[0]}, axes: [{ax}])", lambda a, b, n, x=x, ax=ax: np.flip(x[1](a, b, n), ax)
        if k == 3:
            ax = rng.randrange(2)
            return (f"Nx.clip(Nx.cumulative_sum({x[0]}, axis: {ax}), -60, 60)",
                    lambda a, b, n, x=x, ax=ax: np.clip(np.cumsum(x[1](a, b, n), axis=ax), -60, 60))
        if k == 4:
            ax, desc = rng.randrange(2), rng.random() < 0.5
            d = ", direction: :desc" if desc else ""
            def sort(a, b, n, x=x, ax=ax, desc=desc):
                v = np.sort(x[1](a, b, n), axis=ax, kind="stable")
                return np.flip(v, ax) if desc else v
            return f"Nx.sort({x[0]}, axis: {ax}{d})", sort
        if k == 5:
            y = self.expr(depth - 1)
            ax = rng.randrange(2)
            return (f"Nx.take_along_axis({x[0]}, Nx.argsort({y[0]}, axis: {ax}), axis: {ax})",
                    lambda a, b, n, x=x, y=y, ax=ax: np.take_along_axis(
                        x[1](a, b, n), np.argsort(y[1](a, b, n), axis=ax, kind="stable"), axis=ax))
        if k == 6:
            y, z, w = self.expr(depth - 1), self.expr(depth - 1), self.expr(depth - 1)
            return (f"(if Nx.sum({x[0]}) > Nx.sum({y[0]}), do: {z[0]}, else: {w[0]})",
                    lambda a, b, n, x=x, y=y, z=z, w=w: z[1](a, b, n) if x[1](a, b, n).sum() > y[1](a, b, n).sum()
                    else w[1](a, b, n))
        if k == 7:
            y, z = self.expr(depth - 1), self.expr(depth - 1)
            c1, c2 = rng.randrange(-20, 20), rng.randrange(-20, 20)
            text = (f"(cond do\n      Nx.sum({x[0]}) > {c1} -> {y[0]}\n      Nx.reduce_max({y[0]}) < {c2} -> {z[0]}\n"
                    f"      true -> {x[0]}\n    end)")
            def cond(a, b, n, x=x, y=y, z=z, c1=c1, c2=c2):
                xv, yv = x[1](a, b, n), y[1](a, b, n)
                if xv.sum() > c1:
                    return yv
                if yv.max() < c2:
                    return z[1](a, b, n)
                return xv
            return text, cond
        if k == 8:
            y = self.expr(depth - 1)
            steps = rng.choice(["n", str(rng.randrange(0, 4))])
            text = (f"elem(while {{acc = {x[0]}, i = 0}}, i < {steps} do\n      {{Nx.clip(acc + {y[0]}, -60, 60), i + 1}}\n"
                    f"    end, 0)")
            def loop(a, b, n, x=x, y=y, steps=steps):
                acc, yv = x[1](a, b, n), y[1](a, b, n)
                for _ in range(int(n) if steps == "n" else int(steps)):
                    acc = np.clip(acc + yv, -60, 60)
                return acc
            return text, loop
        if k == 9:
            r0, r1 = sorted(rng.sample(range(R), 2)) if R > 1 else (0, 0)
            c0, c1 = sorted(rng.sample(range(C), 2)) if C > 1 else (0, 0)
            text = f"Nx.pad({x[0]}[[{r0}..{r1}, {c0}..{c1}]], 0, [{{{r0}, {R - 1 - r1}, 0}}, {{{c0}, {C - 1 - c1}, 0}}])"
            def pad(a, b, n, x=x, r0=r0, r1=r1, c0=c0, c1=c1):
                v = x[1](a, b, n)
                out = np.zeros_like(v)
                out[r0:r1 + 1, c0:c1 + 1] = v[r0:r1 + 1, c0:c1 + 1]
                return out
            return text, pad
        if k == 10 and C > 1:
            y = self.expr(depth - 1)
            c = rng.randrange(1, C)
            return (f"Nx.concatenate([{y[0]}[[.., 0..{c - 1}]], {x[0]}[[.., {c}..-1//1]]], axis: 1)",
                    lambda a, b, n, x=x, y=y, c=c: np.concatenate([y[1](a, b, n)[:, :c], x[1](a, b, n)[:, c:]], axis=1))
        if k == 11:
            y = self.expr(depth - 1)
            text = f"Nx.put_slice({x[0]}, [Nx.remainder(Nx.abs(Nx.sum({y[0]})), {R}), 0], {y[0]}[[0..0, ..]])"
            def put(a, b, n, x=x, y=y):
                v, yv = x[1](a, b, n).copy(), y[1](a, b, n)
                v[int(abs(yv.sum()) % R)] = yv[0]
                return v
            return text, put
        if k == 12:
            return (f"Nx.clip(Nx.window_sum({x[0]}, {{2, 2}}, padding: :same), -60, 60)",
                    lambda a, b, n, x=x: np.clip(self.window_same(x[1](a, b, n)), -60, 60))
        if k == 13:
            ax = rng.randrange(2)
            shape = "{%d, %d}" % (R, C)
            def am(a, b, n, x=x, ax=ax):
                v = x[1](a, b, n)
                return np.broadcast_to(np.expand_dims(np.argmax(v, axis=ax), ax), v.shape)
            return f"Nx.broadcast(Nx.argmax({x[0]}, axis: {ax}, keep_axis: true), {shape})", am
        if k == 14:
            i = rng.randrange(-R, R)
            return (f"Nx.broadcast({x[0]}[{i}], {{{R}, {C}}})",
                    lambda a, b, n, x=x, i=i: np.broadcast_to(x[1](a, b, n)[i], (R, C)))
        return f"Nx.abs({x[0]})", lambda a, b, n, x=x: np.abs(x[1](a, b, n))

    @staticmethod
    def window_same(v):
        p = np.pad(v, [(0, 1), (0, 1)])
        return p[:-1, :-1] + p[1:, :-1] + p[:-1, 1:] + p[1:, 1:]


def literal(v):
    return "[" + ", ".join("[" + ", ".join(str(int(e)) for e in row) + "]" for row in v) + "]"


def parse_printed(text):
    lines = text.strip().splitlines()[2:-1]  # drop "#Nx.Tensor<", the type line and ">"
    return np.array(eval(" ".join(l.strip() for l in lines)))


def one(args, seed, tmp):
    rng = random.Random(seed)
    R, C = rng.randrange(1, 5), rng.randrange(1, 5)
    gen = Gen(rng, R, C)
    text, fn = gen.expr(rng.randrange(1, 5))
    a = np.array([[rng.randrange(-9, 10) for _ in range(C)] for _ in range(R)], dtype=np.int64)
    b = np.array([[rng.randrange(-9, 10) for _ in range(C)] for _ in range(R)], dtype=np.int64)
    n = rng.randrange(0, 5)
    want = np.asarray(fn(a, b, n))
    src = os.path.join(tmp, f"p{seed}.nx")
    with open(src, "w") as f:
        f.write(f"defmodule P do\n  import Nx.Defn\n\n  defn f(a, b, n) do\n    {text}\n  end\nend\n")
    cmd = [args.nxc, "jit", src, "--fn", "P.f", literal(a), literal(b), str(n)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache")))
    if p.returncode != 0:
        return f"seed {seed}: exit {p.returncode}\n{open(src).read()}\n{p.stderr[-1500:]}"
    got = parse_printed(p.stdout)
    if got.shape != want.shape or not np.array_equal(got, want):
        return f"seed {seed}: mismatch\n{open(src).read()}\ninputs {literal(a)} {literal(b)} {n}\nwant {want.tolist()}\ngot  {got.tolist()}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nxc", required=True)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda s: one(args, s, tmp), range(args.seed * 100000, args.seed * 100000 + args.runs)))
    failures = [r for r in results if r]
    for f in failures[:5]:
        print("FAIL", f, "\n")
    print(f"{args.runs} programs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
