// gatejit cache stats|list|verify|clear.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <iostream>

#include "commands.h"
#include "disk_cache.h"

namespace gatejit::tool {
namespace {

int run_cache(const std::string &action, const std::string &dir) {
  auto options = options_from_env();
  if (!options.ok()) return fail(options.status());
  if (!dir.empty()) options->dir = dir;
  if (options->dir.empty()) return fail(not_found("no cache directory: set GATEJIT_CACHE_DIR or HOME, or pass --dir"));
  auto cache = DiskCache::open(*options);
  if (!cache.ok()) return fail(cache.status());
  DiskCache &c = **cache;
  if (action == "stats") {
    std::cout << format_stats(c.stats());
  } else if (action == "list") {
    auto entries = c.list();
    if (!entries.ok()) return fail(entries.status());
    for (const auto &e : *entries)
      std::cout << fmt::format("{}  {:>8}  {:%Y-%m-%d %H:%M:%S}  {}\n", e.key, e.size_bytes,
                               fmt::localtime(std::chrono::system_clock::to_time_t(e.last_use)),
                               e.problem.empty() ? e.contract_text : "BAD: " + e.problem);
    std::cout << entries->size() << " entries\n";
  } else if (action == "verify") {
    auto report = c.verify();
    if (!report.ok()) return fail(report.status());
    for (const auto &p : report->problems) std::cout << p << "\n";
    std::cout << fmt::format("checked {}, ok {}, removed {}\n", report->checked, report->ok, report->removed);
    return report->problems.empty() ? 0 : 2;
  } else if (action == "clear") {
    Status s = c.clear();
    if (!s.ok()) return fail(s);
    std::cout << "cleared " << options->dir << "\n";
  }
  return 0;
}

}  // namespace

Runner add_cache_command(CLI::App &app) {
  auto action = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>();
  auto *cmd = app.add_subcommand("cache", "inspect or maintain the disk cache");
  cmd->add_option("action", *action, "stats | list | verify | clear")
      ->required()
      ->check(CLI::IsMember({"stats", "list", "verify", "clear"}));
  cmd->add_option("--dir", *dir, "cache directory (default: $GATEJIT_CACHE_DIR, $XDG_CACHE_HOME/gatejit, ~/.cache/gatejit)");
  return [action, dir] { return run_cache(*action, *dir); };
}

}  // namespace gatejit::tool
