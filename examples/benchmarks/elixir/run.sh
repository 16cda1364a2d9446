#!/usr/bin/env bash
# Per-call overhead of nxc from Elixir (imported AOT modules and compiler: Nxc)
# next to the same function called from C and Nx.Defn.Evaluator, one table.
# Needs Erlang (scripts/setup.sh) and an Elixir and Nx without Hex
# ($NXC_NX_TOOLCHAIN, default ../shared/nx-toolchain).
# Usage: examples/benchmarks/elixir/run.sh [path/to/nxc]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
nxc=$(realpath "${1:-$root/build/tools/nxc/nxc}")
toolchain=${NXC_NX_TOOLCHAIN:-$root/../shared/nx-toolchain}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -std=c11 -Wall -Werror "$here/call_packed.c" -o "$work/call_packed" -ldl
export PATH="$toolchain/elixir/bin:$PATH" NXC_NX_PATH="$toolchain/deps/nx" NXC="$nxc" CALL_PACKED="$work/call_packed"
export MIX_ENV=dev MIX_BUILD_PATH="$root/build/elixir-bench/_build" NXC_CACHE_DIR="$work/cache"
cd "$root/elixir"
mix run --no-start "$here/overhead.exs"
