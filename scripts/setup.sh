#!/usr/bin/env bash
# Installs everything nxc needs to build and test, from Debian 12's own packages.
# Idempotent: packages already present are left alone. Run as root (or with sudo).
set -euo pipefail

packages=(
  # compiler toolchain and build
  cmake ninja-build ccache g++ pkg-config
  # LLVM/MLIR 22: libraries, TableGen (mlir-22-tools), lld as a library, clang for the runtime bitcode
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22 lld-22 liblld-22-dev
  # the sanitizer build and the libFuzzer targets (scripts/sanitize.sh): compiler-rt
  libclang-rt-22-dev
  # libraries used by nxc itself (command line, manifest, repl line editing)
  libcli11-dev libfmt-dev nlohmann-json3-dev libedit-dev
  # tests: doctest (unit), lit + FileCheck (IR), NumPy (reference results), jsonschema (graph
  # files against docs/graph-format.schema.json), binutils (readelf)
  doctest-dev python3-numpy python3-jsonschema binutils zlib1g-dev libzstd-dev
  # the install test: CPack's .deb generator needs dpkg-shlibdeps and file
  dpkg-dev file
  # cross tests: qemu (user mode for Linux boards, system mode for Cortex-M),
  # Debian's cross C libraries, and the bare-metal Arm toolchain with newlib
  qemu-user qemu-system-arm gcc-arm-none-eabi libnewlib-arm-none-eabi
  libc6-dev-arm64-cross libc6-dev-armhf-cross libc6-dev-riscv64-cross
  libgcc-12-dev-arm64-cross libgcc-12-dev-armhf-cross libgcc-12-dev-riscv64-cross
  # the MNIST example and its test: Fashion-MNIST's IDX files
  dataset-fashion-mnist
  # the Elixir package's tests (elixir/): Erlang/OTP 25 with erl_nif.h; Elixir
  # and Nx come from ../shared/nx-toolchain where it exists
  erlang-base erlang-dev erlang-parsetools erlang-syntax-tools erlang-tools erlang-src erlang-crypto
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
echo "setup: all packages present"
