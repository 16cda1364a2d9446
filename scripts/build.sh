#!/usr/bin/env bash
# Configures and builds nxc (and its tests) into build/ with Ninja (and ccache when present).
# A compiler warning fails the build (the code builds warning-free with Debian's GCC and
# LLVM 22); NXC_ALLOW_WARNINGS=1 lets it through, for other compilers.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release
log="$root/build/build.log"
cmake --build "$root/build" -j "$(nproc)" 2>&1 | tee "$log"
if [ "${NXC_ALLOW_WARNINGS:-0}" != 1 ] && grep -q "warning:" "$log"; then
  echo "build.sh: the build printed warnings (above); fix them, or set NXC_ALLOW_WARNINGS=1" >&2
  exit 1
fi
