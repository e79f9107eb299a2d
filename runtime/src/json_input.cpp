#include "json_input.h"

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "input_echo.h"
#include "input_limits.h"

namespace gatejit {

StatusOr<nlohmann::json> parse_json_input(std::string_view text, const std::string &what) {
  using Event = nlohmann::json::parse_event_t;
  // The parser itself keeps its own stack (no recursion); the callback stops
  // the document from being nested deeper than the bound and sees every key.
  std::string problem;
  std::vector<std::unordered_set<std::string>> keys;  // one set per open object
  size_t depth = 0;
  auto check = [&](int, Event event, nlohmann::json &parsed) {
    if (!problem.empty()) return false;  // keep nothing more once refused
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (++depth > limits::kJsonDepth) {
          problem = "nested deeper than " + std::to_string(limits::kJsonDepth) + " levels";
          return false;
        }
        if (event == Event::object_start) keys.emplace_back();
        return true;
      case Event::object_end:
      case Event::array_end:
        if (depth) --depth;
        if (event == Event::object_end && !keys.empty()) keys.pop_back();
        return true;
      case Event::key:
        if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second) {
          problem = "key " + quote_input(parsed.get<std::string>()) + " appears twice in one object";
          return false;
        }
        return true;
      case Event::value:
        return true;
    }
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end(), check, /*allow_exceptions=*/true);
  } catch (const nlohmann::json::parse_error &e) {
    if (!problem.empty()) return invalid_argument(what + ": " + problem);
    return invalid_argument(what + ": not valid JSON (error at byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::exception &e) {
    return invalid_argument(what + ": not valid JSON (" + escape_input(e.what(), 200) + ")");
  }
  if (!problem.empty()) return invalid_argument(what + ": " + problem);
  return j;
}

StatusOr<int64_t> json_int64(const nlohmann::json &v, const std::string &name) {
  if (!v.is_number_integer()) return invalid_argument(name + " = " + describe_json(v) + ": must be an integer");
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
    return invalid_argument(name + " = " + describe_json(v) + ": out of range (at most " +
                            std::to_string(INT64_MAX) + ")");
  return v.get<int64_t>();
}

std::string describe_json(const nlohmann::json &v) {
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + " keys";
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " values";
  if (v.is_string()) return quote_input(v.get_ref<const std::string &>(), 64, '"');
  return escape_input(v.dump(), 64);  // a number, a boolean or null: short
}

}  // namespace gatejit
