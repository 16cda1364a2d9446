# Shared by the library scripts (sourced): Nx's side compiled from the
# toolchain without Hex, and the loop that runs each case of an oracle
# through `nxc jit` and compares the results.
#
# oracle_setup CHECKOUT [NXC] [TOOLCHAIN]
#   sets checkout, nxc, toolchain, work (removed at exit unless KEEP_WORK is
#   set, when its path is printed), PATH for the
#   toolchain's Elixir, and paths (the -pa flags of Nx, Complex, Telemetry
#   and NimbleOptions, compiled into $work).
oracle_setup() {
  checkout=$(realpath "$1")
  nxc=$(realpath "${2:-$here/../../build/tools/nxc/nxc}")
  toolchain=$(realpath "${3:-$here/../../../shared/nx-toolchain}")
  work=$(mktemp -d)
  if [ -n "${KEEP_WORK:-}" ]; then echo "work: $work"; else trap 'rm -rf "$work"' EXIT; fi
  export PATH="$toolchain/elixir/bin:$PATH" MIX_ENV=prod
  mkdir -p "$work/ebin"
  cp -r "$toolchain/deps" "$work/deps" && chmod -R u+w "$work/deps"
  (cd "$work/deps/nx" && MIX_BUILD_PATH="$work/nx-build" mix compile > /dev/null 2>&1)
  (cd "$work/deps/nimble_options" && MIX_BUILD_PATH="$work/no-build" mix compile > /dev/null 2>&1)
  paths=(-pa "$work/nx-build/lib/nx/ebin" -pa "$work/nx-build/lib/complex/ebin" -pa "$work/nx-build/lib/telemetry/ebin"
         -pa "$work/no-build/lib/nimble_options/ebin")
}

# run_cases SOURCE_OF JIT_ARGS...
#   for every case*/ directory the oracle wrote in $work (fn, arg0.npy...
#   or a map's argK.npz with its argK.template, or a term's argK.term,
#   want.npy or want.npz; nx_error when Nx raised, skipped): `nxc jit` on the
#   file `SOURCE_OF FN` names, with JIT_ARGS (the --with files), and the
#   results compared (same_results.py). Prints what differs, then the
#   counts; fails when any case differs. With RESULTS set, also appends
#   `agree FN` or `differs FN: why` per case to that file (inventory.py
#   reads it).
run_cases() {
  local source_of=$1
  shift
  local pass=0 fail=0 d fn src ext out k
  for d in "$work"/case*/; do
    d=${d%/}
    [ -f "$d/nx_error" ] && continue
    fn=$(cat "$d/fn")
    local args=()
    for k in $(seq 0 20); do
      if [ -f "$d/arg$k.npy" ]; then args+=("$d/arg$k.npy")
      elif [ -f "$d/arg$k.npz" ]; then args+=("$d/arg$k.npz:$(cat "$d/arg$k.template")")
      elif [ -f "$d/arg$k.term" ]; then args+=("$(cat "$d/arg$k.term")"); fi
    done
    src=$("$source_of" "$fn")
    ext=npy; [ -f "$d/want.npz" ] && ext=npz
    if out=$("$nxc" jit "$src" "$@" --fn "$fn" "${args[@]}" -o "$d/got.$ext" 2>&1) &&
       /usr/bin/python3 "$here/same_results.py" "$d/got.$ext" "$d/want.$ext"; then
      pass=$((pass + 1))
      if [ -n "${RESULTS:-}" ]; then
        echo "agree $fn" >> "$RESULTS"
        # The public functions this call runs on the way (npy.exs: covers).
        if [ -f "$d/covers" ]; then for k in $(cat "$d/covers"); do echo "agree $k" >> "$RESULTS"; done; fi
      fi
    else
      echo "DIFFERS $fn: $(echo "$out" | head -1)"; fail=$((fail + 1))
      [ -n "${RESULTS:-}" ] && echo "differs $fn: $(echo "$out" | head -1)" >> "$RESULTS"
    fi
  done
  echo "$pass agree with Nx, $fail do not"
  [ "$fail" = 0 ]
}
