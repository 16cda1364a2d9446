#!/usr/bin/env bash
# An installed nxc serves another CMake project: `cmake --install` into a
# fresh prefix, examples/cmake-consumer configured against it with
# find_package(nxc), built (nxc_add_module runs the installed nxc) and run;
# pkg-config finds the compiler; CPack builds a .deb that declares its
# dependencies. Usage: install_test.sh CMAKE BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
cmake=$1 build=$2 source=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
"$cmake" --install "$build" --prefix "$work/prefix" > "$work/install.log"
for f in bin/nxc lib/cmake/nxc/nxcConfig.cmake lib/cmake/nxc/NxcModule.cmake share/nxc/runtime/nxrt.h \
         share/pkgconfig/nxc.pc share/doc/nxc/graph-format.md share/doc/nxc/graph-format.schema.json; do
  test -f "$work/prefix/$f" || { echo "FAIL: the install tree lacks $f"; exit 1; }
done
"$cmake" -S "$source/examples/cmake-consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log"
"$cmake" --build "$work/consumer" > "$work/build.log"
grep -rq "$work/prefix/bin/nxc" "$work/consumer" || { echo "FAIL: the consumer did not use the installed nxc"; exit 1; }
out=$("$work/consumer/consumer")
echo "$out"
case "$out" in
  "0.0320586 0.0871443 0.2368828 0.6439143 "*) ;;
  *) echo "FAIL: unexpected consumer output"; exit 1 ;;
esac
pc=$(PKG_CONFIG_PATH="$work/prefix/share/pkgconfig" pkg-config --variable=nxc nxc)
test -x "$pc" || { echo "FAIL: pkg-config --variable=nxc nxc gave '$pc'"; exit 1; }
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" > cpack.log 2>&1)
deb=$(ls "$work"/nxc_*.deb)
dpkg-deb -I "$deb" > "$work/deb-info.txt"
dpkg-deb -c "$deb" > "$work/deb-contents.txt"
grep -q 'Depends:.*libllvm22' "$work/deb-info.txt" && grep -q 'Depends:.*libmlir-22' "$work/deb-info.txt" || { echo "FAIL: the .deb does not depend on libllvm22 and libmlir-22"; exit 1; }
grep -q './usr/bin/nxc$' "$work/deb-contents.txt" || { echo "FAIL: the .deb has no /usr/bin/nxc"; exit 1; }
echo "install tree, consumer, pkg-config and .deb: ok"
