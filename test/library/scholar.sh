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
source "$here/oracle_env.sh"
oracle_setup "$@"
# Scholar compiled for Nx's side (its optimizer options name Polaris, which
# none of these cases calls).
mapfile -t files < <(find "$checkout/lib" -name '*.ex' | sort)
elixirc "${paths[@]}" -o "$work/ebin" "${files[@]}" > /dev/null 2>&1
(cd "$work" && elixir "${paths[@]}" -pa "$work/ebin" "$here/scholar_oracle.exs")
# The module's own file: Scholar.Metrics.Regression in metrics/regression.ex.
source_of() {
  local module=${1%%(*}
  module=${module%.*}
  grep -l "^defmodule $module do" "${files[@]}" | head -1
}
run_cases source_of --with "$checkout/lib"
