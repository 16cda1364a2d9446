#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install dependencies, build nxc,
# compile the seeds' softmax ahead of time and call it from a C program.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
"$root/examples/softmax/run.sh"
