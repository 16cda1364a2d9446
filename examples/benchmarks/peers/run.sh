#!/usr/bin/env bash
# W1-W7 (docs/performance.md defines the workloads) side by side with Eigen 3.4,
# oneDNN 2.6 and Halide 14 AOT, at 1 and 2 threads.
# Needs: apt-get install libeigen3-dev libdnnl-dev libhalide14-0-dev (W8-W10: python3-torch libopenblas0-pthread)
# Usage: examples/benchmarks/peers/run.sh [path/to/nxc]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=$here/..
nxc=${1:-$here/../../../build/tools/nxc/nxc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

P='{f32[input: 784, layer: 128], f32[layer: 128], f32[layer: 128, output: 10], f32[output: 10]}'
# nxc's modules may use 2 threads; the program sets 1 or 2 (MODULE_set_threads).
"$nxc" aot "$bench/../softmax/softmax.nx" --threads 2 --name pbsm -o "$work" \
  --fn 'MyDefn.softmax(f32[1000])' --fn 'MyDefn.softmax(f32[1000000])'
"$nxc" aot "$bench/matmul.nx" --threads 2 --name pbmm -o "$work" --fn 'matmul(f32[10000,784], f32[784,10])'
"$nxc" aot "$bench/../mnist/mnist.exs" --threads 2 --name pbmnist -o "$work" \
  --fn "predict30=predict($P, f32[30,784])" --fn "predict1=predict($P, f32[1,784])" \
  --fn "update($P, f32[batch: 30, input: 784], u8[batch: 30, output: 10], f32[])"
"$nxc" aot "$bench/layernorm.nx" --threads 2 --name pbln -o "$work" --fn 'layer_norm(f32[4096,1024])'

c++ -std=c++17 -O1 "$here/halide_gen.cpp" -I/usr/include/halide14 -lHalide14 -o "$work/halide_gen"
"$work/halide_gen" "$work"

c++ -std=c++17 -O3 -march=native -fopenmp -I"$work" -I/usr/include/eigen3 -I/usr/include/halide14 "$here/peers.cpp" \
  "$work/libpbsm.a" "$work/libpbmm.a" "$work/libpbmnist.a" "$work/libpbln.a" "$work/libnxrt.a" \
  "$work"/halide_*.a -ldnnl -ldl -lpthread -lm -o "$work/peers"
for threads in 1 2; do "$work/peers" "$threads"; done
# The machine's multiply-add peak (widest vectors, independent chains) at 1 and 2 threads.
cc -O2 "$here/fma_peak.c" -lpthread -o "$work/fma_peak"
read -r isa peak1 peak2 < <("$work/fma_peak" 2)
echo "Multiply-add peak ($isa, measured): $peak1 GFLOP/s at 1 thread, $peak2 GFLOP/s at 2"
# W8-W10 against PyTorch and NumPy (python3-torch; libopenblas0-pthread for an optimized BLAS).
for threads in 1 2; do
  peak=$([ "$threads" = 1 ] && echo "$peak1" || echo "$peak2")
  OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads /usr/bin/python3 "$here/models.py" "$nxc" "$work" "$threads" \
    "$peak"
done
