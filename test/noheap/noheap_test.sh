#!/usr/bin/env bash
# Builds noheap_test.c against freshly generated modules (once with the .so,
# once with the .a) and runs it: generated functions must make no heap call.
# Usage: noheap_test.sh NXC WORKDIR
set -euo pipefail
nxc=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
"$nxc" aot "$here/../../examples/softmax/softmax.nx" --fn 'MyDefn.softmax(f32[1000000])' --name sm -o "$work"
"$nxc" aot "$here/../../examples/board/mlp.nx" --fn 'predict({f32[784,128], f32[128], f32[128,10], f32[10]}, f32[30,784])' \
  --name mlp -o "$work"
# The softmax again with a thread pool: once its workers run, calls allocate nothing either.
"$nxc" aot "$here/../../examples/softmax/softmax.nx" --fn 'MyDefn.softmax(f32[1000000])' --threads 2 --name thr \
  -o "$work"
cc -std=c11 -O2 -fno-builtin -Wall -I"$work" "$here/noheap_test.c" "$work/libsm.a" "$work/libmlp.a" "$work/libthr.a" \
  "$work/libnxrt.a" -lpthread -o "$work/noheap_static"
cc -std=c11 -O2 -fno-builtin -Wall -I"$work" "$here/noheap_test.c" -L"$work" -lsm -lmlp -lthr "$work/libnxrt.a" \
  -Wl,-rpath,"$work" -o "$work/noheap_shared"
# A reference without a version binds to glibc's oldest pthread_cond_* on
# x86-64, which allocates the condition's state at its first use: whichever
# call first waits or wakes (a race the calls below catch only sometimes).
if [ "$(uname -m)" = x86_64 ]; then
  unversioned=$(objdump -T "$work/libthr.so" | grep -w 'pthread_cond_[a-z]*' | grep -v GLIBC_2.3.2 || true)
  if [ -n "$unversioned" ]; then
    echo "FAIL: libthr.so binds pthread_cond_* to another version than GLIBC_2.3.2:"
    echo "$unversioned"
    exit 1
  fi
  echo "libthr.so: pthread_cond_* of GLIBC_2.3.2"
fi
echo "== static"; "$work/noheap_static"
echo "== shared"; "$work/noheap_shared"
