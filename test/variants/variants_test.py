#!/usr/bin/python3
"""ISA variants: one default-built module runs on every x86-64 CPU.

Builds a softmax and an MLP module with `nxc aot` (default variants: the build
machine's CPU, x86-64-v3 and the x86-64 baseline), links a C harness against
the static and the shared library, and runs it natively and under
qemu-x86_64 as a Haswell (AVX2, no AVX-512) and a Nehalem (SSE4.2, no AVX):
every run must succeed, name the variant it chose (Nehalem: the baseline;
Haswell: an AVX2 variant) and give the native results (within 1e-6). A
module built for skylake-avx512 only must refuse to run under Haswell with
NXRT_ERROR_UNSUPPORTED_CPU and a message, without a signal. An aarch64
module with neoverse-v1, cortex-a76 and generic variants runs under
qemu-aarch64 as a Cortex-A72 (generic), a Neoverse-N1 (cortex-a76) and `max`
(neoverse-v1).

Usage: /usr/bin/python3 test/variants/variants_test.py --nxc PATH --work DIR
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")

HARNESS = r"""
#include <stdio.h>
#include "m.h"
#include "nxrt.h"
int main(void) {
  static float x[1000], y[1000], w1[784 * 16], b1[16], w2[16 * 10], b2[10], img[2 * 784], out[2 * 10];
  for (int i = 0; i < 1000; ++i) x[i] = (float)((i * 37) % 101) / 10.0f - 5.0f;
  for (int i = 0; i < 784 * 16; ++i) w1[i] = (float)((i * 13) % 17) / 170.0f - 0.05f;
  for (int i = 0; i < 16; ++i) b1[i] = 0.01f * i;
  for (int i = 0; i < 160; ++i) w2[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
  for (int i = 0; i < 10; ++i) b2[i] = -0.02f * i;
  for (int i = 0; i < 2 * 784; ++i) img[i] = (float)(i % 255) / 255.0f;
  int s1 = m_softmax(x, y), s2 = m_predict(w1, b1, w2, b2, img, out);
  printf("%s\n%d %d %s\n", m_cpu_variant(), s1, s2, nxrt_status_string(s1));
  if (s1 || s2) return 0;
  for (int i = 0; i < 1000; i += 97) printf("%.9g\n", y[i]);
  for (int i = 0; i < 20; ++i) printf("%.9g\n", out[i]);
  return 0;
}
"""

SOURCE = """defmodule M do
  import Nx.Defn
  defn softmax(x), do: Nx.exp(x - Nx.reduce_max(x)) / Nx.sum(Nx.exp(x - Nx.reduce_max(x)))
  defn predict(w1, b1, w2, b2, x) do
    h = Nx.sigmoid(Nx.dot(x, w1) + b1)
    Nx.exp(Nx.dot(h, w2) + b2) / Nx.sum(Nx.exp(Nx.dot(h, w2) + b2), axes: [1], keep_axes: true)
  end
end
"""


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def build(nxc, work, name, extra):
    out = os.path.join(work, name)
    os.makedirs(out, exist_ok=True)
    src = os.path.join(work, "m.nx")
    p = run([nxc, "aot", src, "--name", "m", "--fn", "M.softmax(f32[1000])",
             "--fn", "M.predict(f32[784,16], f32[16], f32[16,10], f32[10], f32[2,784])", "-o", out, *extra])
    if p.returncode:
        sys.exit(f"nxc aot {extra} failed:\n{p.stderr}")
    c = os.path.join(work, "h.c")
    exes = {}
    for kind, libs in (("static", [os.path.join(out, "libm.a")]),
                       ("shared", [os.path.join(out, "libm.so"), "-Wl,-rpath," + out])):
        exe = os.path.join(out, "h_" + kind)
        p = run(["cc", "-O2", "-I" + out, c, *libs, os.path.join(out, "libnxrt.a"), "-o", exe])
        if p.returncode:
            sys.exit(f"linking the harness failed:\n{p.stderr}")
        exes[kind] = exe
    return out, exes


def parse(text):
    lines = text.strip().splitlines()
    status = lines[1].split()
    return lines[0], int(status[0]), int(status[1]), [float(v) for v in lines[2:]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nxc", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    if os.uname().machine != "x86_64" or not shutil.which("qemu-x86_64") or not shutil.which("cc"):
        print("SKIP: needs an x86-64 host with qemu-x86_64 and cc")
        return 77
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    with open(os.path.join(args.work, "m.nx"), "w") as f:
        f.write(SOURCE)
    with open(os.path.join(args.work, "h.c"), "w") as f:
        f.write(HARNESS)
    failures = []
    out, exes = build(args.nxc, args.work, "default", [])
    manifest = json.load(open(os.path.join(out, "m.json")))
    names = [v["cpu"] for v in manifest["variants"]]
    if names[-1] != "x86-64" or len(names) < 2:
        failures.append(f"default variants {names}: expected the host's, x86-64-v3 and x86-64")
    header = open(os.path.join(out, "m.h")).read()
    if "m_cpu_variant(void)" not in header or "x86-64: needs the baseline" not in header:
        failures.append("the header does not list the variants and the query")
    native = None
    for kind, exe in exes.items():
        for cpu in (None, "Haswell", "Nehalem"):
            cmd = [exe] if cpu is None else ["qemu-x86_64", "-cpu", cpu, exe]
            p = run(cmd)
            where = f"{kind} library, {'native' if cpu is None else cpu}"
            if p.returncode:
                failures.append(f"{where}: exit {p.returncode}\n{p.stderr[-500:]}")
                continue
            variant, s1, s2, values = parse(p.stdout)
            print(f"{where}: variant {variant}, status {s1} {s2}")
            if s1 or s2:
                failures.append(f"{where}: status {s1} {s2} ({variant})")
                continue
            if cpu == "Nehalem" and variant != "x86-64":
                failures.append(f"{where}: chose {variant}, expected the x86-64 baseline")
            if cpu == "Haswell" and variant == "x86-64":
                failures.append(f"{where}: chose the baseline on an AVX2 CPU")
            if native is None:
                native = values
            elif len(values) != len(native) or any(abs(a - b) > 1e-6 * max(1.0, abs(b)) for a, b in zip(values, native)):
                failures.append(f"{where}: results differ from the native run\n{values}\n{native}")
    # One AVX-512 variant only: refused on Haswell, with the code and a message.
    out, exes = build(args.nxc, args.work, "avx512", ["--cpu", "skylake-avx512"])
    p = run(["qemu-x86_64", "-cpu", "Haswell", exes["static"]])
    if p.returncode:
        failures.append(f"the AVX-512 module under Haswell ended with exit {p.returncode} (a signal?)\n{p.stderr[-300:]}")
    else:
        variant, s1, s2, _ = parse(p.stdout)
        print(f"avx512-only module under Haswell: status {s1} {s2}: {variant}")
        if s1 != 3 or s2 != 3 or "lacks" not in variant or "avx512f" not in variant:
            failures.append(f"the AVX-512 module under Haswell: status {s1} {s2}, '{variant}'")
    # AArch64: a list of variants, checked through the ID registers.
    clang = "/usr/lib/llvm-22/bin/clang"
    if shutil.which("qemu-aarch64") and os.path.isdir("/usr/aarch64-linux-gnu") and os.path.exists(clang):
        out = os.path.join(args.work, "aarch64")
        os.makedirs(out, exist_ok=True)
        p = run([args.nxc, "aot", os.path.join(args.work, "m.nx"), "--name", "m", "--fn", "M.softmax(f32[1000])",
                 "--fn", "M.predict(f32[784,16], f32[16], f32[16,10], f32[10], f32[2,784])", "-o", out,
                 "--target", "aarch64-linux-gnu", "--cpu", "neoverse-v1,cortex-a76,generic"])
        if p.returncode:
            failures.append(f"nxc aot for aarch64 variants failed:\n{p.stderr}")
        else:
            exe = os.path.join(out, "h")
            p = run([clang, "--target=aarch64-linux-gnu", "-fuse-ld=lld", "-O2", "-I" + out,
                     os.path.join(args.work, "h.c"), os.path.join(out, "libm.a"), os.path.join(out, "libnxrt.a"),
                     "-o", exe])
            if p.returncode:
                failures.append(f"linking the aarch64 harness failed:\n{p.stderr}")
            for cpu, want in (("cortex-a72", "generic"), ("neoverse-n1", "cortex-a76"), ("max", "neoverse-v1")):
                if p.returncode:
                    break
                q = run(["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", "-cpu", cpu, exe])
                if q.returncode:
                    failures.append(f"aarch64 {cpu}: exit {q.returncode}\n{q.stderr[-300:]}")
                    continue
                variant, s1, s2, values = parse(q.stdout)
                print(f"aarch64 under {cpu}: variant {variant}, status {s1} {s2}")
                if (s1, s2) != (0, 0) or variant != want:
                    failures.append(f"aarch64 {cpu}: variant {variant}, status {s1} {s2}; expected {want}")
                elif native is not None and any(abs(a - b) > 1e-6 * max(1.0, abs(b)) for a, b in zip(values, native)):
                    failures.append(f"aarch64 {cpu}: results differ from the x86-64 run")
    else:
        print("aarch64: skipped (needs qemu-aarch64, /usr/aarch64-linux-gnu and clang-22)")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
