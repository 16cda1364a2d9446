#!/usr/bin/env bash
# Axon's activations, losses, layers and metrics from the command line,
# against real Nx: each case (axon_oracle.exs) calls one public function with
# random inputs and, where it takes them, options; `nxc jit` runs the same
# function from Axon's files as they ship, the options in --fn
# ('Axon.Activations.celu(alpha: 2.0)'), and the results must agree.
# Prints each case that differs or does not compile, then the count.
# Usage: test/library/axon.sh AXON_CHECKOUT [NXC] [TOOLCHAIN]
#   (TOOLCHAIN: ../shared/nx-toolchain; its Elixir runs Nx's side)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
axon=$(realpath "$1")
nxc=$(realpath "${2:-$here/../../build/tools/nxc/nxc}")
toolchain=$(realpath "${3:-$here/../../../shared/nx-toolchain}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$toolchain/elixir/bin:$PATH" MIX_ENV=prod
# Nx, and the Axon files these functions live in (they need only Nx), compiled
# for Nx's side.
mkdir -p "$work/ebin"
cp -r "$toolchain/deps" "$work/deps" && chmod -R u+w "$work/deps"
(cd "$work/deps/nx" && MIX_BUILD_PATH="$work/nx-build" mix compile > /dev/null 2>&1)
paths=(-pa "$work/nx-build/lib/nx/ebin" -pa "$work/nx-build/lib/complex/ebin" -pa "$work/nx-build/lib/telemetry/ebin")
files=("$axon"/lib/axon/{shared,activations,losses,layers,metrics,stateful_output,shape}.ex)
elixirc "${paths[@]}" -o "$work/ebin" "${files[@]}" > /dev/null 2>&1
cd "$work"
elixir "${paths[@]}" -pa "$work/ebin" "$here/axon_oracle.exs"
pass=0; fail=0
for d in case*/; do
  d=${d%/}
  fn=$(cat "$d/fn")
  if [ -f "$d/nx_error" ]; then continue; fi
  args=()
  for k in $(seq 0 20); do [ -f "$d/arg$k.npy" ] && args+=("$d/arg$k.npy"); done
  src=${files[1]}
  case "$fn" in
    Axon.Losses.*) src=${files[2]} ;;
    Axon.Layers.*) src=${files[3]} ;;
    Axon.Metrics.*) src=${files[4]} ;;
  esac
  ext=npy; [ -f "$d/want.npz" ] && ext=npz
  if out=$("$nxc" jit "$src" --with "$axon/lib/axon/shared.ex" --with "$axon/lib/axon/activations.ex" \
             --with "$axon/lib/axon/shape.ex" --fn "$fn" \
             "${args[@]}" -o "$d/got.$ext" 2>&1) &&
     /usr/bin/python3 -c "
import sys, numpy as np
g, w = np.load('$d/got.$ext'), np.load('$d/want.$ext')
gs, ws = ([g[k] for k in g.files], [w[k] for k in w.files]) if '$ext' == 'npz' else ([g], [w])
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
