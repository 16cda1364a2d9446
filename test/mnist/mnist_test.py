#!/usr/bin/python3
"""examples/mnist on a slice of Fashion-MNIST, and baked constants checked.

Runs examples/mnist/run.sh for 2 epochs on 3,000 training images (train with
the AOT-compiled update, which differentiates the loss with grad; bake the
weights into predict; classify on the host and on the Cortex-M4 under qemu)
and asserts that the loss falls, that the test accuracy is well above chance
and that the edge program and the Cortex-M4 agree with the trainer. Then it
compiles predict twice, with the weights as arguments and baked in, loads
both shared objects and checks the outputs are identical on the same images.

Usage: /usr/bin/python3 test/mnist/mnist_test.py --nxc PATH --work DIR
"""
import argparse
import ctypes
import os
import re
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "mnist")
DATA = "/usr/share/datasets/fashion-mnist"
P = "{f32[input: 784, layer: 128], f32[layer: 128], f32[layer: 128, output: 10], f32[output: 10]}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nxc", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    if not os.path.isdir(DATA):
        print(f"SKIP: {DATA} missing (apt-get install dataset-fashion-mnist)")
        return 77
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    p = subprocess.run([os.path.join(EXAMPLE, "run.sh"), "--epochs", "2", "--limit", "3000", "--nxc", args.nxc,
                        "--out", args.work], capture_output=True, text=True, timeout=900)
    print(p.stdout[-3000:], p.stderr[-3000:])
    if p.returncode != 0:
        print(f"FAIL: run.sh exited {p.returncode}")
        return 1
    losses = [float(x) for x in re.findall(r"^epoch \d+: loss ([0-9.]+)", p.stdout, re.M)]
    acc = float(re.search(r"^test accuracy: ([0-9.]+)", p.stdout, re.M).group(1))
    failures = []
    if len(losses) != 2 or not losses[1] < losses[0]:
        failures.append(f"the loss does not fall: {losses}")
    if acc < 0.5:
        failures.append(f"test accuracy {acc} is not well above chance (0.1)")
    if "edge accuracy equals the trainer's" not in p.stdout:
        failures.append("the edge program disagrees with the trainer")
    if "cortex-m4 agrees with the host on 6 of 6 images" not in p.stdout:
        failures.append("the Cortex-M4 build disagrees with the host")

    # Baked constants against the same weights passed as arguments.
    params = os.path.join(args.work, "params.npz")
    mnist = os.path.join(EXAMPLE, "mnist.exs")
    for name, template in (("baked", f"@{params}:{P}"), ("args", P)):
        subprocess.run([args.nxc, "aot", mnist, "--name", name, "-o", os.path.join(args.work, name),
                        "--fn", f"predict({template}, f32[batch: 30, input: 784])"], check=True)
    z = np.load(params)
    w = [np.ascontiguousarray(z[k], dtype=np.float32) for k in ("w1", "b1", "w2", "b2")]
    x = np.random.default_rng(5).uniform(0, 1, (30, 784)).astype(np.float32)
    ptr = lambda a: a.ctypes.data_as(ctypes.c_void_p)
    baked = ctypes.CDLL(os.path.join(args.work, "baked", "libbaked.so"))
    plain = ctypes.CDLL(os.path.join(args.work, "args", "libargs.so"))
    yb, ya = np.zeros((30, 10), np.float32), np.zeros((30, 10), np.float32)
    if baked.baked_predict(ptr(x), ptr(yb)) != 0 or plain.args_predict(*(ptr(a) for a in w), ptr(x), ptr(ya)) != 0:
        failures.append("predict returned an error")
    if not np.array_equal(yb, ya):
        failures.append(f"baked and argument predict differ by up to {np.max(np.abs(yb - ya))}")
    header = open(os.path.join(args.work, "baked", "baked.h")).read()
    if "#define BAKED_PREDICT_CONSTANT_BYTES 407080" not in header:
        failures.append("the header does not state the baked constants' size (407080 bytes)")
    if re.search(r"baked_predict(_with_workspace)?\(const float \*w1", header):
        failures.append("baked weights are still parameters")
    # Through graph files: the training module (grad, tuples, names) and the
    # baked predict give byte-identical libraries when compiled from their graphs.
    fns = {"mnist": ["init_random_params()",
                     f"update_with_averages({P}, f32[batch: 30, input: 784], u8[batch: 30, output: 10], f32[], f32[], s32[])",
                     f"accuracy({P}, f32[batch: 10000, input: 784], u8[batch: 10000, output: 10])"],
           "baked": [f"predict(@{params}:{P}, f32[batch: 30, input: 784])"]}
    for name, sigs in fns.items():
        graph = os.path.join(args.work, "graph", f"{name}.json")
        os.makedirs(os.path.dirname(graph), exist_ok=True)
        fn_args = [a for sig in sigs for a in ("--fn", sig)]
        subprocess.run([args.nxc, "aot", mnist, "--name", name, "--emit", "json", "-o", graph] + fn_args, check=True)
        straight = os.path.join(args.work, "train" if name == "mnist" else "baked")
        subprocess.run([args.nxc, "aot", mnist, "--name", name, "-o", straight + "-again"] + fn_args, check=True)
        subprocess.run([args.nxc, "aot", graph, "--name", name, "-o", os.path.join(args.work, "graph", name)], check=True)
        lib = f"lib{name}.so"
        with open(os.path.join(straight + "-again", lib), "rb") as a, \
             open(os.path.join(args.work, "graph", name, lib), "rb") as b:
            if a.read() != b.read():
                failures.append(f"{lib} compiled from its graph file differs from the one compiled from the source")
    for f in failures:
        print("FAIL:", f)
    print(f"losses {losses}, test accuracy {acc}, baked == arguments: {np.array_equal(yb, ya)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
