#!/usr/bin/env bash
# Polaris's optimizers from the command line, against real Nx: each update
# transform whose numerical part takes tensors (Polaris.Updates.apply_*) runs
# a two-step update of a %{w, b} parameter map under Nx (polaris_oracle.exs
# writes x, params, state and Nx's result as .npz) and under `nxc jit` on the
# library's files as they ship; the schedules are compared at four steps.
# Usage: test/library/polaris.sh POLARIS_CHECKOUT [NXC] [TOOLCHAIN]
#   (TOOLCHAIN: ../shared/nx-toolchain; its Elixir runs Nx's side)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/oracle_env.sh"
oracle_setup "$@"
polaris=$checkout
# Polaris compiled for Nx's side.
elixirc "${paths[@]}" -o "$work/ebin" "$polaris"/lib/polaris/*.ex "$polaris"/lib/polaris.ex > /dev/null 2>&1
cd "$work"
elixir "${paths[@]}" -pa "$work/ebin" "$here/polaris_oracle.exs" > /dev/null 2>&1
pass=0; fail=0
for d in */; do
  d=${d%/}; [ -f "$d/templates" ] || continue
  mapfile -t T < "$d/templates"
  args=("$d/x.npz:${T[0]}")
  [ -n "${T[1]}" ] && args+=("$d/state.npz:${T[1]}")
  args+=("$d/params.npz:${T[2]}")
  if out=$("$nxc" jit "$polaris/lib/polaris/updates.ex" --with "$polaris/lib/polaris" --fn "Polaris.Updates.apply_$d" \
             "${args[@]}" -o "$d/got.npz" 2>&1) &&
     /usr/bin/python3 -c "
import sys, numpy as np
g, w = np.load('$d/got.npz'), np.load('$d/want.npz')
# Leaves in order, depth-first (nxc names a tuple's arrays arr_N, the oracle by path).
gs, ws = [g[k] for k in g.files], [w[k] for k in w.files]
ok = len(gs) == len(ws) and all(
    a.dtype == b.dtype and a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-7) for a, b in zip(gs, ws))
sys.exit(0 if ok else 1)"; then
    echo "agrees  Polaris.Updates.apply_$d"; pass=$((pass + 1))
  else
    echo "DIFFERS Polaris.Updates.apply_$d: $(echo "$out" | head -2)"; fail=$((fail + 1))
  fi
done
elixir "${paths[@]}" -pa "$work/ebin" "$here/polaris_schedules.exs" 2> /dev/null > schedules.txt
while read -r name step want; do
  got=$("$nxc" jit "$polaris/lib/polaris/schedules.ex" --with "$polaris/lib/polaris" --fn "Polaris.Schedules.apply_$name" "$step" -o s.npy > /dev/null 2>&1 &&
        /usr/bin/python3 -c "import numpy as np; print(repr(float(np.load('s.npy'))))")
  if /usr/bin/python3 -c "import sys; sys.exit(0 if float('$got') == float('$want') else 1)" 2> /dev/null; then
    pass=$((pass + 1))
  else
    echo "DIFFERS Polaris.Schedules.apply_$name at $step: $got, Nx $want"; fail=$((fail + 1))
  fi
done < schedules.txt
echo "$pass agree with Nx, $fail do not"
[ "$fail" = 0 ]
