// Instantiation: a plan's kernel template filled in with its parameters, the
// snippets it calls and the body fragments it takes in place, checked both
// ways against what each template declares it takes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gatejit/status.h"
#include "kernel_plan.h"
#include "template_library.h"

namespace gatejit::compiler {

// The templates instantiated together.
struct TemplateSet {
  const Template *kernel = nullptr;
  std::vector<const Template *> snippets;  // pasted at the kernel's ${EPILOGUE}, in order
  std::vector<std::pair<std::string, const Template *>> fragments;  // kernel parameter -> fragment
};

// Fills in `set` from `params`. Both ways: a parameter that none of the
// templates takes is an error naming it and the set, and so is one that a
// template takes and `params` does not set (but the kernel's ${EPILOGUE} and
// fragment parameters, which the instantiation fills in). Each template must
// be of the kind its place asks for.
StatusOr<std::string> instantiate_set(const TemplateSet &set, const TemplateParams &params);

// The filled-in MLIR text of a plan: the kernel template plus the epilogue,
// activation, sigmoid and conversion snippets every plan takes, the plan's
// own snippets and its body fragments.
StatusOr<std::string> instantiate(const KernelPlan &plan);

}  // namespace gatejit::compiler
