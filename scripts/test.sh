#!/usr/bin/env bash
# The test command (README quick start; .ci/run calls it): installs what it
# needs, builds, runs every ctest suite (GPU tests skip here with the reason:
# they run on the GPU machine through scripts/device_run.sh), runs the
# examples that need no GPU, the runtime suite again under ASan + UBSan, the
# fuzzers for a bounded time (inputs up to 1 MiB), and a short compile-time
# benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
BUILD=${BUILD:-build}
export GATEJIT_CACHE_DIR=$PWD/$BUILD/test-cache

echo "=== examples"
"$BUILD"/examples/jit_launch
"$BUILD"/examples/bundle_launch /nonexistent.gjb || true   # says "no GPU" where there is none

echo "=== install, host projects without LLVM, pkg-config, .deb packages (scripts/install_check.sh)"
BUILD=$BUILD scripts/install_check.sh

echo "=== Python package and binding, host side (Debian's python3; GPU and torch tests skip with the reason)"
/usr/bin/python3 -m pytest -q -rs python/tests 2>&1 | tail -15

echo "=== runtime tests under ASan + UBSan (${ASAN_BUILD:=$BUILD-asan})"
# The C API's hostile-input test and every reader and writer, instrumented:
# a sanitizer report fails the run. Its own build (clang, no compiler).
if [[ ! -f "$ASAN_BUILD/CMakeCache.txt" ]]; then
  sanitize="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  CC=clang-22 CXX=clang++-22 cmake -S . -B "$ASAN_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGATEJIT_BUILD_COMPILER=OFF -DGATEJIT_BUILD_TESTS=ON -DGATEJIT_BUILD_BENCHMARKS=OFF \
    -DCMAKE_C_FLAGS="$sanitize" -DCMAKE_CXX_FLAGS="$sanitize" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
fi
ninja -C "$ASAN_BUILD" runtime_tests >/dev/null
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  GATEJIT_CACHE_DIR="$PWD/$ASAN_BUILD/test-cache" "$ASAN_BUILD"/tests/runtime_tests --gtest_brief=1

echo "=== fuzzers (${FUZZ_SECONDS:=45} s each)"
FUZZ_SECONDS=$FUZZ_SECONDS scripts/run_fuzzers.sh

echo "=== compile-time benchmark"
"$BUILD"/bench/compile_bench --benchmark_min_time=0.2 --benchmark_repetitions=1 2>&1 | tail -12 || true

echo "=== GPU suite (runs on the GPU machine; here each test skips and says why)"
"$BUILD"/tests/gpu_tests --gtest_filter='GpuTest.GraphReplayFollowsNewInputs' 2>&1 | grep -E "no GPU|SKIPPED|PASSED|FAILED" | head -3

echo "=== ctest"
cd "$BUILD" && ctest --output-on-failure -j2 --timeout 900
