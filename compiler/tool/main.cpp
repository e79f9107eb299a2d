// The gatejit command line. Each subcommand lives in its own file.
// Exit status: 0 success; 1 the command ran and failed (the error on stderr);
// 2 a usage error (unknown flag or subcommand, missing or malformed argument:
// CLI11's message and a pointer to --help on stderr; a GATEJIT_MMA_TUNING
// that does not parse, for the subcommands that compile).
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "gatejit/compiler/compiler.h"
#include "gatejit/version.h"
#include "tuning_override.h"

namespace {

// Prints the override's error; true where GATEJIT_MMA_TUNING does not parse.
bool tuning_override_refused() {
  auto tuning = gatejit::compiler::TuningOverride::from_env();
  if (tuning.ok()) return false;
  std::fprintf(stderr, "gatejit: error: %s\n", tuning.status().message().c_str());
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  using namespace gatejit::tool;
  CLI::App app{"gatejit: JIT code generator for fused gate-epilogue GPU kernels"};
  app.set_version_flag("--version", [] {
    return std::string("gatejit " GATEJIT_VERSION_STRING "\ncompiler fingerprint (cache key): ") +
           gatejit::compiler::fingerprint();
  }, "print the version and the compiler fingerprint, then exit");
  app.footer("Exit status: 0 success, 1 the command failed, 2 usage error (a malformed GATEJIT_MMA_TUNING too; cache verify: 2 also when bad entries remain).");
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App *, Runner>> commands;
  // `compiles`: the subcommand plans kernels, so GATEJIT_MMA_TUNING is one
  // of its arguments (a malformed one is a usage error).
  auto add = [&](Runner (*adder)(CLI::App &), bool compiles) {
    const size_t before = app.get_subcommands({}).size();
    Runner r = adder(app);
    if (compiles) r = [r = std::move(r)] { return tuning_override_refused() ? 2 : r(); };
    commands.push_back({app.get_subcommands({})[before], std::move(r)});
  };
  add(add_compile_command, true);
  add(add_inspect_command, false);
  add(add_ir_command, true);
  add(add_explain_command, true);
  add(add_cache_command, false);
  add(add_precompile_command, true);
  add(add_bundle_command, false);
  add(add_plan_command, true);
  add(add_emulate_command, true);
  // A first word that names no subcommand: say so (CLI11 would only say that
  // a subcommand is required).
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (auto &[sub, run] : commands) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "gatejit: unknown subcommand '%s' (allowed: %s)\nRun with --help for more information.\n",
                   argv[1], names.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    const int rc = app.exit(e);  // prints help/version (rc 0) or the usage error
    return rc == 0 ? 0 : 2;
  }
  for (auto &[sub, run] : commands)
    if (sub->parsed()) return run();
  return 1;
}
