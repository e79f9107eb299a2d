#include "gatejit/compiler/compiler.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "code_object_report.h"
#include "compile_phases.h"
#include "gatejit/version.h"
#include "kernel_plan.h"
#include "lld_link.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm_codegen.h"
#include "model_report.h"
#include "pipeline.h"
#include "template_instantiate.h"
#include "template_library.h"

namespace gatejit::compiler {
namespace {

// Options that change code generation; part of the fingerprint.
constexpr const char *kCodegenOptions = "O3;cov5;bare-ptr;index64";

}  // namespace
extern const char kGeneratorSourceHash[];  // generated: cmake/hash_generator.cmake
namespace {

StatusOr<std::vector<uint8_t>> generate_code(const std::string &mlir_text, const KernelPlan &plan,
                                             CompilePhases &phases) {
  const Target target = plan.contract.target;
  llvm::LLVMContext llvm_ctx;
  auto module = lower_to_llvm_ir(mlir_text, target, llvm_ctx, &phases);
  if (!module.ok()) return module.status();
  limit_kernel_occupancy(**module, plan.schedule.waves.min, plan.schedule.waves.max);
  if (!target_is_amdgpu(target)) return codegen(**module, target, CodegenOutput::kAssembly, &phases);
  auto object = codegen(**module, target, CodegenOutput::kObject, &phases);
  if (!object.ok()) return object.status();
  auto linked = link_code_object(*object);
  phases.mark("link");
  return linked;
}

}  // namespace

StatusOr<Stage> parse_stage(std::string_view s) {
  if (s == "template") return Stage::kTemplate;
  if (s == "gpu") return Stage::kGpu;
  if (s == "llvm") return Stage::kLlvm;
  if (s == "isa") return Stage::kIsa;
  return invalid_argument("stage = '" + std::string(s) + "': allowed stages are template, gpu, llvm, isa");
}

namespace {
std::string base_fingerprint() {
  return fmt::format("gatejit-{}/generator-{}/templates-{}/llvm-{}/{}", GATEJIT_VERSION_STRING, kGeneratorSourceHash,
                     templates_hash(), llvm_version(), kCodegenOptions);
}
// A tuning override changes the code: never share its cache entries.
std::string fingerprint_with(const TuningOverride &tuning) {
  std::string fp = base_fingerprint();
  if (!tuning.text.empty()) fp += fmt::format("/mma-tuning:{}", tuning.text);
  return fp;
}
}  // namespace

std::string fingerprint() {
  auto tuning = TuningOverride::from_env();
  if (tuning.ok()) return fingerprint_with(*tuning);
  // Every compile refuses this override (its error names the key), so no
  // cache entry is ever stored under this fingerprint.
  return base_fingerprint() + "/mma-tuning-refused";
}

StatusOr<CompiledKernel> compile(const Contract &input) {
  const auto start = std::chrono::steady_clock::now();
  CompilePhases phases;
  // Read once: the plan and the fingerprint see the same override.
  auto parsed_tuning = TuningOverride::from_env();
  if (!parsed_tuning.ok()) return parsed_tuning.status();
  const TuningOverride &tuning_override = *parsed_tuning;
  auto contract = normalize(input);
  if (!contract.ok()) return contract.status();
  auto plan = plan_kernel(*contract, tuning_override);
  if (!plan.ok()) return plan.status();
  phases.mark("plan");
  auto text = instantiate(*plan);
  if (!text.ok()) return text.status();
  phases.mark("instantiate");
  auto code = generate_code(*text, *plan, phases);
  if (!code.ok()) return code.status();
  const double compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  auto report = read_code_object_report(*code);
  if (!report.ok()) return report.status();
  phases.mark("code_report");
  const Contract &c = *contract;
  const int64_t m_launch = c.m_dynamic ? c.m_max : c.m;
  (*report)["contract"] = canonical_text(c);
  (*report)["template"] = template_name(plan->kind);
  (*report)["template_file"] = plan->template_file;
  (*report)["reason"] = plan->reason;
  (*report)["compile_ms"] = compile_ms;
  (*report)["workgroup_size"] = {plan->geometry.block_x, 1, 1};
  // The workgroups launched, and the tiles they cover (the same but for a
  // persistent grid, whose workgroups loop over the tiles).
  (*report)["grid"] = plan->geometry.launch_grid(c.n, m_launch);
  (*report)["tiles"] = {plan->geometry.grid_x(c.n), plan->geometry.grid_y(m_launch), plan->geometry.grid_z()};
  if (plan->geometry.persistent_workgroups) (*report)["persistent_workgroups"] = plan->geometry.persistent_workgroups;
  if (plan->geometry.shared_bytes) (*report)["dynamic_shared_bytes"] = plan->geometry.shared_bytes;
  // The TMA boxes the runtime encodes tensor maps for (kernel_binary.h):
  // [K elements, weight rows, hidden rows].
  if (const TensorMapBoxes &maps = plan->geometry.tensor_maps; maps.any())
    (*report)["tensor_map_boxes"] = {maps.box_k, maps.weight_rows, maps.hidden_rows};
  (*report)["abi"] = abi_text(plan->abi);
  const std::string toolchain = fingerprint_with(tuning_override);  // hashes every template: once per compile
  phases.mark("fingerprint");
  (*report)["toolchain"] = toolchain;
  nlohmann::json tuning = nlohmann::json::object();
  for (const auto &[name, value] : compiler::report(*plan)) tuning[name] = value;
  if (!tuning.empty()) (*report)["tuning"] = tuning;
  // The model reads the launch shape of the contract asked for (a generic
  // plan's contract has none).
  if (Status s = add_model_report(c, *plan, *code, *report); !s.ok()) return s;
  phases.mark("model");
  nlohmann::json phase_ms = nlohmann::json::object();
  for (const auto &[name, ms] : phases.phases()) phase_ms[name] = ms;
  (*report)["compile_phases_ms"] = phase_ms;

  CompiledKernel out;
  KernelBinary &kb = out.binary;
  kb.key = contract_key(plan->contract);
  kb.contract_text = canonical_text(plan->contract);
  kb.target = c.target;
  kb.format = target_is_amdgpu(c.target) ? BinaryFormat::kHsaco : BinaryFormat::kPtx;
  kb.symbol = plan->symbol;
  kb.geometry = plan->geometry;
  kb.abi = plan->abi;
  kb.toolchain = toolchain;
  kb.code = std::move(*code);
  out.report = std::move(*report);
  kb.report_json = out.report.dump();
  return out;
}

StatusOr<std::string> emit_stage(const Contract &input, Stage stage) {
  auto tuning = TuningOverride::from_env();
  if (!tuning.ok()) return tuning.status();
  auto contract = normalize(input);
  if (!contract.ok()) return contract.status();
  auto plan = plan_kernel(*contract, *tuning);
  if (!plan.ok()) return plan.status();
  auto text = instantiate(*plan);
  if (!text.ok()) return text.status();
  const Target target = plan->contract.target;
  switch (stage) {
    case Stage::kTemplate: return text;
    case Stage::kGpu: return lower_to_stage_text(*text, target, IrStage::kGpu);
    case Stage::kLlvm:
    case Stage::kIsa: {
      // The same optimisation (and for isa, codegen) the code object gets.
      llvm::LLVMContext ctx;
      auto module = lower_to_llvm_ir(*text, target, ctx);
      if (!module.ok()) return module.status();
      limit_kernel_occupancy(**module, plan->schedule.waves.min, plan->schedule.waves.max);
      auto out = codegen(**module, target, stage == Stage::kLlvm ? CodegenOutput::kOptimizedIr : CodegenOutput::kAssembly);
      if (!out.ok()) return out.status();
      return std::string(out->begin(), out->end());
    }
  }
  return internal_error("unknown stage");
}

}  // namespace gatejit::compiler
