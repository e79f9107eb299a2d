// LLVM IR -> machine code with LLVM's own backends: AMDGPU (relocatable ELF
// object, linked into a code object by lld_link) and NVPTX (PTX text).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gatejit/contract.h"
#include "gatejit/status.h"

namespace llvm {
class Module;
}

namespace gatejit::compiler {

class CompilePhases;

// kOptimizedIr: the module's text after the O3 pipeline, with no machine code
// emitted (what `gatejit ir --stage llvm` prints).
enum class CodegenOutput { kObject, kAssembly, kOptimizedIr };

// Sets the triple and data layout, runs the O3 pipeline, and emits.
// kObject on AMDGPU: ELF relocatable; kAssembly: AMDGPU asm or PTX text;
// kOptimizedIr: LLVM IR text. `phases` (optional) gets "llvm_opt" and
// "llvm_codegen".
StatusOr<std::vector<uint8_t>> codegen(llvm::Module &module, Target target, CodegenOutput output,
                                       CompilePhases *phases = nullptr);

// AMDGPU: schedules every kernel of `module` for at most `max_waves` waves
// per SIMD, and keeps room for at least `min_waves` ("amdgpu-waves-per-eu"
// = "min_waves,max_waves"); max_waves 0 leaves them alone.
void limit_kernel_occupancy(llvm::Module &module, int64_t min_waves, int64_t max_waves);

// The LLVM version string compiled in (part of the compiler fingerprint).
std::string llvm_version();

}  // namespace gatejit::compiler
