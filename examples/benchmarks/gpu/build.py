#!/usr/bin/python3
"""Builds the GPU benchmark bundle: the workloads compiled with
`nxc aot --device cuda`, their inputs, float64 NumPy references, and
calls.txt for test/gpu/gpu_check.c (which checks every result and times the
device-pointer entry). Runs on any machine with nxc and NumPy; the bundle
runs where the GPU is (examples/benchmarks/gpu/run.sh).

Usage: /usr/bin/python3 examples/benchmarks/gpu/build.py --nxc PATH --out DIR [--gpu sm_90]
"""
import argparse
import os
import shutil
import subprocess

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def gen_uniform(seed, count, lo, hi):
    """f32 values uniform in [lo, hi): test/gpu/gpu_check.c's gen_uniform."""
    with np.errstate(over="ignore"):
        z = (np.uint64(seed) << np.uint64(32)) + np.arange(count, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return (lo + (hi - lo) * ((z >> np.uint64(40)).astype(np.float64) / 16777216.0)).astype(np.float32)


def f64(x):
    return np.asarray(x, dtype=np.float64)


def softmax(x, axis=None):
    e = np.exp(f64(x) - np.max(f64(x), axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def predict(w1, b1, w2, b2, x):
    h = 1.0 / (1.0 + np.exp(-(f64(x) @ f64(w1) + f64(b1))))
    return softmax(h @ f64(w2) + f64(b2), axis=1)


def layer_norm(x):
    x = f64(x)
    c = x - x.mean(axis=-1, keepdims=True)
    return c / np.sqrt((c * c).mean(axis=-1, keepdims=True) + 1e-5)


def main():
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--nxc", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--gpu", default="sm_90", help="CUDA architectures (default sm_90, the H100)")
    args = p.parse_args()
    out = os.path.abspath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    generated = {}  # id(array) -> the GEN line that makes it on the GPU machine

    def uniform(shape, lo=0.0, hi=1.0):
        count = int(np.prod(shape))
        x = gen_uniform(len(generated) + 1, count, lo, hi).reshape(shape)
        generated[id(x)] = f"GEN {len(generated) + 1} {count} {lo!r} {hi!r}"
        return x

    params = [uniform((784, 128), -0.1, 0.1), uniform((128,), -0.1, 0.1), uniform((128, 10), -0.1, 0.1),
              uniform((10,), -0.1, 0.1)]
    mlp_tpl = "{f32[784,128], f32[128], f32[128,10], f32[10]}"
    x1k, x1m, rows = uniform(1000), uniform(1000000), uniform((1024, 1000))
    a, b = uniform((10000, 784)), uniform((784, 10), -0.1, 0.1)
    x30, x1, ln = uniform((30, 784)), uniform((1, 784)), uniform((4096, 1024))
    # (label, source, --fn, inputs, reference)
    workloads = [
        ("softmax_1k", "examples/softmax/softmax.nx", "MyDefn.softmax(f32[1000])", [x1k], softmax(x1k)),
        ("softmax_1m", "examples/softmax/softmax.nx", "MyDefn.softmax(f32[1000000])", [x1m], softmax(x1m)),
        ("row_softmax", "examples/benchmarks/row_softmax.nx", "row_softmax(f32[1024,1000])", [rows],
         softmax(rows, axis=1)),
        ("matmul", "examples/benchmarks/matmul.nx", "matmul(f32[10000,784], f32[784,10])", [a, b], f64(a) @ f64(b)),
        ("mlp_b30", "examples/board/mlp.nx", f"predict({mlp_tpl}, f32[30,784])", params + [x30],
         predict(*params, x30)),
        ("mlp_b1", "examples/board/mlp.nx", f"predict({mlp_tpl}, f32[1,784])", params + [x1], predict(*params, x1)),
        ("layer_norm", "examples/benchmarks/layernorm.nx", "layer_norm(f32[4096,1024])", [ln], layer_norm(ln)),
    ]
    lines = []
    for label, source, fn, inputs, ref in workloads:
        mod = f"gpu_{label}"
        d = os.path.join(out, label)
        subprocess.run([args.nxc, "aot", os.path.join(ROOT, source), "--fn", f"run={fn}", "--name", mod,
                        "--device", "cuda", "--gpu", args.gpu, "-o", d], check=True)
        lines.append(f"CALL {label}/lib{mod}.so {mod}_run {len(inputs)} 1")
        lines += [generated[id(x)] for x in inputs]
        # float32 references keep the bundle small enough to carry
        np.ascontiguousarray(ref, dtype=np.float32).tofile(os.path.join(out, label, "ref0.bin"))
        lines.append(f"OUT f32~ {ref.size} {label}/ref0.bin 1e-4 1e-6")
    with open(os.path.join(out, "calls.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"bundle in {out}: {len(workloads)} workloads")


if __name__ == "__main__":
    main()
