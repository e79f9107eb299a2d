// Links an AMDGPU relocatable object into an HSA code object (a shared ELF)
// with lld, in this process. The input is a memfd and the output a pipe, so no
// temporary file touches the disk and no external ld.lld is needed.
#pragma once

#include <cstdint>
#include <vector>

#include "gatejit/status.h"

namespace gatejit::compiler {

StatusOr<std::vector<uint8_t>> link_code_object(const std::vector<uint8_t> &relocatable_object);

}  // namespace gatejit::compiler
