#!/usr/bin/python3
"""Gradients checked against central finite differences, on random programs.

Generates random differentiable defn programs `f(a, b)` over two f64[R][C]
inputs (element-wise math, broadcasting, reductions, dot, transpose and
reshape, slice/pad/concatenate/reverse, select, cumulative sums, max/min,
`if` on a runtime predicate and `while` loops), then compiles one function
that returns `grad({a, b}, f)` and, beside it, the central differences
`(f(x + h e_i) - f(x - h e_i)) / 2h` for every element, computed in a
`while` loop of the same program. Both run in f64 with `nxc jit`; they must
agree to a relative 1e-5 (the differences' own error is about 1e-9 here).

Usage: /usr/bin/python3 test/grad/grad_check.py --nxc PATH [--runs N] [--seed S] [--jobs J]
"""
import argparse
import os
import random
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

UNARY = [
    "Nx.exp(Nx.tanh({x}))", "Nx.log({x} * {x} + 1)", "Nx.sin({x})", "Nx.cos({x})", "Nx.tanh({x})",
    "Nx.sigmoid({x})", "Nx.sqrt({x} * {x} + 1)", "Nx.rsqrt({x} * {x} + 1)", "Nx.cbrt({x} * {x} + 1)",
    "Nx.atan({x})", "Nx.asinh({x})", "Nx.erf({x})", "Nx.erfc({x})", "Nx.expm1(Nx.tanh({x}))",
    "Nx.log1p({x} * {x})", "Nx.negate({x})", "Nx.sinh(Nx.tanh({x}))", "Nx.cosh(Nx.tanh({x}))",
    "Nx.asin(0.5 * Nx.tanh({x}))", "Nx.acos(0.5 * Nx.tanh({x}))", "Nx.atanh(0.5 * Nx.tanh({x}))",
    "Nx.acosh({x} * {x} + 2)", "Nx.erf_inv(0.5 * Nx.tanh({x}))", "Nx.tan(0.5 * Nx.tanh({x}))",
    "Nx.abs({x} + 0.25)", "Nx.exp(Nx.tanh({x})) ** 3", "Nx.log({x} * {x} + 1, 3)",
]
BINARY = [
    "{x} + {y}", "{x} - {y}", "{x} * {y}", "{x} / ({y} * {y} + 1)", "Nx.pow({x} * {x} + 1, Nx.tanh({y}))",
    "Nx.atan2({x}, {y} * {y} + 1)", "Nx.max({x}, {y})", "Nx.min({x}, {y})",
    "Nx.select({x} > {y}, {x} * 2, {y})",
]


class Gen:
    def __init__(self, rng, rows, cols):
        self.rng, self.R, self.C = rng, rows, cols

    def expr(self, depth):
        rng, R, C = self.rng, self.R, self.C
        if depth <= 0 or rng.random() < 0.12:
            return rng.choice(["a", "b", "a * b"])
        x = self.expr(depth - 1)
        k = rng.randrange(13)
        if k <= 2:
            return rng.choice(UNARY).format(x=x)
        if k <= 4:
            return "(" + rng.choice(BINARY).format(x=x, y=self.expr(depth - 1)) + ")"
        if k == 5:
            red = rng.choice(["sum", "product", "reduce_max", "reduce_min", "mean"])
            ax = rng.randrange(2)
            inner = f"Nx.tanh({x})" if red == "product" else x
            return f"({x} + Nx.{red}({inner}, axes: [{ax}], keep_axes: true))"
        if k == 6:
            y = self.expr(depth - 1)
            return f"Nx.dot(Nx.tanh(Nx.dot({x}, Nx.transpose({y}))), {y})"
        if k == 7:
            return f"Nx.reshape(Nx.transpose(Nx.reshape({x}, {{{C}, {R}}})), {{{R}, {C}}})"
        if k == 8 and C > 1:
            return f"Nx.pad(Nx.slice({x}, [0, 1], [{R}, {C - 1}]), 0.5, [{{0, 0, 0}}, {{0, 1, 0}}])"
        if k == 9:
            y = self.expr(depth - 1)
            return f"Nx.slice(Nx.concatenate([{x}, {y}], axis: 1), [0, {rng.randrange(C + 1)}], [{R}, {C}])"
        if k == 10:
            return f"Nx.cumulative_sum(Nx.reverse({x}, axes: [{rng.randrange(2)}]), axis: {rng.randrange(2)})"
        if k == 11:
            return f"branch({x}, {self.expr(depth - 1)})"
        return f"loop({x}, {self.expr(depth - 1)})"


HELPERS = """
  defnp branch(x, y) do
    if Nx.sum(x) > Nx.sum(y), do: Nx.sin(x) * y, else: x - Nx.tanh(y)
  end

  defnp loop(x, y) do
    {_, x, _} =
      while {i = 0, x, y}, i < 2 do
        {i + 1, Nx.tanh(x * y) + x, y}
      end
    x
  end
"""


def program(text, R, C, weights):
    w = "Nx.tensor(" + repr(weights.tolist()) + ", type: :f64)"
    n = R * C
    return f"""defmodule P do
  import Nx.Defn
{HELPERS}
  defn f(a, b) do
    Nx.sum(({text}) * {w})
  end

  defnp fd(x, other, first) do
    h = 1.0e-6
    {{_, out}} =
      while {{i = 0, out = Nx.broadcast(Nx.tensor(0.0, type: :f64), {{{n}}})}}, i < {n} do
        e = Nx.reshape(Nx.equal(Nx.iota({{{n}}}), i), {{{R}, {C}}}) * h
        d =
          if first do
            (f(x + e, other) - f(x - e, other)) / (2 * h)
          else
            (f(other, x + e) - f(other, x - e)) / (2 * h)
          end
        {{i + 1, Nx.put_slice(out, [i], Nx.reshape(d, {{1}}))}}
      end
    Nx.reshape(out, {{{R}, {C}}})
  end

  defn check(a, b) do
    {{ga, gb}} = grad({{a, b}}, fn {{a, b}} -> f(a, b) end)
    {{ga, gb, fd(a, b, 1), fd(b, a, 0)}}
  end
end
"""


def literal(v):
    return "f64:[" + ", ".join("[" + ", ".join(repr(float(e)) for e in row) + "]" for row in v) + "]"


def one(args, seed, tmp):
    rng = random.Random(seed)
    R, C = rng.randrange(1, 4), rng.randrange(1, 4)
    text = Gen(rng, R, C).expr(rng.randrange(1, 4))
    nrng = np.random.default_rng(seed)
    a, b, w = (nrng.uniform(-1.5, 1.5, (R, C)) for _ in range(3))
    src = os.path.join(tmp, f"p{seed}.nx")
    out = os.path.join(tmp, f"p{seed}.npz")
    with open(src, "w") as f:
        f.write(program(text, R, C, w))
    cmd = [args.nxc, "jit", src, "--fn", "P.check", "-o", out, "--", literal(a), literal(b)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache")))
    if p.returncode != 0:
        return f"seed {seed}: exit {p.returncode}\n{text}\n{p.stderr[-1500:]}"
    z = np.load(out)
    ga, gb, fa, fb = (z[k] for k in sorted(z.files, key=lambda s: int(''.join(c for c in s if c.isdigit()) or 0)))
    for name, g, fdv in (("a", ga, fa), ("b", gb, fb)):
        # An input f does not use gets Nx's f32 zero gradient.
        if g.dtype != np.float64 and not (g.dtype == np.float32 and not g.any()):
            return f"seed {seed}: d/d{name} has type {g.dtype}, want float64\n{text}"
        scale = max(1.0, float(np.max(np.abs(fdv))))
        if not np.allclose(g, fdv, rtol=1e-5, atol=1e-5 * scale):
            return f"seed {seed}: d/d{name} differs\n{text}\na={a.tolist()}\nb={b.tolist()}\ngrad {g.tolist()}\nfd   {fdv.tolist()}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nxc", required=True)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with ThreadPoolExecutor(args.jobs) as pool:
            seeds = range(args.seed * 100000, args.seed * 100000 + args.runs)
            results = list(pool.map(lambda s: one(args, s, tmp), seeds))
    failures = [r for r in results if r]
    for f in failures[:6]:
        print("FAIL", f, "\n")
    print(f"{args.runs} programs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
