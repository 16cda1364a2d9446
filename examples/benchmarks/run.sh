#!/usr/bin/env bash
# Builds and runs the benchmarks: nxc's generated softmax and MLP against plain C.
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
awk -v s="$start" -v e="$end" 'BEGIN { printf "nxc aot (two signatures): %.3f s wall\n", e - s }'
printf 'libbench.so: %s bytes, libnxrt.a: %s bytes\n' "$(stat -c %s "$work/libbench.so")" "$(stat -c %s "$work/libnxrt.a")"
cc -O3 -march=native -std=c11 -I"$work" "$here/softmax_bench.c" "$work/libbench.a" "$work/libnxrt.a" -lm \
  -o "$work/softmax_bench"
"$work/softmax_bench"
echo

"$nxc" aot "$here/../board/mlp.nx" --fn 'predict({f32[784,128], f32[128], f32[128,10], f32[10]}, f32[30,784])' \
  --name mlpbench -o "$work"
"$nxc" aot "$here/matmul.nx" --fn 'matmul(f32[10000,784], f32[784,10])' --name mmbench -o "$work"
cc -O3 -march=native -std=c11 -I"$work" "$here/mlp_bench.c" "$work/libmlpbench.a" "$work/libmmbench.a" \
  "$work/libnxrt.a" -lm \
  -o "$work/mlp_bench"
"$work/mlp_bench"
echo

"$nxc" aot "$here/../mnist/mnist.exs" --name trainbench -o "$work" \
  --fn "update({f32[input: 784, layer: 128], f32[layer: 128], f32[layer: 128, output: 10], f32[output: 10]}, f32[batch: 30, input: 784], u8[batch: 30, output: 10], f32[])" \
  --fn "predict30=predict({f32[input: 784, layer: 128], f32[layer: 128], f32[layer: 128, output: 10], f32[output: 10]}, f32[30,784])" \
  --fn "predict1=predict({f32[input: 784, layer: 128], f32[layer: 128], f32[layer: 128, output: 10], f32[output: 10]}, f32[1,784])"
cc -O3 -march=native -std=c11 -I"$work" "$here/train_bench.c" "$work/libtrainbench.a" "$work/libnxrt.a" -lm \
  -o "$work/train_bench"
"$work/train_bench"
