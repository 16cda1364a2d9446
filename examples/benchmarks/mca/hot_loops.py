#!/usr/bin/env python3
"""The hot loops of W3 and W8 in every CPU variant nxc builds, estimated by
llvm-mca: each loop is the one with the most multiply-adds, from its label
to the jump back to it; llvm-mca gives the cycles per iteration on the
variant's CPU, and with the multiply-adds per iteration and the vector width
that is FLOP per cycle beside the core's peak (two FMA pipes).

Usage: examples/benchmarks/mca/hot_loops.py [path/to/nxc]"""
import os, re, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
nxc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../../build/tools/nxc/nxc")
bench = os.path.join(here, "..")
workloads = [
    ("W3 dot [10000,784] x [784,10]", os.path.join(bench, "matmul.nx"), "matmul(f32[10000,784], f32[784,10])"),
    ("W8 GEMM [1024,1024]^2", os.path.join(bench, "peers/models.nx"), "Models.gemm(f32[1024,1024], f32[1024,1024])"),
]
# (nxc --cpu, --target, llvm-mca -mcpu, lanes of f32 per register, FMA pipes)
variants = [
    ("znver5", "x86_64-unknown-linux-gnu", "znver5", {"zmm": 16, "ymm": 8, "xmm": 4}, 2),
    ("skylake-avx512", "x86_64-unknown-linux-gnu", "skylake-avx512", {"zmm": 16, "ymm": 8, "xmm": 4}, 2),
    ("x86-64-v3", "x86_64-unknown-linux-gnu", "haswell", {"ymm": 8, "xmm": 4}, 2),
    ("neoverse-v1", "aarch64-linux-gnu", "neoverse-v1", {"v": 4, "z": 8}, 4),
]
FMA = re.compile(r"^\s*(vfmadd\d+ps|fmla)\s+%?(zmm|ymm|xmm|v|z)")


def loops(lines):
    """(label line, back-jump line) of every loop."""
    found = []
    for i, line in enumerate(lines):
        m = re.match(r"^(\.LBB[0-9_]+):", line)
        if not m:
            continue
        for j in range(i + 1, len(lines)):
            if re.match(r"^\s*(j[a-z]+|b(\.[a-z]+)?)\s+" + re.escape(m.group(1)) + r"\s*$", lines[j]):
                found.append((i, j))
                break
    return found


def hot_loop(asm):
    """The innermost loop with the most multiply-adds."""
    lines = asm.split("\n")
    all_loops = loops(lines)
    best = None
    for i, j in all_loops:
        if any(i < a and b <= j for a, b in all_loops):
            continue  # holds an inner loop
        body = [l for l in lines[i + 1:j + 1] if l.strip() and not l.lstrip().startswith(("#", "//", ".p2align"))]
        fmas = [FMA.match(l) for l in body]
        count = sum(1 for f in fmas if f)
        if count and (best is None or count > best[1]):
            best = (body, count, next(f.group(2) for f in fmas if f))
    return best


print("| workload | variant (llvm-mca CPU) | FMAs per iteration | cycles per iteration | FLOP per cycle | peak | of peak |")
print("|---|---|---|---|---|---|---|")
with tempfile.TemporaryDirectory() as work:
    for name, source, fn in workloads:
        for cpu, triple, mcpu, lanes, pipes in variants:
            asm = subprocess.run([nxc, "aot", source, "--fn", fn, "--name", "m", "--emit", "asm", "--target", triple,
                                  "--cpu", cpu], check=True, capture_output=True, text=True).stdout
            loop = hot_loop(asm)
            if not loop:
                print(f"| {name} | {cpu} | no loop with multiply-adds | | | | |")
                continue
            body, count, reg = loop
            path = os.path.join(work, "loop.s")
            with open(path, "w") as f:
                f.write("\n".join(body) + "\n")
            mca = subprocess.run(["llvm-mca-22", "-mtriple=" + triple, "-mcpu=" + mcpu, "-iterations=500", path],
                                 capture_output=True, text=True).stdout
            cycles = float(re.search(r"Total Cycles:\s+(\d+)", mca).group(1)) / 500
            # SVE registers are scalable: Neoverse V1's are 256 bits (8 f32).
            width = lanes.get(reg, 4)
            flop = 2 * count * width / cycles
            peak = 2 * pipes * max(lanes.values()) if cpu != "neoverse-v1" else 2 * 2 * 8
            print(f"| {name} | {cpu} ({mcpu}) | {count} x {reg} ({width} f32) | {cycles:.2f} | {flop:.1f} | {peak} | {flop / peak:.0%} |")
