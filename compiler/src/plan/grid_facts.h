// What a target's CUs hold at once, as the planners' K splits and polls
// count it (target_info's facts, no per-target figure).
#pragma once

#include <algorithm>
#include <cstdint>

#include "gatejit/target_info.h"

namespace gatejit::compiler {

// Workgroups of `waves_per_group` waves the GPU holds at once, by waves
// alone (the plans these serve keep 64 VGPRs: the full wave count fits).
inline int64_t workgroups_held(const TargetInfo &ti, int64_t waves_per_group) {
  return ti.compute_units *
         std::max<int64_t>(1, ti.simds_per_cu * ti.max_waves_per_simd / std::max<int64_t>(1, waves_per_group));
}

// The registers a lane holds at the waves a grid of `workgroups` places.
inline int64_t lane_registers_placed(Target target, int64_t workgroups, int64_t block) {
  const TargetInfo &info = target_info(target);
  const int64_t waves = std::max<int64_t>(1, waves_per_simd_placed(info, workgroups, block));
  return std::min<int64_t>(info.registers_per_lane, info.registers_per_simd / (waves * info.wave_size));
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace gatejit::compiler
