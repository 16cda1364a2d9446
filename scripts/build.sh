#!/usr/bin/env bash
# Configures and builds nxc (and its tests) into build/ with Ninja (and ccache when present).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$root/build" -j "$(nproc)"
