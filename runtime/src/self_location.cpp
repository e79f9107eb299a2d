#include "self_location.h"

#include <dlfcn.h>

namespace gatejit {

std::string folder_of_runtime_binary() {
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void *>(&folder_of_runtime_binary), &info) || !info.dli_fname) return "";
  const std::string self = info.dli_fname;
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? "." : self.substr(0, slash);
}

}  // namespace gatejit
