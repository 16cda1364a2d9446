#!/usr/bin/python3
"""Streaming stores (nxc-stream-stores) end to end.

Compiles test/stream/stream.nx (three functions with 8 MiB outputs: f32 layer
norm, f64 with row and column operands, s32), once without threads and once
with --threads 2, checks that the x86-64 code has non-temporal stores
(vmovntps/vmovntpd/vmovntdq), an sfence and the cache size query, then calls
every function with its output at byte offsets 0 to 64 from a cache line,
with $NXC_CACHE_BYTES 0 (every aligned output streams: offsets 0 and 64),
unset (this machine's cache decides) and 10^12 (nothing streams). Every
result must equal NumPy's (layer norm within 4e-6 of its float64 value, the
rounding of x - mean) and be the same bit for bit at every offset, thread
count and cache size, with nothing written outside the output.

Usage: test/stream/stream_test.py --nxc build/tools/nxc/nxc --work DIR
"""
import argparse
import os
import platform
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FNS = ["layer_norm(f32[2048,1024])", "affine(f64[1024,1024], f64[1024], f64[1024,1])", "ints(s32[2048,1024])"]
OFFSETS = [0, 4, 8, 16, 32, 64]


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    if p.returncode != 0:
        sys.exit(f"$ {' '.join(cmd)}\nexit {p.returncode}\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nxc", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    if platform.machine() != "x86_64":
        print("skipped: streaming stores are generated for x86-64 only")
        return
    os.makedirs(args.work, exist_ok=True)
    src = os.path.join(HERE, "stream.nx")
    fn_args = [a for f in FNS for a in ("--fn", f)]

    asm = run([args.nxc, "aot", src, "--name", "st", "--emit", "asm", "--cpu", "x86-64-v3"] + fn_args)
    for insn in ("vmovntps", "vmovntpd", "vmovntdq", "sfence", "nxc_x86_cache_bytes"):
        if insn not in asm:
            sys.exit(f"FAIL: no {insn} in the x86-64-v3 code")

    rng = np.random.default_rng(7)
    x = (rng.standard_normal((2048, 1024)) * 3 + 1).astype(np.float32)
    xd = rng.standard_normal((1024, 1024))
    cols = rng.standard_normal(1024)
    rows = rng.standard_normal((1024, 1))
    xi = rng.integers(-1 << 20, 1 << 20, size=(2048, 1024), dtype=np.int32)
    for name, a in (("x", x), ("xd", xd), ("cols", cols), ("rows", rows), ("xi", xi)):
        a.tofile(os.path.join(args.work, name + ".bin"))
    x64 = x.astype(np.float64)
    c = x64 - x64.mean(axis=1, keepdims=True)
    ln_ref = c / np.sqrt((c * c).mean(axis=1, keepdims=True) + 1e-5)
    affine_ref = (xd * 2.0 + cols) - rows
    ints_ref = xi * np.int32(3) + np.int32(1)

    first = {}
    for threads, extra in ((1, []), (2, ["--threads", "2"])):
        out = os.path.join(args.work, f"t{threads}")
        run([args.nxc, "aot", src, "--name", "st", "-o", out] + extra + fn_args)
        exe = os.path.join(out, "stream_test")
        run(["cc", "-O2", "-I", out] + (["-DTHREADED"] if extra else []) +
            [os.path.join(HERE, "stream_test.c"), os.path.join(out, "libst.a"), os.path.join(out, "libnxrt.a"),
             "-lpthread", "-lm", "-o", exe])
        for cache in ("0", None, "1000000000000"):
            env = dict(os.environ)
            env.pop("NXC_CACHE_BYTES", None)
            if cache is not None:
                env["NXC_CACHE_BYTES"] = cache
            if run([exe, args.work, str(threads)], env).strip() != "ok":
                sys.exit("FAIL: stream_test did not finish")
            compare(args.work, threads, cache, first, ln_ref, affine_ref, ints_ref)
    print("stream: 3 functions x 6 output offsets x 1 and 2 threads x 3 cache sizes equal NumPy and each other")


def compare(work, threads, cache, first, ln_ref, affine_ref, ints_ref):
    """Checks one run's results against NumPy and the first run's."""
    for name, dtype, ref in (("layer_norm", np.float32, ln_ref), ("affine", np.float64, affine_ref),
                             ("ints", np.int32, ints_ref)):
        for off in OFFSETS:
            if name == "affine" and off % 8:
                continue
            got = np.fromfile(os.path.join(work, f"{name}_{off}.bin"), dtype=dtype).reshape(ref.shape)
            where = f"{name}, output at +{off} bytes, {threads} thread(s), NXC_CACHE_BYTES={cache}"
            if dtype == np.float32:
                err = np.max(np.abs(got - ref))  # outputs of unit variance
                if not err < 4e-6:
                    sys.exit(f"FAIL: {where}: error {err:.3g}")
            elif not np.array_equal(got, ref):
                sys.exit(f"FAIL: {where}: differs from NumPy at {np.argwhere(got != ref)[:3].tolist()}")
            if name in first and not np.array_equal(first[name], got):
                sys.exit(f"FAIL: {where}: not bit for bit the first result")
            first.setdefault(name, got)


if __name__ == "__main__":
    main()
