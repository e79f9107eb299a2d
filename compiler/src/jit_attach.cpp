// gatejit_runtime_attach_jit: the compiler's side of the JIT seam. Defined
// here, in the compiler library, so a runtime-only build has no LLVM in it.
#include "gatejit/compiler/compiler.h"
#include "gatejit/gatejit.h"
#include "gatejit/jit_hook.h"

extern "C" gatejit_status_t gatejit_runtime_attach_jit(gatejit_runtime_t runtime) {
  gatejit::JitHook hook;
  hook.fingerprint = gatejit::compiler::fingerprint();
  hook.compile = [](const gatejit::Contract &c) -> gatejit::StatusOr<gatejit::KernelBinary> {
    auto compiled = gatejit::compiler::compile(c);
    if (!compiled.ok()) return compiled.status();
    return std::move(compiled->binary);
  };
  hook.form = [](const gatejit::Contract &c) -> gatejit::StatusOr<std::string> {
    auto kind = gatejit::compiler::planned_template(c);
    if (!kind.ok()) return kind.status();
    return std::string(gatejit::template_name(*kind));
  };
  return gatejit::to_c_status(gatejit::runtime_set_jit(runtime, std::move(hook)));
}
