#include "template_library.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

namespace gatejit::compiler {
namespace {

constexpr std::string_view kKindPrefix = "// kind: ";
constexpr std::string_view kParamPrefix = "// param ";

bool is_param_name(std::string_view s) {
  if (s.empty() || s[0] < 'A' || s[0] > 'Z') return false;
  for (char ch : s)
    if (!((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_')) return false;
  return true;
}

StatusOr<TemplateFileKind> parse_kind(std::string_view s) {
  if (s == "kernel") return TemplateFileKind::kKernel;
  if (s == "snippet") return TemplateFileKind::kSnippet;
  if (s == "fragment") return TemplateFileKind::kFragment;
  return invalid_argument("kind '" + std::string(s) + "': allowed kinds are kernel, snippet, fragment");
}

// One line of `text` from `pos`, without its newline; `next` is where the
// following line starts (text.size() after the last).
std::string_view line_at(std::string_view text, size_t pos, size_t &next) {
  const size_t end = text.find('\n', pos);
  next = end == std::string_view::npos ? text.size() : end + 1;
  return text.substr(pos, (end == std::string_view::npos ? text.size() : end) - pos);
}

}  // namespace

const char *template_file_kind_name(TemplateFileKind kind) {
  switch (kind) {
    case TemplateFileKind::kKernel: return "kernel";
    case TemplateFileKind::kSnippet: return "snippet";
    case TemplateFileKind::kFragment: return "fragment";
  }
  return "?";
}

bool Template::takes(std::string_view param) const {
  for (const TemplateParam &p : params)
    if (p.name == param) return true;
  return false;
}

StatusOr<std::vector<std::string>> template_uses(std::string_view text) {
  std::vector<std::string> uses;
  std::set<std::string, std::less<>> seen;
  for (size_t pos = text.find("${"); pos != std::string_view::npos; pos = text.find("${", pos)) {
    const size_t end = text.find('}', pos);
    if (end == std::string_view::npos) return invalid_argument("unterminated ${ at offset " + std::to_string(pos));
    const std::string_view name = text.substr(pos + 2, end - pos - 2);
    if (!is_param_name(name))
      return invalid_argument("${" + std::string(name) + "} at offset " + std::to_string(pos) +
                              ": a parameter name is [A-Z][A-Z0-9_]*");
    if (seen.insert(std::string(name)).second) uses.emplace_back(name);
    pos = end + 1;
  }
  return uses;
}

StatusOr<Template> parse_template(std::string_view path, std::string_view text) {
  const std::string where = "template " + std::string(path);
  Template t;
  t.path = path;
  size_t pos = 0, next = 0;
  int line_no = 1;
  const std::string_view first = line_at(text, pos, next);
  if (first.substr(0, kKindPrefix.size()) != kKindPrefix)
    return invalid_argument(where + ": line 1 is '" + std::string(first) +
                            "', not its declaration's '// kind: kernel | snippet | fragment'");
  auto kind = parse_kind(first.substr(kKindPrefix.size()));
  if (!kind.ok()) return invalid_argument(where + ": line 1: " + kind.status().message());
  t.kind = *kind;
  // The "// param NAME: meaning" lines right after the kind.
  for (pos = next; pos < text.size(); pos = next) {
    const std::string_view line = line_at(text, pos, next);
    if (line.substr(0, kParamPrefix.size()) != kParamPrefix) break;
    ++line_no;
    const std::string_view decl = line.substr(kParamPrefix.size());
    const size_t colon = decl.find(": ");
    const std::string_view name = decl.substr(0, colon);
    if (colon == std::string_view::npos || !is_param_name(name) || colon + 2 >= decl.size())
      return invalid_argument(where + ": line " + std::to_string(line_no) + " is '" + std::string(line) +
                              "', not '// param NAME: meaning' (NAME is [A-Z][A-Z0-9_]*)");
    if (t.takes(name))
      return invalid_argument(where + ": line " + std::to_string(line_no) + " declares " + std::string(name) +
                              " a second time");
    t.params.push_back({std::string(name), std::string(decl.substr(colon + 2))});
  }
  const int body_line = line_no + 1;
  t.body = std::string(text.substr(pos));
  // A "// param" line further down is a declaration cut off from the rest.
  for (size_t at = pos, n = 0, line = body_line; at < text.size(); at = n, ++line)
    if (line_at(text, at, n).substr(0, kParamPrefix.size()) == kParamPrefix)
      return invalid_argument(where + ": line " + std::to_string(line) +
                              " is a '// param' line after the declaration ended (line " +
                              std::to_string(body_line - 1) + ")");
  auto uses = template_uses(t.body);
  if (!uses.ok()) return invalid_argument(where + ": " + uses.status().message());
  for (const std::string &name : *uses)
    if (!t.takes(name))
      return invalid_argument(where + " uses ${" + name + "} but does not declare it ('// param " + name +
                              ": meaning')");
  for (const TemplateParam &p : t.params)
    if (std::find(uses->begin(), uses->end(), p.name) == uses->end())
      return invalid_argument(where + " declares " + p.name + " but does not use it");
  return t;
}

StatusOr<const Template *> find_template(std::string_view name) {
  // Every embedded template, parsed once (thread-safe static).
  static const std::map<std::string, StatusOr<Template>, std::less<>> parsed = [] {
    std::map<std::string, StatusOr<Template>, std::less<>> m;
    for (size_t i = 0; i < kEmbeddedTemplateCount; ++i)
      m.emplace(kEmbeddedTemplates[i].name, parse_template(kEmbeddedTemplates[i].path, kEmbeddedTemplates[i].text));
    return m;
  }();
  auto it = parsed.find(name);
  if (it == parsed.end()) return not_found("template '" + std::string(name) + "' is not embedded in this build");
  if (!it->second.ok()) return internal_error(it->second.status().message());
  return &*it->second;
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
