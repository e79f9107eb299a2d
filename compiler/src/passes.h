// gatejit's own MLIR passes. Each is small; the pipeline that strings them
// together with upstream passes is in pipeline.cpp.
#pragma once

#include <memory>
#include <string>

#include "mlir/Pass/Pass.h"

namespace gatejit::compiler {

// Fully unrolls every scf.for marked {gatejit.unroll} (constant trip count
// required). Templates mark the loops whose induction variable indexes a
// vector of accumulators, so that every index becomes a constant.
std::unique_ptr<mlir::Pass> create_unroll_marked_loops_pass();

// After the gpu -> nvvm conversion: the last N arguments of a kernel that
// says `gatejit.tensor_maps = N` become 128-byte by-value grid constants
// (TMA descriptors; kernel_binary.h, TensorMapBoxes).
std::unique_ptr<mlir::Pass> create_mark_tensor_map_args_pass();

// Lowers gpu.subgroup_reduce with the target's own cross-lane patterns:
// DPP for AMDGPU (chipset given), butterfly shuffles for NVVM.
struct SubgroupReduceLowering {
  bool amdgpu = true;
  std::string chipset;  // e.g. "gfx950"; AMDGPU only
  unsigned subgroup_size = 64;
};
std::unique_ptr<mlir::Pass> create_lower_subgroup_reduce_pass(SubgroupReduceLowering options);

}  // namespace gatejit::compiler
