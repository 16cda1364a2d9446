#!/usr/bin/env bash
# Polaris's public API from the command line, against real Nx: each update
# transform and optimizer, built by its public constructor inside a two-line
# module of deftransforms (polaris_oracle.exs writes it with Nx's results),
# is initialized on a %{w, b} parameter map and run for two steps under Nx;
# `nxc jit` compiles the same module with Polaris's files as they ship and
# must give the same initial state and the same second step. The schedules,
# built by their constructors, are compared at five steps, bit for bit.
# Usage: test/library/polaris.sh POLARIS_CHECKOUT [NXC] [TOOLCHAIN]
#   (TOOLCHAIN: ../shared/nx-toolchain; its Elixir runs Nx's side)
# With RESULTS set, appends `agree FN`/`differs FN: why` per check to that
# file, FN the public function checked (inventory.py reads it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/oracle_env.sh"
oracle_setup "$@"
polaris=$checkout
# Polaris compiled for Nx's side.
elixirc "${paths[@]}" -o "$work/ebin" "$polaris"/lib/polaris/*.ex "$polaris"/lib/polaris.ex > /dev/null 2>&1
cd "$work"
elixir "${paths[@]}" -pa "$work/ebin" "$here/polaris_oracle.exs"
pass=0; fail=0
# Leaves in order, depth-first (nxc names a tuple's arrays arr_N, the oracle by path).
same() {
  /usr/bin/python3 -c "
import sys, numpy as np
g, w = np.load('$1'), np.load('$2')
gs, ws = [g[k] for k in g.files], [w[k] for k in w.files]
ok = len(gs) == len(ws) and all(
    a.dtype == b.dtype and a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-7) for a, b in zip(gs, ws))
sys.exit(0 if ok else 1)"
}
verdict() {  # verdict OK NAME WHAT OUTPUT
  local name=$2
  if [ "$1" = 0 ]; then
    pass=$((pass + 1)); [ -n "${RESULTS:-}" ] && echo "agree $name" >> "$RESULTS"
  else
    fail=$((fail + 1)); echo "DIFFERS $3: $(echo "$4" | head -2)"
    [ -n "${RESULTS:-}" ] && echo "differs $name: $3: $(echo "$4" | head -1)" >> "$RESULTS"
  fi
  return 0
}
jit() { "$nxc" jit "$1" --with "$polaris/lib/polaris" "${@:2}" 2>&1; }
for d in case*/; do
  d=${d%/}
  mapfile -t T < "$d/templates"
  ctor=$(cat "$d/constructor")
  name=${ctor%%(*}; name=${name%% *}
  if [ -n "${T[2]:-}" ]; then
    ok=0; out=$(jit "$d/case.ex" --fn Case.init "$d/params.npz:${T[1]}" -o "$d/got_init.npz") &&
      same "$d/got_init.npz" "$d/init.npz" || ok=1
    verdict $ok "$name" "init of $ctor" "$out"
    args=("$d/x.npz:${T[0]}" "$d/state.npz:${T[2]}" "$d/params.npz:${T[1]}")
  else
    args=("$d/x.npz:${T[0]}" "$d/params.npz:${T[1]}")
  fi
  ok=0; out=$(jit "$d/case.ex" --fn Case.update "${args[@]}" -o "$d/got.npz") && same "$d/got.npz" "$d/want.npz" || ok=1
  verdict $ok "$name" "update of $ctor" "$out"
done
mapfile -t T < apply_updates/templates
ok=0; out=$(jit "$polaris/lib/polaris/updates.ex" --fn Polaris.Updates.apply_updates "apply_updates/params.npz:${T[0]}" \
            "apply_updates/x.npz:${T[0]}" "apply_updates/state.npz:${T[1]}" -o apply_updates/got.npz) &&
  same apply_updates/got.npz apply_updates/want.npz || ok=1
verdict $ok Polaris.Updates.apply_updates Polaris.Updates.apply_updates "$out"
while read -r fun step want ctor; do
  got=$("$nxc" jit schedules.ex --with "$polaris/lib/polaris" --fn "Schedule.$fun" "$step" -o s.npy 2>&1 > /dev/null &&
        /usr/bin/python3 -c "import numpy as np; print(repr(float(np.load('s.npy'))))") || true
  ok=0; /usr/bin/python3 -c "import sys; sys.exit(0 if float('$got') == float('$want') else 1)" 2> /dev/null || ok=1
  verdict $ok "${ctor%%(*}" "$ctor at step $step" "$got, Nx $want"
done < schedules.txt
echo "$pass agree with Nx, $fail do not"
[ "$fail" = 0 ]
