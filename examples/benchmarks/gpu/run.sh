#!/usr/bin/env bash
# The GPU benchmark, in two steps:
#   here (nxc, NumPy):   /usr/bin/python3 examples/benchmarks/gpu/build.py --nxc build/tools/nxc/nxc --out B
#   on the GPU machine:  examples/benchmarks/gpu/run.sh B
# The second step needs a C compiler and the CUDA driver; with PyTorch it also prints PyTorch eager and
# torch.compile on the same workloads, in the same run, for the side-by-side table.
# nxc's column is wall time per call through the device-pointer entry (launches + one synchronization),
# every result checked against its NumPy reference first (test/gpu/gpu_check.c).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=${1:?usage: examples/benchmarks/gpu/run.sh BUNDLE}
"$here/../../../test/gpu/run.sh" "$bundle"
echo
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  python3 "$here/torch_peers.py"
else
  echo "PyTorch with CUDA is not installed here: no peer column"
fi
