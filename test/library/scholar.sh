#!/usr/bin/env bash
# Scholar's metrics, preprocessing, statistics and models' fit functions from
# the command line, against real Nx: each case (scholar_oracle.exs) calls one
# public function with random inputs and, where it takes them, options;
# `nxc jit` runs the same function from Scholar's files as they ship (the
# whole lib/ given with --with), the options in --fn, and the results must
# agree. Prints each case that differs or does not compile, then the count.
# Usage: test/library/scholar.sh SCHOLAR_CHECKOUT [NXC] [TOOLCHAIN]
#   (TOOLCHAIN: ../shared/nx-toolchain; its Elixir runs Nx's side)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scholar=$(realpath "$1")
nxc=$(realpath "${2:-$here/../../build/tools/nxc/nxc}")
toolchain=$(realpath "${3:-$here/../../../shared/nx-toolchain}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$toolchain/elixir/bin:$PATH" MIX_ENV=prod
# Nx, NimbleOptions and Scholar compiled for Nx's side (Scholar's optimizer
# options name Polaris, which none of these cases calls).
mkdir -p "$work/ebin"
cp -r "$toolchain/deps" "$work/deps" && chmod -R u+w "$work/deps"
(cd "$work/deps/nx" && MIX_BUILD_PATH="$work/nx-build" mix compile > /dev/null 2>&1)
(cd "$work/deps/nimble_options" && MIX_BUILD_PATH="$work/no-build" mix compile > /dev/null 2>&1)
paths=(-pa "$work/nx-build/lib/nx/ebin" -pa "$work/nx-build/lib/complex/ebin" -pa "$work/nx-build/lib/telemetry/ebin"
       -pa "$work/no-build/lib/nimble_options/ebin")
mapfile -t files < <(find "$scholar/lib" -name '*.ex' | sort)
elixirc "${paths[@]}" -o "$work/ebin" "${files[@]}" > /dev/null 2>&1
cd "$work"
elixir "${paths[@]}" -pa "$work/ebin" "$here/scholar_oracle.exs"
pass=0; fail=0
for d in case*/; do
  d=${d%/}
  fn=$(cat "$d/fn")
  if [ -f "$d/nx_error" ]; then continue; fi
  args=()
  for k in $(seq 0 20); do [ -f "$d/arg$k.npy" ] && args+=("$d/arg$k.npy"); done
  # The module's own file: Scholar.Metrics.Regression in metrics/regression.ex.
  module=${fn%%(*}; module=${module%.*}
  src=$(grep -l "^defmodule $module do" "${files[@]}" | head -1)
  ext=npy; [ -f "$d/want.npz" ] && ext=npz
  if out=$("$nxc" jit "$src" --with "$scholar/lib" --fn "$fn" \
             "${args[@]}" -o "$d/got.$ext" 2>&1) &&
     /usr/bin/python3 -c "
import sys, numpy as np
g, w = np.load('$d/got.$ext'), np.load('$d/want.$ext')
# A container's leaves by name (the oracle names them by path, as nxc does).
gs, ws = ([g[k] for k in sorted(g.files)], [w[k] for k in sorted(w.files)]) if '$ext' == 'npz' else ([g], [w])
if '$ext' == 'npz' and sorted(g.files) != sorted(w.files): sys.exit(1)
ok = len(gs) == len(ws) and all(
    a.shape == b.shape and np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-5, atol=1e-6, equal_nan=True) for a, b in zip(gs, ws))
sys.exit(0 if ok else 1)" 2> /dev/null; then
    pass=$((pass + 1))
  else
    echo "DIFFERS $fn: $(echo "$out" | head -1)"; fail=$((fail + 1))
  fi
done
echo "$pass agree with Nx, $fail do not"
[ "$fail" = 0 ]
