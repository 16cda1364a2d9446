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
source "$here/oracle_env.sh"
oracle_setup "$@"
lib=$checkout/lib/axon
# The Axon files these functions live in (they need only Nx).
elixirc "${paths[@]}" -o "$work/ebin" "$lib"/{shared,activations,losses,layers,metrics,stateful_output,shape}.ex "$lib"/quantization/*.ex \
  > /dev/null 2>&1
(cd "$work" && elixir "${paths[@]}" -pa "$work/ebin" "$here/axon_oracle.exs")
source_of() {
  case "$1" in
    Axon.Losses.*) echo "$lib/losses.ex" ;;
    Axon.Layers.*) echo "$lib/layers.ex" ;;
    Axon.Metrics.*) echo "$lib/metrics.ex" ;;
    Axon.Quantization.QTensor.*) echo "$lib/quantization/q_tensor.ex" ;;
    Axon.Quantization.*) echo "$lib/quantization/layers.ex" ;;
    *) echo "$lib/activations.ex" ;;
  esac
}
run_cases source_of --with "$lib/shared.ex" --with "$lib/activations.ex" --with "$lib/shape.ex" --with "$lib/quantization"
