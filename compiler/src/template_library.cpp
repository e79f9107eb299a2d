#include "template_library.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstdio>
#include <cstring>

namespace gatejit::compiler {

StatusOr<std::string> template_text(std::string_view name) {
  for (size_t i = 0; i < kEmbeddedTemplateCount; ++i)
    if (name == kEmbeddedTemplates[i].name) return std::string(kEmbeddedTemplates[i].text);
  return not_found("template '" + std::string(name) + "' is not embedded in this build");
}

StatusOr<std::string> substitute(std::string_view text, const TemplateParams &params) {
  std::string out;
  out.reserve(text.size() * 2);
  size_t pos = 0;
  while (true) {
    const size_t start = text.find("${", pos);
    if (start == std::string_view::npos) break;
    const size_t end = text.find('}', start);
    if (end == std::string_view::npos) return internal_error("template: unterminated ${ at offset " + std::to_string(start));
    out.append(text.substr(pos, start - pos));
    const std::string name(text.substr(start + 2, end - start - 2));
    auto it = params.find(name);
    if (it == params.end()) return internal_error("template parameter ${" + name + "} has no value");
    out.append(it->second);
    pos = end + 1;
  }
  out.append(text.substr(pos));
  return out;
}

std::string templates_hash() {
  XXH3_state_t *state = XXH3_createState();
  XXH3_64bits_reset(state);
  for (size_t i = 0; i < kEmbeddedTemplateCount; ++i) {
    XXH3_64bits_update(state, kEmbeddedTemplates[i].path, std::strlen(kEmbeddedTemplates[i].path) + 1);
    XXH3_64bits_update(state, kEmbeddedTemplates[i].text, std::strlen(kEmbeddedTemplates[i].text) + 1);
  }
  const unsigned long long h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", h);
  return buf;
}

}  // namespace gatejit::compiler
