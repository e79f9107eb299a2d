// Boolean environment variables, parsed one way everywhere (GATEJIT_DISABLE_JIT,
// GATEJIT_CACHE_READONLY, GATEJIT_DEBUG_PIPELINE): 1, true, yes, on and 0,
// false, no, off, in any case; unset or empty means the default; anything
// else is an invalid_argument error that names the variable and the value.
#pragma once

#include <optional>
#include <string_view>

#include "gatejit/status.h"

namespace gatejit {

// The value of a boolean spelling; nullopt if `text` is none of them.
std::optional<bool> parse_flag(std::string_view text);

StatusOr<bool> env_flag(const char *name, bool if_unset = false);

}  // namespace gatejit
