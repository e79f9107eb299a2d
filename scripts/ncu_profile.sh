#!/usr/bin/env bash
# Run ON THE GPU MACHINE after scripts/device_run.sh has built the runtime:
# one launch of each given kernel under Nsight Compute, printing where its
# warps stall, how busy L2 and DRAM are and how long the SMs were active.
#   scripts/ncu_profile.sh NAME:BUNDLE:M[:FP8] [NAME:BUNDLE:M[:FP8] ...]
# (bench/profile_one.py makes the launches; N = 1536, K = 7168, bf16; FP8
# per_channel or block128: an e4m3 weight with those scales). NCU_SECTIONS
# ("SpeedOfLight ComputeWorkloadAnalysis ...") prints those sections whole
# instead of the metric list; NCU_EXTRA_METRICS adds metrics to it.
set -uo pipefail
cd "$(dirname "$0")/.."
METRICS=$(echo "
  smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
  smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
  smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio
  smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
  smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
  smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio
  smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio
  smsp__average_warps_issue_stalled_membar_per_issue_active.ratio
  smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio
  smsp__average_warps_issue_stalled_selected_per_issue_active.ratio
  smsp__average_warps_issue_stalled_drain_per_issue_active.ratio
  smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio
  lts__t_sectors.avg.pct_of_peak_sustained_elapsed
  lts__t_bytes.sum
  dram__bytes_read.sum
  dram__throughput.avg.pct_of_peak_sustained_elapsed
  sm__cycles_active.avg
  gpc__cycles_elapsed.max
  sm__warps_active.avg.pct_of_peak_sustained_active
  launch__registers_per_thread
  launch__waves_per_multiprocessor
  launch__occupancy_limit_registers
  gpu__time_duration.sum ${NCU_EXTRA_METRICS:-}" | xargs | tr ' ' ',')
export GATEJIT_LIBRARY=$PWD/build-device/runtime/libgatejit.so GATEJIT_DISABLE_JIT=1
for spec in "$@"; do
  IFS=: read -r name bundle m fp8 <<< "$spec"
  echo "== $name M=$m ${fp8:-bf16}"
  args=(python3 bench/profile_one.py --m "$m" ${fp8:+--fp8 "$fp8"})
  if [ -n "${NCU_SECTIONS:-}" ]; then
    sections=()
    for s in $NCU_SECTIONS; do sections+=(--section "$s"); done
    GATEJIT_BUNDLE_PATH=$bundle timeout 120 /usr/local/cuda/bin/ncu --kernel-name regex:gatejit --launch-skip 3 \
      --launch-count 1 "${sections[@]}" "${args[@]}" 2>&1 | grep -vE "^==PROF==|^\s*$|^\s*-{5}"
    continue
  fi
  GATEJIT_BUNDLE_PATH=$bundle timeout 120 /usr/local/cuda/bin/ncu --kernel-name regex:gatejit --launch-skip 3 \
    --launch-count 1 --metrics "$METRICS" "${args[@]}" 2>&1 |
    grep -E "^\s+(smsp|lts|dram|sm__|gpc|launch__|gpu__|l1tex__)" | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
done
