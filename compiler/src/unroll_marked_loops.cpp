#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/BuiltinOps.h"
#include "passes.h"

namespace gatejit::compiler {
namespace {

constexpr const char *kUnrollAttr = "gatejit.unroll";

struct UnrollMarkedLoopsPass
    : public mlir::PassWrapper<UnrollMarkedLoopsPass, mlir::OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(UnrollMarkedLoopsPass)
  llvm::StringRef getArgument() const final { return "gatejit-unroll-marked-loops"; }
  llvm::StringRef getDescription() const final { return "Fully unroll scf.for loops marked {gatejit.unroll}"; }

  void runOnOperation() override {
    llvm::SmallVector<mlir::scf::ForOp> loops;
    // Post-order: inner loops first, so an outer loop unrolls copies of
    // already-unrolled bodies.
    getOperation()->walk([&](mlir::scf::ForOp loop) {
      if (loop->hasAttr(kUnrollAttr)) loops.push_back(loop);
    });
    for (mlir::scf::ForOp loop : loops) {
      if (mlir::failed(mlir::loopUnrollFull(loop))) {
        loop.emitError("gatejit.unroll: loop could not be fully unrolled (needs a constant trip count)");
        return signalPassFailure();
      }
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> create_unroll_marked_loops_pass() {
  return std::make_unique<UnrollMarkedLoopsPass>();
}

}  // namespace gatejit::compiler
