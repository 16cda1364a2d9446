#!/usr/bin/python3
"""Differential fuzzing of control flow, indexing and the structural ops.

Generates random defn programs over two [R][C] inputs of one type (s8..s64,
f32, f64; small integer values, so every result is exact) that nest `if`,
`cond`, `while` (with a literal or an input trip count), access syntax,
slices and pads, put_slice with a dynamic start, concatenate, reverse,
cumulative sums/max/min, sort/argsort/take_along_axis, argmax and window
sums/max/min, runs them with `nxc jit`, and compares the printed result (its
Nx type included) exactly with a NumPy evaluation that follows Nx's types:
merged types across branches and operands, clip's integer bounds as s32
tensors, the input type for cumulative and window ops (s8 sums wrap).

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


NP = {"s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64, "f32": np.float32, "f64": np.float64}
TYPES = list(NP)


def merge(*ts):
    """Nx.Type.merge over these types: a float wins over integers; otherwise the widest."""
    floats = [t for t in ts if t[0] == "f"]
    pool = floats or ts
    return max(pool, key=lambda t: int(t[1:]))


def as_nx(v, t):
    """v as Nx's type t: integers wrap (every value here is an exact small integer)."""
    v = np.asarray(v)
    if t[0] == "f":
        return v.astype(NP[t])
    return v.astype(np.int64).astype(NP[t])


class Gen:
    def __init__(self, rng, rows, cols, type_):
        self.rng, self.R, self.C, self.T = rng, rows, cols, type_

    def expr(self, depth):
        """(elixir text, numpy function of (a, b, n) -> array [R, C] of the result's Nx type, that type)."""
        rng, R, C, T = self.rng, self.R, self.C, self.T
        if depth <= 0 or rng.random() < 0.15:
            return rng.choice([("a", lambda a, b, n: a, T), ("b", lambda a, b, n: b, T)])
        k = rng.randrange(16)
        x = self.expr(depth - 1)
        tx = x[2]
        if k == 0:
            y = self.expr(depth - 1)
            op, f = rng.choice([("+", np.add), ("-", np.subtract)])
            t = merge(tx, y[2], "s32")  # clip's integer bounds are s32 tensors
            return (f"Nx.clip({x[0]} {op} {y[0]}, -60, 60)",
                    lambda a, b, n, x=x, y=y, f=f, t=t: as_nx(np.clip(f(x[1](a, b, n).astype(np.int64) if t[0] == "s" else x[1](a, b, n).astype(np.float64),
                                                                         y[1](a, b, n).astype(np.int64) if t[0] == "s" else y[1](a, b, n).astype(np.float64)), -60, 60), t), t)
        if k == 1:
            y = self.expr(depth - 1)
            name, f = rng.choice([("max", np.maximum), ("min", np.minimum)])
            t = merge(tx, y[2])
            return (f"Nx.{name}({x[0]}, {y[0]})",
                    lambda a, b, n, x=x, y=y, f=f, t=t: as_nx(f(as_nx(x[1](a, b, n), t), as_nx(y[1](a, b, n), t)), t), t)
        if k == 2:
            ax = rng.randrange(2)
            return f"Nx.reverse({x[0]}, axes: [{ax}])", lambda a, b, n, x=x, ax=ax: np.flip(x[1](a, b, n), ax), tx
        if k == 3:
            # Nx keeps the input type (s8 sums wrap before the clip).
            ax = rng.randrange(2)
            op, f = rng.choice([("cumulative_sum", np.cumsum), ("cumulative_max", np.maximum.accumulate),
                                ("cumulative_min", np.minimum.accumulate)])
            rev = rng.random() < 0.3
            r = ", reverse: true" if rev else ""
            def cum(a, b, n, x=x, ax=ax, f=f, tx=tx, rev=rev):
                v = x[1](a, b, n)
                v = np.flip(v, ax) if rev else v
                out = as_nx(f(v.astype(np.int64) if tx[0] == "s" else v.astype(np.float64), axis=ax), tx)
                return np.flip(out, ax) if rev else out
            t = merge(tx, "s32")
            return (f"Nx.clip(Nx.{op}({x[0]}, axis: {ax}{r}), -60, 60)",
                    lambda a, b, n, cum=cum, t=t: as_nx(np.clip(cum(a, b, n), -60, 60), t), t)
        if k == 4:
            ax, desc = rng.randrange(2), rng.random() < 0.5
            d = ", direction: :desc" if desc else ""
            def sort(a, b, n, x=x, ax=ax, desc=desc):
                v = np.sort(x[1](a, b, n), axis=ax, kind="stable")
                return np.flip(v, ax) if desc else v
            return f"Nx.sort({x[0]}, axis: {ax}{d})", sort, tx
        if k == 5:
            y = self.expr(depth - 1)
            ax = rng.randrange(2)
            return (f"Nx.take_along_axis({x[0]}, Nx.argsort({y[0]}, axis: {ax}), axis: {ax})",
                    lambda a, b, n, x=x, y=y, ax=ax: np.take_along_axis(
                        x[1](a, b, n), np.argsort(y[1](a, b, n), axis=ax, kind="stable"), axis=ax), tx)
        if k == 6:
            y, z, w = self.expr(depth - 1), self.expr(depth - 1), self.expr(depth - 1)
            t = merge(z[2], w[2])
            return (f"(if Nx.sum({x[0]}) > Nx.sum({y[0]}), do: {z[0]}, else: {w[0]})",
                    lambda a, b, n, x=x, y=y, z=z, w=w, t=t: as_nx(
                        z[1](a, b, n) if x[1](a, b, n).astype(np.float64).sum() > y[1](a, b, n).astype(np.float64).sum()
                        else w[1](a, b, n), t), t)
        if k == 7:
            y, z = self.expr(depth - 1), self.expr(depth - 1)
            c1, c2 = rng.randrange(-20, 20), rng.randrange(-20, 20)
            t = merge(y[2], z[2], tx)
            text = (f"(cond do\n      Nx.sum({x[0]}) > {c1} -> {y[0]}\n      Nx.reduce_max({y[0]}) < {c2} -> {z[0]}\n"
                    f"      true -> {x[0]}\n    end)")
            def cond(a, b, n, x=x, y=y, z=z, c1=c1, c2=c2, t=t):
                xv, yv = x[1](a, b, n), y[1](a, b, n)
                if xv.astype(np.float64).sum() > c1:
                    return as_nx(yv, t)
                if yv.max() < c2:
                    return as_nx(z[1](a, b, n), t)
                return as_nx(xv, t)
            return text, cond, t
        if k == 8:
            y = self.expr(depth - 1)
            steps = rng.choice(["n", str(rng.randrange(0, 4))])
            step = f"Nx.clip(acc + {y[0]}, -60, 60)"
            if merge(tx, y[2], "s32") != tx:
                step = f"Nx.as_type({step}, :{tx})"  # the loop state keeps its type
            text = f"elem(while {{acc = {x[0]}, i = 0}}, i < {steps} do\n      {{{step}, i + 1}}\n    end, 0)"
            def loop(a, b, n, x=x, y=y, steps=steps, tx=tx):
                acc, yv = x[1](a, b, n), y[1](a, b, n)
                for _ in range(int(n) if steps == "n" else int(steps)):
                    acc = as_nx(np.clip(acc.astype(np.float64) + yv.astype(np.float64), -60, 60), tx)
                return acc
            return text, loop, tx
        if k == 9:
            r0, r1 = sorted(rng.sample(range(R), 2)) if R > 1 else (0, 0)
            c0, c1 = sorted(rng.sample(range(C), 2)) if C > 1 else (0, 0)
            text = f"Nx.pad({x[0]}[[{r0}..{r1}, {c0}..{c1}]], 0, [{{{r0}, {R - 1 - r1}, 0}}, {{{c0}, {C - 1 - c1}, 0}}])"
            def pad(a, b, n, x=x, r0=r0, r1=r1, c0=c0, c1=c1):
                v = x[1](a, b, n)
                out = np.zeros_like(v)
                out[r0:r1 + 1, c0:c1 + 1] = v[r0:r1 + 1, c0:c1 + 1]
                return out
            return text, pad, tx
        if k == 10 and C > 1:
            y = self.expr(depth - 1)
            c = rng.randrange(1, C)
            t = merge(tx, y[2])
            return (f"Nx.concatenate([{y[0]}[[.., 0..{c - 1}]], {x[0]}[[.., {c}..-1//1]]], axis: 1)",
                    lambda a, b, n, x=x, y=y, c=c, t=t: np.concatenate(
                        [as_nx(y[1](a, b, n)[:, :c], t), as_nx(x[1](a, b, n)[:, c:], t)], axis=1), t)
        if k == 11:
            y = self.expr(depth - 1)
            t = merge(tx, y[2])
            start = f"Nx.remainder(Nx.abs(Nx.sum({y[0]})), {R})"
            if y[2][0] == "f":
                start = f"Nx.as_type({start}, :s32)"
            text = f"Nx.put_slice({x[0]}, [{start}, 0], {y[0]}[[0..0, ..]])"
            def put(a, b, n, x=x, y=y, t=t):
                v, yv = as_nx(x[1](a, b, n), t).copy(), y[1](a, b, n)
                v[int(abs(yv.astype(np.float64).sum()) % R)] = as_nx(yv[0], t)
                return v
            return text, put, t
        if k == 12:
            op = rng.choice(["window_sum", "window_max", "window_min"])
            t = merge(tx, "s32")
            return (f"Nx.clip(Nx.{op}({x[0]}, {{2, 2}}, padding: :same), -60, 60)",
                    lambda a, b, n, x=x, op=op, tx=tx, t=t: as_nx(np.clip(self.window_same(x[1](a, b, n), op, tx), -60, 60), t), t)
        if k == 13:
            ax = rng.randrange(2)
            shape = "{%d, %d}" % (R, C)
            def am(a, b, n, x=x, ax=ax):
                v = x[1](a, b, n)
                return np.broadcast_to(np.expand_dims(np.argmax(v, axis=ax), ax), v.shape).astype(np.int32)
            return f"Nx.broadcast(Nx.argmax({x[0]}, axis: {ax}, keep_axis: true), {shape})", am, "s32"
        if k == 14:
            i = rng.randrange(-R, R)
            return (f"Nx.broadcast({x[0]}[{i}], {{{R}, {C}}})",
                    lambda a, b, n, x=x, i=i: np.broadcast_to(x[1](a, b, n)[i], (R, C)), tx)
        return f"Nx.abs({x[0]})", lambda a, b, n, x=x: np.abs(x[1](a, b, n)), tx

    @staticmethod
    def window_same(v, op, t):
        """Nx's window op over {2, 2} windows with :same padding (one row and column after)."""
        fill = {"window_sum": 0, "window_max": -np.inf, "window_min": np.inf}[op]
        p = np.pad(v.astype(np.float64), [(0, 1), (0, 1)], constant_values=fill)
        parts = [p[:-1, :-1], p[1:, :-1], p[:-1, 1:], p[1:, 1:]]
        if op == "window_sum":
            return as_nx(sum(parts), t)
        f = np.maximum if op == "window_max" else np.minimum
        return as_nx(f(f(parts[0], parts[1]), f(parts[2], parts[3])), t)


def literal(v):
    return "[" + ", ".join("[" + ", ".join(str(int(e)) for e in row) + "]" for row in v) + "]"


def parse_printed(text):
    lines = text.strip().splitlines()[2:-1]  # drop "#Nx.Tensor<", the type line and ">"
    return np.array(eval(" ".join(l.strip() for l in lines)))


def one(args, seed, tmp):
    rng = random.Random(seed)
    R, C = rng.randrange(1, 5), rng.randrange(1, 5)
    T = "s32" if rng.random() < 0.4 else rng.choice(TYPES)
    gen = Gen(rng, R, C, T)
    text, fn, t = gen.expr(rng.randrange(1, 5))
    a = np.array([[rng.randrange(-9, 10) for _ in range(C)] for _ in range(R)], dtype=NP[T])
    b = np.array([[rng.randrange(-9, 10) for _ in range(C)] for _ in range(R)], dtype=NP[T])
    n = rng.randrange(0, 5)
    want = np.asarray(fn(a, b, n))
    src = os.path.join(tmp, f"p{seed}.nx")
    with open(src, "w") as f:
        f.write(f"defmodule P do\n  import Nx.Defn\n\n  defn f(a, b, n) do\n    {text}\n  end\nend\n")
    cmd = [args.nxc, "jit", src, "--device", args.device, "--fn", "P.f", f"{T}:{literal(a)}", f"{T}:{literal(b)}", str(n)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache")))
    if p.returncode != 0:
        return f"seed {seed}: exit {p.returncode}\n{open(src).read()}\n{p.stderr[-1500:]}"
    got = parse_printed(p.stdout)
    printed_type = p.stdout.strip().splitlines()[1].strip().split("[")[0]
    if printed_type != t or want.dtype != NP[t]:
        return f"seed {seed}: type {printed_type}, want {t} (model {want.dtype})\n{open(src).read()}"
    if got.shape != want.shape or not np.array_equal(got, want):
        return f"seed {seed}: mismatch\n{open(src).read()}\ninputs {literal(a)} {literal(b)} {n}\nwant {want.tolist()}\ngot  {got.tolist()}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nxc", required=True)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--device", default="cpu", help="nxc jit --device (cuda-emulated: through the GPU mapping)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda s: one(args, s, tmp), range(args.seed * 100000, args.seed * 100000 + args.runs)))
    failures = [r for r in results if r]
    for f in failures[:int(os.environ.get("SHOW", "5"))]:
        print("FAIL", f, "\n")
    print(f"{args.runs} programs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
