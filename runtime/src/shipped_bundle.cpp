#include "shipped_bundle.h"

#include <sys/stat.h>

#include "self_location.h"

namespace gatejit {
namespace {

// Set by the build (runtime/CMakeLists.txt) from GNUInstallDirs.
#ifndef GATEJIT_LIBDIR_TO_DATADIR
#define GATEJIT_LIBDIR_TO_DATADIR "../share"
#endif
#ifndef GATEJIT_INSTALL_DATADIR
#define GATEJIT_INSTALL_DATADIR "/usr/local/share"
#endif

bool is_regular_file(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::vector<std::string> shipped_bundle_search_path(const std::string &folder) {
  std::vector<std::string> out;
  const std::string data = std::string("/gatejit/") + kShippedBundleName;
  if (!folder.empty()) {
    out.push_back(folder + "/" + kShippedBundleName);
    out.push_back(folder + "/" GATEJIT_LIBDIR_TO_DATADIR + data);
    if (std::string(GATEJIT_LIBDIR_TO_DATADIR) != "../share") out.push_back(folder + "/../share" + data);
  }
  out.push_back(GATEJIT_INSTALL_DATADIR + data);
  return out;
}

std::optional<std::string> find_shipped_bundle() {
  for (const std::string &path : shipped_bundle_search_path(folder_of_runtime_binary()))
    if (is_regular_file(path)) return path;
  return std::nullopt;
}

}  // namespace gatejit
