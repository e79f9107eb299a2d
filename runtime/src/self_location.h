// Where the runtime itself lives: the folder of the binary its code is
// linked into (libgatejit.so, libgatejit_jit.so, or a program that links the
// runtime statically). The JIT library and the shipped bundle are looked
// for beside it.
#pragma once

#include <string>

namespace gatejit {

// "" if the loader cannot tell.
std::string folder_of_runtime_binary();

}  // namespace gatejit
