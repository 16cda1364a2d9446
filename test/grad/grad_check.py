#!/usr/bin/python3
"""Gradients checked against central finite differences, on random programs.

Generates random differentiable defn programs `f(a, b)` over two f64[R][C]
inputs (element-wise math, broadcasting, reductions, dot, transpose and
reshape, slice/pad/concatenate/reverse, select, cumulative sums, products, max/min, sort, take, gather,
indexed_add/put, window sums/max/min, conv, max/min,
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
        k = rng.randrange(15)
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
        if k == 12:
            return f"loop({x}, {self.expr(depth - 1)})"
        return self.indexing(x, depth)

    def indexing(self, x, depth):
        """Cumulative, sort, gather-family, window and conv ops, all f[R][C] -> f[R][C]."""
        rng, R, C = self.rng, self.R, self.C
        k = rng.randrange(11)
        ints = lambda hi, n: [rng.randrange(hi) for _ in range(n)]
        if k == 0:
            op = rng.choice(["cumulative_product", "cumulative_max", "cumulative_min"])
            inner = f"(Nx.tanh({x}) + 1.5)" if op == "cumulative_product" else x
            rev = rng.choice(["true", "false"])
            return f"Nx.{op}({inner}, axis: {rng.randrange(2)}, reverse: {rev})"
        if k == 1:
            return f"Nx.sort({x}, axis: {rng.randrange(2)}, direction: :{rng.choice(['asc', 'desc'])})"
        if k == 2:
            return f"Nx.take({x}, Nx.tensor({ints(C, C)}), axis: 1)"
        if k == 3:
            idx = [ints(C, C) for _ in range(R)]
            return f"Nx.take_along_axis({x}, Nx.tensor({idx}), axis: 1)"
        if k == 4:
            idx = [[[rng.randrange(R), rng.randrange(C)] for _ in range(C)] for _ in range(R)]
            return f"Nx.gather({x}, Nx.tensor({idx}))"
        if k == 5:
            n = rng.randrange(1, R * C + 1)
            idx = [[rng.randrange(R), rng.randrange(C)] for _ in range(n)]
            y = self.expr(depth - 1)
            return f"Nx.indexed_add({x}, Nx.tensor({idx}), Nx.slice(Nx.reshape({y}, {{{R * C}}}), [0], [{n}]))"
        if k == 6:
            cells = [[i, j] for i in range(R) for j in range(C)]
            rng.shuffle(cells)
            n = rng.randrange(1, R * C + 1)
            y = self.expr(depth - 1)
            return f"Nx.indexed_put({x}, Nx.tensor({cells[:n]}), Nx.slice(Nx.reshape({y}, {{{R * C}}}), [0], [{n}]))"
        if k <= 8:
            op = rng.choice(["window_sum", "window_max", "window_min", "window_mean"])
            win = (rng.randrange(1, R + 1), rng.randrange(1, C + 1))
            pad = rng.choice([":valid", ":same", f"[{{{rng.randrange(2)}, {rng.randrange(2)}}}, {{0, {rng.randrange(2)}}}]"])
            strides = [rng.randrange(1, 3), rng.randrange(1, 3)]
            dil = "" if pad != ":valid" or win != (1, 1) else f", window_dilations: [{rng.randrange(1, R + 1)}, 1]"
            return (f"({x} + Nx.sum(Nx.tanh(Nx.{op}({x}, {{{win[0]}, {win[1]}}}, padding: {pad}, "
                    f"strides: {strides}{dil}))))")
        y = self.expr(depth - 1)
        if k == 9:
            kr, kc = rng.randrange(1, R + 1), rng.randrange(1, C + 1)
            dil = rng.choice(["", ", kernel_dilation: [1, 1]"])
            return (f"Nx.reshape(Nx.conv(Nx.reshape({x}, {{1, 1, {R}, {C}}}), "
                    f"Nx.reshape(Nx.slice({y}, [0, 0], [{kr}, {kc}]), {{1, 1, {kr}, {kc}}}), "
                    f"padding: :same{dil}), {{{R}, {C}}})")
        # Depthwise (C groups), strided, over the rows.
        kr = rng.randrange(1, R + 1)
        s = rng.randrange(1, 3)
        return (f"({x} + Nx.sum(Nx.tanh(Nx.conv(Nx.reshape(Nx.transpose({x}), {{1, {C}, {R}, 1}}), "
                f"Nx.reshape(Nx.slice(Nx.transpose({y}), [0, 0], [{C}, {kr}]), {{{C}, 1, {kr}, 1}}), "
                f"strides: [{s}, 1], feature_group_size: {C}))))")


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


# Higher-rank cases the [R][C] generator cannot reach: batches, channels,
# feature groups, strides, dilations and permutations (f(a, b), a and b f64[6][6]).
FIXED = [
    "(a + Nx.sum(Nx.tanh(Nx.conv(Nx.reshape(a, {2, 2, 3, 3}), Nx.reshape(Nx.slice(b, [0, 0], [4, 2]), {4, 1, 2, 1}), "
    "strides: [1, 2], kernel_dilation: [2, 1], padding: [{1, 0}, {0, 2}], feature_group_size: 2))))",
    "(a + Nx.sum(Nx.sin(Nx.conv(Nx.reshape(a, {2, 3, 3, 2}), Nx.reshape(Nx.slice(b, [0, 0], [6, 2]), {2, 2, 3, 1}), "
    "input_dilation: [1, 2], strides: 2, input_permutation: [0, 3, 1, 2], output_permutation: [0, 3, 1, 2]))))",
    "(a + Nx.sum(Nx.tanh(Nx.window_max(Nx.reshape(a * b, {2, 3, 6}), {1, 2, 3}, strides: [1, 1, 2], padding: :same))))",
    "(a + Nx.sum(Nx.tanh(Nx.window_min(Nx.reshape(a, {2, 3, 6}), {2, 2, 2}, window_dilations: [1, 2, 2]))))",
    "(a + Nx.sum(Nx.tanh(Nx.window_sum(Nx.reshape(a, {2, 3, 6}), {2, 2, 3}, strides: [1, 2, 2], "
    "window_dilations: [1, 1, 2], padding: [{0, 1}, {1, 1}, {2, 0}]))))",
    "Nx.reshape(Nx.cumulative_max(Nx.reshape(a, {36}), reverse: true), {6, 6}) * "
    "Nx.reshape(Nx.cumulative_product(Nx.reshape(Nx.tanh(b) + 1.1, {36})), {6, 6})",
    "Nx.reshape(Nx.cumulative_min(Nx.reshape(a * b, {2, 3, 6}), axis: 1), {6, 6})",
    "Nx.reshape(Nx.gather(Nx.reshape(a, {4, 3, 3}), Nx.tensor([[[0, 2], [3, 1], [0, 2]], [[1, 1], [2, 0], [3, 2]]]), "
    "axes: [0, 2]), {6, 3}) |> Nx.pad(0.0, [{0, 0, 0}, {0, 3, 0}])",
    "Nx.take(Nx.reshape(a, {2, 18}), Nx.tensor([[1, 0], [1, 1], [0, 0]]), axis: 0) |> Nx.reshape({6, 18}) "
    "|> Nx.slice([0, 5], [6, 6])",
    "Nx.reshape(Nx.sort(Nx.reshape(a * b, {3, 2, 6}), axis: 1, direction: :desc), {6, 6})",
    # Nx.LinAlg, on well-conditioned matrices (Nx's custom gradients).
    "Nx.LinAlg.solve(a + 6 * Nx.eye(6), b)",
    "Nx.LinAlg.solve(a + 6 * Nx.eye(6), Nx.sum(b, axes: [1])) * b",
    "Nx.LinAlg.invert(a + 6 * Nx.eye(6)) * b",
    "Nx.LinAlg.triangular_solve(Nx.tril(a) + 6 * Nx.eye(6), b)",
    "Nx.LinAlg.triangular_solve(Nx.triu(a) + 6 * Nx.eye(6), b, lower: false, left_side: false)",
    "Nx.LinAlg.triangular_solve(Nx.tril(a) + 6 * Nx.eye(6), b, transform_a: :transpose)",
    "a * Nx.LinAlg.determinant(a + 3 * Nx.eye(6)) + b * Nx.LinAlg.determinant(Nx.slice(b, [0, 0], [3, 3]))",
    "a * Nx.LinAlg.determinant(Nx.slice(a, [0, 0], [2, 2])) - b",
    "elem(Nx.LinAlg.lu(a), 1) * b + elem(Nx.LinAlg.lu(a), 2)",
    "Nx.LinAlg.cholesky(Nx.dot(a, Nx.transpose(a)) + 6 * Nx.eye(6)) * b",
    "elem(Nx.LinAlg.qr(a), 0) * b + elem(Nx.LinAlg.qr(a), 1)",
    "a + Nx.sum(elem(Nx.LinAlg.qr(Nx.slice(a, [0, 0], [6, 4])), 0) * Nx.slice(b, [0, 0], [6, 4])) + "
    "Nx.sum(elem(Nx.LinAlg.qr(Nx.slice(b, [0, 0], [4, 6])), 1))",
    # eigh and svd: Nx's Jacobi method leaves a rotation out where the
    # off-diagonal entry is below 1e-5 of the diagonal ones, so their results
    # (and the differences of them) are good to about 1e-5: checked to 1e-4.
    ("elem(Nx.LinAlg.eigh(a + Nx.transpose(a), eps: 1.0e-13), 1) * b + "
     "Nx.new_axis(elem(Nx.LinAlg.eigh(b + Nx.transpose(b), eps: 1.0e-13), 0), 0)", 1e-4),
    ("elem(Nx.LinAlg.svd(a), 0) * b + Nx.new_axis(elem(Nx.LinAlg.svd(b), 1), 0) + elem(Nx.LinAlg.svd(a), 2)", 1e-4),
    ("Nx.pad(elem(Nx.LinAlg.svd(Nx.slice(a, [0, 0], [6, 4]), full_matrices?: false), 0), 0.0, [{0, 0, 0}, {0, 2, 0}]) "
     "* b + Nx.sum(elem(Nx.LinAlg.svd(Nx.slice(b, [0, 0], [3, 6]), full_matrices?: false), 2))", 1e-4),
    # (vt's rows past min(m, n) are any basis of the null space: not differentiable)
    ("Nx.pad(Nx.slice(elem(Nx.LinAlg.svd(Nx.slice(a, [0, 0], [4, 6])), 2), [0, 0], [4, 6]), 0.0, "
     "[{0, 2, 0}, {0, 0, 0}]) * b + Nx.sum(elem(Nx.LinAlg.svd(Nx.slice(b, [0, 0], [6, 3])), 1))", 1e-4),
    ("Nx.LinAlg.pinv(Nx.slice(a, [0, 0], [6, 3])) |> Nx.tile([2, 1]) |> Nx.multiply(b)", 1e-4),
]


def one(args, seed, tmp):
    rng = random.Random(seed)
    tol = 1e-5
    if seed < 0:
        R, C, text = 6, 6, FIXED[-seed - 1]
        if isinstance(text, tuple):
            text, tol = text
    else:
        R, C = rng.randrange(1, 4), rng.randrange(1, 4)
        text = Gen(rng, R, C).expr(rng.randrange(1, 4))
    nrng = np.random.default_rng(abs(seed))
    a, b, w = (nrng.uniform(-1.5, 1.5, (R, C)) for _ in range(3))
    src = os.path.join(tmp, f"p{seed}.nx")
    out = os.path.join(tmp, f"p{seed}.npz")
    with open(src, "w") as f:
        f.write(program(text, R, C, w))
    cmd = [args.nxc, "jit", src, "--device", args.device, "--fn", "P.check", "-o", out, "--", literal(a), literal(b)]
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
        if not np.allclose(g, fdv, rtol=tol, atol=tol * scale):
            return f"seed {seed}: d/d{name} differs\n{text}\na={a.tolist()}\nb={b.tolist()}\ngrad {g.tolist()}\nfd   {fdv.tolist()}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nxc", required=True)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--device", default="cpu", help="nxc jit --device (cuda-emulated: through the GPU mapping)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with ThreadPoolExecutor(args.jobs) as pool:
            seeds = list(range(-len(FIXED), 0)) + list(range(args.seed * 100000, args.seed * 100000 + args.runs))
            results = list(pool.map(lambda s: one(args, s, tmp), seeds))
    failures = [r for r in results if r]
    for f in failures[:6]:
        print("FAIL", f, "\n")
    print(f"{len(FIXED)} fixed and {args.runs} random programs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
