// KernelPlan: everything the generator decides for one contract before any IR
// exists: template, tuning parameters, launch geometry, symbol. The tuning
// table lives in kernel_plan.cpp and is documented in docs/templates.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gatejit/contract.h"
#include "gatejit/kernel_abi.h"
#include "gatejit/kernel_binary.h"
#include "plan_facts.h"
#include "template_library.h"
#include "tuning_override.h"

namespace gatejit::compiler {

struct KernelPlan {
  TemplateKind kind = TemplateKind::kGeneric;
  std::string reason;        // why this template (shown in reports and explain)
  Contract contract;         // the contract actually compiled (generic: shape-free)
  std::string symbol;
  LaunchGeometry geometry;
  TemplateParams params;     // ${NAME} values for the template text
  // The kernel template's file (the kind's own, or mma_tiled for mma) and
  // the template-specific snippets that go with it (after the epilogue's).
  std::string template_file;
  std::vector<std::string> snippets;
  // Pieces of IR the kernel body takes in place (parameter name -> template
  // file), filled in before the kernel template: what a callee cannot do,
  // such as taking a global (a callee that does is not inlined).
  std::map<std::string, std::string> body_fragments;
  // The tuning table's choices for this contract (reported as "tuning"), e.g.
  // {"KSPLIT": 32, "VECS": 2, ...}, recorded where the plan makes them;
  // empty for generic. Some are template parameters too, some (the wgmma
  // form, the waves per SIMD) shape the code elsewhere and are only reported.
  std::map<std::string, int64_t> tuning_choices;
  // What the performance model reads of the plan (perf_model.h).
  PlanFacts facts;
  // AMDGPU: the most waves per SIMD the code is scheduled for
  // ("amdgpu-waves-per-eu" = "1,N"): what the grid places, so that LLVM
  // spends the registers the unused waves would have had on loads in
  // flight. 0: no limit (sm_90, generic kernels).
  int64_t max_waves_per_simd = 0;
  // The fewest (the first figure of "amdgpu-waves-per-eu"): a persistent
  // grid's workgroups are all placed at once, so LLVM must leave them room
  // (at most a 1 / M share of the register file a lane). 1 elsewhere.
  int64_t min_waves_per_simd = 1;
  // AMDGPU: the unsplit rows of the register-streamed mma (v89) count on
  // the waves a SIMD their grid places (all of it at once where it fits one
  // round), so the fewest waves is also that figure.
  bool grid_resident = false;
  // The kernel's argument list, as its template declares it and its binary
  // carries it (kernel_abi.h): every template today takes the classic list,
  // the TMA form the two tensor maps after it.
  std::vector<AbiArg> abi;
  // The development override the tables were read with (the same object
  // the compile's fingerprint includes).
  TuningOverride tuning;
};

// `c` must be normalised. `tuning`: the override the compile parsed once
// (TuningOverride::from_env()), or none.
StatusOr<KernelPlan> plan_kernel(const Contract &c, const TuningOverride &tuning = {});

}  // namespace gatejit::compiler
