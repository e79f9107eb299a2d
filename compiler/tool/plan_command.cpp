// gatejit plan <contract flags>: the planner's decisions for a contract,
// without compiling; or --table FILE: a golden plan table planned again.
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "contract_flags.h"
#include "plan/plan_table.h"

namespace gatejit::tool {
namespace {

struct PlanArgs {
  ContractFlags flags;
  bool json = false;
  std::string table;
  bool write = false;
};

int run_table(const PlanArgs &a) {
  std::ifstream in(a.table, std::ios::binary);
  if (!in) return fail(invalid_argument("--table " + a.table + ": cannot be read"));
  std::stringstream text;
  text << in.rdbuf();
  auto replanned = compiler::replan_table(text.str());
  if (!replanned.ok()) return fail(Status(replanned.status().code(), a.table + ": " + replanned.status().message()));
  if (!a.write) {
    std::cout << *replanned;
    return 0;
  }
  std::ofstream out(a.table + ".tmp", std::ios::binary | std::ios::trunc);
  out << *replanned;
  out.close();
  if (!out || std::rename((a.table + ".tmp").c_str(), a.table.c_str()) != 0)
    return fail(internal_error("--table " + a.table + ": cannot be written"));
  return 0;
}

int run_plan(const PlanArgs &a) {
  if (!a.table.empty()) return run_table(a);
  auto contract = a.flags.contract();
  if (!contract.ok()) return fail(contract.status());
  auto normalized = normalize(*contract);
  if (!normalized.ok()) return fail(normalized.status());
  auto tuning = compiler::TuningOverride::from_env();
  if (!tuning.ok()) return fail(tuning.status());
  auto plan = compiler::plan_kernel(*normalized, *tuning);
  if (!plan.ok()) return fail(plan.status());
  const nlohmann::json j = compiler::plan_json(*plan);
  if (a.json) {
    std::cout << j.dump(1) << "\n";
    return 0;
  }
  std::cout << j.at("contract").get<std::string>() << "\n  -> " << j.at("reason").get<std::string>() << "\n";
  std::cout << "  form " << j.at("form").get<std::string>() << ", workgroup " << j.at("workgroup_size")[0]
            << ", grid " << j.at("grid").dump() << "\n  tuning " << j.at("tuning").dump() << "\n";
  return 0;
}

}  // namespace

Runner add_plan_command(CLI::App &app) {
  auto a = std::make_shared<PlanArgs>();
  auto *cmd = app.add_subcommand("plan", "print the planner's decisions for a contract without compiling it");
  a->flags.add_to(cmd);
  cmd->add_flag("--json", a->json, "print one JSON object: template, form, reason, grid, waves, tuning, plan facts");
  cmd->add_option("--table", a->table,
                  "plan every row of a golden plan table (tests/compiler/plan_golden/*.tsv) again and print it");
  cmd->add_flag("--write", a->write, "with --table: write the table back in place");
  return [a] { return run_plan(*a); };
}

}  // namespace gatejit::tool
