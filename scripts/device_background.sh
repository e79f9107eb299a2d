#!/usr/bin/env bash
# Run ON THE GPU MACHINE, by `scripts/device_run.sh background` after its
# runtime-only build: the suites in background JIT mode. Usage:
# device_background.sh OUT BUILD
#   1. the GPU suite with GATEJIT_TEST_JIT=1 GATEJIT_TEST_JIT_MODE=background,
#      the JIT library (.device/libgatejit_jit.so.xz), the shipped generic
#      bundle beside the suite (as an install lays it beside the library) and
#      an EMPTY disk cache, in JIT_SHARDS processes sharing it: each case's
#      first call is served at once and checked, then prepare() waits for the
#      specialised kernel, checked as in sync mode;
#   2. the Python tests (ops, vLLM adapter, binding) on the JIT library with
#      GATEJIT_JIT=background and an empty cache.
set -uo pipefail
OUT=$1
BUILD=$2
status=0
source "$(dirname "$0")/device_common.sh"
work=/tmp/gatejit-background
logs=$work/logs
rm -rf "$work" && mkdir -p "$logs"
pack() { tar czf "$OUT/background_logs.tar.gz" -C "$work" logs; }
lib=$work/libgatejit_jit.so
unpack_jit_library "$work" generic
# The suite links the runtime statically: it looks for the shipped bundle beside itself.
cp .device/gatejit-generic.gjb "$BUILD/tests/"
trap 'rm -f "$BUILD/tests/gatejit-generic.gjb"' EXIT
unset GATEJIT_TEST_BUNDLE GATEJIT_BUNDLE_PATH GATEJIT_DISABLE_JIT GATEJIT_TEMPLATE
export GATEJIT_JIT_LIBRARY=$lib GATEJIT_LIBRARY=$lib

step "GPU suite in background JIT mode, empty cache"
shards=${JIT_SHARDS:-8} rc=0 start=$SECONDS
for ((i = 0; i < shards; i++)); do
  GATEJIT_TEST_JIT=1 GATEJIT_TEST_JIT_MODE=background GATEJIT_CACHE_DIR=$work/cache-suite GATEJIT_LOG=info \
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout "${SUITE_TIMEOUT:-300}" "./$BUILD/tests/gpu_tests" \
    > "$logs/gpu_background_$i.log" 2>&1 &
done
for ((i = 0; i < shards; i++)); do wait -n || rc=1; done
files=("$logs"/gpu_background_*.log)
echo "background: $(cat "${files[@]}" | grep -cE '^\[       OK') passed, $(cat "${files[@]}" | grep -cE '^\[  FAILED  \] .*\(') failed," \
     "$(cat "${files[@]}" | grep -cE '^\[  SKIPPED \] .*\(') skipped in $((SECONDS - start)) s ($shards processes);" \
     "$(cat "${files[@]}" | grep -c 'JIT compile') JIT compiles"
cat "${files[@]}" | grep -E '^\[  FAILED  \] .*\(|Failure|^\[gpu summary\]|served at once' | head -30
[ $rc = 0 ] || status=1
pack

step "Python tests (ops, vLLM adapter, binding) in background JIT mode, empty cache"
t=$PWD/python/tests
log=$logs/pytest_background.log
(cd /tmp && GATEJIT_JIT=background GATEJIT_CACHE_DIR=$work/cache-python GATEJIT_LOG=info \
  timeout "${PYTEST_TIMEOUT:-200}" python3 -m pytest -v -rs -p no:cacheprovider "$t/test_ops.py" \
  "$t/test_vllm_adapter.py" "$t/test_binding.py" > "$log" 2>&1) || status=1
echo "python background: $(grep -cE ' PASSED' "$log") passed, $(grep -cE ' (FAILED|ERROR)' "$log") failed," \
     "$(grep -cE ' SKIPPED' "$log") skipped"
grep -E ' (FAILED|ERROR)|^SKIPPED|^E ' "$log" | head -20
tail -1 "$log"
pack
exit $status
