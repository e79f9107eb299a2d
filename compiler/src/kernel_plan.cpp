// plan_kernel: the form the contract takes (gemv, register-streamed mma,
// tiled mma, generic), its planner's typed schedule, and the template
// parameters and report derived from it.
#include "kernel_plan.h"

#include <fmt/format.h>

#include "gatejit/target_info.h"
#include "gatejit/template_choice.h"
#include "plan/forms.h"
#include "plan/template_params.h"

namespace gatejit::compiler {
namespace {

constexpr int kGenericBlock = 256;

// The generic kernel: sizes arrive at launch; one thread an output.
void layout_generic(KernelPlan &p) {
  p.geometry = {uint32_t(kGenericBlock), uint32_t(kGenericBlock), true};
  p.facts = {.form = "generic"};
}
void apply_generic(KernelPlan &p) {
  p.params["BLOCK"] = fmt::format("{}", kGenericBlock);
  // Nominal extent: 2^40 elements bounds every index.
  p.params["SPAN"] = "1099511627776";
  // K arrives at launch: the kernel computes its 128-wide blocks (%scale_kb).
  set_weight_params(p.params, p.contract, p.params["SPAN"]);
  p.snippets = weight_snippets(p.contract, "weight_element");
  set_out_params(p, p.params["SPAN"], kGenericBlock, 1, kGenericBlock);
}

void apply_attn(KernelPlan &p) {
  if (!std::holds_alternative<GemvSchedule>(p.schedule.form) &&
      !std::holds_alternative<StreamedSchedule>(p.schedule.form))
    return;
  const AttnPlacement &a = p.schedule.attn;
  p.params["ATTN_AFTER_LOOP"] = a.at == 1 ? "true" : "false";
  p.params["ATTN_BEFORE_LOOP"] = a.at == 2 ? "true" : "false";
  p.params["ATTN_PREFETCH"] = a.prefetch ? "true" : "false";
}

// The kernel's name: "gatejit_gemv_bf16_sigmoid_boundary", with an fp8
// weight's and an fp8 out's kinds ("..._wfp8_e4m3_block128_...",
// "..._ofp8_e4m3_per_token_group128_...").
std::string symbol_of(const Contract &c, TemplateKind kind) {
  const std::string weight = c.dtype_weight == c.dtype()
                                 ? std::string()
                                 : fmt::format("_w{}_{}", dtype_name(c.dtype_weight), weight_scale_name(c.weight_scale));
  const std::string out =
      c.fp8_out() ? fmt::format("_o{}_{}", dtype_name(c.dtype_out), out_scale_name(c.out_scale)) : std::string();
  return fmt::format("gatejit_{}_{}{}{}_{}_{}", template_name(kind), dtype_name(c.dtype()), weight, out,
                     activation_name(c.act), rounding_name(c.rounding));
}

}  // namespace

const TuningTable &table_of(Target t) { return **tuning_table(t); }

Contract as_gfx950(Contract c) {
  c.target = Target::kGfx950;
  return c;
}

TuningOverride override_subset(const TuningOverride &o, std::initializer_list<const char *> keys) {
  return o.subset(keys);
}

void layout(KernelPlan &p) {
  std::visit(
      [&](const auto &s) {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, GemvSchedule>) layout_gemv(p, s);
        else if constexpr (std::is_same_v<S, StreamedSchedule>) layout_streamed(p, s);
        else if constexpr (std::is_same_v<S, TiledSchedule>) layout_tiled(p, s);
        else layout_generic(p);
      },
      p.schedule.form);
}

void to_params(KernelPlan &p) {
  const Contract &c = p.contract;
  p.params["SYMBOL"] = p.symbol;
  p.params["T"] = mlir_type(c.dtype());
  p.params["T_OUT"] = mlir_type(c.dtype());  // set_out_params: i8 for an fp8 out
  p.template_file = template_name(p.kind);
  std::visit(
      [&](const auto &s) {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, GemvSchedule>) apply_gemv(p, s);
        else if constexpr (std::is_same_v<S, StreamedSchedule>) apply_streamed(p, s);
        else if constexpr (std::is_same_v<S, TiledSchedule>) apply_tiled(p, s);
        else apply_generic(p);
      },
      p.schedule.form);
  apply_attn(p);
}

TuningValues report(const KernelPlan &p) {
  TuningValues v = std::visit(
      [](const auto &s) -> TuningValues {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, GemvSchedule>) return report_gemv(s);
        else if constexpr (std::is_same_v<S, StreamedSchedule>) return report_streamed(s);
        else if constexpr (std::is_same_v<S, TiledSchedule>) return report_tiled(s);
        else return {};
      },
      p.schedule.form);
  if (p.schedule.waves.max > 0) v.emplace_back("WAVES_PER_EU", p.schedule.waves.max);
  if (p.schedule.waves.pinned) v.emplace_back("MIN_WAVES_PER_EU", p.schedule.waves.min);
  return v;
}

StatusOr<KernelPlan> plan_kernel(const Contract &c, const TuningOverride &tuning) {
  // Every table parses (a plan may read another target's: gfx950_plan=1).
  for (const TargetInfo &t : target_table())
    if (auto table = tuning_table(t.target); !table.ok()) return table.status();
  auto choice = choose_template(c);
  if (!choice.ok()) return choice.status();
  KernelPlan p;
  p.kind = choice->kind;
  p.reason = choice->reason;
  p.contract = choice->contract;
  p.tuning = tuning;
  p.symbol = symbol_of(c, p.kind);
  switch (p.kind) {
    case TemplateKind::kGemv: p.schedule.form = plan_gemv(p.contract, tuning); break;
    case TemplateKind::kMma:
      if (tiled_applies(p.contract, tuning)) p.schedule.form = plan_tiled(p.contract, tuning);
      else p.schedule.form = plan_streamed(p.contract, tuning);
      break;
    default: p.schedule.form = GenericSchedule{}; break;
  }
  layout(p);
  p.schedule.waves = plan_waves(p, c.m_dynamic ? c.m_max : c.m);
  p.schedule.attn = plan_attn(p, tuning);
  to_params(p);
  if (c.fp8_out() && p.kind != TemplateKind::kGeneric) {
    const int64_t cols = p.facts.weight_rows_per_block;  // the block's output columns (OUT_BLOCK_COLS)
    if (kOutGroup % cols != 0)
      return internal_error(fmt::format("plan: {} workgroups of {} output columns do not tile the fp8 out's "
                                        "128-column groups", p.symbol, cols));
  }
  p.abi = gate_abi(p.geometry.tensor_maps.any(), c.weight_scale != WeightScale::kNone, c.fp8_out());
  return p;
}

}  // namespace gatejit::compiler
