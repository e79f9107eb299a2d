#include "gatejit/template_choice.h"

#include <optional>

namespace gatejit {
namespace {

// Returns why gemv cannot serve `c`, or nothing when it can.
std::optional<std::string> gemv_refusal(const Contract &c) {
  const int64_t eb = dtype_bytes(c.dtype_out);
  if (c.dtype_out == DType::kF32) return "dtype f32: gemv takes bf16 or f16";
  if (c.m_max > kGemvMaxM)
    return "m_max = " + std::to_string(c.m_max) + " exceeds the gemv limit of " +
           std::to_string(kGemvMaxM);
  if ((c.ld_hidden * eb) % 16 != 0)
    return "leading dimension ld_hidden = " + std::to_string(c.ld_hidden) + " is not 16-byte aligned";
  if ((c.ld_weight * eb) % 16 != 0)
    return "leading dimension ld_weight = " + std::to_string(c.ld_weight) + " is not 16-byte aligned";
  if ((c.k * eb) % 16 != 0)
    return "k = " + std::to_string(c.k) + " is not a multiple of " + std::to_string(16 / eb) +
           " elements (16-byte vectors)";
  // After the strides: a misaligned stride also lowers the provable alignment,
  // and the stride is the more useful thing to name.
  if (c.align < 16)
    return "align = " + std::to_string(c.align) +
           ": gemv needs 16-byte aligned base pointers (16-byte vector loads)";
  return std::nullopt;
}

}  // namespace

Contract generic_contract_for(const Contract &c) {
  Contract g = c;
  g.template_kind = TemplateKind::kGeneric;
  return g;
}

StatusOr<TemplateChoice> choose_template(const Contract &c) {
  TemplateChoice choice;
  if (c.template_kind == TemplateKind::kGeneric) {
    choice.kind = TemplateKind::kGeneric;
    choice.reason = "generic: requested by the contract";
    choice.contract = generic_contract_for(c);
    return choice;
  }
  const std::optional<std::string> refusal = gemv_refusal(c);
  if (!refusal) {
    choice.kind = TemplateKind::kGemv;
    choice.reason = "specialised gemv: M <= " + std::to_string(kGemvMaxM) +
                    ", 16-byte aligned rows, K a whole number of 16-byte vectors";
    choice.contract = c;
    choice.contract.template_kind = TemplateKind::kGemv;
    return choice;
  }
  if (c.template_kind == TemplateKind::kGemv)
    return invalid_argument("template = gemv cannot serve this contract: " + *refusal);
  choice.kind = TemplateKind::kGeneric;
  choice.reason = "generic: " + *refusal;
  choice.contract = generic_contract_for(c);
  return choice;
}

}  // namespace gatejit
