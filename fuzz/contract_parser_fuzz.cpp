// libFuzzer target: contract JSON parsing, validation and keying.
//
// Besides "no crash, no sanitizer report", checks the properties the cache
// and bundles rely on: normalize() is idempotent, a normalised contract
// survives a JSON round trip with the same canonical text, and its key is
// 32 lowercase hex digits; and what a hostile input gets back: a parse error
// is one short line of printable text, whatever the input echoed (inputs up
// to 1 MiB and any nesting: scripts/run_fuzzers.sh seeds deep ones).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gatejit/contract.h"
#include "gatejit/contract_json.h"

namespace {

void check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "contract_parser_fuzz: property violated: %s\n", what);
    std::abort();
  }
}

bool is_key(const std::string &k) {
  if (k.size() != 32) return false;
  for (char c : k)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace gatejit;
  auto parsed = contract_from_json_text(std::string_view(reinterpret_cast<const char *>(data), size));
  if (!parsed.ok()) {
    const std::string &m = parsed.status().message();
    check(!m.empty(), "a parse error without a message");
    check(m.size() <= 1024, "a parse error message longer than 1 KiB");
    for (unsigned char c : m) check(c >= 0x20 && c < 0x7f, "a parse error message with a control or non-ASCII byte");
    return 0;
  }
  auto norm = normalize(*parsed);
  if (!norm.ok()) {
    check(norm.status().code() == StatusCode::kInvalidArgument, "normalize failed with an unexpected code");
    check(!norm.status().message().empty(), "a validation error without a message");
    return 0;
  }
  const std::string text = canonical_text(*norm);
  const std::string key = contract_key(*norm);
  check(is_key(key), "contract_key is not 32 lowercase hex digits");

  auto twice = normalize(*norm);
  check(twice.ok() && *twice == *norm, "normalize is not idempotent");

  auto back = contract_from_json(contract_to_json(*norm));
  check(back.ok(), "contract_to_json output does not parse");
  auto back_norm = normalize(*back);
  check(back_norm.ok(), "a JSON round trip made a valid contract invalid");
  check(canonical_text(*back_norm) == text && contract_key(*back_norm) == key,
        "a JSON round trip changed the canonical text");
  return 0;
}
