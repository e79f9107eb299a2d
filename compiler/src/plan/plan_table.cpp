#include "plan/plan_table.h"

#include <fmt/format.h>

#include <charconv>
#include <sstream>

#include "gatejit/contract_json.h"
#include "gatejit/target_info.h"

namespace gatejit::compiler {
namespace {

int64_t launch_rows(const Contract &c) { return c.m_dynamic ? c.m_max : c.m; }

// The report's tuning values (compiler.cpp's "tuning").
nlohmann::json tuning_values(const KernelPlan &p) {
  nlohmann::json t = nlohmann::json::object();
  for (const auto &[name, value] : report(p)) t[name] = value;
  return t;
}

std::string joined(const std::array<uint32_t, 3> &v) { return fmt::format("{},{},{}", v[0], v[1], v[2]); }

// The typed schedule, field by field (plan/schedule.h).
nlohmann::json schedule_json(const Schedule &s) {
  nlohmann::json form = std::visit(
      [](const auto &f) -> nlohmann::json {
        using S = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<S, GemvSchedule>) {
          return {{"form", "gemv"}, {"rows", f.rows}, {"unroll", f.unroll}, {"ksplit", f.ksplit}, {"part", f.part},
                  {"weights_first", f.weights_first}};
        } else if constexpr (std::is_same_v<S, StreamedSchedule>) {
          return {{"form", "streamed"}, {"tile_w", f.tile_w},   {"rt", f.rt},           {"mt", f.mt},
                  {"ksplit", f.ksplit}, {"vecs", f.vecs},       {"unroll", f.unroll},   {"groups", f.groups},
                  {"m_stride", f.m_stride}, {"splits", f.splits}, {"poll", f.poll},     {"grid_resident", f.grid_resident},
                  {"piece_width", f.piece_width}, {"weight_run_load", f.weight_run_load},
                  {"element_finish", f.element_finish}};
        } else if constexpr (std::is_same_v<S, TiledSchedule>) {
          return {{"form", "tiled"},
                  {"bn", f.bn},
                  {"bm", f.bm},
                  {"bk", f.bk},
                  {"warps_n", f.warps_n},
                  {"waves", f.waves},
                  {"stages", f.stages},
                  {"splits", f.splits},
                  {"blocks_per_cu", f.blocks_per_cu},
                  {"wgmma", f.wgmma},
                  {"tma", f.tma},
                  {"wgmma_pending", f.wgmma_pending},
                  {"accs", f.accs},
                  {"persistent_workgroups", f.persistent_workgroups},
                  {"tile_group_m", f.tile_group_m},
                  {"split_round", f.split_round},
                  {"poll", f.poll},
                  {"poll_rounds", f.poll_rounds},
                  {"refill_always", f.refill_always},
                  {"drain", f.drain},
                  {"epi_staged", f.epi_staged},
                  {"epi_attn_early", f.epi_attn_early},
                  {"epi_parts", f.epi_parts},
                  {"gfx950_loop", f.gfx950_loop}};
        } else {
          return {{"form", "generic"}};
        }
      },
      s.form);
  if (std::holds_alternative<GemvSchedule>(s.form) || std::holds_alternative<StreamedSchedule>(s.form))
    form["attn"] = {{"at", s.attn.at}, {"prefetch", s.attn.prefetch}};
  if (s.waves.max > 0) form["waves_per_simd"] = {{"min", s.waves.min}, {"max", s.waves.max}, {"pinned", s.waves.pinned}};
  return form;
}

}  // namespace

nlohmann::json plan_json(const KernelPlan &p) {
  const Contract &c = p.contract;
  const int64_t m = launch_rows(c);
  nlohmann::json j = {{"contract", canonical_text(c)},
                      {"target", target_name(c.target)},
                      {"template", template_name(p.kind)},
                      {"template_file", p.template_file},
                      {"form", p.facts.form},
                      {"reason", p.reason},
                      {"symbol", p.symbol},
                      {"workgroup_size", {p.geometry.block_x, 1, 1}},
                      {"grid", p.geometry.launch_grid(c.n, m)},
                      {"tiles", {p.geometry.grid_x(c.n), p.geometry.grid_y(m), p.geometry.grid_z()}},
                      {"schedule", schedule_json(p.schedule)},
                      {"tuning", tuning_values(p)},
                      {"plan_facts", plan_facts_json(p.facts)}};
  if (p.schedule.waves.max > 0) j["waves_per_simd"] = {p.schedule.waves.min, p.schedule.waves.max};
  if (p.geometry.persistent_workgroups) j["persistent_workgroups"] = p.geometry.persistent_workgroups;
  if (p.geometry.shared_bytes) j["dynamic_shared_bytes"] = p.geometry.shared_bytes;
  if (const TensorMapBoxes &maps = p.geometry.tensor_maps; maps.any())
    j["tensor_map_boxes"] = {maps.box_k, maps.weight_rows, maps.hidden_rows};
  return j;
}

StatusOr<Contract> contract_from_column(std::string_view column) {
  nlohmann::json j = nlohmann::json::object();
  std::istringstream in{std::string(column)};
  for (std::string item; in >> item;) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      return invalid_argument(fmt::format("plan table: '{}' is not key=value", item));
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec == std::errc() && end == value.data() + value.size()) j[key] = n;
    else j[key] = value;
  }
  auto contract = contract_from_json(j);
  if (!contract.ok()) return Status(contract.status().code(), "plan table: " + contract.status().message());
  return normalize(*contract);
}

StatusOr<std::string> plan_table_decisions(const Contract &c) {
  auto plan = plan_kernel(c, TuningOverride{});
  if (!plan.ok()) return plan.status();
  const KernelPlan &p = *plan;
  // The report's tuning values in the plan's order; the waves have their own column.
  std::string tuning;
  for (const auto &[name, value] : report(p)) {
    if (name == "WAVES_PER_EU" || name == "MIN_WAVES_PER_EU") continue;
    tuning += fmt::format("{}{}={}", tuning.empty() ? "" : " ", name, value);
  }
  const WavesPerSimd &w = p.schedule.waves;
  const std::string waves = w.max > 0 ? fmt::format("{}-{}", w.min, w.max) : "-";
  return fmt::format("{}\t{}\t{}\t{}\t{}", p.facts.form, p.geometry.block_x,
                     joined(p.geometry.launch_grid(p.contract.n, launch_rows(c))), waves,
                     tuning.empty() ? "-" : tuning);
}

StatusOr<std::string> replan_table(std::string_view table) {
  std::string out;
  size_t line_no = 0;
  while (!table.empty()) {
    const size_t nl = table.find('\n');
    const std::string_view line = table.substr(0, nl);
    table = nl == std::string_view::npos ? std::string_view() : table.substr(nl + 1);
    ++line_no;
    if (line.empty() || line[0] == '#') {
      out += std::string(line) + "\n";
      continue;
    }
    const std::string_view column = line.substr(0, line.find('\t'));
    auto contract = contract_from_column(column);
    if (!contract.ok())
      return Status(contract.status().code(), fmt::format("line {}: {}", line_no, contract.status().message()));
    auto decisions = plan_table_decisions(*contract);
    if (!decisions.ok())
      return Status(decisions.status().code(), fmt::format("line {}: {}", line_no, decisions.status().message()));
    out += fmt::format("{}\t{}\n", column, *decisions);
  }
  return out;
}

}  // namespace gatejit::compiler
