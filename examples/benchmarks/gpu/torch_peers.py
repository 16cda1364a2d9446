#!/usr/bin/env python3
"""The GPU benchmark's peers: PyTorch eager and torch.compile on the same
workloads, timed the way test/gpu/gpu_check.c times nxc (wall time per call,
synchronized, median after warm-up). Prints one line per workload.

Usage: python3 examples/benchmarks/gpu/torch_peers.py   (needs PyTorch with CUDA)
"""
import statistics
import time

import torch


def wall_us(fn, seconds=0.3, runs=200):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:  # warm-up: the GPU idles at low clocks
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def main():
    dev = "cuda"
    u = lambda *shape, lo=0.0, hi=1.0: torch.rand(*shape, device=dev) * (hi - lo) + lo
    w1, b1, w2, b2 = u(784, 128, lo=-0.1, hi=0.1), u(128, lo=-0.1, hi=0.1), u(128, 10, lo=-0.1, hi=0.1), u(10, lo=-0.1, hi=0.1)

    def softmax(x):
        e = torch.exp(x - x.max())
        return e / e.sum()

    def row_softmax(x):
        return torch.softmax(x, dim=1)

    def mlp(x):
        return torch.softmax(torch.sigmoid(x @ w1 + b1) @ w2 + b2, dim=1)

    def layer_norm(x):
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), eps=1e-5)

    workloads = [
        ("softmax_1k", softmax, (u(1000),)),
        ("softmax_1m", softmax, (u(1000000),)),
        ("row_softmax", row_softmax, (u(1024, 1000),)),
        ("matmul", torch.matmul, (u(10000, 784), u(784, 10, lo=-0.1, hi=0.1))),
        ("mlp_b30", mlp, (u(30, 784),)),
        ("mlp_b1", mlp, (u(1, 784),)),
        ("layer_norm", layer_norm, (u(4096, 1024),)),
    ]
    print(f"{'workload':<14} {'eager (us)':>12} {'compile (us)':>14}   PyTorch {torch.__version__}")
    for name, fn, args in workloads:
        with torch.no_grad():
            eager = wall_us(lambda: fn(*args))
            try:
                compiled_fn = torch.compile(fn)
                compiled = wall_us(lambda: compiled_fn(*args))
                compiled = f"{compiled:14.1f}"
            except Exception as e:  # no compiler toolchain for inductor, say
                compiled = f"{'n/a':>14}  ({type(e).__name__})"
        print(f"{name:<14} {eager:12.1f} {compiled}")


if __name__ == "__main__":
    main()
