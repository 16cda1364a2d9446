#!/usr/bin/python3
"""Error of nxc's f32 exp, sigmoid, sin, cos, tan or erf in ulps of the correctly rounded result.

  /usr/bin/python3 examples/benchmarks/ulp_error.py exp -104 88.7 build/tools/nxc/nxc
  /usr/bin/python3 examples/benchmarks/ulp_error.py sigmoid -110 30 build/tools/nxc/nxc
  /usr/bin/python3 examples/benchmarks/ulp_error.py sin -1e6 1e6 build/tools/nxc/nxc
  /usr/bin/python3 examples/benchmarks/ulp_error.py erf -5 5 build/tools/nxc/nxc

Draws 3,000,000 f32 inputs uniformly in [LO, HI], runs them through `nxc jit` and compares with
the float64 result (within 2^-29 of the true value: enough to tell the correctly rounded f32 except
at near-ties). Prints the largest error in ulps and the share of correctly rounded results.
"""
import math
import subprocess
import sys
import tempfile
import os

import numpy as np

np.seterr(all="ignore")

# The float64 references (numpy's sin, cos and tan reduce huge arguments exactly;
# Python's math.erf is the C library's).
REFERENCE = {
    "exp": np.exp,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "erf": np.vectorize(math.erf, otypes=[np.float64]),
}


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in REFERENCE:
        print(__doc__)
        return 2
    fn, lo, hi, nxc = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    x = np.random.default_rng(7).uniform(lo, hi, 3_000_000).astype(np.float32)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "u.nx")
        with open(src, "w") as fh:
            fh.write("defmodule U do\n  import Nx.Defn\n" +
                     "".join(f"  defn {f}(x), do: Nx.{f}(x)\n" for f in REFERENCE) + "end\n")
        np.save(os.path.join(d, "x.npy"), x)
        subprocess.run([nxc, "jit", src, "--fn", fn, os.path.join(d, "x.npy"), "-o", os.path.join(d, "y.npy"),
                        "--no-cache"], check=True)
        y = np.load(os.path.join(d, "y.npy")).astype(np.float64)
    xd = x.astype(np.float64)
    ref = REFERENCE[fn](xd)
    rounded = ref.astype(np.float32)
    ok = np.isfinite(rounded)
    ulp = np.spacing(np.abs(rounded)).astype(np.float64)
    err = np.abs(y - ref) / ulp
    print(f"{fn} on [{lo}, {hi}]: at most {err[ok].max():.3f} ulp, "
          f"{np.mean(y[ok] == rounded[ok].astype(np.float64)) * 100:.1f}% correctly rounded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
