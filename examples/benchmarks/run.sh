#!/usr/bin/env bash
# Builds and runs the softmax benchmark: nxc's generated code against plain C.
# Usage: examples/benchmarks/run.sh [path/to/nxc]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nxc=${1:-$here/../../build/tools/nxc/nxc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s.%N)
"$nxc" aot "$here/../softmax/softmax.nx" --fn 'MyDefn.softmax(f32[1000])' --fn 'MyDefn.softmax(f32[1000000])' \
  --name bench -o "$work"
end=$(date +%s.%N)
printf 'nxc aot (two signatures): %.3f s wall\n' "$(echo "$end - $start" | bc)"
printf 'libbench.so: %s bytes, libnxrt.a: %s bytes\n' "$(stat -c %s "$work/libbench.so")" "$(stat -c %s "$work/libnxrt.a")"
cc -O3 -march=native -std=c11 -I"$work" "$here/softmax_bench.c" "$work/libbench.a" "$work/libnxrt.a" -lm -o "$work/bench"
"$work/bench"
