// Instantiation: a plan's kernel template filled in with its parameters, the
// snippets it calls and the body fragments it takes in place.
#pragma once

#include <string>

#include "gatejit/status.h"
#include "kernel_plan.h"

namespace gatejit::compiler {

// The filled-in MLIR text of a plan: the kernel template plus the epilogue,
// activation, sigmoid and conversion snippets it calls.
StatusOr<std::string> instantiate(const KernelPlan &plan);

}  // namespace gatejit::compiler
