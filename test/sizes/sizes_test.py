#!/usr/bin/python3
"""Size budget: the artifact sizes that matter, against a checked-in table.

Builds the seed softmax (f32[1000]) and the board MLP for the host (with a
fixed variant list, so that the build machine's CPU does not change the
bytes), aarch64 Linux and the Cortex-M4, and compares each size with
test/sizes/sizes.json: a size more than 10% above its entry fails (update the
table in the same commit when a change is worth it); one more than 10% below
is reported, so the table can be tightened.

Usage: /usr/bin/python3 test/sizes/sizes_test.py --nxc PATH --work DIR [--update]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
TABLE = os.path.join(HERE, "sizes.json")
READELF = "/usr/lib/llvm-22/bin/llvm-readelf"

MODULES = {
    "softmax": (os.path.join(ROOT, "examples", "softmax", "softmax.nx"), ["MyDefn.softmax(f32[1000])"]),
    "mlp": (os.path.join(ROOT, "examples", "board", "mlp.nx"),
            ["predict({f32[784,128], f32[128], f32[128,10], f32[10]}, f32[30,784])"]),
}
TARGETS = {
    "x86_64": ["--cpu", "x86-64-v3,x86-64"],
    "aarch64": ["--target", "aarch64-linux-gnu", "--cpu", "cortex-a72"],
    "cortex-m4": ["--target", "thumbv7em-none-eabihf", "--cpu", "cortex-m4"],
}


def text_size(path):
    """Bytes of executable code: the sum of the SHF_EXECINSTR sections."""
    out = subprocess.run([READELF, "-S", "-W", path], capture_output=True, text=True, check=True).stdout
    total = 0
    for line in out.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 7 and parts[0].startswith("[") and "X" in parts[7]:
            total += int(parts[5], 16)
    return total


def measure(nxc, work):
    sizes = {}
    for target, opts in TARGETS.items():
        for name, (src, fns) in MODULES.items():
            out = os.path.join(work, target, name)
            cmd = [nxc, "aot", src, "--name", name, "-o", out, *opts]
            for fn in fns:
                cmd += ["--fn", fn]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode:
                sys.exit(f"{' '.join(cmd)}\n{p.stderr}")
            key = f"{target}/{name}"
            if target != "cortex-m4":
                so = os.path.join(out, f"lib{name}.so")
                sizes[f"{key}.so"] = os.path.getsize(so)
                sizes[f"{key}.so .text"] = text_size(so)
            sizes[f"{key}.a"] = os.path.getsize(os.path.join(out, f"lib{name}.a"))
        sizes[f"{target}/libnxrt.a"] = os.path.getsize(os.path.join(work, target, "softmax", "libnxrt.a"))
    return sizes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nxc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--update", action="store_true", help="rewrite sizes.json with the measured sizes")
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    sizes = measure(args.nxc, args.work)
    if args.update:
        with open(TABLE, "w") as f:
            json.dump(sizes, f, indent=2, sort_keys=True)
            f.write("\n")
        print(f"wrote {TABLE}")
        return 0
    table = json.load(open(TABLE))
    failures = []
    print(f"{'artifact':<28} {'table':>9} {'now':>9}")
    for key, now in sorted(sizes.items()):
        want = table.get(key)
        print(f"{key:<28} {want if want is not None else '-':>9} {now:>9}")
        if want is None:
            failures.append(f"{key} is not in the table (run with --update)")
        elif now > want * 1.10:
            failures.append(f"{key} grew by more than 10%: {want} -> {now} bytes (update sizes.json if intended)")
        elif now < want * 0.90:
            print(f"  note: {key} shrank by more than 10%; the table could be tightened")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
