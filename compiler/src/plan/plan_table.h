// A plan as data, without compiling: the JSON `gatejit plan --json` prints,
// and the one-line rows of the golden plan tables
// (tests/compiler/plan_golden/*.tsv), so a tuning change reads as a diff.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "kernel_plan.h"

namespace gatejit::compiler {

// The plan's decisions: form, template, grid, waves, tuning, facts.
nlohmann::json plan_json(const KernelPlan &plan);

// A table's contract column ("target=gfx950 m=64 n=1536 k=7168
// dtype_weight=fp8_e4m3 weight_scale=block128": the contract JSON's keys)
// as a contract; an unknown key or bad value is an error naming it.
StatusOr<Contract> contract_from_column(std::string_view column);

// The decision columns of `c`'s plan (with no tuning override), tab-separated:
// form, workgroup threads, launch grid, waves a SIMD, tuning values.
StatusOr<std::string> plan_table_decisions(const Contract &c);

// `table` with every row's decisions planned again: comment lines ('#') and
// each row's contract column are kept, the rest of the row replaced. What
// the golden test compares, and what `gatejit plan --table FILE --write`
// writes back.
StatusOr<std::string> replan_table(std::string_view table);

}  // namespace gatejit::compiler
