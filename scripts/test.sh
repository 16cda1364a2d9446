#!/usr/bin/env bash
# Installs dependencies, builds nxc and runs every test (unit, lit, end-to-end).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
ctest --test-dir "$root/build" --output-on-failure -j "$(nproc)"
