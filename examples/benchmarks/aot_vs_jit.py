#!/usr/bin/python3
"""AOT = JIT: the same workloads through `nxc aot` (a C program calling the
library) and `nxc jit --bench`, same inputs, median time per call side by side.

Both run the code nxc compiles for this machine's CPU (the AOT library's best
variant, the JIT's host CPU); both call it on buffers allocated once, the
same way: page-aligned, in pages fresh from the OS. (Where large buffers lie
changes the time of W7, whose output is written with streaming stores, by up
to 1.5x: memory the JIT's compiler used before, and heap memory in general,
ran it slower than fresh pages.) Runs
alternate (AOT, JIT, AOT, JIT, ...); the table shows each side's best median
and the ratio of those, and the median over rounds of each round's ratio
(a burst of load on this shared machine hits one side of a round: the best
medians are taken from quiet moments, the median ratio is robust to a few
noisy rounds either way).

Usage: /usr/bin/python3 examples/benchmarks/aot_vs_jit.py [path/to/nxc] [--rounds N] [--threads N] [-k W3]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
P = "{f32[784,128], f32[128], f32[128,10], f32[10]}"
# name: (source, function for aot --fn, function for jit --fn, input shapes)
WORKLOADS = [
    ("W1 softmax f32[1000]", "examples/softmax/softmax.nx", "MyDefn.softmax(f32[1000])", "MyDefn.softmax",
     [(1000,)]),
    ("W2 softmax f32[1000000]", "examples/softmax/softmax.nx", "MyDefn.softmax(f32[1000000])", "MyDefn.softmax",
     [(1000000,)]),
    ("W3 dot [10000,784] x [784,10]", "examples/benchmarks/matmul.nx", "matmul(f32[10000,784], f32[784,10])",
     "matmul", [(10000, 784), (784, 10)]),
    ("W4 MLP predict, batch 30", "examples/board/mlp.nx", f"predict({P}, f32[30,784])", "predict",
     [(784, 128), (128,), (128, 10), (10,), (30, 784)]),
    ("W7 layer norm [4096,1024]", "examples/benchmarks/layernorm.nx", "layer_norm(f32[4096,1024])", "layer_norm",
     [(4096, 1024)]),
]

HARNESS = r"""
#include "w.h"
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
/* Buffers in pages fresh from the OS, page-aligned: as `nxc jit --bench` allocates them. */
static void *fresh_pages(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv) {
  double seconds = atof(argv[1]);
  void *args[%(nargs)d];
  const char *files[] = {%(files)s};
  long sizes[] = {%(sizes)s};
  for (int i = 0; i < %(nargs)d; ++i) {
    args[i] = fresh_pages(sizes[i] * 4);
    if (i < %(ninputs)d) { FILE *f = fopen(files[i], "rb"); if (fread(args[i], 4, sizes[i], f) != (size_t)sizes[i]) return 2; fclose(f); }
  }
  void *ws = fresh_pages(%(symbol)s_workspace_size() + 1);
  static double times[1000000];
  long runs = 0;
  double start = now();
  while (now() - start < 0.5) %(symbol)s_with_workspace(%(call)s, ws);
  start = now();
  while ((now() - start < seconds || runs < 3) && runs < 1000000) {
    double t = now();
    %(symbol)s_with_workspace(%(call)s, ws);
    times[runs++] = now() - t;
  }
  qsort(times, runs, sizeof(double), cmp);
  printf("%%.9g\n", runs %% 2 ? times[runs / 2] : (times[runs / 2 - 1] + times[runs / 2]) / 2);
  return 0;
}
"""


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"$ {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p.stdout


def jit_median(text):
    """The median column of `nxc jit --bench`'s table, in seconds."""
    units = {"ns": 1e-9, "μs": 1e-6, "ms": 1e-3, "s": 1.0}
    row = [l for l in text.splitlines() if re.search(r"\d (ns|μs|ms|s)\b", l)][0]
    values = re.findall(r"([\d.]+) (ns|μs|ms|s)\b", row)
    value, unit = values[1]  # average, median, 99th
    return float(value) * units[unit]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("nxc", nargs="?", default=os.path.join(ROOT, "build", "tools", "nxc", "nxc"))
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--threads", type=int, default=1, help="nxc's --threads for both")
    ap.add_argument("-k", dest="only", default="", help="only the workloads whose name contains this")
    args = ap.parse_args()
    nxc = os.path.abspath(args.nxc)
    rng = np.random.default_rng(7)
    print(f"nxc aot vs nxc jit --bench, median per call, best of {args.rounds} alternating runs, "
          f"--threads {args.threads}\n")
    print("| workload | aot (best) | jit (best) | jit / aot (best) | jit / aot (median of rounds) |\n|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for name, source, aot_fn, jit_fn, shapes in WORKLOADS:
            if args.only not in name:
                continue
            d = os.path.join(work, str(abs(hash(name))))
            os.makedirs(d)
            threads = ["--threads", str(args.threads)]
            run([nxc, "aot", os.path.join(ROOT, source), "--fn", aot_fn, "--name", "w", "-o", d] + threads)
            manifest = json.load(open(os.path.join(d, "w.json")))
            fn = manifest["functions"][0]
            files, npys, sizes = [], [], []
            for k, shape in enumerate(shapes):
                x = rng.standard_normal(shape).astype(np.float32)
                files.append(os.path.join(d, f"in{k}.bin"))
                x.tofile(files[-1])
                npys.append(os.path.join(d, f"in{k}.npy"))
                np.save(npys[-1], x)
                sizes.append(x.size)
            for r in fn["results"]:
                sizes.append(int(np.prod(r["shape"])))
            nargs = len(sizes)
            call = ", ".join(f"args[{i}]" for i in range(nargs))
            with open(os.path.join(d, "h.c"), "w") as f:
                f.write(HARNESS % {"nargs": nargs, "ninputs": len(shapes), "files": ", ".join(f'"{x}"' for x in files),
                                   "sizes": ", ".join(map(str, sizes)), "symbol": fn["symbol"], "call": call})
            exe = os.path.join(d, "h")
            run(["cc", "-O2", "-I", d, os.path.join(d, "h.c"), os.path.join(d, "libw.a"), os.path.join(d, "libnxrt.a"),
                 "-lpthread", "-lm", "-o", exe])
            jit = [nxc, "jit", os.path.join(ROOT, source), "--fn", jit_fn, "--bench", "--no-cache", "--warmup", "0.5",
                   "--time", str(args.seconds)] + threads + npys
            aots, jits = [], []
            for _ in range(args.rounds):
                aots.append(float(run([exe, str(args.seconds)])))
                jits.append(jit_median(run(jit)))
            aot_best, jit_best = min(aots), min(jits)
            ratio = float(np.median(np.array(jits) / np.array(aots)))
            print(f"| {name} | {aot_best * 1e6:.2f} us | {jit_best * 1e6:.2f} us | {jit_best / aot_best:.3f} | "
                  f"{ratio:.3f} |", flush=True)


if __name__ == "__main__":
    main()
