// libFuzzer target: contract JSON parsing, validation and keying.
//
// Besides "no crash, no sanitizer report", checks the properties the cache
// and bundles rely on: normalize() is idempotent, a normalised contract
// survives a JSON round trip with the same canonical text, and its key is
// 32 lowercase hex digits; and what a hostile input gets back: a parse error
// is one short line of printable text, whatever the input echoed (inputs up
// to 1 MiB and any nesting: scripts/run_fuzzers.sh seeds deep ones), and an
// integer past int64 is refused, echoed as given, never as what it wraps to.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gatejit/contract.h"
#include "gatejit/contract_json.h"
#include "json_input.h"

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

// A top-level integer past int64 (JSON numbers go up to uint64) makes the
// contract an error; where the error names that key, it shows the number
// as given.
void check_integers_past_int64(std::string_view text, const gatejit::StatusOr<gatejit::Contract> &parsed) {
  auto j = gatejit::parse_json_input(text, "fuzz input");
  if (!j.ok() || !j->is_object()) return;
  for (const auto &[key, value] : j->items()) {
    if (!value.is_number_unsigned() || value.get<uint64_t>() <= uint64_t(INT64_MAX)) continue;
    check(!parsed.ok(), "a contract with an integer past int64 parsed");
    const std::string &m = parsed.status().message();
    if (m.rfind(key + " = ", 0) == 0)
      check(m.rfind(key + " = " + std::to_string(value.get<uint64_t>()), 0) == 0,
            "an integer past int64 echoed as another number");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace gatejit;
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  auto parsed = contract_from_json_text(input);
  check_integers_past_int64(input, parsed);
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
