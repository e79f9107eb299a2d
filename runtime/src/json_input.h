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

// An integer field as int64: a number past int64 (JSON keeps up to uint64)
// is an error that echoes it as given, never the value it would wrap to.
// `name` names the field in messages.
StatusOr<int64_t> json_int64(const nlohmann::json &v, const std::string &name);

}  // namespace gatejit
