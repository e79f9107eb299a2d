// The shipped bundle: every generic kernel of gfx950, gfx942 and sm_90
// (generic_kernel_set.h), built with the library and installed beside it, so
// a runtime with the JIT off and an empty cache still serves every valid
// contract. Found without configuration, in this order, relative to the
// folder D of the binary the runtime is linked into (libgatejit.so,
// libgatejit_jit.so, or a program that links the runtime statically):
//   D/gatejit-generic.gjb                       the pip package, the build tree
//   D/<libdir to datadir>/gatejit/gatejit-generic.gjb   an installed prefix, moved or not
//   D/../share/gatejit/gatejit-generic.gjb      bin/gatejit of an installed prefix
//   <datadir of the configured install prefix>/gatejit/gatejit-generic.gjb
// It is loaded after every bundle the caller names (GATEJIT_BUNDLE_PATH and
// the options), so theirs are searched first. GATEJIT_SHIPPED_BUNDLE=0 (or
// the runtime option) leaves it out.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gatejit {

inline constexpr const char *kShippedBundleName = "gatejit-generic.gjb";

// The places searched for the shipped bundle from binary folder `folder`, in order.
std::vector<std::string> shipped_bundle_search_path(const std::string &folder);

// The first regular file of the search path from this binary's folder.
std::optional<std::string> find_shipped_bundle();

}  // namespace gatejit
