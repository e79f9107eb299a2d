#!/usr/bin/env bash
# Run ON THE GPU MACHINE, by `scripts/device_run.sh serving` after its
# runtime-only build. Usage: device_serving.sh OUT BUILD
#   1. measured routing in the MLA block (bench/routing_bench.py; the runtime
#      built here, kernels from .device/kernels.gjb);
#   2. the JIT library (.device/libgatejit_jit.so.xz) with the shipped generic
#      bundle (.device/gatejit-generic.gjb) beside it, as an install lays them
#      out: the background-JIT tests (python/tests/test_background_jit.py) and
#      bench/serving_latency.py (first call of an unseen contract, a stream of
#      1,000 calls over 50 contracts, background vs a warm cache).
set -uo pipefail
OUT=$1
BUILD=$2
status=0
source "$(dirname "$0")/device_common.sh"

if [ "${ROUTING:-1}" = 1 ]; then  # ROUTING=0: the JIT part only
  step "measured routing: the MLA block with GatejitOutputGate(measure=True) against the block without it"
  timeout 150 python3 bench/routing_bench.py --json "$OUT/routing.json" --md "$OUT/routing.md" 2>&1 \
    | tee "$OUT/routing_bench.log" | tail -10
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi

work=/tmp/gatejit-serving
rm -rf "$work" && mkdir -p "$work"
lib=$work/libgatejit_jit.so
unpack_jit_library "$work" generic
(
  unset GATEJIT_TEST_BUNDLE GATEJIT_BUNDLE_PATH GATEJIT_DISABLE_JIT GATEJIT_TEMPLATE
  export GATEJIT_LIBRARY=$lib GATEJIT_LOG=info
  step "background JIT tests (the JIT library, the shipped generic bundle beside it, an empty cache)"
  (cd /tmp && GATEJIT_CACHE_DIR=$work/cache-tests timeout 200 python3 -m pytest -v -s -rs -p no:cacheprovider \
    "$OLDPWD/python/tests/test_background_jit.py" > "$OUT/pytest_background.log" 2>&1) || exit 1
  grep -E "PASSED|FAILED|SKIPPED|ERROR|^first call|^after landing|^E " "$OUT/pytest_background.log" | head -20
) || status=1
(
  unset GATEJIT_TEST_BUNDLE GATEJIT_BUNDLE_PATH GATEJIT_DISABLE_JIT GATEJIT_TEMPLATE
  export GATEJIT_LIBRARY=$lib
  step "serving latency: background JIT on empty caches against warm ones, back to back and paced, driver cache off"
  timeout 500 python3 bench/serving_latency.py --json "$OUT/serving_latency.json" --md "$OUT/serving_latency.md" 2>&1 \
    | tee "$OUT/serving_latency.log" | tail -12
  exit "${PIPESTATUS[0]}"
) || status=1
exit $status
