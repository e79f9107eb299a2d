#!/usr/bin/env bash
# Run ON THE GPU MACHINE after scripts/device_run.sh has built the runtime:
# one launch of the kernel for each M under Nsight Compute with the full
# metric set, written as per-SASS-instruction CSV (warp stall samples per
# instruction) to $OUT/ncu-source-m<M>.csv, for finding which instruction
# the warps wait on.
#   scripts/ncu_source.sh BUNDLE M [M ...]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gatejit-out}
bundle=$1
shift
export GATEJIT_LIBRARY=$PWD/build-device/runtime/libgatejit.so GATEJIT_DISABLE_JIT=1 GATEJIT_BUNDLE_PATH=$bundle
for m in "$@"; do
  timeout 150 /usr/local/cuda/bin/ncu --set full --import-source no --page source --print-source sass --csv \
    --kernel-name regex:gatejit --launch-skip 3 --launch-count 1 python3 bench/profile_one.py --m "$m" \
    > "$OUT/ncu-source-m$m.csv" 2> "$OUT/ncu-source-m$m.err"
  echo "M=$m: exit $?, $(wc -l < "$OUT/ncu-source-m$m.csv") lines"
done
