#!/usr/bin/env bash
# Run ON THE GPU MACHINE (the H200; see docs/device.md): builds the runtime
# from source, runs the GPU suite (also under compute-sanitizer), the Python
# binding tests, the comparison with PyTorch and the benchmark, and leaves
# every log under $OUT. Kernels come from .device/kernels.gjb, made here by
# scripts/prepare_device.sh. Usage: scripts/device_run.sh [tests|bench|sweep|all]
set -uo pipefail
cd "$(dirname "$0")/.."
WHAT=${1:-all}
OUT=${OUT:-/tmp/gatejit-out}
mkdir -p "$OUT"
BUILD=build-device
BUNDLE=$PWD/.device/kernels.gjb
export GATEJIT_TEST_BUNDLE=$BUNDLE GATEJIT_BUNDLE_PATH=$BUNDLE GATEJIT_DISABLE_JIT=1
export GATEJIT_LIBRARY=$PWD/$BUILD/runtime/libgatejit.so PYTHONUNBUFFERED=1
status=0
step() { echo; echo "=== $* ($(date +%T))"; }

step "device"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$OUT/device.txt"

step "build (runtime only: this machine has no LLVM)"
cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release -DGATEJIT_BUILD_COMPILER=OFF -DGATEJIT_BUILD_BENCHMARKS=OFF \
  -DGATEJIT_EXTRA_INCLUDE_DIR=$PWD/.device/include -DGATEJIT_GTEST_SOURCE_DIR=$PWD/.device/googletest \
  > "$OUT/build.log" 2>&1 && ninja -C $BUILD >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }

if [ "$WHAT" = tests ] || [ "$WHAT" = all ]; then
  step "GPU suite"
  ./$BUILD/tests/gpu_tests 2>&1 | tee "$OUT/gpu_tests.log" | grep -E "^\[ *(PASSED|FAILED|SKIPPED) |^\[==========\]|summary|wrong-variant|Failure|error" | head -60
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  step "runtime suite (host tests, here too)"
  ./$BUILD/tests/runtime_tests > "$OUT/runtime_tests.log" 2>&1 || status=1
  tail -3 "$OUT/runtime_tests.log"
  step "compute-sanitizer memcheck + racecheck"
  # The whole suite, every generated kernel; SANITIZER_FILTER narrows it.
  for tool in memcheck racecheck; do
    timeout ${SANITIZER_TIMEOUT:-300} compute-sanitizer --tool $tool --error-exitcode 3 ./$BUILD/tests/gpu_tests \
      --gtest_filter="${SANITIZER_FILTER:-*}" > "$OUT/sanitizer_$tool.log" 2>&1
    rc=$?
    echo "$tool: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer_$tool.log" | tail -1); $(grep -cE '^\[       OK' "$OUT/sanitizer_$tool.log") tests passed under it"
    [ $rc = 0 ] || status=1
  done
  step "example: bundle_launch (JIT disabled, kernels from the bundle)"
  for m in 1 4 16; do ./$BUILD/examples/bundle_launch "$BUNDLE" $m 2>&1 | tee -a "$OUT/bundle_launch.log" || status=1; done
  step "Python binding tests"
  (cd python && python3 -m pytest -q tests/test_binding.py 2>&1 | tee "$OUT/pytest.log" | tail -15)
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  step "gatejit vs PyTorch's unfused expression"
  python3 python/tests/compare_torch.py --out "$OUT/compare_torch.json" 2>&1 | tee "$OUT/compare_torch.log" | tail -12
fi
if [ "$WHAT" = sweep ]; then
  step "mma tuning sweep"
  args=(--bundle "default=$BUNDLE")
  for b in .device/sweep-*.gjb; do [ -e "$b" ] && args+=(--bundle "$(basename "$b" .gjb | sed 's/^sweep-//')=$PWD/$b"); done
  # SWEEP_M="32 64 128" narrows the rows timed (default: the sweep's own list).
  python3 bench/mma_sweep.py "${args[@]}" ${SWEEP_M:+--m $SWEEP_M} --json "$OUT/sweep.json" 2>&1 | tee "$OUT/sweep.log"
fi
if [ "$WHAT" = bench ] || [ "$WHAT" = all ]; then
  step "benchmark"
  PYTHONPATH=python python3 bench/gpu_bench.py --out "$OUT/bench.json" --md "$OUT/bench.md" 2>&1 | tee "$OUT/bench.log" | tail -30
fi
# The device tool brings back at most 8 files: keep the tables, pack the logs.
(cd "$OUT" && tar czf logs.tar.gz --remove-files *.log *.txt 2>/dev/null)
step "done: status $status"
exit $status
