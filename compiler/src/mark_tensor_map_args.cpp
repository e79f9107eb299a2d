// Turns a kernel's trailing generic-pointer arguments into TMA descriptors
// passed by value. A template declares them as `!llvm.ptr` arguments and says
// how many with `gatejit.tensor_maps = N` on the gpu.func; the gpu -> nvvm
// conversion keeps that attribute but drops argument attributes it does not
// know, so this runs after it. Each becomes a 128-byte, 64-byte aligned
// `byval` parameter marked `nvvm.grid_constant`: the NVPTX backend then
// takes the parameter's own address (cvta.param) for the TMA instruction
// instead of copying it to local memory.
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "gatejit/kernel_binary.h"
#include "passes.h"

namespace gatejit::compiler {
namespace {

constexpr const char *kTensorMapsAttr = "gatejit.tensor_maps";
constexpr int64_t kTensorMapAlign = 64;

struct MarkTensorMapArgsPass : public mlir::PassWrapper<MarkTensorMapArgsPass, mlir::OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MarkTensorMapArgsPass)
  llvm::StringRef getArgument() const final { return "gatejit-mark-tensor-map-args"; }
  llvm::StringRef getDescription() const final {
    return "Pass a kernel's trailing !llvm.ptr arguments as by-value grid constants (TMA descriptors)";
  }

  void runOnOperation() override {
    getOperation()->walk([&](mlir::LLVM::LLVMFuncOp fn) {
      auto count = fn->getAttrOfType<mlir::IntegerAttr>(kTensorMapsAttr);
      if (!count) return;
      fn->removeAttr(kTensorMapsAttr);
      const unsigned n = unsigned(count.getInt()), args = fn.getNumArguments();
      if (n > args) {
        fn.emitError() << kTensorMapsAttr << " = " << n << " but the kernel has " << args << " arguments";
        return signalPassFailure();
      }
      mlir::MLIRContext *ctx = fn.getContext();
      auto bytes = mlir::LLVM::LLVMArrayType::get(mlir::IntegerType::get(ctx, 8), unsigned(kTensorMapBytes));
      mlir::Builder b(ctx);
      for (unsigned i = args - n; i < args; ++i) {
        auto ptr = llvm::dyn_cast<mlir::LLVM::LLVMPointerType>(fn.getArgument(i).getType());
        if (!ptr || ptr.getAddressSpace() != 0) {
          fn.emitError() << "tensor map argument " << i << " is not a generic !llvm.ptr";
          return signalPassFailure();
        }
        fn.setArgAttr(i, mlir::LLVM::LLVMDialect::getByValAttrName(), mlir::TypeAttr::get(bytes));
        fn.setArgAttr(i, mlir::LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(kTensorMapAlign));
        fn.setArgAttr(i, mlir::NVVM::NVVMDialect::getGridConstantAttrName(), b.getUnitAttr());
      }
    });
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> create_mark_tensor_map_args_pass() { return std::make_unique<MarkTensorMapArgsPass>(); }

}  // namespace gatejit::compiler
