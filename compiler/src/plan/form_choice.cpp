#include "plan/form_choice.h"

#include "gatejit/target_info.h"
#include "gatejit/template_choice.h"
#include "plan/forms.h"
#include "plan/grid_facts.h"

namespace gatejit::compiler {
namespace {

const Choice *thin_rule(Target t) { return table_of(t).find("thin_rows", Contract{.target = t}); }

// K the thin rows serve: up to most_k, whose waves each unroll their whole
// K range; past it, up to most_k_pinned, K a multiple of pinned_k_multiple
// (an even number of whole steps a wave, the occupancy pinned).
bool thin_rows_serve_k(const Choice &rule, int64_t k) {
  return k <= rule.get("most_k", 0) ||
         (k <= rule.get("most_k_pinned", 0) && k % std::max<int64_t>(1, rule.get("pinned_k_multiple", 1)) == 0);
}

TemplateChoice specialised(TemplateKind kind, const Contract &c, std::string reason) {
  TemplateChoice choice;
  choice.kind = kind;
  choice.reason = std::move(reason);
  choice.contract = c;
  choice.contract.template_kind = kind;
  return choice;
}

// The table's rule "form": whether the mma serves `c` rather than the gemv.
bool mma_preferred(const Contract &c) {
  const TargetInfo &info = target_info(c.target);
  const Facts facts = {
      // N past 16 column groups a CU: the gemv's 4 rows a wave leave LLVM
      // too few registers for the hidden loads.
      {"wide_n", [&](const Choice &) { return int64_t(c.n > 16 * info.compute_units); }},
      // A fixed decode M the thin grid rows serve (16-bit weights).
      {"thin_decode",
       [&](const Choice &) {
         const int64_t from = thin_rows_from_m(c.target);
         return int64_t(mma_available(c.target) && from > 0 && !c.m_dynamic && c.m_max >= from &&
                        c.dtype_weight != DType::kFP8E4M3 && thin_decode(c.target, c.n, c.k));
       }},
  };
  return table_of(c.target).choose("form", c, facts).flag("mma");
}

}  // namespace

int64_t thin_rows_from_m(Target t) {
  const Choice *rule = thin_rule(t);
  return rule ? rule->get("decode_from_m", 0) : 0;
}

int64_t thin_rows_most_m(Target t) {
  const Choice *rule = thin_rule(t);
  return rule ? rule->get("most_m", 0) : 0;
}

int64_t thin_grid_rows(Target t, int64_t n, int64_t k) {
  const Choice *rule = thin_rule(t);
  if (!rule || !thin_rows_serve_k(*rule, k)) return 0;
  const TargetInfo &info = target_info(t);
  const int64_t column_tiles = ceil_div(n, info.matrix.n);
  const int64_t rows = ceil_div(info.compute_units, column_tiles);
  return rows > 1 && rows <= rule->get("most_rows", 0) ? rows : 0;
}

bool thin_rows_hold(Target t, int64_t k, int64_t m, int64_t rows) {
  const Choice *rule = thin_rule(t);
  return rule && rows > 0 && (k <= rule->get("most_k", 0) || ceil_div(m, rows) <= rule->get("most_rows_past_k", 0));
}

bool thin_decode(Target t, int64_t n, int64_t k) {
  const Choice *rule = thin_rule(t);
  if (!rule) return false;
  const int64_t rows = thin_grid_rows(t, n, k);
  if (k < rule->get("decode_min_k", 0) || !thin_rows_hold(t, k, kGemvMaxM, rows)) return false;
  // One workgroup a CU: where the grid puts two on some CUs the plan is
  // scheduled for more waves and loads attn after the block's reduction, a
  // round trip in series the gemv does not pay.
  const TargetInfo &info = target_info(t);
  return ceil_div(n, info.matrix.n) * rows <= info.compute_units;
}

StatusOr<TemplateChoice> choose_template(const Contract &c) {
  if (Status s = tuning_tables_ok(); !s.ok()) return s;
  if (c.template_kind == TemplateKind::kGeneric) {
    TemplateChoice choice;
    choice.kind = TemplateKind::kGeneric;
    choice.reason = "generic: requested by the contract";
    choice.contract = generic_contract_for(c);
    return choice;
  }
  if (Status s = check_requested_template(c); !s.ok()) return s;
  if (c.template_kind == TemplateKind::kGemv)
    return specialised(TemplateKind::kGemv, c, "specialised gemv: requested by the contract");
  if (c.template_kind == TemplateKind::kMma)
    return specialised(TemplateKind::kMma, c, "specialised mma: requested by the contract");
  const std::optional<std::string> gemv_no = template_refusal(c, TemplateKind::kGemv);
  const std::optional<std::string> mma_no = template_refusal(c, TemplateKind::kMma);
  const bool want_mma = mma_preferred(c);
  if (want_mma && !mma_no)
    return specialised(TemplateKind::kMma, c,
                       std::string("specialised mma: M") + (c.m_dynamic ? "_max" : "") + " = " +
                           std::to_string(c.m_max) + " on " + target_name(c.target) +
                           " runs on the matrix cores, 16-byte aligned rows, K a whole number of 16-byte vectors");
  if (!gemv_no)
    return specialised(TemplateKind::kGemv, c,
                       "specialised gemv: M <= " + std::to_string(kGemvMaxM) +
                           ", 16-byte aligned rows, K a whole number of 16-byte vectors");
  TemplateChoice choice;
  choice.kind = TemplateKind::kGeneric;
  // Why neither specialised template serves it: the one auto would have
  // preferred first, each reason once.
  std::string why = want_mma ? mma_no.value_or("") : gemv_no.value_or("");
  const std::string other = want_mma ? gemv_no.value_or("") : mma_no.value_or("");
  if (!other.empty() && other != why) why += (why.empty() ? "" : "; ") + other;
  choice.reason = "generic: " + why;
  choice.contract = generic_contract_for(c);
  return choice;
}

}  // namespace gatejit::compiler
