// The JIT library links LLVM from its static archives. LLVM 22's LTO back end
// (reached through lld's ELF driver) registers every statically linked pass
// extension listed in llvm/Support/Extension.def, which in Debian's build
// names Polly; but Debian ships Polly only as a loadable plugin
// (LLVMPolly.so), with no archive to link. gatejit never runs LTO (lld links
// object files), so Polly is simply not part of this library: this is its
// extension entry point with no passes to register.
#include "llvm/Plugins/PassPlugin.h"

namespace {
void register_no_passes(llvm::PassBuilder &) {}
}  // namespace

llvm::PassPluginLibraryInfo getPollyPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "Polly (not linked into libgatejit_jit.so)", "none", register_no_passes};
}
