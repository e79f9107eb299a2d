// One planner per form: each turns a contract (and the development
// override) into its typed schedule (plan_*), from which come the plan's
// launch geometry and facts (layout_*), its template parameters (apply_*)
// and the report's tuning values (report_*). plan_kernel (kernel_plan.cpp)
// picks the form.
#pragma once

#include <nlohmann/json.hpp>

#include "kernel_plan.h"
#include "plan/schedule.h"
#include "plan/tuning_table.h"

namespace gatejit::compiler {

// The table of `t`; plan_kernel has checked that every embedded table parses.
const TuningTable &table_of(Target t);
// The contract as gfx950 plans it (gfx950_plan=1 realises those plans on sm_90).
Contract as_gfx950(Contract c);
// The override's items among `keys` alone, for planning another target's plan.
TuningOverride override_subset(const TuningOverride &o, std::initializer_list<const char *> keys);

GemvSchedule plan_gemv(const Contract &c, const TuningOverride &o);
void layout_gemv(KernelPlan &p, const GemvSchedule &s);
void apply_gemv(KernelPlan &p, const GemvSchedule &s);
TuningValues report_gemv(const GemvSchedule &s);

StreamedSchedule plan_streamed(const Contract &c, const TuningOverride &o);
void layout_streamed(KernelPlan &p, const StreamedSchedule &s);
void apply_streamed(KernelPlan &p, const StreamedSchedule &s);
TuningValues report_streamed(const StreamedSchedule &s);
// The register-streamed plan's K split needs more than one round of the
// workgroups the GPU holds (the tiled shapes' rule reads it).
bool streamed_split_exceeds_a_round(const Contract &c);

// Whether the tiled form serves `c` (else the register-streamed one).
bool tiled_applies(const Contract &c, const TuningOverride &o);
TiledSchedule plan_tiled(const Contract &c, const TuningOverride &o);
void layout_tiled(KernelPlan &p, const TiledSchedule &s);
void apply_tiled(KernelPlan &p, const TiledSchedule &s);
TuningValues report_tiled(const TiledSchedule &s);

// After the form's planner: the waves the grid places, and where attn loads.
WavesPerSimd plan_waves(const KernelPlan &p, int64_t m);
AttnPlacement plan_attn(const KernelPlan &p, const TuningOverride &o);

}  // namespace gatejit::compiler
