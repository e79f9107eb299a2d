#!/usr/bin/env bash
# Run ON THE GPU MACHINE, by `scripts/device_run.sh jit` after its runtime-only
# build: the runtime JIT end to end with no bundle. Usage: device_jit.sh OUT BUILD
#   1. the JIT library (.device/libgatejit_jit.so.xz, built and checked on the
#      LLVM machine) loads here, where there is no LLVM (ldd);
#   2. the GPU suite with GATEJIT_TEST_JIT=1 and an EMPTY disk cache, in
#      JIT_SHARDS parallel processes (gtest sharding) sharing the cache: every
#      kernel is compiled from its contract at run time;
#   3. the suite again in fresh processes: every kernel from the warm cache,
#      nothing compiled (no "JIT compile"; with GATEJIT_NATIVE_CODE=1 set for
#      this script, both runs have the CUDA driver's own cache off and every
#      warm module load must come from a cached cubin: no PTX compile by the
#      driver either);
#   4. bench/jit_latency.py: cold and warm first-call latency next to Triton's;
#   5. the Python tests with the JIT library as the binding's library, cold
#      (empty cache) then warm.
set -uo pipefail
OUT=$1
BUILD=$2
status=0
source "$(dirname "$0")/device_common.sh"
work=/tmp/gatejit-jit
logs=$work/logs  # packed into $OUT/jit_logs.tar.gz after every phase (a killed run still returns them)
rm -rf "$work" && mkdir -p "$logs"
pack() { tar czf "$OUT/jit_logs.tar.gz" -C "$work" logs; }
lib=$work/libgatejit_jit.so
unpack_jit_library "$work"
unset GATEJIT_TEST_BUNDLE GATEJIT_BUNDLE_PATH GATEJIT_DISABLE_JIT GATEJIT_TEMPLATE
export GATEJIT_JIT_LIBRARY=$lib GATEJIT_LIBRARY=$lib GATEJIT_TEST_JIT=1
# GATEJIT_NATIVE_CODE=1 (opt-in cubins in the disk cache): the suites run with the driver's cache off.
NATIVE_ONLY=0; [ "${GATEJIT_NATIVE_CODE:-0}" = 1 ] && NATIVE_ONLY=1

step "the JIT library on a machine without LLVM"
ls -l "$lib" | tee "$logs/jit_library.txt"
ldd "$lib" | tee -a "$logs/jit_library.txt"
ls /usr/lib/llvm* /usr/lib/x86_64-linux-gnu/libLLVM* 2>&1 | head -2 | tee -a "$logs/jit_library.txt"

entries() { find "$1" -name '*.gjk' 2>/dev/null | wc -l; }
# One run of the whole GPU suite in $JIT_SHARDS processes on cache $1; logs gpu_jit_$2_<i>.log.
suite() {
  local cache=$1 phase=$2 shards=${JIT_SHARDS:-8} i rc=0 start=$SECONDS
  for ((i = 0; i < shards; i++)); do
    CUDA_CACHE_DISABLE=${NATIVE_ONLY:-0} GATEJIT_CACHE_DIR=$cache GATEJIT_LOG=info GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
      timeout "${SUITE_TIMEOUT:-200}" "./$BUILD/tests/gpu_tests" > "$logs/gpu_jit_${phase}_$i.log" 2>&1 &
  done
  for ((i = 0; i < shards; i++)); do wait -n || rc=1; done
  local files=("$logs"/gpu_jit_"${phase}"_*.log)
  echo "$phase: $(cat "${files[@]}" | grep -cE '^\[       OK') passed, $(cat "${files[@]}" | grep -cE '^\[  FAILED  \] .*\(') failed," \
       "$(cat "${files[@]}" | grep -cE '^\[  SKIPPED \] .*\(') skipped in $((SECONDS - start)) s ($shards processes);" \
       "$(cat "${files[@]}" | grep -c 'JIT compile') JIT compiles; cache entries: $(entries "$cache");" \
       "modules loaded: $(cat "${files[@]}" | grep -c 'loaded module'), from a cached cubin: $(cat "${files[@]}" | grep -c 'loaded module.*(cache hit)')"
  cat "${files[@]}" | grep -E '^\[  FAILED  \] .*\(|Failure|^\[gpu summary\]' | head -20
  pack
  return $rc
}

step "GPU suite, JIT, empty cache (every kernel compiled at run time)"
suite "$work/cache-suite" cold || status=1
step "GPU suite again, fresh processes, warm cache (nothing may compile)"
suite "$work/cache-suite" warm || status=1
if grep -q 'JIT compile' "$logs"/gpu_jit_warm_*.log; then echo "ERROR: the warm run compiled"; status=1; fi
if [ "${NATIVE_ONLY:-0}" = 1 ] && grep 'loaded module' "$logs"/gpu_jit_warm_*.log | grep -vq '(cache hit)'; then
  echo "ERROR: the warm run made the driver compile PTX:"; grep -h 'loaded module' "$logs"/gpu_jit_warm_*.log | grep -v '(cache hit)' | head -3
  status=1
fi

step "JIT latency: cold and warm first calls, gatejit vs Triton"
timeout 200 python3 bench/jit_latency.py --rounds ${LATENCY_ROUNDS:-2} --json "$OUT/jit_latency.json" \
  --md "$OUT/jit_latency.md" 2>&1 | tee "$logs/jit_latency.log" | tail -8
[ "${PIPESTATUS[0]}" = 0 ] || status=1
pack

pytests() {
  local cache=$1 phase=$2 t=$PWD/python/tests
  local log=$logs/pytest_jit_$phase.log
  (cd /tmp && GATEJIT_CACHE_DIR=$cache GATEJIT_LOG=info timeout "${PYTEST_TIMEOUT:-120}" python3 -m pytest -v -s -rs \
     -p no:cacheprovider "$t/test_ops.py" "$t/test_vllm_adapter.py" "$t/test_binding.py" > "$log" 2>&1) || status=1
  echo "python $phase: $(grep -cE ' PASSED' "$log") passed, $(grep -cE ' (FAILED|ERROR)' "$log") failed," \
       "$(grep -cE ' SKIPPED' "$log") skipped; $(grep -c 'JIT compile' "$log") JIT compiles; cache entries: $(entries "$cache")"
  grep -E ' (FAILED|ERROR)|^SKIPPED|^E ' "$log" | head -12
  tail -1 "$log"
  pack
}
step "Python tests (ops, vLLM adapter, binding) on libgatejit_jit.so, empty cache"
pytests "$work/cache-python" cold
step "Python tests again, warm cache"
pytests "$work/cache-python" warm
if grep -q 'JIT compile' "$logs/pytest_jit_warm.log"; then echo "ERROR: the warm Python run compiled"; status=1; fi

exit $status
