#!/usr/bin/env bash
# Runs Nx's own defn test suite (test/nx/defn_test.exs and test/nx/defn/*)
# with Nxc as the default defn compiler, as EXLA checks itself, and prints
# passed/failed per file. A copy of Nx is made (its suite writes _build).
# Usage: elixir/scripts/nx_defn_suite.sh NXC [TOOLCHAIN]   (TOOLCHAIN: ../shared/nx-toolchain)
# $SUITE_FILES (paths under Nx's test/nx/, e.g. defn/grad_test.exs) runs those alone;
# $SUITE_LOGS (a directory) keeps each file's ExUnit output there.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
nxc=$(realpath "$1")
toolchain=$(realpath "${2:-$here/../../shared/nx-toolchain}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$toolchain/elixir/bin:$PATH" NXC="$nxc" NXC_CACHE_DIR="$work/cache" MIX_ENV=test
# The package, built against the same Nx.
(cd "$here" && NXC_NX_PATH="$toolchain/deps/nx" MIX_BUILD_PATH="$work/nxc-build" mix compile > /dev/null)
cp -r "$toolchain/deps" "$work/deps"
chmod -R u+w "$work/deps"
cat >> "$work/deps/nx/test/test_helper.exs" <<EXS
Code.prepend_path("$work/nxc-build/lib/nxc/ebin")
Nx.Defn.global_default_options(compiler: Nxc)
EXS
cd "$work/deps/nx"
mix compile > /dev/null 2>&1
printf '| file | tests | failures |\n|---|---|---|\n'
# Each file within 5 minutes: one that runs longer is reported as such.
files="test/nx/defn_test.exs test/nx/defn/*_test.exs"
[ -n "${SUITE_FILES:-}" ] && files=$(for f in $SUITE_FILES; do printf 'test/nx/%s ' "$f"; done)
for f in $files; do
  out=$(timeout -s KILL 300 mix test "$f" --exclude distributed 2>&1 || true)
  [ -n "${SUITE_LOGS:-}" ] && mkdir -p "$SUITE_LOGS" && printf '%s\n' "$out" > "$SUITE_LOGS/$(basename "$f" .exs).log"
  if ! printf '%s\n' "$out" | grep -qE '^[0-9]+ (tests?|doctests?)'; then
    printf '| %s | - | stopped after 5 minutes |\n' "${f#test/nx/}"
    pkill -9 -f "beam.smp.*$work" || true
    continue
  fi
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ (tests?|doctests?)' | tail -1)
  tests=$(printf '%s' "$line" | grep -oE '[0-9]+ tests?' | grep -oE '[0-9]+' || echo 0)
  failures=$(printf '%s' "$line" | grep -oE '[0-9]+ failures?' | grep -oE '[0-9]+' || echo "?")
  printf '| %s | %s | %s |\n' "${f#test/nx/}" "$tests" "$failures"
  printf '%s\n' "$out" | grep -oE 'Nxc cannot compile [^"]*yet' >> "$work/unsupported.txt" || true
done
echo
echo "What Nxc refused (Nxc.UnsupportedError), by count:"
sort "$work/unsupported.txt" | uniq -c | sort -rn | head -30
