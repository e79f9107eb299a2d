#include "bundle_extract.h"

#include <algorithm>
#include <unordered_map>

#include "gatejit/target_info.h"
#include "input_echo.h"

namespace gatejit {
namespace {

constexpr size_t kMaxTemplateBytes = 32;
constexpr size_t kMaxSymbolBytes = 256;
constexpr size_t kKeyDigitsInName = 12;

bool all_in(std::string_view s, size_t max_bytes, bool (*allowed)(char)) {
  return !s.empty() && s.size() <= max_bytes && std::all_of(s.begin(), s.end(), allowed);
}
bool template_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }
bool symbol_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '$';
}
bool printable(char c) { return c >= 0x20 && c < 0x7f; }

// The template named in a canonical contract text ("... template=mma ..."),
// as written, up to the next space; "kernel" where the text names none.
std::string template_token(const std::string &contract_text) {
  const std::string tag = " template=";
  const size_t at = contract_text.find(tag);
  if (at == std::string::npos) return "kernel";
  const size_t start = at + tag.size();
  return contract_text.substr(start, contract_text.find(' ', start) - start);
}

}  // namespace

StatusOr<ExtractPlan> plan_extract(const Bundle &bundle) {
  ExtractPlan plan;
  plan.index_tsv = "file\tsymbol\tcontract\n";
  std::unordered_map<std::string, std::string> key_of_name;
  for (const BundleEntryInfo &e : bundle.entries()) {
    auto kb = bundle.find(e.key);
    if (!kb.ok()) return kb.status();
    const std::string entry = "bundle " + escape_input(bundle.path()) + ": entry " + kb->key + " (" +
                              target_name(kb->target) + "): ";
    const std::string tmpl = template_token(kb->contract_text);
    if (!all_in(tmpl, kMaxTemplateBytes, template_char))
      return corrupt(entry + "template " + quote_input(tmpl) + " is not a template name (1-" +
                     std::to_string(kMaxTemplateBytes) + " of a-z, 0-9, _); refusing to name a file after it");
    if (!all_in(kb->symbol, kMaxSymbolBytes, symbol_char))
      return corrupt(entry + "symbol " + quote_input(kb->symbol) + " is not a kernel symbol (1-" +
                     std::to_string(kMaxSymbolBytes) + " of A-Z, a-z, 0-9, _, ., $); refusing to index it");
    if (!all_in(kb->contract_text, kb->contract_text.size(), printable))
      return corrupt(entry + "contract text " + quote_input(kb->contract_text) +
                     " is not one line of printable ASCII (a tab, line break or NUL would forge index.tsv lines)");
    // The key was checked as lowercase hex by the reader, the target name
    // and the extension come from this build's own tables.
    std::string name = std::string(target_info(kb->target).name) + "-" + tmpl + "-" +
                       kb->key.substr(0, kKeyDigitsInName) + "." + binary_format_name(kb->format);
    if (auto [it, fresh] = key_of_name.emplace(name, kb->key); !fresh)
      return corrupt("bundle " + escape_input(bundle.path()) + ": entries " + it->second + " and " + kb->key +
                     " both write " + name + " (their keys share the first " + std::to_string(kKeyDigitsInName) +
                     " digits)");
    plan.index_tsv += name + "\t" + kb->symbol + "\t" + kb->contract_text + "\n";
    plan.files.push_back({std::move(name), std::move(kb->code)});
  }
  return plan;
}

}  // namespace gatejit
