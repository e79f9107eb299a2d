// Parsing JSON that comes from outside (contract files, the C API's contract
// strings, precompile specs): nesting is bounded (limits::kJsonDepth, so no
// later recursive walk over the document can overflow the stack), a key given
// twice in one object is an error naming the key (instead of silently taking
// the last one), and a syntax error names the input and the byte offset.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gatejit/status.h"

namespace gatejit {

// `what` names the input in messages ("--contract k.json", "contract JSON").
StatusOr<nlohmann::json> parse_json_input(std::string_view text, const std::string &what);

// A short, bounded description of a JSON value for messages: scalars as
// their (escaped, cut) JSON text, containers by kind and size. Never recurses.
std::string describe_json(const nlohmann::json &v);

}  // namespace gatejit
