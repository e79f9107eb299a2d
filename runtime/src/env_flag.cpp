#include "gatejit/env_flag.h"

#include <cctype>
#include <cstdlib>
#include <string>

#include "input_echo.h"

namespace gatejit {

std::optional<bool> parse_flag(std::string_view text) {
  std::string lower(text);
  for (char &c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "1" || lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "0" || lower == "false" || lower == "no" || lower == "off") return false;
  return std::nullopt;
}

StatusOr<bool> env_flag(const char *name, bool if_unset) {
  const char *value = std::getenv(name);
  if (!value || !*value) return if_unset;
  if (auto flag = parse_flag(value)) return *flag;
  return invalid_argument(std::string(name) + "=" + quote_input(value) +
                          ": expected 1, true, yes or on, or 0, false, no or off");
}

}  // namespace gatejit
