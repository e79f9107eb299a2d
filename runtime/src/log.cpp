#include "log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

namespace gatejit::log {
namespace {

Level configured_level() {
  static const Level level = [] {
    const char *v = std::getenv("GATEJIT_LOG");
    if (!v) return Level::kWarn;
    if (std::strcmp(v, "debug") == 0) return Level::kDebug;
    if (std::strcmp(v, "info") == 0) return Level::kInfo;
    return Level::kWarn;
  }();
  return level;
}

const char *level_name(Level l) {
  switch (l) {
    case Level::kWarn: return "warning";
    case Level::kInfo: return "info";
    case Level::kDebug: return "debug";
  }
  return "?";
}

}  // namespace

bool enabled(Level level) { return int(level) <= int(configured_level()); }

void write(Level level, const std::string &message) {
  if (!enabled(level)) return;
  // One fprintf per line keeps lines from different threads whole.
  std::fprintf(stderr, "gatejit %s: %s\n", level_name(level), message.c_str());
}

void warn_once(const std::string &message) {
  static std::mutex mu;
  static std::set<std::string> seen;
  // Bounded: messages echo their input (a bad cache entry's key, say), so a
  // process fed many distinct bad inputs would otherwise keep them all.
  constexpr size_t kMostRemembered = 4096;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (seen.size() >= kMostRemembered) seen.clear();
    if (!seen.insert(message).second) return;
  }
  warn(message);
}

}  // namespace gatejit::log
