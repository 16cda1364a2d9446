#!/usr/bin/python3
"""Compares nxc's f32 atan, asin, acos, atan2, pow, sinh, asinh, acosh, atanh, cbrt and erfc
(computed in f64 by nxc's own polynomials, lib/Conversion/ScalarMath.cpp) bit for bit with the
C library's f64 functions rounded to f32 (numpy's, and Python's math.erfc), over 3-6M arguments
each: random bit patterns (every exponent, subnormals, NaN, infinities), uniform ranges, every
pair of special values, and pow's exact midpoints.

    /usr/bin/python3 scripts/check_narrow_math.py build/tools/nxc/nxc [FUNCTION...]

Prints, per function, how many results differ (and the first few).
"""
import atexit
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

np.seterr(all="ignore")
nxc = sys.argv[1]
which = sys.argv[2:] or ["atan", "asin", "acos", "atan2", "pow", "sinh", "asinh", "acosh", "atanh", "cbrt", "erfc"]
d = tempfile.mkdtemp()
atexit.register(shutil.rmtree, d, True)
open(f"{d}/m.nx", "w").write("""defmodule M do
  import Nx.Defn
  defn atan(x), do: Nx.atan(x)
  defn asin(x), do: Nx.asin(x)
  defn acos(x), do: Nx.acos(x)
  defn atan2(y, x), do: Nx.atan2(y, x)
  defn pow(x, y), do: Nx.pow(x, y)
  defn sinh(x), do: Nx.sinh(x)
  defn asinh(x), do: Nx.asinh(x)
  defn acosh(x), do: Nx.acosh(x)
  defn atanh(x), do: Nx.atanh(x)
  defn cbrt(x), do: Nx.cbrt(x)
  defn erfc(x), do: Nx.erfc(x)
end
""")
rng = np.random.default_rng(11)
def bits(n): return rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
spec = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5,
                 1e-45, -1e-45, 3.4e38, -3.4e38, 1.17549435e-38, 0.99999994, 1.0000001, -0.99999994, 16777216.0,
                 16777217.0, 8388609.0, -8388609.0, 0.41421357, 2.4142137, 1e10, -1e10, 127.0, 128.0, -149.0, -150.0], np.float32)
def run(fn, *args):
    paths = []
    for i, a in enumerate(args):
        p = f"{d}/a{i}.npy"; np.save(p, a.astype(np.float32)); paths.append(p)
    subprocess.run([nxc, "jit", f"{d}/m.nx", "--fn", fn, *paths, "-o", f"{d}/y.npy", "--no-cache"], check=True)
    return np.load(f"{d}/y.npy")
def same(a, b):
    a = a.astype(np.float32); b = b.astype(np.float32)
    return (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))
REF = {"erfc": np.vectorize(math.erfc, otypes=[np.float64]), "sinh": np.sinh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "cbrt": np.cbrt, "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos, "atan2": np.arctan2, "pow": np.power}
for fn in which:
    if fn in ("atan", "asin", "acos", "sinh", "asinh", "acosh", "atanh", "cbrt", "erfc"):
        x = np.concatenate([bits(2_000_000), rng.uniform(-1, 1, 1_000_000).astype(np.float32),
                            rng.uniform(-1e-3, 1e-3, 200_000).astype(np.float32), spec])
        if fn in ("atan", "sinh", "asinh", "cbrt"): x = np.concatenate([x, rng.uniform(-10, 10, 500_000).astype(np.float32)])
        if fn == "sinh": x = np.concatenate([x, rng.uniform(-90, 90, 500_000).astype(np.float32)])
        if fn == "acosh": x = np.concatenate([x, rng.uniform(1, 1.01, 500_000).astype(np.float32), rng.uniform(1, 100, 500_000).astype(np.float32)])
        if fn == "erfc": x = np.concatenate([x, rng.uniform(-1, 1, 500_000).astype(np.float32), rng.uniform(0.4, 10.5, 1_000_000).astype(np.float32), rng.uniform(-6, -0.4, 200_000).astype(np.float32)])
        if fn == "cbrt": x = np.concatenate([x, (np.arange(-3000, 3000) ** 3).astype(np.float32)])
        y = run(fn, x); ref = REF[fn](x.astype(np.float64)).astype(np.float32)
        ok = same(y, ref); args = (x,)
    else:
        n = 1_500_000
        a = np.concatenate([bits(n), rng.uniform(-10, 10, n).astype(np.float32), np.repeat(spec, len(spec))])
        b = np.concatenate([bits(n), rng.uniform(-10, 10, n).astype(np.float32), np.tile(spec, len(spec))])
        if fn == "pow":
            # bases near 1 with large exponents, integer exponents on negative bases
            a = np.concatenate([a, (1 + rng.uniform(-1e-3, 1e-3, n)).astype(np.float32), rng.uniform(-4, 4, n).astype(np.float32)])
            b = np.concatenate([b, rng.uniform(-5e4, 5e4, n).astype(np.float32), rng.integers(-40, 40, n).astype(np.float32)])
        y = run(fn, a, b); ref = REF[fn](a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
        ok = same(y, ref); args = (a, b)
    bad = np.nonzero(~ok)[0]
    print(f"{fn}: {len(ok)} arguments, {len(bad)} differ")
    for i in bad[:12]:
        print("   ", [repr(float(v[i])) for v in args], "nxc", repr(float(y[i])), "ref", repr(float(ref[i])))
# exact midpoint powers
if "pow" in which:
    xs = np.array([29.0, 31.0, 29*2.0**-10, 66049.0, 841.0, 707281.0, 3.0, 5.0, 7.0, -29.0, -31.0, 4097.0, 4095.0, 2.0**-5 * 3], np.float32)
    ys = np.array([5.0, 5.0, 5.0, 1.5, 2.5, 1.25, 15.0, 10.0, 8.0, 5.0, 5.0, 2.0, 2.0, 15.0], np.float32)
    y = run("pow", xs, ys); ref = np.power(xs.astype(np.float64), ys.astype(np.float64)).astype(np.float32)
    print("midpoints:", [(float(a), float(b), float(c), float(d)) for a, b, c, d in zip(xs, ys, y, ref) if not same(np.array([c]), np.array([d]))[0]] or "all equal")
