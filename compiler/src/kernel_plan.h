// KernelPlan: everything the generator decides for one contract before any
// IR exists: the form and its typed schedule (plan/schedule.h), and what
// follows from it: template parameters, launch geometry, symbol, report.
// The choices come from the per-target tuning tables (compiler/tuning/).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gatejit/contract.h"
#include "gatejit/kernel_abi.h"
#include "gatejit/kernel_binary.h"
#include "plan/schedule.h"
#include "plan_facts.h"
#include "template_library.h"
#include "tuning_override.h"

namespace gatejit::compiler {

struct KernelPlan {
  TemplateKind kind = TemplateKind::kGeneric;
  std::string reason;        // why this template (shown in reports and explain)
  Contract contract;         // the contract actually compiled (generic: shape-free)
  std::string symbol;
  Schedule schedule;         // the decisions; everything below derives from them
  LaunchGeometry geometry;
  TemplateParams params;     // ${NAME} values for the template text (to_params)
  // The kernel template's file (the kind's own, or mma_tiled for mma) and
  // the template-specific snippets that go with it (after the epilogue's).
  std::string template_file;
  std::vector<std::string> snippets;
  // Pieces of IR the kernel body takes in place (parameter name -> template
  // file), filled in before the kernel template: what a callee cannot do,
  // such as taking a global (a callee that does is not inlined).
  std::map<std::string, std::string> body_fragments;
  // What the performance model reads of the plan (perf_model.h).
  PlanFacts facts;
  // The kernel's argument list, as its template declares it and its binary
  // carries it (kernel_abi.h).
  std::vector<AbiArg> abi;
  // The development override the tables were read with (the same object
  // the compile's fingerprint includes).
  TuningOverride tuning;
};

// `c` must be normalised. `tuning`: the override the compile parsed once
// (TuningOverride::from_env()), or none.
StatusOr<KernelPlan> plan_kernel(const Contract &c, const TuningOverride &tuning = {});

// The report's tuning values (the compile report's "tuning"), from the schedule.
TuningValues report(const KernelPlan &plan);

}  // namespace gatejit::compiler
