// gatejit-opt: mlir-opt with gatejit's own passes, for the lit tests of each
// pass on small inputs (tests/lit/*.mlir). The subgroup-reduce lowering takes
// its target as part of the pass name, as the pipeline configures it.
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "passes.h"

namespace gc = gatejit::compiler;

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::registerPass([] { return gc::create_unroll_marked_loops_pass(); });
  mlir::registerPass([] { return gc::create_mark_tensor_map_args_pass(); });
  static mlir::PassPipelineRegistration<> amd(
      "gatejit-lower-subgroup-reduce-gfx950", "gpu.subgroup_reduce to DPP (gfx950, wave64)",
      [](mlir::OpPassManager &pm) { pm.addPass(gc::create_lower_subgroup_reduce_pass({true, "gfx950", 64})); });
  static mlir::PassPipelineRegistration<> nvvm(
      "gatejit-lower-subgroup-reduce-nvvm", "gpu.subgroup_reduce to shuffles (sm_90, warp of 32)",
      [](mlir::OpPassManager &pm) { pm.addPass(gc::create_lower_subgroup_reduce_pass({false, "", 32})); });
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "gatejit pass driver\n", registry));
}
