// The register-streamed mma's template parameters, geometry and facts, from
// its schedule (templates/mma.mlir documents the parameters).
#include <fmt/format.h>

#include <algorithm>

#include "gatejit/target_info.h"
#include "plan/forms.h"
#include "plan/fragment.h"
#include "plan/grid_facts.h"
#include "plan/template_params.h"

namespace gatejit::compiler {

void apply_streamed(KernelPlan &p, const StreamedSchedule &t) {
  const Contract &c = p.contract;
  const int64_t wave = target_wave_size(c.target);
  const int64_t mt = t.mt;
  const int64_t m_block = mt * 16;
  const int64_t m_stride = t.m_stride;  // hidden rows a grid row owns (<= m_block)
  const int64_t kstep = kMmaInstrK * t.vecs;
  const int64_t s_all = ceil_div(c.k, kstep);
  const int64_t s_full = c.k / kstep;
  const int64_t ksplit_all = t.ksplit * t.splits;
  const int64_t j_full = s_full / ksplit_all;
  const int64_t j_groups = j_full / t.unroll;
  const int64_t groups = t.groups;
  const int64_t tiles = t.rt * mt;
  const int64_t block = wave * t.ksplit * groups;
  const int64_t w_rows = t.rt * t.tile_w;  // weight rows (output columns) of a column group
  const int64_t n_per_block = groups * w_rows;
  auto &P = p.params;
  set_problem_params(P, c);
  set_operand_params(P, c);
  auto set = [&](const char *name, int64_t v) { P[name] = fmt::format("{}", v); };
  set("K", c.k);
  set("WAVE", wave);
  P["DEVICE_SCOPE"] = target_is_amdgpu(c.target) ? "agent" : "device";  // the K split's fences
  set("KSPLIT", t.ksplit);
  set("GROUPS", groups);
  set("BLOCK", block);
  set("RT", t.rt);
  set("MT", mt);
  set("TILES", tiles);
  set("W_ROWS", w_rows);
  set("M_STRIDE", m_stride);
  P["THIN_ROWS"] = m_stride < m_block ? "true" : "false";
  set("H_LIVE_ROWS", std::min(c.m_max, m_stride));
  set("KSTEP", kstep);
  set("VECS", t.vecs);
  set("S_ALL", s_all);
  set("UNROLL", t.unroll);
  set("J_GROUPS", j_groups);
  set("J_ITERS", ceil_div(s_all, ksplit_all));
  set("PARTIALS", t.ksplit * groups * tiles * 4 * wave);
  set("ELEMENTS", tiles * 4);
  set("OWN", ceil_div(tiles * 4, t.ksplit));
  const int64_t tiles_n = ceil_div(c.n, n_per_block);
  const int64_t tiles_m = c.m_max > m_stride ? ceil_div(c.m_max, m_stride) : 1;
  set("SPLITS", t.splits);
  set("KSPLIT_ALL", ksplit_all);
  P["SPLIT_K"] = t.splits > 1 ? "true" : "false";
  const bool poll = t.splits > 1 && t.poll;
  P["SPLIT_POLL"] = poll ? "1" : "0";
  set("POLL_OTHERS", std::max<int64_t>(1, t.splits - 1));
  // The poll meeting reads zero as "not yet": its workspace starts zeroed
  // (the polling split zeroes what it read).
  P["WS_INIT"] = poll ? "dense<0.0>" : "uninitialized";
  set("TILES_N", tiles_n);
  // The epilogue's pieces: VW consecutive columns of one row, thread tid
  // taking pieces tid, tid + BLOCK, ... of the rows a block can have.
  const int64_t vw = t.piece_width;
  const int64_t group_outputs = m_block * w_rows;
  const int64_t live_rows = std::min(c.m_max, m_stride);
  const int64_t pieces = groups * live_rows * (w_rows / vw);
  set_piece_params(P, c, vw);
  set("ROW_PIECES", w_rows / vw);
  set("GROUP_PIECES", live_rows * (w_rows / vw));
  set("PIECES", pieces);
  set("PIECE_SLOTS", ceil_div(pieces, block));
  set("GROUP_OUTPUTS", group_outputs);
  set("BLOCK_OUTPUTS", groups * group_outputs);
  set("SUMS", groups * group_outputs);
  // Without a split the workspace is folded away; one element keeps the
  // declarations well-formed.
  set("WS_SIZE", t.splits > 1 ? tiles_n * tiles_m * t.splits * groups * group_outputs : 1);
  set("WS_TILES", t.splits > 1 ? tiles_n * tiles_m : 1);
  set_fragment_params(P, c);
  // The weight's entry points: @accumulate_step (16-bit fragments as
  // loaded, or e4m3 decoded to the hidden's type, block scales per step)
  // and the epilogue's @scale_sums (per-channel scales on the sums).
  const bool fp8 = c.dtype_weight == DType::kFP8E4M3;
  set_streamed_weight_params(P, c);
  set("W_VEC_ALIGN", 8 * dtype_bytes(c.dtype_weight));
  // A lane's VECS vectors of a row are one run of 8 VECS bytes at a 16-byte
  // multiple (the table's rule streamed_weight_run says where to load it at once).
  P["W_RUN_LOAD"] = t.weight_run_load ? "true" : "false";
  set("W_RUN", 8 * t.vecs);
  set("W_RUN_ALIGN", std::min<int64_t>(16, 8 * t.vecs * dtype_bytes(c.dtype_weight)));
  P["ELEMENT_FINISH"] = t.element_finish ? "true" : "false";
  p.snippets = {fragment_snippet(c.target), "mma_tiles", "epilogue_pieces", "split_arrival", "split_poll", "split_poll_pieces",
                prefetch_snippet(c.target), t.element_finish ? "finish_owned_elements" : "finish_owned_none"};
  const bool per_channel = c.weight_scale == WeightScale::kPerChannel;
  p.snippets.push_back(per_channel ? "scale_sums_per_channel" : "scale_sums_none");
  if (c.weight_scale != WeightScale::kBlock128) p.snippets.push_back("step_scales_none");
  if (!fp8) p.snippets.push_back("weight_fragments_plain");
  else
    p.snippets.insert(p.snippets.end(), {"weight_fragments_e4m3",
                                         per_channel ? "accumulate_per_channel" : "accumulate_block128",
                                         decode_e4m3_snippet(c.target)});
  set_out_params(p, fmt::format("{}", c.m_max * (c.n / kOutGroup)), n_per_block, m_stride, block);
}

void layout_streamed(KernelPlan &p, const StreamedSchedule &t) {
  const Contract &c = p.contract;
  const int64_t block = target_wave_size(c.target) * t.ksplit * t.groups;
  const int64_t n_per_block = t.groups * t.rt * t.tile_w;
  p.facts = {.form = "mma", .weight_rows_per_block = n_per_block, .hidden_rows_per_block = t.m_stride,
             .product_rows_per_block = t.mt * 16,
             .splits = t.splits, .split_poll = t.splits > 1 && t.poll, .reduction_rounds = t.splits > 1 ? 1 : 0,
             .matrix = true};
  p.geometry = {uint32_t(block), uint32_t(n_per_block), false, uint32_t(c.m_max > t.m_stride ? t.m_stride : 0),
                uint32_t(t.splits)};
}

TuningValues report_streamed(const StreamedSchedule &t) {
  return {{"RT", t.rt},         {"MT", t.mt},         {"M_STRIDE", t.m_stride},
          {"KSPLIT", t.ksplit}, {"VECS", t.vecs},     {"UNROLL", t.unroll},
          {"GROUPS", t.groups}, {"SPLITS", t.splits}, {"SPLIT_POLL", t.splits > 1 && t.poll}, {"VW", t.piece_width},
          {"ELEMENT_FINISH", t.element_finish}};
}

}  // namespace gatejit::compiler
