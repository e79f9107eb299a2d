#!/usr/bin/env bash
# Run HERE (the LLVM machine) before scripts/device_run.sh goes to the GPU
# machine: that machine has no LLVM, no GoogleTest and no header-only deps.
# Fills .device/ (git-ignored, carried by the device tool) with:
#   include/      xxhash.h and nlohmann/json.hpp
#   googletest/   GoogleTest sources (built there from source)
#   kernels.gjb   every kernel the GPU suite, the binding tests and the
#                 benchmark need, precompiled for sm_90 (skipped with NO_BUNDLE=1:
#                 `device_run.sh jit` compiles them there instead)
#   gatejit-generic.gjb  the shipped generic bundle (when $BUILD has it)
#   libgatejit_jit.so.xz  the JIT library (xz: it travels in the 64 MiB the
#                 device tool carries), when $BUILD has it (ninja gatejit_jit)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
GATEJIT=${GATEJIT:-$BUILD/compiler/gatejit}
[ -x "$GATEJIT" ] || [ "${NO_BUNDLE:-0}" = 1 ] || { echo "prepare_device: build the gatejit tool first ($GATEJIT)" >&2; exit 1; }
rm -rf .device && mkdir -p .device/include
cp /usr/include/xxhash.h .device/include/
cp -r /usr/include/nlohmann .device/include/
cp -r /usr/src/googletest .device/googletest
if [ "${NO_BUNDLE:-0}" != 1 ]; then
  "$GATEJIT" precompile tests/gpu/bundle_spec.json --targets sm_90 -o .device/kernels.gjb
  # The same contracts planned as gfx950 plans them (its tiled shapes, in the
  # fragment form): device_run.sh runs the mma part of the GPU suite on it.
  GATEJIT_MMA_TUNING=gfx950_plan=1 "$GATEJIT" precompile tests/gpu/bundle_spec.json --targets sm_90 \
    -o .device/gfx950-plan.gjb > /dev/null
  "$GATEJIT" inspect .device/kernels.gjb | tail -1
fi
# The shipped generic bundle: the package built there takes it, and the JIT
# library finds it beside itself (scripts/device_serving.sh).
[ -f "$BUILD/runtime/gatejit-generic.gjb" ] && cp "$BUILD/runtime/gatejit-generic.gjb" .device/
JIT_LIBRARY=$(find "$BUILD" -maxdepth 2 -name 'libgatejit_jit.so.0' | head -1)
if [ -n "$JIT_LIBRARY" ]; then
  xz -T0 -6 -c "$JIT_LIBRARY" > .device/libgatejit_jit.so.xz
  echo "JIT library: $(du -h "$(readlink -f "$JIT_LIBRARY")" | cut -f1), xz $(du -h .device/libgatejit_jit.so.xz | cut -f1)"
fi
# Tuning sweep bundles (bench/mma_sweep.py): SWEEP="name=override ..." builds
# .device/sweep-<name>.gjb with GATEJIT_MMA_TUNING=<override>, from the
# contracts of $SWEEP_SPEC (default bench/mma_sweep_spec.json; fp8:
# bench/fp8_sweep_spec.json).
# What each variant was really built with (the planner's fit rules may have
# changed what the override asked for) goes to .device/sweep-<name>.txt.
for variant in ${SWEEP:-}; do
  name=${variant%%=*}
  GATEJIT_MMA_TUNING="${variant#*=}" "$GATEJIT" precompile "${SWEEP_SPEC:-bench/mma_sweep_spec.json}" --targets sm_90 --no-generic \
    -o ".device/sweep-$name.gjb" > /dev/null
  "$GATEJIT" inspect --json ".device/sweep-$name.gjb" | python3 bench/sweep_tuning.py "$name" | tee ".device/sweep-$name.txt"
done
du -sh .device
