#!/usr/bin/env bash
# Compiles examples/softmax/softmax.nx ahead of time and runs main.c against it.
# Usage: examples/softmax/run.sh [path/to/nxc]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nxc=${1:-$here/../../build/tools/nxc/nxc}
out=$here/../../build/examples/softmax
mkdir -p "$out"
set -x
"$nxc" aot "$here/softmax.nx" --fn 'MyDefn.softmax(f32[100])' --name mymod -o "$out"
cc -std=c11 -Wall -I"$out" "$here/main.c" "$out/libmymod.a" "$out/libnxrt.a" -o "$out/softmax_demo"
"$out/softmax_demo"
