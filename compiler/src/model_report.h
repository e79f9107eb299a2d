// The compile report's performance fields: the code object's replayed
// memory facts ("code_facts"), the model's prediction on the target's
// hardware ("model") and the plan gates ("gates"), from the plan, the report
// read from the code object and the code itself.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>

#include "gatejit/contract.h"
#include "kernel_plan.h"
#include "perf_model.h"

namespace gatejit::compiler {

// `contract` is the normalised contract with its shape (a generic plan's
// own contract has none); `report` is read_code_object_report's, with "grid".
StatusOr<ModelInput> model_input(const Contract &contract, const KernelPlan &plan, const nlohmann::json &report,
                                 std::span<const uint8_t> code);

// Adds "plan_facts", "code_facts", "model" and "gates" to `report`.
Status add_model_report(const Contract &contract, const KernelPlan &plan, std::span<const uint8_t> code,
                        nlohmann::json &report);

}  // namespace gatejit::compiler
