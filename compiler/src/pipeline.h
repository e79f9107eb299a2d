// Template text -> verified MLIR -> LLVM dialect -> LLVM IR. The pass list is
// in pipeline.cpp, one line per pass.
#pragma once

#include <memory>
#include <string>

#include "gatejit/contract.h"
#include "gatejit/status.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace gatejit::compiler {

class CompilePhases;

enum class IrStage {
  kGpu,   // after inlining and unrolling: gpu/arith/vector/scf, target-neutral
  kLlvm,  // after lowering to the LLVM + ROCDL/NVVM dialects
};

// Parses, verifies and optimises/lowers the MLIR text of a kernel up to
// `stage`; returns the printed IR.
StatusOr<std::string> lower_to_stage_text(const std::string &mlir_text, Target target, IrStage stage);

// Parses, verifies and lowers all the way, then translates the gpu.module to
// an LLVM module in `ctx`. `phases` (optional) gets "mlir" and "translate".
StatusOr<std::unique_ptr<llvm::Module>> lower_to_llvm_ir(const std::string &mlir_text, Target target,
                                                        llvm::LLVMContext &ctx, CompilePhases *phases = nullptr);

}  // namespace gatejit::compiler
