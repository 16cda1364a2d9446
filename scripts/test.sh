#!/usr/bin/env bash
# Installs dependencies, builds nxc and runs every test (unit, lit, end-to-end,
# ...), then the sanitizer build's tests and the libFuzzer targets
# (scripts/sanitize.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
ctest --test-dir "$root/build" --output-on-failure -j "$(nproc)"
"$root/scripts/sanitize.sh"
