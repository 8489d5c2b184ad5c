#!/usr/bin/env bash
# The SDK as a user outside this tree meets it: `cmake --install` into a fresh
# prefix, then an application built with find_package(cbqs) and another with
# pkg-config, both run against a real cbqsd --dev. Neither may need RocksDB or
# the devchain, and the installed headers must not reach into src/.
#   tests/packaging/installed_sdk_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
work=$(mktemp -d)
cbqsd_pid=
cleanup() { [[ -n $cbqsd_pid ]] && kill "$cbqsd_pid" 2>/dev/null && wait "$cbqsd_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
for f in bin/cbqsd bin/cbqs lib/libcbqs.so include/cbqs/client.h lib/cmake/cbqs/cbqsConfig.cmake lib/pkgconfig/cbqs.pc \
         lib/systemd/system/cbqsd.service share/cbqs/cbqsd.toml lib/systemd/system/transitd.service \
         share/cbqs/transitd.toml lib/systemd/system/cip11d.service share/cbqs/cip11d.toml \
         lib/systemd/system/cip11-runner.service share/cbqs/cip11-runner.toml; do
  [[ -e $prefix/$f ]] || fail "$f was not installed"
done
if grep -rEn '#include "(net|devchain|cbqs/(broker|sdk|client|store|testbed))/' "$prefix/include"; then
  fail "an installed header includes a private one"
fi

cmake -S "$source/tests/packaging/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" > "$work/consumer.log" 2>&1 \
  || { cat "$work/consumer.log"; fail "configuring the consumer with find_package(cbqs)"; }
cmake --build "$work/consumer" > "$work/consumer-build.log" 2>&1 || { cat "$work/consumer-build.log"; fail "building the consumer"; }
pc_flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs cbqs) || fail "pkg-config cbqs"
c++ "$source/tests/packaging/consumer/hello_cbqs.cc" $pc_flags -Wl,-rpath,"$prefix/lib" -o "$work/hello_pc" \
  || fail "building with pkg-config"
for exe in "$work/consumer/hello_cbqs" "$work/hello_pc"; do
  libs=$(ldd "$exe")  # read whole: `ldd | grep -q` can die of SIGPIPE, which pipefail reports as failure
  [[ $libs == *"$prefix/lib/libcbqs.so"* ]] || fail "$exe does not load the installed libcbqs.so: $libs"
  if grep -Ei 'rocksdb|devchain' <<< "$libs"; then fail "$exe needs RocksDB or the devchain"; fi
done

"$prefix/bin/cbqsd" --dev --data-dir "$work/dev" --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 --chain-listen 127.0.0.1:0 \
  > "$work/cbqsd.log" 2>&1 &
cbqsd_pid=$!
for _ in $(seq 1 300); do [[ -s $work/dev/dev-endpoints.json ]] && break; sleep 0.1; done
[[ -s $work/dev/dev-endpoints.json ]] || { cat "$work/cbqsd.log"; fail "cbqsd --dev did not start"; }
for exe in "$work/consumer/hello_cbqs" "$work/hello_pc"; do
  out=$("$exe" "$work/dev") || fail "$exe: $out"
  [[ $out =~ ^appended\ \#[0-9]+\ to\ lane\ [0-9]+,\ read\ back\ \"hello\"$ ]] || fail "$exe printed: $out"
  echo "$exe: $out"
done
echo "PASS"
