#include "kernel_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "gatejit/template_choice.h"

namespace gatejit::compiler {
namespace {

const char *mlir_type(DType d) {
  switch (d) {
    case DType::kBF16: return "bf16";
    case DType::kF16: return "f16";
    case DType::kF32: return "f32";
  }
  return "?";
}

// Column groups per workgroup for gemv: 4 (4 waves of 64 = the seed kernel's
// 256 threads on gfx9xx; 4 warps of 32 on sm_90, where smaller blocks spread a
// small N more evenly over the 132 SMs: v4 in docs/perf-notes.md).
constexpr int64_t kGemvGroupsPerBlock = 4;

// The gemv tuning table (docs/perf-notes.md has the measurements behind it).
// ROWS: weight rows per wave; every hidden vector loaded serves ROWS rows, so
// L1 traffic per weight byte falls from (1 + M) to (1 + M / ROWS) vectors.
// UNROLL: 16-byte loads per row in flight before their FMAs.
struct GemvTuning {
  int64_t rows, unroll, ksplit = 1;
};
// KSPLIT: waves that split one group's K range (partials combined through
// workgroup memory). Fewer rows for small N, to fill the grid, was measured
// worse (v2 in docs/perf-notes.md).
GemvTuning gemv_tuning(int64_t m_max, int64_t n, Target target) {
  // sm_90, M = 1, small N: 4 warps per row (v5: 9.2 -> 8.8 us at N = 1536;
  // slower at N = 3072 and 12288, where N warps already fill the GPU).
  // gfx9xx keeps the seed's one wave per row and no LDS (unmeasured there).
  if (m_max == 1 && n <= 2048 && target == Target::kSm90) return {1, 8, 4};
  if (m_max == 1) return {1, 8};
  if (m_max <= 2) return {1, 4};  // UNROLL 8 measured slower at M = 2 (v4)
  if (m_max <= 4) return {2, 2};
  // gfx9xx, M > 8: 4 rows would need 132 VGPRs (3 waves per SIMD); 2 rows keep
  // it under 128, i.e. at least 4 waves per SIMD (issue 5's occupancy floor).
  if (m_max > 8 && target_is_amdgpu(target)) return {2, 1};
  return {4, 1};
}
constexpr int kGenericBlock = 256;

void plan_gemv(KernelPlan &p) {
  const Contract &c = p.contract;
  const int64_t eb = dtype_bytes(c.dtype_out);
  const int64_t vec = 16 / eb;
  const int64_t wave = target_wave_size(c.target);
  const int64_t waves = kGemvGroupsPerBlock;
  const int64_t kvecs = c.k / vec;
  GemvTuning t = gemv_tuning(c.m_max, c.n, c.target);
  const int64_t k_full_all = kvecs / wave;
  if (k_full_all % t.ksplit != 0) t.ksplit = 1;  // each wave takes whole steps
  const int64_t k_full = k_full_all / t.ksplit;
  t.unroll = std::max<int64_t>(1, std::min(t.unroll, k_full));  // a group fits in a wave's range
  const int64_t k_groups = k_full / t.unroll;
  auto &P = p.params;
  P["ROWS"] = fmt::format("{}", t.rows);
  P["KSPLIT"] = fmt::format("{}", t.ksplit);
  P["K_FULL_ALL"] = fmt::format("{}", k_full_all);
  P["UNROLL"] = fmt::format("{}", t.unroll);
  // Up to 8 partial sums per accumulator, within 64 accumulator registers:
  // enough independent FMA chains to hide FMA latency at small M.
  const int64_t acc = t.rows * c.m_max;
  const int64_t part = std::clamp<int64_t>(64 / acc, 1, vec / 2);
  P["PAIRS"] = fmt::format("{}", vec / 2);
  P["ACC"] = fmt::format("{}", acc);
  P["PART"] = fmt::format("{}", part);
  P["ACC_LEN"] = fmt::format("{}", acc * part);
  P["K_GROUPS"] = fmt::format("{}", k_groups);
  P["K_REM"] = fmt::format("{}", k_groups * t.unroll);
  P["WAVE"] = fmt::format("{}", wave);
  P["VEC"] = fmt::format("{}", vec);
  P["M_MAX"] = fmt::format("{}", c.m_max);
  P["N"] = fmt::format("{}", c.n);
  P["N_LAST"] = fmt::format("{}", c.n - 1);
  P["K"] = fmt::format("{}", c.k);
  P["KVECS"] = fmt::format("{}", kvecs);
  P["K_FULL"] = fmt::format("{}", k_full);
  P["K_ITERS"] = fmt::format("{}", (kvecs + wave - 1) / wave);
  P["LDH"] = fmt::format("{}", c.ld_hidden);
  P["LDW"] = fmt::format("{}", c.ld_weight);
  P["LDA"] = fmt::format("{}", c.ld_attn);
  P["LDO"] = fmt::format("{}", c.ld_out);
  P["H_SIZE"] = fmt::format("{}", (c.m_max - 1) * c.ld_hidden + c.k);
  P["W_SIZE"] = fmt::format("{}", (c.n - 1) * c.ld_weight + c.k);
  P["A_SIZE"] = fmt::format("{}", (c.m_max - 1) * c.ld_attn + c.n);
  P["O_SIZE"] = fmt::format("{}", (c.m_max - 1) * c.ld_out + c.n);
  // Blocks of WAVES column groups, each group KSPLIT waves.
  const int64_t block_waves = waves * t.ksplit;
  P["WAVES"] = fmt::format("{}", block_waves);
  P["BLOCK"] = fmt::format("{}", wave * block_waves);
  P["PARTIALS"] = fmt::format("{}", block_waves * acc);
  p.params["COMBINE"] = t.ksplit > 1 ? "combine_workgroup" : "combine_none";
  p.geometry = {uint32_t(wave * block_waves), uint32_t(waves * t.rows), false};
}

void plan_generic(KernelPlan &p) {
  p.params["BLOCK"] = fmt::format("{}", kGenericBlock);
  // Nominal extent: sizes arrive at launch; 2^40 elements bounds every index.
  p.params["SPAN"] = "1099511627776";
  p.geometry = {uint32_t(kGenericBlock), uint32_t(kGenericBlock), true};
}

// The products of gemv: gfx950's packed dot instructions take the 16-bit pair
// as it is (v_dot2c_f32_bf16 / v_dot2_f32_f16, fp32 accumulate); elsewhere
// two fp32 FMAs. (gfx942 keeps FMAs: its bf16 dot is not the same instruction.)
std::string dot2_snippet(const Contract &c) {
  if (c.target == Target::kGfx950) return c.dtype_out == DType::kBF16 ? "dot2_amdgcn_bf16" : "dot2_amdgcn_f16";
  return "dot2_fma";
}

}  // namespace

StatusOr<KernelPlan> plan_kernel(const Contract &c) {
  auto choice = choose_template(c);
  if (!choice.ok()) return choice.status();
  KernelPlan p;
  p.kind = choice->kind;
  p.reason = choice->reason;
  p.contract = choice->contract;
  p.symbol = fmt::format("gatejit_{}_{}_{}_{}", template_name(p.kind), dtype_name(c.dtype_out),
                         activation_name(c.act), rounding_name(c.rounding));
  p.params["SYMBOL"] = p.symbol;
  p.params["T"] = mlir_type(c.dtype_out);
  if (p.kind == TemplateKind::kGemv) plan_gemv(p);
  else plan_generic(p);
  return p;
}

StatusOr<std::string> instantiate(const KernelPlan &plan) {
  const Contract &c = plan.contract;
  std::vector<std::string> snippets = {
      std::string("epilogue_") + rounding_name(c.rounding),
      std::string("activation_") + activation_name(c.act),
      "sigmoid",
      c.dtype_out == DType::kF32 ? "convert_f32" : "convert_narrow",
  };
  if (plan.kind == TemplateKind::kGemv) {
    snippets.push_back(dot2_snippet(c));
    snippets.push_back(plan.params.at("COMBINE"));
  }
  std::string epilogue;
  for (const std::string &name : snippets) {
    auto text = template_text(name);
    if (!text.ok()) return text.status();
    epilogue += *text;
  }
  TemplateParams params = plan.params;
  auto filled_epilogue = substitute(epilogue, params);
  if (!filled_epilogue.ok()) return filled_epilogue.status();
  params["EPILOGUE"] = *filled_epilogue;
  auto kernel = template_text(template_name(plan.kind));
  if (!kernel.ok()) return kernel.status();
  return substitute(*kernel, params);
}

}  // namespace gatejit::compiler
