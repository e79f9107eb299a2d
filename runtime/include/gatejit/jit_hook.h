// How the compiler plugs into the runtime for JIT: a compile function and the
// compiler's fingerprint (part of every disk-cache key). The runtime has no
// link dependency on the compiler; gatejit_runtime_attach_jit() (in the
// compiler library) installs this hook.
#pragma once

#include <functional>
#include <string>

#include "gatejit/gatejit.h"
#include "gatejit/kernel_binary.h"

namespace gatejit {

struct JitHook {
  std::function<StatusOr<KernelBinary>(const Contract &)> compile;
  std::string fingerprint;
  // The template the compiler picks for a contract ("gemv", "mma",
  // "generic"), without compiling: what explain names. Optional.
  std::function<StatusOr<std::string>(const Contract &)> form;
};

Status runtime_set_jit(gatejit_runtime_t runtime, JitHook hook);

// A C status object for `s` (NULL when ok), for C entry points defined
// outside the runtime library.
gatejit_status_t to_c_status(const Status &s);

}  // namespace gatejit
