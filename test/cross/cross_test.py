#!/usr/bin/python3
"""Cross-compilation tests under emulation.

For every board target, compiles the softmax, a 2-layer MLP and a while loop
whose trip count is an input (test/e2e/cases/control.nx) with
`nxc aot --target`, builds board_test.c against the generated header and
libraries with a cross toolchain from Debian, runs it under QEMU (user mode for
Linux boards, the mps2-an386 machine with semihosting for the Cortex-M4), and
compares every printed output with the same program built and run on the host.
Also checks that bare-metal libraries have no undefined symbols, and prints
each target's code sizes, workspace sizes and runtime size.

Usage: test/cross/cross_test.py --nxc build/tools/nxc/nxc --work DIR [-k TARGET]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BOARD = os.path.join(ROOT, "examples", "board")
LLVM_BIN = "/usr/lib/llvm-22/bin"
MODULES = {
    "sm": (os.path.join(ROOT, "examples", "softmax", "softmax.nx"), ["MyDefn.softmax(f32[1000])"]),
    "mlp": (os.path.join(BOARD, "mlp.nx"), ["predict({f32[64,32], f32[32], f32[32,10], f32[10]}, f32[4,64])"]),
    "ctl": (os.path.join(ROOT, "test", "e2e", "cases", "control.nx"), ["power_iteration(f32[3,3], s32[])"]),
    "cpx": (os.path.join(ROOT, "test", "e2e", "cases", "complex.nx"), ["spectrum(f32[12])"]),
}

# name: (nxc --target, nxc --cpu, nxc --features, clang target, clang flags, qemu command)
LINUX_TARGETS = {
    "aarch64": ("aarch64-linux-gnu", "cortex-a72", "", "aarch64-linux-gnu", [],
                ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]),
    "armv7": ("armv7-linux-gnueabihf", "cortex-a7", "+neon", "arm-linux-gnueabihf",
              ["-march=armv7-a", "-mfpu=neon", "-mfloat-abi=hard"], ["qemu-arm", "-L", "/usr/arm-linux-gnueabihf"]),
    "riscv64": ("riscv64-linux-gnu", "generic-rv64", "+m,+a,+f,+d,+c", "riscv64-linux-gnu", ["-march=rv64gc"],
                ["qemu-riscv64", "-L", "/usr/riscv64-linux-gnu"]),
}
M4 = ("thumbv7em-none-eabihf", "cortex-m4")
M4_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"]


class Failure(Exception):
    pass


def run(cmd, env=None, timeout=300):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if p.returncode != 0:
        raise Failure(f"$ {' '.join(cmd)}\nexit {p.returncode}\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
    return p.stdout


def build_modules(nxc, out, target=None, cpu=None, features=""):
    for name, (source, fns) in MODULES.items():
        cmd = [nxc, "aot", source, "--name", name, "-o", out]
        for fn in fns:
            cmd += ["--fn", fn]
        if target:
            cmd += ["--target", target]
        if cpu:
            cmd += ["--cpu", cpu]
        if features:
            cmd += ["--features", features]
        run(cmd)


def static_libs(out):
    return [os.path.join(out, "libsm.a"), os.path.join(out, "libmlp.a"), os.path.join(out, "libctl.a"),
            os.path.join(out, "libcpx.a"), os.path.join(out, "libnxrt.a")]


def parse_outputs(text):
    if "DONE" not in text.split():
        raise Failure("the board program did not finish cleanly:\n" + text[-3000:])
    values = {}
    for line in text.splitlines():
        m = re.fullmatch(r"(softmax|mlp|ctl|spectrum) (\d+) (\S+)", line)
        if m:
            values[(m.group(1), int(m.group(2)))] = float(m.group(3))
    workspace = re.search(r"workspace sm=(\d+) mlp=(\d+)", text)
    return values, (int(workspace.group(1)), int(workspace.group(2)))


def compare(name, got, want):
    if set(got) != set(want):
        raise Failure(f"{name}: printed {len(got)} values, the host printed {len(want)}")
    worst = 0.0
    for key, ref in want.items():
        err = abs(got[key] - ref)
        if err > 1e-7 + 2e-5 * abs(ref):
            raise Failure(f"{name}: {key[0]}[{key[1]}] = {got[key]!r}, host {ref!r}")
        worst = max(worst, err / max(abs(ref), 1e-30))
    return worst


def sizes(out, libs):
    """.text and .rodata bytes of each archive (llvm-size -A)."""
    result = {}
    for lib in libs:
        text = rodata = 0
        for line in run([os.path.join(LLVM_BIN, "llvm-size"), "-A", os.path.join(out, lib)]).splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                if parts[0].startswith(".text"):
                    text += int(parts[1])
                elif parts[0].startswith(".rodata"):
                    rodata += int(parts[1])
        result[lib] = (text, rodata)
    return result


def host_reference(args):
    out = os.path.join(args.work, "host")
    build_modules(args.nxc, out)
    exe = os.path.join(out, "board_test")
    run(["cc", "-std=c11", "-O2", "-Wall", "-Werror", "-I", out, os.path.join(HERE, "board_test.c"),
         *static_libs(out), "-o", exe])
    return parse_outputs(run([exe]))


def linux_target(args, name, reference):
    target, cpu, features, clang_target, flags, qemu = LINUX_TARGETS[name]
    out = os.path.join(args.work, name)
    build_modules(args.nxc, out, target, cpu, features)
    results = []
    for variant in ("static", "shared"):
        exe = os.path.join(out, f"board_test_{variant}")
        link = static_libs(out) if variant == "static" else \
            ["-L", out, "-lsm", "-lmlp", "-lctl", "-lcpx", os.path.join(out, "libnxrt.a"), f"-Wl,-rpath,{out}"]
        run([os.path.join(LLVM_BIN, "clang"), f"--target={clang_target}", *flags, "-fuse-ld=lld", "-std=c11", "-O2",
             "-Wall", "-Werror", "-I", out, os.path.join(HERE, "board_test.c"), *link, "-o", exe])
        values, workspace = parse_outputs(run(qemu + [exe], timeout=120))
        results.append(compare(f"{name} ({variant})", values, reference[0]))
    return max(results), workspace, sizes(out, ["libsm.a", "libmlp.a", "libnxrt.a"])


def cortex_m4(args, reference):
    out = os.path.join(args.work, "cortex-m4")
    build_modules(args.nxc, out, *M4)
    for lib in ("libsm.a", "libmlp.a", "libctl.a", "libcpx.a", "libnxrt.a"):
        undefined = [l for l in run([os.path.join(LLVM_BIN, "llvm-nm"), "-u", os.path.join(out, lib)]).splitlines()
                     if l.strip() and not l.endswith(":")]
        # Complex arithmetic runs in f64, as Nx computes it: on the M4's
        # single-precision FPU, with the compiler's soft-float routines
        # (libgcc's __aeabi_d*) and the C library's sqrt.
        if lib == "libcpx.a":
            undefined = [l for l in undefined if not re.search(r"\b(__aeabi_[a-z0-9]+|sqrt)$", l.strip())]
        if undefined:
            raise Failure(f"bare-metal {lib} has undefined symbols: {undefined}")
    if os.path.exists(os.path.join(out, "libsm.so")):
        raise Failure("a shared object was written for a bare-metal target")
    elf = os.path.join(out, "board_test.elf")
    run(["arm-none-eabi-gcc", *M4_FLAGS, "-std=c11", "-O2", "-Wall", "-Werror", "--specs=rdimon.specs",
         "-T", os.path.join(BOARD, "cortex-m4", "mps2-an386.ld"), "-I", out, os.path.join(BOARD, "cortex-m4", "startup.c"),
         os.path.join(HERE, "board_test.c"), *static_libs(out), "-lm", "-o", elf])
    text = run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-semihosting", "-kernel", elf], timeout=120)
    values, workspace = parse_outputs(text)
    return compare("cortex-m4", values, reference[0]), workspace, sizes(out, ["libsm.a", "libmlp.a", "libnxrt.a"])


def board_example(args):
    """examples/board, built with CMake for each toolchain file and run in the
    toolchain's emulator: every board prints the same classification."""
    outputs = {}
    for toolchain, exe in (("aarch64-linux-gnu", "edge_app"), ("cortex-m4", "edge_app.elf")):
        build = os.path.join(args.work, f"board-{toolchain}")
        run(["cmake", "-S", BOARD, "-B", build, "-G", "Ninja",
             f"-DCMAKE_TOOLCHAIN_FILE={os.path.join(BOARD, 'toolchains', toolchain + '.cmake')}",
             f"-DNXC_EXECUTABLE={args.nxc}"])
        run(["cmake", "--build", build])
        emulator = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"] if toolchain.startswith("aarch64") else \
            ["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-semihosting", "-kernel"]
        outputs[toolchain] = run(emulator + [os.path.join(build, exe)], timeout=120)
        if "sample 3: class" not in outputs[toolchain]:
            raise Failure(f"{toolchain}: unexpected output:\n{outputs[toolchain]}")
    if len(set(outputs.values())) != 1:
        raise Failure("the boards disagree:\n" + "\n".join(f"{k}:\n{v}" for k, v in outputs.items()))
    return 0.0, (0, 0), None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nxc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("-k", help="only targets whose name contains this")
    args = ap.parse_args()
    args.nxc = os.path.abspath(args.nxc)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    reference = host_reference(args)
    print(f"host: workspace sm={reference[1][0]} mlp={reference[1][1]} bytes")
    cases = [(n, lambda n=n: linux_target(args, n, reference)) for n in LINUX_TARGETS]
    cases.append(("cortex-m4", lambda: cortex_m4(args, reference)))
    cases.append(("board-example", lambda: board_example(args)))
    failures = 0
    print(f"{'target':10} {'max rel err':>11}  {'workspace sm/mlp':>16}  "
          f"{'libsm .text/.rodata':>20}  {'libmlp .text/.rodata':>21}  {'libnxrt .text/.rodata':>22}")
    for name, fn in cases:
        if args.k and args.k not in name:
            continue
        try:
            err, ws, sz = fn()
            if sz is None:
                print(f"PASS {name:9} (examples/board built with CMake for aarch64 Linux and Cortex-M4, same output)")
                continue
            print(f"PASS {name:9} {err:11.2g}  {ws[0]:>7}/{ws[1]:<8}  "
                  f"{sz['libsm.a'][0]:>11}/{sz['libsm.a'][1]:<8}  {sz['libmlp.a'][0]:>12}/{sz['libmlp.a'][1]:<8}  "
                  f"{sz['libnxrt.a'][0]:>13}/{sz['libnxrt.a'][1]:<8}")
        except (Failure, subprocess.TimeoutExpired) as e:
            failures += 1
            print(f"FAIL {name}\n{e}")
    print(f"{len(cases) - failures if not args.k else 'some'} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
