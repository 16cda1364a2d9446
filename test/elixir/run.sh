#!/usr/bin/env bash
# The Elixir package (elixir/): its ExUnit suite with real Nx, against the nxc
# just built. Needs Erlang/OTP (Debian's, scripts/setup.sh installs it) and an
# Elixir and Nx without Hex: $NXC_NX_TOOLCHAIN, else ../shared/nx-toolchain
# beside the repository (its README says what it holds). Without them the
# test is skipped (exit 77) and says why.
# Usage: test/elixir/run.sh NXC BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
nxc=$(realpath "$1")
build=$(realpath -m "$2")
toolchain=${NXC_NX_TOOLCHAIN:-$root/../shared/nx-toolchain}
if [ ! -x "$toolchain/elixir/bin/mix" ] || [ ! -d "$toolchain/deps/nx" ]; then
  echo "skipped: no Elixir/Nx toolchain at $toolchain (set NXC_NX_TOOLCHAIN)"
  exit 77
fi
if ! command -v erl > /dev/null || [ ! -f /usr/lib/erlang/usr/include/erl_nif.h ]; then
  echo "skipped: Erlang/OTP with erl_nif.h is not installed (scripts/setup.sh installs Debian's)"
  exit 77
fi
export PATH="$toolchain/elixir/bin:$PATH"
export NXC_NX_PATH="$toolchain/deps/nx"
export NXC="$nxc"
export MIX_ENV=test
export MIX_BUILD_PATH="$build/_build"
export NXC_CACHE_DIR="$build/cache"
export MIX_HOME="$build/mix-home"
mkdir -p "$build"
rm -rf "$NXC_CACHE_DIR"
cd "$root/elixir"
mix test --color 2>&1 | sed 's/\x1b\[[0-9;]*m//g'
