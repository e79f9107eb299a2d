// gatejit cache stats|list|verify|clear.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "disk_cache.h"
#include "input_echo.h"

namespace gatejit::tool {
namespace {

// `verify` exit statuses (docs/cache.md): 0 clean, 1 repaired, 2 bad entries
// remain or the cache could not be checked. The other actions: 0 or 1.
constexpr int kVerifyCannotRepair = 2;

nlohmann::json stats_json(const CacheStats &s) {
  return {{"dir", s.dir},           {"max_bytes", s.max_bytes}, {"hits", s.hits},
          {"misses", s.misses},     {"writes", s.writes},       {"compiles", s.compiles},
          {"evictions", s.evictions}, {"corrupt_removed", s.corrupt_removed}, {"entries", s.entries},
          {"bytes", s.bytes}};
}

nlohmann::json entry_json(const CacheEntryInfo &e) {
  return {{"key", e.key},
          {"path", e.path},
          {"size_bytes", e.size_bytes},
          {"last_use_unix", int64_t(std::chrono::system_clock::to_time_t(e.last_use))},
          {"contract_key", e.contract_key},
          {"contract", e.contract_text},
          {"target", e.target},
          {"toolchain", e.toolchain},
          {"ok", e.problem.empty()},
          {"problem", e.problem}};
}

nlohmann::json verify_json(const VerifyReport &r) {
  return {{"checked", r.checked},       {"ok", r.ok},         {"removed", r.removed},
          {"unrepaired", r.unrepaired}, {"temp_removed", r.temp_removed}, {"problems", r.problems},
          {"exit_code", r.exit_code()}};
}

int run_cache(const std::string &action, const std::string &dir, bool json) {
  const int error_exit = action == "verify" ? kVerifyCannotRepair : 1;
  const auto failed = [&](const Status &s) {
    fail(s);
    return error_exit;
  };
  auto options = options_from_env();
  if (!options.ok()) return failed(options.status());
  if (!dir.empty()) options->dir = dir;
  if (options->dir.empty()) return failed(not_found("no cache directory: set GATEJIT_CACHE_DIR or HOME, or pass --dir"));
  // Looking at a cache never creates one.
  options->create = false;
  auto cache = DiskCache::open(*options);
  if (!cache.ok() && cache.status().code() == StatusCode::kNotFound) {
    const char *what = action == "stats" || action == "list" ? "no entries" : action == "verify" ? "nothing to verify"
                                                                                                  : "nothing to clear";
    if (json)
      std::cout << nlohmann::json{{"dir", options->dir}, {"exists", false}, {"action", action}}.dump(1) << "\n";
    else
      std::cout << escape_input(options->dir) << ": no kernel cache there (the directory does not exist); " << what
                << "\n";
    return 0;
  }
  if (!cache.ok()) return failed(cache.status());
  DiskCache &c = **cache;
  if (action == "stats") {
    if (json) std::cout << stats_json(c.stats()).dump(1) << "\n";
    else std::cout << format_stats(c.stats());
  } else if (action == "list") {
    auto entries = c.list();
    if (!entries.ok()) return failed(entries.status());
    if (json) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto &e : *entries) list.push_back(entry_json(e));
      std::cout << nlohmann::json{{"dir", options->dir}, {"entries", list}}.dump(1) << "\n";
      return 0;
    }
    for (const auto &e : *entries)
      std::cout << fmt::format("{}  {:>8}  {:%Y-%m-%d %H:%M:%S}  {}\n", e.key, e.size_bytes,
                               fmt::localtime(std::chrono::system_clock::to_time_t(e.last_use)),
                               escape_input(e.problem.empty() ? e.contract_text : "BAD: " + e.problem, 1024));
    std::cout << entries->size() << " entries\n";
  } else if (action == "verify") {
    auto report = c.verify();
    if (!report.ok()) return failed(report.status());
    if (json) {
      std::cout << verify_json(*report).dump(1) << "\n";
      return report->exit_code();
    }
    for (const auto &p : report->problems) std::cout << escape_input(p, 1024) << "\n";
    std::cout << fmt::format("checked {}, ok {}, removed {}, not repaired {}; temporary files of killed writers "
                             "removed {}\n",
                             report->checked, report->ok, report->removed, report->unrepaired, report->temp_removed);
    return report->exit_code();
  } else if (action == "clear") {
    Status s = c.clear();
    if (!s.ok()) return failed(s);
    std::cout << "cleared " << escape_input(options->dir) << "\n";
  }
  return 0;
}

}  // namespace

Runner add_cache_command(CLI::App &app) {
  auto action = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>();
  auto *cmd = app.add_subcommand("cache", "inspect or maintain the disk cache");
  cmd->add_option("action", *action,
                  "stats | list | verify (exit 0 clean, 1 repaired, 2 not repaired) | clear")
      ->required()
      ->check(CLI::IsMember({"stats", "list", "verify", "clear"}));
  // An empty --dir names no folder (an empty GATEJIT_CACHE_DIR means unset,
  // as in the environment of every gatejit variable; a flag given empty is a
  // mistake).
  cmd->add_option("--dir", *dir,
                  "cache directory (default: $GATEJIT_CACHE_DIR, $XDG_CACHE_HOME/gatejit, ~/.cache/gatejit; "
                  "an empty variable counts as unset)")
      ->check([](const std::string &v) {
        return v.empty() ? std::string("an empty path names no folder; leave --dir out for the default") : "";
      });
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "stats, list, verify: print one JSON object (the same fields, machine-readable)");
  return [action, dir, json] { return run_cache(*action, *dir, *json); };
}

}  // namespace gatejit::tool
