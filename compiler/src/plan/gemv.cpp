// The gemv's schedule (the table's rule "gemv") and its template parameters.
#include <fmt/format.h>

#include <algorithm>

#include "gatejit/target_info.h"
#include "plan/forms.h"
#include "plan/template_params.h"

namespace gatejit::compiler {
namespace {

// Column groups a workgroup: 4 waves (the seed's 256 threads on gfx9xx; on
// sm_90 4 warps, whose smaller blocks spread a small N over the SMs).
constexpr int64_t kGemvGroupsPerBlock = 4;
// A block of at most this many threads (the loader refuses a larger one).
constexpr int64_t kMaxBlockThreads = 1024;

// The fewest weight rows a wave that still give about two workgroups a CU:
// N / (2 x groups x CUs) as a power of 2 in 1-4 (the table's fact fill_rows).
int64_t fill_rows(const Contract &c) {
  const int64_t cus = target_info(c.target).compute_units;
  int64_t rows = 1;
  while (rows < 4 && c.n > rows * kGemvGroupsPerBlock * 2 * cus) rows *= 2;
  return rows;
}

// The products: gfx950's packed dot instructions take the 16-bit pair as it
// is (fp32 accumulate); elsewhere two fp32 FMAs (gfx942's bf16 dot is not
// the same instruction).
std::string dot2_snippet(const Contract &c) {
  if (c.dtype_weight == DType::kFP8E4M3) return "dot2_f32_fma";  // decoded fp32 weights, 16-bit hidden
  if (c.target == Target::kGfx950) return c.dtype_weight == DType::kBF16 ? "dot2_amdgcn_bf16" : "dot2_amdgcn_f16";
  return "dot2_fma";
}

struct GemvShape {
  int64_t vec, wave, kvecs, k_full_all;
};
GemvShape gemv_shape(const Contract &c) {
  const int64_t vec = 16 / dtype_bytes(c.dtype_weight);  // elements a 16-byte weight vector (hidden: as many)
  const int64_t wave = target_wave_size(c.target);
  const int64_t kvecs = c.k / vec;
  return {vec, wave, kvecs, kvecs / wave};
}

}  // namespace

GemvSchedule plan_gemv(const Contract &c, const TuningOverride &o) {
  const Facts facts = {{"fill_rows", [&](const Choice &) { return fill_rows(c); }}};
  const Choice &row = table_of(c.target).choose("gemv", c, facts);
  GemvSchedule s;
  s.rows = row.get("rows", 1);
  s.unroll = row.get("unroll", 1);
  s.ksplit = row.get("ksplit", 1);
  s.weights_first = row.flag("weights_first");
  if (o.has("grows")) s.rows = o.at("grows");
  if (o.has("gunroll")) s.unroll = o.at("gunroll");
  if (o.has("gksplit")) s.ksplit = o.at("gksplit");
  if (o.has("gwfirst")) s.weights_first = o.at("gwfirst") != 0;
  // Each wave takes whole steps: the largest split that divides them,
  // halving the table's (an fp8 row has half a bf16 row's steps).
  const GemvShape g = gemv_shape(c);
  while (s.ksplit > 1 &&
         (g.k_full_all % s.ksplit != 0 || kGemvGroupsPerBlock * s.ksplit * g.wave > kMaxBlockThreads))
    s.ksplit /= 2;
  const int64_t k_full = g.k_full_all / s.ksplit;
  s.unroll = std::max<int64_t>(1, std::min(s.unroll, k_full));  // a group fits in a wave's range
  // Up to 8 partial sums an accumulator, within 64 accumulator registers:
  // enough independent FMA chains to hide FMA latency at small M.
  s.part = std::clamp<int64_t>(64 / (s.rows * c.m_max), 1, g.vec / 2);
  return s;
}

void apply_gemv(KernelPlan &p, const GemvSchedule &s) {
  const Contract &c = p.contract;
  const GemvShape g = gemv_shape(c);
  const int64_t wave = g.wave, vec = g.vec, waves = kGemvGroupsPerBlock;
  const int64_t k_full = g.k_full_all / s.ksplit;
  const int64_t k_groups = k_full / s.unroll;
  auto &P = p.params;
  set_problem_params(P, c);
  set_operand_params(P, c);
  P["M_MAX"] = fmt::format("{}", c.m_max);
  P["ROWS"] = fmt::format("{}", s.rows);
  P["KSPLIT"] = fmt::format("{}", s.ksplit);
  P["GROUP_WEIGHTS_FIRST"] = s.weights_first ? "true" : "false";
  P["K_FULL_ALL"] = fmt::format("{}", g.k_full_all);
  P["UNROLL"] = fmt::format("{}", s.unroll);
  const int64_t acc = s.rows * c.m_max;
  P["PAIRS"] = fmt::format("{}", vec / 2);
  if (c.weight_scale != WeightScale::kNone) P["QUADS"] = fmt::format("{}", vec / 4);  // e4m3 decodes 4 at a time
  P["T_HIDDEN"] = mlir_type(c.dtype_hidden);
  P["T_DOT"] = c.dtype_weight == DType::kFP8E4M3 ? "f32" : mlir_type(c.dtype_weight);
  set_streamed_weight_params(P, c);
  P["OWN_SLOTS"] = fmt::format("{}", (acc + wave - 1) / wave);
  P["PART"] = fmt::format("{}", s.part);
  P["ACC_LEN"] = fmt::format("{}", acc * s.part);
  P["K_GROUPS"] = fmt::format("{}", k_groups);
  P["WAVE"] = fmt::format("{}", wave);
  P["VEC"] = fmt::format("{}", vec);
  P["KVECS"] = fmt::format("{}", g.kvecs);
  P["K_FULL"] = fmt::format("{}", k_full);
  // Blocks of WAVES column groups, each group KSPLIT waves.
  const int64_t block_waves = waves * s.ksplit;
  P["WAVES"] = fmt::format("{}", block_waves);
  P["BLOCK"] = fmt::format("{}", wave * block_waves);
  if (s.ksplit > 1) P["PARTIALS"] = fmt::format("{}", block_waves * acc);  // combine_workgroup's
  // The epilogue's pieces: VW consecutive columns of one row of the
  // workgroup's WAVES x ROWS columns (16 bytes where the block is that wide).
  const int64_t block_cols = waves * s.rows;
  const int64_t vw = std::min<int64_t>(8, block_cols);
  set_piece_params(P, c, vw);
  const int64_t pieces = c.m_max * (block_cols / vw);
  P["BLOCK_COLS"] = fmt::format("{}", block_cols);
  P["ROW_PIECES"] = fmt::format("{}", block_cols / vw);
  P["PIECES"] = fmt::format("{}", pieces);
  P["PIECE_SLOTS"] = fmt::format("{}", (pieces + wave * block_waves - 1) / (wave * block_waves));
  P["SUMS"] = fmt::format("{}", c.m_max * block_cols);
  p.snippets = {dot2_snippet(c), s.ksplit > 1 ? "combine_workgroup" : "combine_none", "epilogue_pieces",
                prefetch_snippet(c.target)};
  for (std::string &name : weight_snippets(c, "weight_pairs")) p.snippets.push_back(std::move(name));
  set_out_params(p, fmt::format("{}", c.m_max * (c.n / kOutGroup)), block_cols, c.m_max, wave * block_waves);
}

void layout_gemv(KernelPlan &p, const GemvSchedule &s) {
  const int64_t block_cols = kGemvGroupsPerBlock * s.rows;
  p.geometry = {uint32_t(target_wave_size(p.contract.target) * kGemvGroupsPerBlock * s.ksplit), uint32_t(block_cols),
                false};
  p.facts = {.form = "gemv", .weight_rows_per_block = block_cols, .hidden_rows_per_block = p.contract.m_max};
}

TuningValues report_gemv(const GemvSchedule &s) {
  return {{"ROWS", s.rows}, {"UNROLL", s.unroll}, {"PART", s.part}, {"KSPLIT", s.ksplit}};
}

}  // namespace gatejit::compiler
