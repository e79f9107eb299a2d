#include <string_view>

#include "device_backend.h"
#include "gatejit/target_info.h"

namespace gatejit {

StatusOr<Target> target_from_arch(const std::string &arch) {
  // AMD target ids carry feature flags after ':' ("gfx950:sramecc+:xnack-");
  // the processor name selects the code object (features default to "any").
  const std::string_view processor = std::string_view(arch).substr(0, arch.find(':'));
  if (const TargetInfo *info = find_target_info(processor)) return info->target;
  return unsupported("device architecture '" + arch + "' has no gatejit target: supported are gfx950, gfx942, sm_90");
}

}  // namespace gatejit
