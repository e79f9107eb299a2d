#include "pipeline.h"

#include <cstdlib>

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"
#include "gatejit/env_flag.h"
#include "compile_phases.h"
#include "passes.h"

namespace gatejit::compiler {
namespace {

mlir::DialectRegistry make_registry() {
  mlir::DialectRegistry registry;
  registry.insert<mlir::amdgpu::AMDGPUDialect, mlir::arith::ArithDialect, mlir::cf::ControlFlowDialect,
                  mlir::func::FuncDialect, mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect, mlir::NVVM::NVVMDialect,
                  mlir::ROCDL::ROCDLDialect, mlir::scf::SCFDialect, mlir::vector::VectorDialect>();
  // The dialect extensions: inliner interfaces (func, llvm) and the
  // ConvertToLLVM interfaces that gpu-to-rocdl/nvvm collect patterns from.
  mlir::registerAllExtensions(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerGPUDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  mlir::registerROCDLDialectTranslation(registry);
  return registry;
}

// Collects diagnostics so that a failure returns them as the error message.
class DiagnosticCollector {
 public:
  explicit DiagnosticCollector(mlir::MLIRContext &ctx)
      : handler_(&ctx, [this](mlir::Diagnostic &d) {
          llvm::raw_string_ostream os(text_);
          os << d.getLocation() << ": " << d << "\n";
          return mlir::success();
        }) {}
  const std::string &text() const { return text_; }

 private:
  std::string text_;
  mlir::ScopedDiagnosticHandler handler_;
};

// Canonicalisation without block merging ("aggressive" region
// simplification): on the unrolled kernels that was two thirds of the
// canonicaliser's time, and LLVM's SimplifyCFG merges the same blocks
// (every code object came out byte-identical without it).
std::unique_ptr<mlir::Pass> create_canonicalizer() {
  mlir::GreedyRewriteConfig config;
  config.setRegionSimplificationLevel(mlir::GreedySimplifyRegionLevel::Normal);
  return mlir::createCanonicalizerPass(config);
}

// Target-neutral clean-up: inline the epilogue/activation helpers, drop them,
// unroll the accumulator loops, fold the now-constant indices.
void add_generic_passes(mlir::OpPassManager &gpu) {
  gpu.addPass(mlir::createInlinerPass());
  gpu.addPass(mlir::createSymbolDCEPass());
  gpu.addPass(create_unroll_marked_loops_pass());
  gpu.addPass(create_canonicalizer());
  gpu.addPass(mlir::createCSEPass());
  // Globals that only a folded-away branch used (mma_tiled's K-split
  // workspace when K is not split).
  gpu.addPass(mlir::createSymbolDCEPass());
}

// Target lowering: cross-lane reductions, control flow, then gpu -> rocdl/nvvm.
void add_lowering_passes(mlir::OpPassManager &gpu, Target target) {
  const bool amd = target_is_amdgpu(target);
  gpu.addPass(create_lower_subgroup_reduce_pass(
      {amd, amd ? target_name(target) : "", unsigned(target_wave_size(target))}));
  // Views of a view (mma_tiled's stage slots) to plain pointer arithmetic.
  gpu.addPass(mlir::memref::createExpandStridedMetadataPass());
  gpu.addPass(mlir::createLowerAffinePass());
  gpu.addPass(mlir::createSCFToControlFlowPass());
  // n-D accumulator vectors (M_MAX x VEC) need the full vector lowering
  // (broadcast/extract/insert unrolled to 1-D) before the gpu conversion.
  gpu.addPass(mlir::createConvertVectorToLLVMPass());
  if (amd) {
    mlir::ConvertAMDGPUToROCDLPassOptions amdgpu_options;
    amdgpu_options.chipset = target_name(target);
    gpu.addPass(mlir::createConvertAMDGPUToROCDLPass(amdgpu_options));
    mlir::ConvertGpuOpsToROCDLOpsOptions rocdl_options;
    rocdl_options.chipset = target_name(target);
    rocdl_options.indexBitwidth = 64;
    rocdl_options.useBarePtrCallConv = true;  // kernarg = raw pointers (the kernel ABI)
    gpu.addPass(mlir::createConvertGpuOpsToROCDLOps(rocdl_options));
  } else {
    mlir::ConvertGpuOpsToNVVMOpsOptions nvvm_options;
    nvvm_options.indexBitwidth = 64;
    nvvm_options.useBarePtrCallConv = true;
    gpu.addPass(mlir::createConvertGpuOpsToNVVMOps(nvvm_options));
    gpu.addPass(create_mark_tensor_map_args_pass());
    // NVVM ops that are inline PTX (wgmma.mma_async) become llvm.inline_asm.
    gpu.addPass(mlir::createConvertNVVMToLLVMPass());
  }
  gpu.addPass(mlir::createReconcileUnrealizedCastsPass());
  gpu.addPass(create_canonicalizer());
}

struct Lowered {
  std::unique_ptr<mlir::MLIRContext> ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

StatusOr<Lowered> parse_and_lower(const std::string &text, Target target, IrStage stage,
                                  CompilePhases *phases = nullptr) {
  Lowered out;
  out.ctx = std::make_unique<mlir::MLIRContext>(make_registry(), mlir::MLIRContext::Threading::DISABLED);
  out.ctx->loadAllAvailableDialects();
  if (phases) phases->mark("mlir_context");
  DiagnosticCollector diags(*out.ctx);
  out.module = mlir::parseSourceString<mlir::ModuleOp>(text, out.ctx.get());
  if (!out.module) return compile_error("template does not parse:\n" + diags.text());
  if (mlir::failed(mlir::verify(*out.module))) return compile_error("template does not verify:\n" + diags.text());
  if (phases) phases->mark("mlir_parse");

  mlir::PassManager pm(out.ctx.get());
  // GATEJIT_DEBUG_PIPELINE=1 prints the IR after every pass to stderr.
  auto debug = env_flag("GATEJIT_DEBUG_PIPELINE");
  if (!debug.ok()) return debug.status();
  // GATEJIT_PASS_TIMING=1 prints MLIR's wall time per pass to stderr.
  auto timing = env_flag("GATEJIT_PASS_TIMING");
  if (!timing.ok()) return timing.status();
  if (*timing) pm.enableTiming();
  if (*debug)
    pm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                        [](mlir::Pass *, mlir::Operation *) { return true; },
                        /*printModuleScope=*/false, /*printAfterOnlyOnChange=*/true);
  mlir::OpPassManager &gpu = pm.nest<mlir::gpu::GPUModuleOp>();
  add_generic_passes(gpu);
  if (stage == IrStage::kLlvm) add_lowering_passes(gpu, target);
  if (mlir::failed(pm.run(*out.module)))
    return compile_error(std::string("MLIR pipeline failed for ") + target_name(target) + ":\n" + diags.text());
  return out;
}

mlir::gpu::GPUModuleOp the_gpu_module(mlir::ModuleOp m) {
  mlir::gpu::GPUModuleOp found;
  m.walk([&](mlir::gpu::GPUModuleOp g) { found = g; });
  return found;
}

}  // namespace

StatusOr<std::string> lower_to_stage_text(const std::string &mlir_text, Target target, IrStage stage) {
  auto lowered = parse_and_lower(mlir_text, target, stage);
  if (!lowered.ok()) return lowered.status();
  std::string s;
  llvm::raw_string_ostream os(s);
  lowered->module->print(os);
  return s;
}

StatusOr<std::unique_ptr<llvm::Module>> lower_to_llvm_ir(const std::string &mlir_text, Target target,
                                                        llvm::LLVMContext &ctx, CompilePhases *phases) {
  auto lowered = parse_and_lower(mlir_text, target, IrStage::kLlvm, phases);
  if (!lowered.ok()) return lowered.status();
  if (phases) phases->mark("mlir_passes");
  mlir::gpu::GPUModuleOp gpu_module = the_gpu_module(*lowered->module);
  if (!gpu_module) return internal_error("template has no gpu.module");
  DiagnosticCollector diags(*lowered->ctx);
  std::unique_ptr<llvm::Module> llvm_module = mlir::translateModuleToLLVMIR(gpu_module, ctx, "gatejit");
  if (!llvm_module) return compile_error("translation to LLVM IR failed:\n" + diags.text());
  if (phases) phases->mark("translate");
  return llvm_module;
}

}  // namespace gatejit::compiler
