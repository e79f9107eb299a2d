#!/usr/bin/env bash
# Run ON THE GPU MACHINE after scripts/device_run.sh has built the runtime:
# one launch of each given kernel under Nsight Compute, printing where its
# warps stall, how busy L2 and DRAM are and how long the SMs were active.
#   scripts/ncu_profile.sh NAME:BUNDLE:M [NAME:BUNDLE:M ...]
# (bench/profile_one.py makes the launches; N = 1536, K = 7168, bf16.)
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
  gpu__time_duration.sum" | xargs | tr ' ' ',')
export GATEJIT_LIBRARY=$PWD/build-device/runtime/libgatejit.so GATEJIT_DISABLE_JIT=1
for spec in "$@"; do
  IFS=: read -r name bundle m <<< "$spec"
  echo "== $name M=$m"
  GATEJIT_BUNDLE_PATH=$bundle timeout 120 /usr/local/cuda/bin/ncu --kernel-name regex:gatejit --launch-skip 3 \
    --launch-count 1 --metrics "$METRICS" python3 bench/profile_one.py --m "$m" 2>&1 |
    grep -E "^\s+(smsp|lts|dram|sm__|gpc|launch__|gpu__)" | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
done
