// gatejit explain <contract flags>: which path the runtime takes and why.

#include <iostream>

#include "code_object_report.h"
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
  bool json = false;
};

// What the performance model predicts for the kernel the compiler would
// generate for the contract (research/gfx950-model.md), and the gates it fails:
// the report's "model" with "failing_gates", or "error" when it cannot compile.
nlohmann::json model_of(const Contract &c) {
  auto kernel = compiler::compile(c);
  if (!kernel.ok()) return {{"error", kernel.status().message()}};
  nlohmann::json m = kernel->report.at("model");
  nlohmann::json failing = nlohmann::json::array();
  for (const auto &[gate, v] : kernel->report.at("gates").items())
    if (v.at("applies").get<bool>() && !v.at("passed").get<bool>()) failing.push_back(gate);
  m["failing_gates"] = failing;
  return m;
}

void print_model(const nlohmann::json &m) {
  if (m.contains("error")) {
    std::cout << "  model: not available (" << m.at("error").get<std::string>() << ")\n";
    return;
  }
  std::cout << "  model: " << compiler::format_model(m) << "\n";
  std::string failing;
  for (const auto &gate : m.at("failing_gates")) failing += (failing.empty() ? "" : ", ") + gate.get<std::string>();
  std::cout << "  gates: " << (failing.empty() ? "all pass" : "failing " + failing) << "\n";
}

// Where the explanation says the kernel comes from.
const char *source_of(const std::string &explanation) {
  if (explanation.find(" from the shipped bundle ") != std::string::npos) return "shipped_bundle";
  if (explanation.find(" from bundle ") != std::string::npos) return "bundle";
  if (explanation.find(" from the disk cache") != std::string::npos) return "disk_cache";
  if (explanation.find(" compiled by the JIT") != std::string::npos) return "jit";
  return "unknown";
}

int run_explain(const ExplainArgs &a) {
  auto contract = a.flags.contract();
  if (!contract.ok()) return fail(contract.status());
  auto normalized = normalize(*contract);
  if (!normalized.ok()) return fail(normalized.status());
  std::string paths;
  for (const auto &b : a.bundles) paths += (paths.empty() ? "" : ":") + b;
  gatejit_runtime_options_t options = GATEJIT_RUNTIME_OPTIONS_INIT;
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
  if (rc == 0 && a.json) {
    const std::string explanation = text;
    std::cout << nlohmann::json{{"contract", canonical_text(*normalized)},
                                {"contract_key", contract_key(*normalized)},
                                {"explanation", explanation},
                                {"kernel", explanation.rfind("generic", 0) == 0 ? "generic" : "specialised"},
                                {"source", source_of(explanation)},
                                {"model", model_of(*normalized)}}
                     .dump(1)
              << "\n";
  } else if (rc == 0) {
    std::cout << canonical_text(*normalized) << "\n  -> " << text << "\n";
    print_model(model_of(*normalized));
  }
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
  cmd->add_flag("--json", a->json, "print one JSON object: contract, contract_key, explanation, kernel "
                                   "(specialised | generic), source (bundle | disk_cache | jit), model (the performance "
                                   "model's prediction and failing gates)");
  return [a] { return run_explain(*a); };
}

}  // namespace gatejit::tool
