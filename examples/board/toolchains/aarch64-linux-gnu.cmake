# A 64-bit Arm Linux board (e.g. Cortex-A72): Debian's clang-22 and lld with
# the aarch64 cross C library (libc6-dev-arm64-cross, libgcc-12-dev-arm64-cross).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER clang-22)
set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld")
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
# What nxc compiles the model for.
set(NXC_TARGET aarch64-linux-gnu)
set(NXC_CPU cortex-a72)
