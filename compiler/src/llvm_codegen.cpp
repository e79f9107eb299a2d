#include "llvm_codegen.h"

#include "gatejit/target_info.h"
#include "compile_phases.h"

#include <algorithm>
#include <mutex>

#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

namespace gatejit::compiler {
namespace {

void init_targets_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUDisassembler();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

struct TargetSpec {
  const char *triple;
  const char *cpu;
  const char *features;
};

TargetSpec spec_for(Target t) {
  const TargetInfo &info = target_info(t);
  return {info.triple, info.processor, info.llvm_features};
}

void optimize(llvm::Module &module, llvm::TargetMachine &tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
}

}  // namespace

std::string llvm_version() { return LLVM_VERSION_STRING; }

StatusOr<std::vector<uint8_t>> codegen(llvm::Module &module, Target target, CodegenOutput output,
                                       CompilePhases *phases) {
  init_targets_once();
  const TargetSpec spec = spec_for(target);
  const llvm::Triple triple(spec.triple);
  std::string error;
  const llvm::Target *llvm_target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvm_target) return compile_error("LLVM has no backend for " + std::string(spec.triple) + ": " + error);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(llvm_target->createTargetMachine(
      triple, spec.cpu, spec.features, options, llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm) return compile_error(std::string("cannot create a target machine for ") + spec.cpu);

  module.setTargetTriple(triple);
  module.setDataLayout(tm->createDataLayout());
  if (target_is_amdgpu(target))
    module.addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", 500);

  // Helper functions the MLIR inliner left (e.g. @sigmoid) become internal,
  // so LLVM inlines them and drops the bodies: one kernel per code object.
  // Every defined function is convergent, as clang makes them for CUDA and
  // HIP: a helper may hold a workgroup barrier (@split_arrive,
  // @out_groups_done), and a call LLVM thinks non-convergent may be
  // duplicated into both sides of a thread-dependent branch (jump threading
  // over `tid == 0`), leaving one warp at two different barriers: a hang on
  // sm_90. LLVM's function-attribute inference drops the attribute again
  // from functions that reach no convergent operation.
  for (llvm::Function &f : module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr(llvm::Attribute::Convergent);
    const auto cc = f.getCallingConv();
    if (cc != llvm::CallingConv::AMDGPU_KERNEL && cc != llvm::CallingConv::PTX_Kernel)
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  }

  std::string verify_errors;
  llvm::raw_string_ostream verify_os(verify_errors);
  if (llvm::verifyModule(module, &verify_os)) return compile_error("LLVM IR does not verify:\n" + verify_errors);
  optimize(module, *tm);
  if (phases) phases->mark("llvm_opt");

  if (output == CodegenOutput::kOptimizedIr) {
    std::string text;
    llvm::raw_string_ostream ir(text);
    module.print(ir, nullptr);
    return std::vector<uint8_t>(text.begin(), text.end());
  }

  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen_pm;
  const auto file_type =
      output == CodegenOutput::kObject ? llvm::CodeGenFileType::ObjectFile : llvm::CodeGenFileType::AssemblyFile;
  if (tm->addPassesToEmitFile(codegen_pm, os, nullptr, file_type))
    return compile_error(std::string("the ") + spec.cpu + " backend cannot emit this file type");
  codegen_pm.run(module);
  if (phases) phases->mark("llvm_codegen");
  return std::vector<uint8_t>(buffer.begin(), buffer.end());
}

void limit_kernel_occupancy(llvm::Module &module, int64_t min_waves, int64_t max_waves) {
  if (max_waves <= 0) return;
  const int64_t least = std::clamp<int64_t>(min_waves, 1, max_waves);
  for (llvm::Function &f : module)
    if (f.getCallingConv() == llvm::CallingConv::AMDGPU_KERNEL)
      f.addFnAttr("amdgpu-waves-per-eu", std::to_string(least) + "," + std::to_string(max_waves));
}

}  // namespace gatejit::compiler
