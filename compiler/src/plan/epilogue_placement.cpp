// What every shaped plan decides after its form's schedule: the waves a
// SIMD its grid places (AMDGPU), and where the gemv's and the streamed
// mma's epilogue loads attn (the table's rules "attn_load", "attn_prefetch").
#include <fmt/format.h>

#include <algorithm>

#include "gatejit/target_info.h"
#include "plan/forms.h"

namespace gatejit::compiler {

// AMDGPU kernels are scheduled for the waves a SIMD their grid places: LLVM
// otherwise schedules for the most a SIMD can hold, reuses the load
// registers and keeps few loads in flight, although the grid never places
// those waves. A grid placed at once (persistent, or resident by the plan)
// also pins the fewest: its workgroups must all fit.
WavesPerSimd plan_waves(const KernelPlan &p, int64_t m) {
  const TargetInfo &t = target_info(p.contract.target);
  if (!t.amdgpu || p.kind == TemplateKind::kGeneric) return {};
  const LaunchGeometry &g = p.geometry;
  const std::array<uint32_t, 3> grid = g.launch_grid(p.contract.n, m);
  const int64_t workgroups = int64_t(grid[0]) * grid[1] * grid[2];
  WavesPerSimd w;
  w.max = std::clamp<int64_t>(waves_per_simd_placed(t, workgroups, g.block_x), 1, t.max_waves_per_simd);
  const auto *streamed = std::get_if<StreamedSchedule>(&p.schedule.form);
  if (g.persistent_workgroups > 0 || (streamed && streamed->grid_resident)) {
    w.min = w.max;
    w.pinned = true;
  }
  return w;
}

// attn does not depend on the sums, so its round trip need not wait for
// them: 0 in the epilogue, 1 right after the main loop (in flight while the
// block reduces), 2 before the loop (off the critical path, held across
// it). With a K split any block of the tile may finish: after the meeting.
AttnPlacement plan_attn(const KernelPlan &p, const TuningOverride &o) {
  const auto *gemv = std::get_if<GemvSchedule>(&p.schedule.form);
  const auto *streamed = std::get_if<StreamedSchedule>(&p.schedule.form);
  if (!gemv && !streamed) return {};  // the tiled form has its own epilogue
  const Contract &c = p.contract;
  const TargetInfo &t = target_info(c.target);
  const Facts facts = {
      {"streamed", [&](const Choice &) { return int64_t(streamed != nullptr); }},
      {"unroll", [&](const Choice &) { return streamed ? streamed->unroll : gemv->unroll; }},
      {"full_waves", [&](const Choice &) { return int64_t(p.schedule.waves.max >= t.max_waves_per_simd); }},
      {"m_dynamic", [&](const Choice &) { return int64_t(c.m_dynamic); }},
      {"fp8_out", [&](const Choice &) { return int64_t(c.fp8_out()); }},
  };
  const TuningTable &table = table_of(c.target);
  AttnPlacement a;
  a.at = table.choose("attn_load", c, facts).get("at", 0);
  // The table's "before the loop" was measured for the pieces; the element-wise
  // finish loads after the loop until it is measured there (attn=2 asks for it).
  if (streamed && streamed->element_finish && a.at == 2) a.at = 1;
  if (o.has("attn")) a.at = std::clamp<int64_t>(o.at("attn"), 0, 2);
  if ((streamed ? streamed->splits : 1) > 1) a.at = 0;
  a.prefetch = table.choose("attn_prefetch", c, facts).flag("prefetch");
  if (o.has("prefetch")) a.prefetch = o.at("prefetch") != 0;
  // Only sm_90 has the L2 prefetch (prefetch_l2_sm90); it is moot where
  // attn is loaded before the loop.
  a.prefetch = a.prefetch && !t.amdgpu && a.at != 2;
  return a;
}

}  // namespace gatejit::compiler
