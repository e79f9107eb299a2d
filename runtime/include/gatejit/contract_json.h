// Contracts as JSON. The keys are the command-line flag names:
//   {"m": 1, "n": 1536, "k": 7168, "dtype": "bf16", "act": "sigmoid", "target": "gfx950"}
// plus m ("dynamic") with m_max, dtype_hidden/_weight/_attn/_out, ld_hidden,
// ld_weight, ld_attn, ld_out, align, rounding, template. Unknown keys are errors.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "gatejit/contract.h"

namespace gatejit {

// Parses the fields of one contract object (not validated: call normalize()).
StatusOr<Contract> contract_from_json(const nlohmann::json &j);
// Text from outside: at most 1 MiB, nested at most 64 levels, no key twice in
// one object; every error is one bounded line with the input escaped.
StatusOr<Contract> contract_from_json_text(std::string_view text);
nlohmann::json contract_to_json(const Contract &c);

}  // namespace gatejit
