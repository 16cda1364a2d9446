#!/usr/bin/env bash
# The sanitizer build: nxc and its tests built with clang-22 under
# AddressSanitizer (leak checks included) and UndefinedBehaviorSanitizer into
# build-asan/, then the unit, lit, e2e and jit tests run on it, and every
# libFuzzer target (test/fuzz/libfuzzer) for NXC_FUZZ_SECONDS (default 20);
# then the modules' thread pool (runtime/thread_pool.c) under
# ThreadSanitizer, with its stress test (test/threads/pool_stress.c).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${NXC_FUZZ_SECONDS:-20}
cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DNXC_FUZZ=ON -DNXC_FUZZ_SECONDS="$seconds"
cmake --build "$root/build-asan" -j "$(nproc)" --target nxc nxc-opt nxc-unit-tests \
  $(cd "$root/test/fuzz/libfuzzer" && ls *.cpp | sed 's/^/fuzz-/; s/\.cpp$//')
# use_sigaltstack=0: nxc runs on a thread with its own signal stack, which ASan
# would otherwise try to unmap at the thread's end.
export ASAN_OPTIONS=detect_leaks=1:use_sigaltstack=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# (The libFuzzer tests set their own ASAN_OPTIONS: they run no such thread.)
ctest --test-dir "$root/build-asan" --output-on-failure -j "$(nproc)" -R '^(unit|lit|e2e|jit|libfuzzer-.*)$'
python3 "$root/test/threads/threads_test.py" --nxc "$root/build-asan/tools/nxc/nxc" --work "$root/build-asan/tsan-work" \
  --only pool-tsan
