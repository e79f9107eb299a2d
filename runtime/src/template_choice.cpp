#include "gatejit/template_choice.h"

#include "gatejit/target_info.h"

#include <algorithm>
#include <optional>

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

// The layout first: it is what the caller can change.
std::optional<std::string> gemv_refusal(const Contract &c) {
  if (auto layout = vector_layout_refusal(c, "gemv")) return layout;
  if (c.m_max > kGemvMaxM)
    return "m_max = " + std::to_string(c.m_max) + " exceeds the gemv limit of " + std::to_string(kGemvMaxM);
  return std::nullopt;
}

std::optional<std::string> mma_refusal(const Contract &c) {
  if (auto layout = vector_layout_refusal(c, "mma")) return layout;
  if (!mma_available(c.target))
    return std::string("target ") + target_name(c.target) +
           ": the mma template uses the 16x16x32 bf16/f16 MFMA, which is gfx950's";
  return std::nullopt;
}

TemplateChoice specialised(TemplateKind kind, const Contract &c, std::string reason) {
  TemplateChoice choice;
  choice.kind = kind;
  choice.reason = std::move(reason);
  choice.contract = c;
  choice.contract.template_kind = kind;
  return choice;
}

}  // namespace

bool mma_available(Target target) { return target != Target::kGfx942; }

bool thin_rows_serve_k(int64_t k) {
  return k <= kThinMostK || (k <= kThinMostKPinned && k % 2048 == 0);
}

bool thin_rows_hold(int64_t k, int64_t m, int64_t rows) {
  return rows > 0 && (k <= kThinMostK || (m + rows - 1) / rows <= kThinMostRowsPastK);
}

int64_t thin_grid_rows(Target target, int64_t n, int64_t k) {
  if (!target_is_amdgpu(target) || !thin_rows_serve_k(k)) return 0;
  const TargetInfo &t = target_info(target);
  const int64_t column_tiles = (n + t.matrix.n - 1) / t.matrix.n;
  const int64_t rows = (t.compute_units + column_tiles - 1) / column_tiles;
  return rows > 1 && rows <= kMostThinGridRows ? rows : 0;
}

bool thin_decode(Target target, int64_t n, int64_t k) {
  const int64_t rows = thin_grid_rows(target, n, k);
  if (k < kThinDecodeMinK || !thin_rows_hold(k, kGemvMaxM, rows)) return false;
  const TargetInfo &t = target_info(target);
  // One workgroup a CU (v99; with rows >= 2 this also keeps the column
  // tiles to half the CUs, v87's rule): where the grid puts two on some
  // CUs, the plan is scheduled for 8 waves a SIMD and loads attn after the
  // block's reduction, a round trip in series that the gemv does not pay
  // (M = 16, K = 3072-8192, N = 1280 and 1536: the gemv 0.14-0.58 us faster
  // in the model; every N between 1024 and 2048 has such a grid).
  return (n + t.matrix.n - 1) / t.matrix.n * rows <= t.compute_units;
}

bool mma_preferred(Target target, int64_t m_max, int64_t n, int64_t k, DType weight, bool m_dynamic) {
  // sm_90, an e4m3 weight at N <= 2048 (v57, measured in one run, N = 1536):
  // the gemv up to M = 2 (7.06 µs against the mma's 8.26-10.1), the mma from
  // M = 4 (8.4 against 10.8; M = 16 9.9 against 33). Every other case as a
  // 16-bit weight.
  if (target == Target::kSm90 && weight == DType::kFP8E4M3 && n <= 2048) return m_max > 2;
  // sm_90: the matrix path wins from M = 2 on. At M = 1 the gemv wins where
  // N <= 2048, since it loads attn while it reduces (v51: N = 1536 7.52 vs
  // 8.03-8.09 us), and where N > 3072 fills the GPU alone (v10-v15:
  // docs/perf-notes.md). N = 3072 keeps the mma: the gemv measured 1-2%
  // faster in one run, within its noise, and the model cannot judge the sm_90
  // gemv there (its PTX replay sees one load in flight: 28.7 us predicted,
  // 12.9 measured). gfx9xx keeps
  // gemv for M <= 16 (the seed's structure and the decode-path code checks;
  // unmeasured there: no AMD GPU is reachable), except above M = 8 where the
  // gemv takes 4 rows a wave (N > 16 x CUs, kernel_plan.cpp): its 4 x M
  // accumulators leave LLVM too few registers for the hidden loads, which it
  // then waits for one at a time (gfx950 N = 12288, M = 16: 43.7-65 us
  // predicted, the mma form 31.9 with every gate passing; v48).
  if (target == Target::kSm90) return m_max >= 2 || (n > 2048 && n <= 3072);
  if (m_max > 8 && n > 16 * target_info(target).compute_units) return true;
  // gfx950 at a fixed M = 15-16 (v84, the model): the gemv's waves each
  // re-read the M hidden rows from L2, which then bounds it (N = 1536 M =
  // 15 / 16: 5.53 / 5.73 µs against 5.34 at M = 14), where the mma's thin
  // grid rows (3 of 5-6 rows, 288 workgroups) stream the weight three times
  // and the hidden rows once a column tile: 5.35 (N = 2048: 7.11 -> 6.59).
  // 16-bit weights; a dynamic M keeps the gemv's decode bucket.
  if (!m_dynamic && m_max >= kThinDecodeFromM && weight != DType::kFP8E4M3 && thin_decode(target, n, k) &&
      mma_available(target))
    return true;
  return m_max > kGemvMaxM;
}

Contract generic_contract_for(const Contract &c) {
  Contract g = c;
  g.template_kind = TemplateKind::kGeneric;
  return g;
}

StatusOr<TemplateChoice> choose_template(const Contract &c) {
  if (c.template_kind == TemplateKind::kGeneric) {
    TemplateChoice choice;
    choice.kind = TemplateKind::kGeneric;
    choice.reason = "generic: requested by the contract";
    choice.contract = generic_contract_for(c);
    return choice;
  }
  const std::optional<std::string> gemv_no = gemv_refusal(c);
  const std::optional<std::string> mma_no = mma_refusal(c);
  if (c.template_kind == TemplateKind::kGemv) {
    if (gemv_no) return invalid_argument("template = gemv cannot serve this contract: " + *gemv_no);
    return specialised(TemplateKind::kGemv, c, "specialised gemv: requested by the contract");
  }
  if (c.template_kind == TemplateKind::kMma) {
    if (mma_no) return invalid_argument("template = mma cannot serve this contract: " + *mma_no);
    return specialised(TemplateKind::kMma, c, "specialised mma: requested by the contract");
  }
  const bool want_mma = mma_preferred(c.target, c.m_max, c.n, c.k, c.dtype_weight, c.m_dynamic);
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

}  // namespace gatejit
