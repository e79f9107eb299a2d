// What the plan decided that the performance model reads (kernel_plan.cpp
// fills it; the compile report stores it as "plan_facts").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace gatejit::compiler {

struct PlanFacts {
  std::string form;                  // "gemv", "mma", "mma_tiled", "generic"
  int64_t weight_rows_per_block = 0; // weight rows one workgroup reads (grid x covers N)
  int64_t hidden_rows_per_block = 0; // hidden rows one workgroup reads (grid y covers M)
  int64_t product_rows_per_block = 0; // rows its products span (the instruction's tiles); 0: hidden_rows_per_block
  int64_t splits = 1;                // K split across workgroups (grid z)
  bool split_poll = false;           // the split meets by poll (split_poll.mlir), not by arrival
  int64_t stages_ahead = 0;          // async-copy forms: stages in flight while one is used
  int64_t stage_bytes = 0;
  int64_t reduction_rounds = 0;      // K split: rounds in which the last workgroup loads the partials
  bool matrix = false;               // products on the matrix cores
  bool warpgroup_matrix = false;     // sm_90 wgmma
  // Bytes a workgroup's warps read from workgroup memory into registers
  // for their products over its K share (the tiled form's fragments; 0
  // where the matrix cores read workgroup memory themselves, or none is read).
  int64_t shared_operand_bytes = 0;
};

inline nlohmann::json plan_facts_json(const PlanFacts &f) {
  return {{"form", f.form},           {"weight_rows_per_block", f.weight_rows_per_block},
          {"hidden_rows_per_block", f.hidden_rows_per_block},
          {"product_rows_per_block", f.product_rows_per_block}, {"splits", f.splits},
          {"split_poll", f.split_poll},
          {"stages_ahead", f.stages_ahead}, {"stage_bytes", f.stage_bytes},
          {"reduction_rounds", f.reduction_rounds},
          {"matrix", f.matrix},       {"warpgroup_matrix", f.warpgroup_matrix},
          {"shared_operand_bytes", f.shared_operand_bytes}};
}

}  // namespace gatejit::compiler
