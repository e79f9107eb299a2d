#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/AMDGPU/Utils/Chipset.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "passes.h"

namespace gatejit::compiler {
namespace {

struct LowerSubgroupReducePass
    : public mlir::PassWrapper<LowerSubgroupReducePass, mlir::OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerSubgroupReducePass)
  explicit LowerSubgroupReducePass(SubgroupReduceLowering o) : options(std::move(o)) {}
  llvm::StringRef getArgument() const final { return "gatejit-lower-subgroup-reduce"; }
  llvm::StringRef getDescription() const final { return "Lower gpu.subgroup_reduce to DPP or shuffles"; }
  // The patterns create amdgpu.dpp, rocdl and arith ops: load their dialects
  // even where the input does not use them yet (gatejit-opt, lit tests).
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::amdgpu::AMDGPUDialect, mlir::ROCDL::ROCDLDialect, mlir::arith::ArithDialect,
                    mlir::gpu::GPUDialect, mlir::vector::VectorDialect>();
  }

  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    // Wider-than-32-bit and vector reductions are split into 32-bit pieces first.
    mlir::populateGpuBreakDownSubgroupReducePatterns(patterns, /*maxShuffleBitwidth=*/32);
    if (options.amdgpu) {
      auto chipset = mlir::amdgpu::Chipset::parse(options.chipset);
      if (mlir::failed(chipset)) {
        getOperation()->emitError("unknown AMDGPU chipset '" + options.chipset + "'");
        return signalPassFailure();
      }
      mlir::populateGpuLowerSubgroupReduceToDPPPatterns(patterns, options.subgroup_size, *chipset,
                                                        /*benefit=*/2);
      mlir::populateGpuLowerClusteredSubgroupReduceToDPPPatterns(patterns, options.subgroup_size, *chipset,
                                                                 /*benefit=*/2);
    }
    // Shuffles: the whole lowering on NVVM, and the fallback for any reduction
    // the DPP patterns do not take.
    // (Whole-subgroup and clustered reductions are separate pattern sets.)
    mlir::populateGpuLowerSubgroupReduceToShufflePatterns(patterns, options.subgroup_size);
    mlir::populateGpuLowerClusteredSubgroupReduceToShufflePatterns(patterns, options.subgroup_size);
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    bool left = false;
    getOperation()->walk([&](mlir::gpu::SubgroupReduceOp op) {
      op.emitError("gpu.subgroup_reduce was not lowered");
      left = true;
    });
    if (left) signalPassFailure();
  }

  SubgroupReduceLowering options;
};

}  // namespace

std::unique_ptr<mlir::Pass> create_lower_subgroup_reduce_pass(SubgroupReduceLowering options) {
  return std::make_unique<LowerSubgroupReducePass>(std::move(options));
}

}  // namespace gatejit::compiler
