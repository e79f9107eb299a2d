#!/usr/bin/env bash
# The install as a user gets it (scripts/test.sh runs this after the build):
#   1. `cmake --install` into a fresh prefix; the installed bin/gatejit starts
#      and compiles (its RUNPATH names the MLIR/LLVM folder);
#   2. host projects (examples/find_package) built against the prefix with
#      find_package(LLVM/MLIR/LLD) disabled: the runtime and jit components
#      must not need them; host_jit_library JITs through libgatejit_jit.so and
#      fills a cache, host_runtime (libgatejit.so) then reads it without a
#      compiler, and with the JIT library beside it attaches it; the
#      installed Python package loads the JIT library (jit_attached); with
#      the JIT off and an empty cache, the shipped bundle of generic kernels
#      (share/gatejit) serves a contract no specialised kernel can;
#   3. pkg-config (gatejit, gatejit-jit) builds the same C programs;
#   4. CPack .deb packages (runtime, jit, dev): their control fields, their
#      contents, and apt resolving their declared dependencies (simulated:
#      this machine is shared, so nothing is installed into /usr here).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
work=$PWD/$BUILD/install-check
prefix=$work/prefix
rm -rf "$work" && mkdir -p "$work"
fail() { echo "install_check: FAILED: $*" >&2; exit 1; }

echo "--- cmake --install into $prefix"
cmake --install "$BUILD" --prefix "$prefix" > "$work/install.log"
"$prefix/bin/gatejit" --help > /dev/null || fail "the installed bin/gatejit does not start"
readelf -d "$prefix/bin/gatejit" | grep -E "RUNPATH|RPATH"
GATEJIT_CACHE_DIR=$work/cli-cache "$prefix/bin/gatejit" compile --m 1 --n 1536 --k 7168 --dtype bf16 --act sigmoid \
  --target sm_90 > "$work/cli_compile.txt" || fail "the installed gatejit cannot compile"
grep -m1 -E "template|kernel" "$work/cli_compile.txt"

echo "--- host projects against the prefix, LLVM/MLIR/LLD out of reach"
cmake --no-warn-unused-cli -S examples/find_package -B "$work/host" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_DISABLE_FIND_PACKAGE_LLVM=ON -DCMAKE_DISABLE_FIND_PACKAGE_MLIR=ON -DCMAKE_DISABLE_FIND_PACKAGE_LLD=ON \
  -DGATEJIT_COMPONENTS="runtime;jit" > "$work/host_configure.log" || { cat "$work/host_configure.log"; fail "configure"; }
ninja -C "$work/host" > "$work/host_build.log" || { cat "$work/host_build.log"; fail "build"; }
cache=$work/host-cache
GATEJIT_CACHE_DIR=$cache "$work/host/host_jit_library" | tee "$work/host_jit_library.txt"
grep -q "compiled by the JIT" "$work/host_jit_library.txt" || fail "host_jit_library did not JIT"
# Runtime only, JIT off: the cache the JIT library filled, under its recorded toolchain.
GATEJIT_CACHE_DIR=$cache GATEJIT_DISABLE_JIT=1 "$work/host/host_runtime" | tee "$work/host_runtime.txt"
grep -q "from the disk cache (no compiler attached" "$work/host_runtime.txt" || fail "the runtime-only host did not read the cache"
# Runtime only, JIT off, on the cache the installed tool filled (`gatejit compile` records its toolchain too).
GATEJIT_CACHE_DIR=$work/cli-cache GATEJIT_DISABLE_JIT=1 "$work/host/host_runtime" | tee -a "$work/host_runtime.txt" \
  | grep "from the disk cache (no compiler attached" > /dev/null || fail "the runtime-only host did not read the tool's cache"
# Runtime only, JIT allowed: libgatejit_jit.so beside libgatejit.so is attached and compiles.
GATEJIT_CACHE_DIR=$cache "$work/host/host_runtime" \
  '{"m": 4, "n": 2048, "k": 2048, "dtype": "f16", "act": "silu", "target": "gfx942"}' | tee -a "$work/host_runtime.txt"
grep -q "compiled by the JIT" "$work/host_runtime.txt" || fail "libgatejit.so did not attach the JIT library beside it"
# Runtime only, JIT off, empty cache: the shipped bundle in share/gatejit, found from lib/.
GATEJIT_CACHE_DIR=$work/empty-cache GATEJIT_DISABLE_JIT=1 "$work/host/host_runtime" \
  '{"m": 3, "n": 1000, "k": 999, "dtype": "f16", "act": "silu", "target": "gfx942"}' | tee -a "$work/host_runtime.txt" \
  | grep "from the shipped bundle gatejit-generic.gjb" > /dev/null || fail "the installed runtime did not find the shipped bundle"
# Asking for the compiler component with LLVM out of reach must fail, and say why.
if cmake -S examples/find_package -B "$work/host-compiler" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
     -DCMAKE_DISABLE_FIND_PACKAGE_LLVM=ON -DGATEJIT_COMPONENTS=compiler > "$work/host_compiler.log" 2>&1; then
  fail "the compiler component configured without LLVM"
fi
grep -q "LLVM" "$work/host_compiler.log" || fail "the compiler component's failure does not name LLVM"

echo "--- the installed Python package finds the JIT library beside it"
(cd /tmp && env -u GATEJIT_LIBRARY GATEJIT_CACHE_DIR=$cache PYTHONPATH="$prefix/lib/gatejit/python" python3 -c \
  "import gatejit; rt = gatejit.Runtime(); print(gatejit.library_path(), 'jit_attached', rt.jit_attached)") \
  | tee "$work/python.txt"
grep -q "libgatejit_jit.so.0 jit_attached True" "$work/python.txt" || fail "the installed Python package did not attach the JIT"

echo "--- pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
pkg-config --modversion gatejit gatejit-jit
cc examples/find_package/host_runtime.c $(pkg-config --cflags --libs gatejit) -Wl,-rpath,"$prefix/lib" -o "$work/pc_runtime"
cc examples/jit_launch.c $(pkg-config --cflags --libs gatejit-jit) -Wl,-rpath,"$prefix/lib" -o "$work/pc_jit"
GATEJIT_CACHE_DIR=$cache GATEJIT_DISABLE_JIT=1 "$work/pc_runtime" | grep "from the disk cache" || fail "pkg-config runtime host"
GATEJIT_CACHE_DIR=$work/pc-cache "$work/pc_jit" | grep "compiled by the JIT" || fail "pkg-config JIT host"

echo "--- .deb packages"
(cd "$BUILD" && cpack -G DEB -B "$work/packages" > "$work/cpack.log") || { tail -20 "$work/cpack.log"; fail "cpack"; }
for deb in "$work"/packages/gatejit-*.deb; do
  echo "$(basename "$deb"): $(du -h "$deb" | cut -f1)"
  dpkg-deb -f "$deb" Package Version Depends | sed 's/^/  /'
done
dpkg-deb -c "$work"/packages/gatejit-jit_*.deb | grep "usr/bin/gatejit" > /dev/null || fail "gatejit-jit lacks usr/bin/gatejit"
dpkg-deb -c "$work"/packages/gatejit-jit_*.deb | grep "usr/lib/libgatejit_jit.so.0" > /dev/null || fail "gatejit-jit lacks the library"
dpkg-deb -c "$work"/packages/gatejit-runtime_*.deb | grep "usr/lib/libgatejit.so.0" > /dev/null || fail "gatejit-runtime lacks the library"
dpkg-deb -c "$work"/packages/gatejit-runtime_*.deb | grep "usr/share/gatejit/gatejit-generic.gjb" > /dev/null \
  || fail "gatejit-runtime lacks the shipped bundle"
dpkg-deb -f "$work"/packages/gatejit-jit_*.deb Depends | grep -q "libmlir-22" || fail "gatejit-jit does not declare libmlir-22"
# The extracted jit package runs from where it lands.
dpkg-deb -x "$work"/packages/gatejit-jit_*.deb "$work/deb-root"
"$work/deb-root/usr/bin/gatejit" --help > /dev/null || fail "the packaged gatejit does not start"
if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
  apt-get install --simulate "$work"/packages/gatejit-*.deb > "$work/apt_simulate.log" 2>&1 \
    || { tail -20 "$work/apt_simulate.log"; fail "apt cannot resolve the packages' dependencies"; }
  grep -E "^Inst gatejit" "$work/apt_simulate.log"
fi
echo "install_check: OK"
