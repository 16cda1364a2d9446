#!/usr/bin/python3
"""W8-W10 side by side in one run: nxc's AOT module (ctypes) against PyTorch
(eager, Debian's 1.13 with its oneDNN) and NumPy (W8), same inputs, each
result checked against a float64 reference. Median milliseconds per call at
1 and 2 threads (nxc: MODULE_set_threads; torch: set_num_threads).

Run once per thread count, with OPENBLAS_NUM_THREADS and OMP_NUM_THREADS set
to it (OpenBLAS fixes its pool when loaded, and its idle threads spin: a pool
larger than the count measured takes cores from the others).

With PEAK, the measured multiply-add peak of the machine at N threads in
GFLOP/s (fma_peak.c), each workload's arithmetic rate is quoted against it.

Usage: OPENBLAS_NUM_THREADS=N OMP_NUM_THREADS=N /usr/bin/python3 models.py NXC WORKDIR N [PEAK]
"""
import ctypes
import os
import subprocess
import sys
import time

import numpy as np

nxc, work, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
peak = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
here = os.path.dirname(os.path.abspath(__file__))
try:
    import torch
except ImportError:
    print("W8-W10: skipped (PyTorch is not installed: apt-get install python3-torch)")
    sys.exit(0)

E = "f32[128,768], " + ", ".join(["f32[768,768]"] * 4) + ", f32[768,3072], f32[3072], f32[3072,768], f32[768]" + \
    ", f32[768]" * 4
subprocess.run([nxc, "aot", os.path.join(here, "models.nx"), "--threads", "2", "--name", "pbw", "-o", work,
                "--fn", "Models.gemm(f32[1024,1024], f32[1024,1024])",
                "--fn", "Models.conv_relu(f32[1,64,56,56], f32[64,64,3,3], f32[64])",
                "--fn", f"Models.encoder({E})"], check=True)
lib = ctypes.CDLL(os.path.join(work, "libpbw.so"))
variant = ctypes.CFUNCTYPE(ctypes.c_char_p)(("pbw_cpu_variant", lib))().decode()


def fn(name):
    f = getattr(lib, "pbw_" + name + "_with_workspace")
    size = getattr(lib, "pbw_" + name + "_workspace_size")
    size.restype = ctypes.c_size_t
    raw = np.zeros(size() + 128, np.uint8)
    ws = raw[(-raw.ctypes.data) % 64:]
    def call(*arrays):
        ptrs = [a.ctypes.data_as(ctypes.c_void_p) for a in arrays]
        status = f(*ptrs, ws.ctypes.data_as(ctypes.c_void_p))
        assert status == 0, f"{name}: status {status}"
    return call


def median_ms(f):
    # The library measured before may leave threads spinning (OpenBLAS's and
    # OpenMP's idle workers do, for a while): they would take the cores this
    # one's threads need. Wait until they sleep.
    time.sleep(1.5)
    # Then wake this one's workers: on a VM an idle virtual CPU can take
    # milliseconds to be scheduled again.
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.05:
        f()
    t0 = time.perf_counter()
    f()
    once = time.perf_counter() - t0
    reps = max(1, int(0.02 / max(once, 1e-9)))
    times = []
    for _ in range(9):
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        times.append((time.perf_counter() - t0) / reps)
    return 1e3 * sorted(times)[len(times) // 2]


def close(got, want, what, rtol=2e-3, atol=2e-4):
    err = np.abs(got.astype(np.float64) - want).max()
    scale = np.abs(want).max()
    if not err <= atol + rtol * scale:
        raise SystemExit(f"{what}: max abs error {err:.3g} against float64 (scale {scale:.3g})")


rng = np.random.default_rng(0)
def normal(shape, s=1.0):
    return (rng.standard_normal(shape) * s).astype(np.float32)

# W8
a, b = normal((1024, 1024)), normal((1024, 1024))
c = np.zeros((1024, 1024), np.float32)
gemm = fn("gemm")
ref8 = a.astype(np.float64) @ b.astype(np.float64)
# W9
x, k, bias = normal((1, 64, 56, 56)), normal((64, 64, 3, 3), 0.05), normal((64,), 0.1)
y = np.zeros((1, 64, 56, 56), np.float32)
conv = fn("conv_relu")
tx, tk, tb = (torch.from_numpy(v) for v in (x, k, bias))
ref9 = torch.relu(torch.nn.functional.conv2d(tx.double(), tk.double(), tb.double(), padding=1)).numpy()
# W10
ew = [normal((128, 768))] + [normal((768, 768), 0.03) for _ in range(4)] + \
     [normal((768, 3072), 0.03), normal((3072,), 0.02), normal((3072, 768), 0.02), normal((768,), 0.02)] + \
     [np.ones(768, np.float32), np.zeros(768, np.float32), np.ones(768, np.float32), np.zeros(768, np.float32)]
h = np.zeros((128, 768), np.float32)
enc = fn("encoder")


def encoder_torch(x, wq, wk, wv, wo, w1, b1, w2, b2, g1, be1, g2, be2):
    def heads(t):
        return t.reshape(128, 12, 64).transpose(0, 1)
    q, kk, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
    p = torch.softmax(q @ kk.transpose(1, 2) / 8.0, dim=-1)
    att = (p @ v).transpose(0, 1).reshape(128, 768)
    hh = torch.nn.functional.layer_norm(x + att @ wo, (768,), g1, be1, eps=1e-12)
    f = hh @ w1 + b1
    f = 0.5 * f * (1 + torch.erf(f / 2 ** 0.5))
    return torch.nn.functional.layer_norm(hh + f @ w2 + b2, (768,), g2, be2, eps=1e-12)


te = [torch.from_numpy(v) for v in ew]
ref10 = encoder_torch(*[t.double() for t in te]).numpy()
ta, tb8 = torch.from_numpy(a), torch.from_numpy(b)

rows = []
for threads in (count,):
    ctypes.CFUNCTYPE(None, ctypes.c_int)(("pbw_set_threads", lib))(threads)
    torch.set_num_threads(threads)
    with torch.no_grad():
        gemm(a, b, c); close(c, ref8, "nxc W8")
        conv(x, k, bias, y); close(y, ref9, "nxc W9")
        enc(*ew, h); close(h, ref10, "nxc W10")
        close(torch.relu(torch.nn.functional.conv2d(tx, tk, tb, padding=1)).numpy(), ref9, "torch W9")
        close(encoder_torch(*te).numpy(), ref10, "torch W10")
        w8 = (median_ms(lambda: gemm(a, b, c)), median_ms(lambda: torch.mm(ta, tb8)),
              median_ms(lambda: a @ b))
        w9 = (median_ms(lambda: conv(x, k, bias, y)),
              median_ms(lambda: torch.relu(torch.nn.functional.conv2d(tx, tk, tb, padding=1))))
        w10 = (median_ms(lambda: enc(*ew, h)), median_ms(lambda: encoder_torch(*te)))
    rows.append((threads, w8, w9, w10))

print(f"W8-W10 at {count} thread(s): nxc variant {variant}, PyTorch {torch.__version__}, NumPy {np.__version__} "
      f"(BLAS: {os.path.realpath('/usr/lib/x86_64-linux-gnu/libblas.so.3')}); median ms per call")
print("| workload | threads | nxc | PyTorch eager | NumPy | nxc / best peer | nxc GFLOP/s | of peak |")
print("|---|---|---|---|---|---|---|---|")
names = {"W8": "W8 GEMM [1024,1024] x [1024,1024]", "W9": "W9 conv 3x3 64->64 56x56 + bias + relu",
         "W10": "W10 BERT-base encoder layer, seq 128"}
# Multiply-adds count 2 FLOP; W10 counts its products only (Q, K, V, the
# attention's two batched products, the output projection, the FFN's two).
flop = {"W8": 2 * 1024 ** 3, "W9": 2 * 64 * 64 * 9 * 56 * 56,
        "W10": 2 * 128 * 768 * 768 * 4 + 2 * 2 * 12 * 128 * 128 * 64 + 2 * 2 * 128 * 768 * 3072}
for threads, w8, w9, w10 in rows:
    for key, (mine, torch_ms, *rest) in (("W8", w8), ("W9", w9), ("W10", w10)):
        np_ms = rest[0] if rest else None
        best = min(v for v in (torch_ms, np_ms) if v is not None)
        rate = flop[key] / (mine * 1e-3) / 1e9
        share = f"{100 * rate / peak:.0f}%" if peak > 0 else "-"
        print(f"| {names[key]} | {threads} | {mine:.2f} | {torch_ms:.2f} | {'' if np_ms is None else f'{np_ms:.2f}'} "
              f"| {mine / best:.2f}x | {rate:.0f} | {share} |")
