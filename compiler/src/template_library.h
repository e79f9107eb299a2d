// The kernel templates (templates/<role>/<name>.mlir), embedded at build
// time, and the ${NAME} substitution that fills them.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "gatejit/status.h"

namespace gatejit::compiler {

struct EmbeddedTemplate {
  const char *name;  // file name without .mlir, unique across role folders ("gemv")
  const char *path;  // role folder and name ("kernels/gemv")
  const char *text;
};
extern const EmbeddedTemplate kEmbeddedTemplates[];
extern const size_t kEmbeddedTemplateCount;

using TemplateParams = std::map<std::string, std::string>;

StatusOr<std::string> template_text(std::string_view name);

// Replaces every ${NAME} in `text` with params[NAME]. An unknown name is an
// error naming it (a template and its generator out of step).
StatusOr<std::string> substitute(std::string_view text, const TemplateParams &params);

// XXH3-64 over every embedded template (its path and text), as 16 hex
// digits: part of the compiler fingerprint, so editing, renaming or moving a
// template invalidates cached kernels.
std::string templates_hash();

}  // namespace gatejit::compiler
