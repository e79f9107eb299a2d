// GATEJIT_LOG=info|debug: resolution, compile and cache events on stderr.
// Warnings are always printed (once per distinct message where asked).
#pragma once

#include <string>

namespace gatejit::log {

enum class Level { kWarn = 0, kInfo = 1, kDebug = 2 };

bool enabled(Level level);
void write(Level level, const std::string &message);
inline void warn(const std::string &m) { write(Level::kWarn, m); }
inline void info(const std::string &m) { if (enabled(Level::kInfo)) write(Level::kInfo, m); }
inline void debug(const std::string &m) { if (enabled(Level::kDebug)) write(Level::kDebug, m); }
// A warning printed at most once per process for each distinct message.
void warn_once(const std::string &message);

}  // namespace gatejit::log
