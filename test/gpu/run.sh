#!/usr/bin/env bash
# Runs a GPU bundle on this machine's CUDA GPU: builds test/gpu/gpu_check.c with the C compiler, checks every
# call against its NumPy reference and prints the times. Needs only a C compiler and the CUDA driver (no
# LLVM, no MLIR, no CUDA toolkit). Make the bundle anywhere nxc runs:
#   /usr/bin/python3 test/e2e/e2e_test.py --nxc build/tools/nxc/nxc --work /tmp/e2e --device cuda --bundle B
#   /usr/bin/python3 examples/benchmarks/gpu/build.py --nxc build/tools/nxc/nxc --out B   (the benchmark)
# Usage: test/gpu/run.sh BUNDLE [FILTER]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=${1:?usage: test/gpu/run.sh BUNDLE [FILTER]}
exe=$(mktemp -d)/gpu_check
trap 'rm -rf "$(dirname "$exe")"' EXIT
${CC:-cc} -O2 -std=c11 "$here/gpu_check.c" -o "$exe" -ldl -lm
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
fi
if command -v cuobjdump >/dev/null; then
  lib=$(find "$bundle" -name 'lib*.so' | head -1)
  [ -n "$lib" ] && { echo "images in $(basename "$lib"):"; cuobjdump --list-elf --list-ptx "$lib" || true; }
fi
"$exe" "$bundle" ${2:+"$2"}
