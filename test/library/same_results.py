#!/usr/bin/env python3
"""Whether nxc's result (GOT, .npy or .npz) agrees with Nx's (WANT): the same
leaves (an .npz's by name when both name them alike, else in order), shapes
and values to rtol 1e-5 / atol 1e-6, NaN equal to NaN. Exit status 0 if so.

Usage: same_results.py GOT WANT"""
import sys
import numpy as np

got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
if sys.argv[2].endswith(".npz"):
    names = sorted(got.files) == sorted(want.files)
    gs = [got[k] for k in (sorted(got.files) if names else got.files)]
    ws = [want[k] for k in (sorted(want.files) if names else want.files)]
else:
    gs, ws = [got], [want]
ok = len(gs) == len(ws) and all(
    a.shape == b.shape and np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-5, atol=1e-6, equal_nan=True)
    for a, b in zip(gs, ws))
sys.exit(0 if ok else 1)
