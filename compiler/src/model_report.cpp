#include "model_report.h"

#include "gatejit/target_info.h"

namespace gatejit::compiler {

StatusOr<ModelInput> model_input(const Contract &contract, const KernelPlan &plan, const nlohmann::json &report,
                                 std::span<const uint8_t> code) {
  ModelInput in;
  in.target = &target_info(contract.target);
  in.contract = contract;
  in.plan = plan.facts;
  // The tiles (a report from before persistent grids has the grid only:
  // a workgroup per tile), and the workgroups launched over them.
  const nlohmann::json grid = report.value("grid", nlohmann::json::array({1, 1, 1}));
  const nlohmann::json tiles = report.value("tiles", grid);
  for (int i = 0; i < 3 && i < int(tiles.size()); ++i) in.grid_blocks[i] = tiles[i].get<int64_t>();
  in.launched_workgroups = 1;
  for (const auto &d : grid) in.launched_workgroups *= d.get<int64_t>();
  in.block_threads = plan.geometry.block_x;
  in.shared_bytes = plan.geometry.shared_bytes;
  const nlohmann::json kernels = report.value("kernels", nlohmann::json::array());
  if (!kernels.empty()) {
    const nlohmann::json &k = kernels.front();
    // gfx90a and later: the AGPRs follow the VGPRs (aligned to 4) in one file.
    const int64_t vgprs = k.value("vgpr_count", int64_t(0)), agprs = k.value("agpr_count", int64_t(0));
    in.registers_per_lane = agprs > 0 ? (vgprs + 3) / 4 * 4 + agprs : vgprs;
    in.shared_bytes += k.value("lds_bytes", int64_t(0)) + k.value("shared_bytes", int64_t(0));
    in.scratch_bytes = k.value("scratch_bytes", int64_t(0));
  }
  auto facts = read_code_facts(code, report.value("cpu", std::string()));
  if (!facts.ok()) return facts.status();
  in.code = *facts;
  return in;
}

Status add_model_report(const Contract &contract, const KernelPlan &plan, std::span<const uint8_t> code,
                        nlohmann::json &report) {
  auto in = model_input(contract, plan, report, code);
  if (!in.ok()) return in.status();
  const Prediction p = predict(*in);
  report["plan_facts"] = plan_facts_json(in->plan);
  report["code_facts"] = code_facts_json(in->code);
  report["model"] = prediction_json(p);
  report["model"]["device"] = in->target->device;
  report["gates"] = gates_json(plan_gates(*in, p));
  return Status::Ok();
}

}  // namespace gatejit::compiler
