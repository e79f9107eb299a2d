// The JIT from libgatejit_jit.so for a runtime built without the compiler:
// finds the library (gatejit/jit_plugin.h says where), dlopens it and wraps
// its plain-C compile entry point in a JitHook.
#pragma once

#include <optional>
#include <string>

#include "gatejit/jit_hook.h"

namespace gatejit {

// $GATEJIT_JIT_LIBRARY when set (explicit = true), else the first of
// libgatejit_jit.so.0 and libgatejit_jit.so in the folder of the binary this
// code is linked into that exists; nullopt when there is none.
struct JitLibraryLocation {
  std::string path;
  bool explicit_choice = false;  // named by GATEJIT_JIT_LIBRARY
};
std::optional<JitLibraryLocation> find_jit_library();

// dlopens `path` and returns a hook that compiles through it. The library is
// kept loaded for the life of the process (hooks may be copied anywhere).
// A path that is not a regular file (after links) is refused before dlopen.
StatusOr<JitHook> load_jit_library(const std::string &path);

}  // namespace gatejit
