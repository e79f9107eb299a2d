#!/usr/bin/env bash
# Run ON THE GPU MACHINE (the H200; see docs/device.md): builds the runtime
# from source, runs the GPU suite (also under compute-sanitizer), the Python
# binding tests, the comparison with PyTorch and the benchmark, and leaves
# every log under $OUT. Kernels come from .device/kernels.gjb, made here by
# scripts/prepare_device.sh. Usage: scripts/device_run.sh [tests|gpu|python|bench|sweep|jit|serving|background|all]
# (several joined by commas, e.g. gpu,serving; SANITIZERS=0 leaves compute-sanitizer out of "gpu").
# "bench" also runs bench/target_probe.py (the facts the performance model's
# sm_90 row takes from a measurement).
# "jit": the runtime JIT end to end, no bundle: .device/libgatejit_jit.so.xz
# (made by scripts/prepare_device.sh; this machine has no LLVM) compiles every
# kernel of the GPU suite and the Python tests from its contract into an empty
# disk cache, then both run again in fresh processes from the warm cache (which
# must compile nothing), then bench/jit_latency.py times cold and warm first
# calls next to Triton's.
# "serving": background JIT and measured routing (scripts/device_serving.sh):
# the JIT library with the shipped generic bundle beside it serves first calls
# at once (python/tests/test_background_jit.py, bench/serving_latency.py), and
# the MLA block with measured routing against the block without it
# (bench/routing_bench.py).
# "background": the GPU suite and the Python suites in background JIT mode
# (scripts/device_background.sh): the JIT library, the shipped generic bundle,
# an empty cache; each first call served at once and checked.
# "python" (also part of tests and all): `pip install .` into a fresh venv,
# then the Python suites (binding, torch ops, vLLM adapter, package) against
# the installed package, the adapter test once more without its callback
# (it must fail), and the host cost per eager call.
set -uo pipefail
cd "$(dirname "$0")/.."
WHAT=${1:-all}
has() { [[ ",$WHAT," == *",$1,"* ]]; }
OUT=${OUT:-/tmp/gatejit-out}
mkdir -p "$OUT"
BUILD=build-device
BUNDLE=$PWD/.device/kernels.gjb
export GATEJIT_TEST_BUNDLE=$BUNDLE GATEJIT_BUNDLE_PATH=$BUNDLE GATEJIT_DISABLE_JIT=1
export GATEJIT_LIBRARY=$PWD/$BUILD/runtime/libgatejit.so PYTHONUNBUFFERED=1
status=0
source scripts/device_common.sh

step "device"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$OUT/device.txt"

python_suites() {
  step "pip install . into a fresh venv (--no-build-isolation; it sees this Python's packages, torch included)"
  local venv=/tmp/gatejit-venv repo=$PWD py rc
  rm -rf $venv && python3 -m venv --without-pip --system-site-packages $venv
  py=$venv/bin/python
  # This python3 may itself be a venv (/opt/torch/.venv): name its site-packages in a .pth.
  python3 -c "import site, sysconfig; print('\n'.join(sorted({*site.getsitepackages(), sysconfig.get_paths()['purelib']})))" \
    > "$($py -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/outer-site-packages.pth"
  GATEJIT_EXTRA_INCLUDE_DIR=$repo/.device/include GATEJIT_BUILD_JOBS=$(nproc) $py -m pip install --no-build-isolation \
    --no-deps --no-index . > "$OUT/pip_install.log" 2>&1 || { tail -30 "$OUT/pip_install.log"; status=1; return; }
  grep -E "Successfully|gatejit build: packaged" "$OUT/pip_install.log"
  # No GATEJIT_* variable but the bundle: the package finds its own library.
  (cd /tmp && env -u GATEJIT_LIBRARY -u GATEJIT_TEST_BUNDLE -u GATEJIT_DISABLE_JIT $py -c \
    "import torch, gatejit; print('installed:', gatejit.__file__, gatejit.library_path()); print(gatejit.explain_contract({'m': 1, 'n': 1536, 'k': 7168, 'dtype': 'bf16', 'act': 'sigmoid', 'target': 'sm_90'}))") \
    || status=1
  step "Python suites against the installed package (ops, vLLM adapter, package, binding)"
  # From /tmp: `python -m pytest` puts the working folder on sys.path, and python/ would shadow the install.
  local t=$repo/python/tests
  (cd /tmp && env -u GATEJIT_LIBRARY GATEJIT_TEST_INSTALLED=1 GATEJIT_EXTRA_INCLUDE_DIR=$repo/.device/include \
    timeout 330 $py -m pytest -v -rsP -p no:cacheprovider --timeout 200 $t/test_ops.py $t/test_vllm_adapter.py \
    $t/test_routing.py $t/test_package.py $t/test_binding.py > "$OUT/pytest_python.log" 2>&1) || status=1
  # Each op, adapter and package test by name; the binding tests by count.
  grep -oE "test_(ops|vllm_adapter|routing|package)\.py::[^ ]+ (PASSED|FAILED|SKIPPED|ERROR)" "$OUT/pytest_python.log"
  grep -E "test_binding.py::.* (FAILED|ERROR)|^E |replayed gatejit|bit-identical|^gatejit from|passed|failed" \
    "$OUT/pytest_python.log" | tail -40
  echo "test_binding.py: $(grep -cE "test_binding.py::.* PASSED" "$OUT/pytest_python.log") passed"
  step "the adapter test with the callback removed (GATEJIT_TEST_DROP_CALLBACK=1): it must FAIL"
  (cd /tmp && env -u GATEJIT_LIBRARY GATEJIT_TEST_INSTALLED=1 GATEJIT_TEST_DROP_CALLBACK=1 timeout 100 $py -m pytest -q \
    -p no:cacheprovider "$t/test_vllm_adapter.py::test_mla_block_with_and_without_the_callback[dynamic]" \
    > "$OUT/pytest_drop_callback.log" 2>&1)
  rc=$?
  grep -E "^E .*gatejit kernel|passed|failed" "$OUT/pytest_drop_callback.log" | tail -5
  if [ $rc = 1 ]; then echo "without the callback the test failed, as it must (exit $rc)"
  else echo "ERROR: without the callback the test exited $rc (a pass means it cannot tell)"; status=1; fi
  step "host cost per eager call"
  (cd /tmp && env -u GATEJIT_LIBRARY timeout 60 $py "$repo/python/tests/host_cost.py" --out "$OUT/host_cost.json" \
    > "$OUT/host_cost.log" 2>&1) || status=1
  tail -14 "$OUT/host_cost.log"
}

if [ "$WHAT" = python ]; then
  python_suites
  (cd "$OUT" && tar czf logs.tar.gz --remove-files *.log *.txt 2>/dev/null)
  step "done: status $status"
  exit $status
fi

step "build (runtime only: this machine has no LLVM)"
cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release -DGATEJIT_BUILD_COMPILER=OFF -DGATEJIT_BUILD_BENCHMARKS=OFF \
  -DGATEJIT_EXTRA_INCLUDE_DIR=$PWD/.device/include -DGATEJIT_GTEST_SOURCE_DIR=$PWD/.device/googletest \
  > "$OUT/build.log" 2>&1 && ninja -C $BUILD >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
# Background mode puts the shipped bundle beside the suite; a killed run may leave it there.
rm -f "$BUILD/tests/gatejit-generic.gjb"

if has jit; then
  scripts/device_jit.sh "$OUT" "$BUILD" || status=1
fi

# "gpu": the GPU suite, the runtime suite, the sanitizers and the example,
# without the Python suites (together they outgrew one 600 s device call).
if has tests || has all || has gpu; then
  step "GPU suite"
  # GPU_FILTER (a gtest filter) narrows the suite, e.g. to '*Fp8*'.
  ./$BUILD/tests/gpu_tests --gtest_filter="${GPU_FILTER:-*}" 2>&1 | tee "$OUT/gpu_tests.log" | grep -E "^\[ *(PASSED|FAILED|SKIPPED) |^\[==========\]|summary|wrong-variant|Failure|error" | head -60
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  if [ -e .device/gfx950-plan.gjb ]; then
    step "GPU suite's mma and fp8 cases on gfx950's plans (the bundle built with gfx950_plan=1: its tiled shapes, thin rows, K splits and stages, lowered for sm_90)"
    GATEJIT_TEST_BUNDLE=$PWD/.device/gfx950-plan.gjb GATEJIT_BUNDLE_PATH=$PWD/.device/gfx950-plan.gjb ./$BUILD/tests/gpu_tests \
      --gtest_filter="${GFX950_PLAN_FILTER:-*MmaMatrix*:*DynamicM*:*MmaAtM1*:*Fp8Out.*:*Fp8Weight.*}" 2>&1 | tee "$OUT/gpu_tests_gfx950_plan.log" \
      | grep -E "^\[ *(PASSED|FAILED|SKIPPED) |^\[==========\]|summary|Failure|error" | head -30
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
  fi
  step "runtime suite (host tests, here too)"
  ./$BUILD/tests/runtime_tests > "$OUT/runtime_tests.log" 2>&1 || status=1
  tail -3 "$OUT/runtime_tests.log"
  step "compute-sanitizer memcheck + racecheck"
  # The whole suite, every generated kernel; SANITIZER_FILTER narrows it.
  for tool in $([ "${SANITIZERS:-1}" = 1 ] && echo memcheck racecheck); do
    timeout ${SANITIZER_TIMEOUT:-300} compute-sanitizer --tool $tool --error-exitcode 3 ./$BUILD/tests/gpu_tests \
      --gtest_filter="${SANITIZER_FILTER:-*}" > "$OUT/sanitizer_$tool.log" 2>&1
    rc=$?
    echo "$tool: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer_$tool.log" | tail -1); $(grep -cE '^\[       OK' "$OUT/sanitizer_$tool.log") tests passed under it"
    [ $rc = 0 ] || status=1
  done
  step "example: bundle_launch (JIT disabled, kernels from the bundle)"
  for m in 1 4 16; do ./$BUILD/examples/bundle_launch "$BUNDLE" $m 2>&1 | tee -a "$OUT/bundle_launch.log" || status=1; done
fi
if has serving; then
  scripts/device_serving.sh "$OUT" "$BUILD" || status=1
fi
if has background; then
  scripts/device_background.sh "$OUT" "$BUILD" || status=1
fi
if has tests || has all; then
  python_suites
  step "gatejit vs PyTorch's unfused expression"
  python3 python/tests/compare_torch.py --out "$OUT/compare_torch.json" 2>&1 | tee "$OUT/compare_torch.log" | tail -12
fi
if has sweep; then
  step "mma tuning sweep"
  args=(--bundle "default=$BUNDLE")
  for b in .device/sweep-*.gjb; do [ -e "$b" ] && args+=(--bundle "$(basename "$b" .gjb | sed 's/^sweep-//')=$PWD/$b"); done
  # SWEEP_M="32 64 128" narrows the rows timed (default: the sweep's own list);
  # SWEEP_ARGS adds options (fp8: "--fp8 block128 --template gemv").
  python3 bench/mma_sweep.py "${args[@]}" ${SWEEP_M:+--m $SWEEP_M} ${SWEEP_ARGS:-} --json "$OUT/sweep.json" 2>&1 | tee "$OUT/sweep.log"
fi
if has bench || has all; then
  step "target probe (the target table's sm_90 facts, measured: read bandwidth, latencies, launch)"
  python3 bench/target_probe.py --out "$OUT/probe.json" 2>&1 | tee "$OUT/probe.log" | tail -12
  step "benchmark"
  PYTHONPATH=python python3 bench/gpu_bench.py --out "$OUT/bench.json" --md "$OUT/bench.md" 2>&1 | tee "$OUT/bench.log" | tail -30
  step "fp8 out benchmark (issue 20)"
  PYTHONPATH=python python3 bench/fp8_out_bench.py --out "$OUT/fp8_out.json" --md "$OUT/fp8_out.md" 2>&1 | tee "$OUT/fp8_out.log" | tail -16
fi
# The device tool brings back at most 8 files: keep the tables, pack the logs.
(cd "$OUT" && tar czf logs.tar.gz --remove-files *.log *.txt 2>/dev/null)
step "done: status $status"
exit $status
