// The gatejit compiler: contract -> template -> MLIR -> LLVM -> code object,
// in this process. Thread-safe: each call has its own MLIR and LLVM contexts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gatejit/contract.h"
#include "gatejit/kernel_binary.h"

namespace gatejit::compiler {

enum class Stage {
  kTemplate,  // the filled-in template text
  kGpu,       // after inlining/unrolling, before target lowering
  kLlvm,      // LLVM IR after the O3 pipeline
  kIsa,       // AMDGPU assembly or PTX
};
StatusOr<Stage> parse_stage(std::string_view s);

struct CompiledKernel {
  KernelBinary binary;
  nlohmann::json report;  // also stored as binary.report_json
};

// Validates and normalises `c`, then compiles it. Errors name the field; a
// GATEJIT_MMA_TUNING that does not parse is INVALID_ARGUMENT naming its key.
StatusOr<CompiledKernel> compile(const Contract &c);

// The IR of one stage, for kernel engineers (gatejit ir).
StatusOr<std::string> emit_stage(const Contract &c, Stage stage);

// Identifies everything that decides the generated code besides the
// contract: generator version, template sources, LLVM version, options,
// and the GATEJIT_MMA_TUNING override (its canonical text).
std::string fingerprint();

}  // namespace gatejit::compiler
