#!/usr/bin/env bash
# The MNIST story end to end, on Fashion-MNIST (Debian's dataset-fashion-mnist):
#   1. compile mnist.exs's init_random_params, update_with_averages (grad inside)
#      and accuracy ahead of time, and train with train.c, writing params.npz;
#   2. compile predict with those parameters baked in, and classify the test set
#      with an edge program that knows only the generated header and library;
#   3. cross-compile the same predict for a Cortex-M4 (weights in flash) and
#      classify a few test images under qemu-system-arm.
# Usage: examples/mnist/run.sh [--epochs N] [--limit IMAGES] [--nxc PATH] [--out DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nxc=$here/../../build/tools/nxc/nxc
out=$here/../../build/examples/mnist
data=${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
epochs=5 limit=0
while [ $# -gt 0 ]; do
  case $1 in
    --epochs) epochs=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --nxc) nxc=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
P='{f32[input: 784, layer: 128], f32[layer: 128], f32[layer: 128, output: 10], f32[output: 10]}'

echo "== training"
"$nxc" aot "$here/mnist.exs" --name mnist -o "$out/train" \
  --fn 'init_random_params()' \
  --fn "update_with_averages($P, f32[batch: 30, input: 784], u8[batch: 30, output: 10], f32[], f32[], s32[])" \
  --fn "accuracy($P, f32[batch: 10000, input: 784], u8[batch: 10000, output: 10])"
cc -std=c11 -O2 -Wall -Werror -I"$out/train" "$here/train.c" "$out/train/libmnist.a" "$out/train/libnxrt.a" -lz -lm \
  -o "$out/train/train"
"$out/train/train" "$data" --epochs "$epochs" --limit "$limit" --out "$out/params.npz" | tee "$out/train.log"

echo "== predict with the weights baked in"
# The archive holds w1, b1, w2, b2; the declared template gives them the axis
# names predict's softmax needs (axes: [:output]).
"$nxc" aot "$here/mnist.exs" --name fashion -o "$out/edge" --fn "predict(@$out/params.npz:$P, f32[batch: 30, input: 784])"
cc -std=c11 -O2 -Wall -Werror -I"$out/edge" "$here/classify.c" "$out/edge/libfashion.a" "$out/edge/libnxrt.a" -lz \
  -o "$out/edge/classify"
"$out/edge/classify" "$data" --samples 6 "$out/edge/samples.h" | tee "$out/classify.log"
trained=$(grep '^test accuracy' "$out/train.log" | sed 's/ *(.*//')
edge=$(grep '^test accuracy' "$out/classify.log" | sed 's/ *(.*//')
if [ "$trained" != "$edge" ]; then
  echo "the edge program's accuracy ($edge) differs from the trainer's ($trained)" >&2
  exit 1
fi
echo "edge accuracy equals the trainer's: $edge"
ls -l "$out/edge/libfashion.a" "$out/edge/libfashion.so" "$out/edge/libnxrt.a"

echo "== Cortex-M4"
if command -v arm-none-eabi-gcc >/dev/null && command -v qemu-system-arm >/dev/null; then
  m4=$out/cortex-m4
  "$nxc" aot "$here/mnist.exs" --name fashion_m4 -o "$m4" --target thumbv7em-none-eabihf --cpu cortex-m4 \
    --fn "predict(@$out/params.npz:$P, f32[batch: 1, input: 784])"
  board=$here/../board/cortex-m4
  arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard -std=c11 -O2 -Wall -Werror \
    --specs=rdimon.specs -T "$board/mps2-an386.ld" -I"$m4" -I"$out/edge" "$board/startup.c" "$here/classify_m4.c" \
    "$m4/libfashion_m4.a" "$m4/libnxrt.a" -o "$m4/classify_m4.elf"
  arm-none-eabi-size "$m4/classify_m4.elf"
  qemu-system-arm -M mps2-an386 -nographic -semihosting -kernel "$m4/classify_m4.elf"
else
  echo "(skipped: arm-none-eabi-gcc or qemu-system-arm not installed)"
fi
