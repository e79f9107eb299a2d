#include "gatejit/template_choice.h"

#include <algorithm>

namespace gatejit {
namespace {

// Why a specialised template (gemv or mma: both stream 16-byte vectors)
// cannot serve `c`'s layout, or nothing when it can.
std::optional<std::string> vector_layout_refusal(const Contract &c, const char *tmpl) {
  const int64_t eb_h = dtype_bytes(c.dtype_hidden), eb_w = dtype_bytes(c.dtype_weight);
  if (c.dtype() == DType::kF32) return std::string("dtype f32: ") + tmpl + " takes bf16 or f16";
  if ((c.ld_hidden * eb_h) % 16 != 0)
    return "leading dimension ld_hidden = " + std::to_string(c.ld_hidden) + " is not 16-byte aligned";
  if ((c.ld_weight * eb_w) % 16 != 0)
    return "leading dimension ld_weight = " + std::to_string(c.ld_weight) + " is not 16-byte aligned";
  const int64_t eb = std::min(eb_h, eb_w);  // both K rows in whole 16-byte vectors
  if ((c.k * eb_h) % 16 != 0 || (c.k * eb_w) % 16 != 0)
    return "k = " + std::to_string(c.k) + " is not a multiple of " + std::to_string(16 / eb) +
           " elements (16-byte vectors)";
  // After the strides: a misaligned stride also lowers the provable alignment,
  // and the stride is the more useful thing to name.
  if (c.align < 16)
    return "align = " + std::to_string(c.align) + ": " + tmpl +
           " needs 16-byte aligned base pointers (16-byte vector loads)";
  return std::nullopt;
}

}  // namespace

bool mma_available(Target target) { return target != Target::kGfx942; }

std::optional<std::string> template_refusal(const Contract &c, TemplateKind kind) {
  if (kind == TemplateKind::kGemv) {
    if (auto layout = vector_layout_refusal(c, "gemv")) return layout;
    if (c.m_max > kGemvMaxM)
      return "m_max = " + std::to_string(c.m_max) + " exceeds the gemv limit of " + std::to_string(kGemvMaxM);
    return std::nullopt;
  }
  if (auto layout = vector_layout_refusal(c, "mma")) return layout;
  if (!mma_available(c.target))
    return std::string("target ") + target_name(c.target) +
           ": the mma template uses the 16x16x32 bf16/f16 MFMA, which is gfx950's";
  return std::nullopt;
}

std::optional<std::string> specialised_refusal(const Contract &c) {
  const std::optional<std::string> gemv = template_refusal(c, TemplateKind::kGemv);
  const std::optional<std::string> mma = template_refusal(c, TemplateKind::kMma);
  if (!gemv || !mma) return std::nullopt;
  const bool mma_first = c.m_max > kGemvMaxM;
  std::string why = mma_first ? *mma : *gemv;
  const std::string &other = mma_first ? *gemv : *mma;
  if (other != why) why += "; " + other;
  return why;
}

Status check_requested_template(const Contract &c) {
  if (c.template_kind != TemplateKind::kGemv && c.template_kind != TemplateKind::kMma) return Status::Ok();
  if (auto no = template_refusal(c, c.template_kind))
    return invalid_argument(std::string("template = ") + template_name(c.template_kind) +
                            " cannot serve this contract: " + *no);
  return Status::Ok();
}

Contract generic_contract_for(const Contract &c) {
  Contract g = c;
  g.template_kind = TemplateKind::kGeneric;
  return g;
}

}  // namespace gatejit
