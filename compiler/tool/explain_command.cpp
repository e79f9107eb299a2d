// gatejit explain <contract flags>: which path the runtime takes and why.
#include <fmt/format.h>

#include <iostream>

#include "commands.h"
#include "contract_flags.h"
#include "gatejit/compiler/compiler.h"
#include "gatejit/gatejit.h"

namespace gatejit::tool {
namespace {

struct ExplainArgs {
  ContractFlags flags;
  std::vector<std::string> bundles;
  bool no_jit = false;
};

// What the performance model predicts for the kernel the compiler would
// generate for the contract (docs/gfx950-model.md), and the gates it fails.
void print_model(const Contract &c) {
  auto kernel = compiler::compile(c);
  if (!kernel.ok()) {
    std::cout << "  model: not available (" << kernel.status().message() << ")\n";
    return;
  }
  const nlohmann::json &m = kernel->report.at("model");
  std::cout << fmt::format("  model: {:.2f} us ({:.2f}-{:.2f}) on {}, limited by {}; ideal read {:.2f}-{:.2f} us\n",
                           m.at("predicted_us").get<double>(), m.at("range_us")[0].get<double>(),
                           m.at("range_us")[1].get<double>(), m.at("device").get<std::string>(),
                           m.at("limiter").get<std::string>(), m.at("ideal_read_us")[0].get<double>(),
                           m.at("ideal_read_us")[1].get<double>());
  std::string failing;
  for (const auto &[gate, v] : kernel->report.at("gates").items())
    if (v.at("applies").get<bool>() && !v.at("passed").get<bool>()) failing += (failing.empty() ? "" : ", ") + gate;
  std::cout << "  gates: " << (failing.empty() ? "all pass" : "failing " + failing) << "\n";
}

int run_explain(const ExplainArgs &a) {
  auto contract = a.flags.contract();
  if (!contract.ok()) return fail(contract.status());
  auto normalized = normalize(*contract);
  if (!normalized.ok()) return fail(normalized.status());
  std::string paths;
  for (const auto &b : a.bundles) paths += (paths.empty() ? "" : ":") + b;
  gatejit_runtime_options_t options{};
  options.bundle_path = paths.empty() ? nullptr : paths.c_str();
  options.disable_jit = a.no_jit;
  gatejit_runtime_t rt = nullptr;
  auto check = [](gatejit_status_t s) {
    if (!s) return 0;
    std::fprintf(stderr, "gatejit: error: %s\n", gatejit_status_message(s));
    gatejit_status_free(s);
    return 1;
  };
  if (int e = check(gatejit_runtime_create(&options, &rt))) return e;
  int rc = check(gatejit_runtime_attach_jit(rt));
  char *text = nullptr;
  if (rc == 0) rc = check(gatejit_explain_contract_json(rt, contract_to_json(*normalized).dump().c_str(), &text));
  if (rc == 0) std::cout << canonical_text(*normalized) << "\n  -> " << text << "\n";
  if (rc == 0) print_model(*normalized);
  gatejit_string_free(text);
  gatejit_runtime_destroy(rt);
  return rc;
}

}  // namespace

Runner add_explain_command(CLI::App &app) {
  auto a = std::make_shared<ExplainArgs>();
  auto *cmd = app.add_subcommand("explain", "say which kernel path the runtime takes for a contract, and why");
  a->flags.add_to(cmd);
  cmd->add_option("--bundle", a->bundles, "bundle file(s) to load (besides GATEJIT_BUNDLE_PATH)");
  cmd->add_flag("--no-jit", a->no_jit, "explain as a runtime with JIT disabled");
  return [a] { return run_explain(*a); };
}

}  // namespace gatejit::tool
