// The gatejit command line. Each subcommand lives in its own file.
#include <vector>

#include "commands.h"

int main(int argc, char **argv) {
  using namespace gatejit::tool;
  CLI::App app{"gatejit: JIT code generator for fused gate-epilogue GPU kernels"};
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App *, Runner>> commands;
  auto add = [&](Runner (*adder)(CLI::App &)) {
    const size_t before = app.get_subcommands({}).size();
    Runner r = adder(app);
    commands.push_back({app.get_subcommands({})[before], std::move(r)});
  };
  add(add_compile_command);
  add(add_inspect_command);
  add(add_ir_command);
  add(add_explain_command);
  add(add_cache_command);
  add(add_precompile_command);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  }
  for (auto &[sub, run] : commands)
    if (sub->parsed()) return run();
  return 1;
}
