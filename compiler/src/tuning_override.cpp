#include "tuning_override.h"

#include <cstdlib>

namespace gatejit::compiler {

TuningOverride TuningOverride::parse(std::string_view text) {
  TuningOverride o;
  o.text = std::string(text);
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    const int64_t value = std::atoll(std::string(item.substr(eq + 1)).c_str());
    const std::string_view key = item.substr(0, eq);
    if (key.empty()) continue;
    const bool is_switch = key == "tiled" || key == "wgmma" || key == "tma" || key == "pending" || key == "attn" ||
                           key == "gwfirst" || key == "refill" || key == "drain" || key == "prefetch" || key == "persistent" ||
                           key == "oneround" || key == "poll" || key == "tile128";
    if (value > 0 || (is_switch && value == 0)) o.keys[std::string(key)] = value;
  }
  return o;
}

TuningOverride TuningOverride::from_env() {
  const char *env = std::getenv("GATEJIT_MMA_TUNING");
  return parse(env ? env : "");
}

}  // namespace gatejit::compiler
