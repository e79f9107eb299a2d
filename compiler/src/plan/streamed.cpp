// The register-streamed mma's schedule: the table's rule "streamed" gives
// the row tiles, waves a tile, hidden tiles a block, register budget and the
// fewest K splits; the rest is arithmetic on the target's facts (what fits
// workgroup memory, how many splits cover the CUs in one round, how many
// steps stay in flight).
#include <algorithm>

#include "gatejit/target_info.h"
#include "gatejit/template_choice.h"
#include "plan/form_choice.h"
#include "plan/forms.h"
#include "plan/fragment.h"
#include "plan/grid_facts.h"

namespace gatejit::compiler {
namespace {

// A K split's last block loads each piece's partials from every split at
// once (SPLITS x VW registers): where that is more than half of what a lane
// holds, the piece is halved, down to 4 columns (8 bytes of a 16-bit out).
constexpr int64_t kMinSplitPieceWidth = 4;
constexpr int64_t kMaxBlockThreads = 1024;

// The register-streamed grid's blocks before a K split (grid x times grid y).
int64_t streamed_tiles(const Contract &c, const StreamedSchedule &t) {
  const int64_t n_per_block = t.groups * t.rt * t.tile_w;
  return ceil_div(c.n, n_per_block) * ceil_div(c.m_max, t.m_stride);
}

// The split grid fits one round of the workgroups the GPU holds.
bool split_fits_a_round(const Contract &c, const StreamedSchedule &t) {
  return streamed_tiles(c, t) * t.splits <= workgroups_held(target_info(c.target), t.groups * t.ksplit);
}

// The K split across workgroups: at least `min_splits`; the fewest that
// cover every CU, or up to twice that where one divides the K steps evenly
// among all waves, else twice that (two workgroups a CU); no more than one
// round of the workgroups the GPU holds (each round past the first waits
// for its own meeting), down to min_splits; at least one step a wave.
int64_t k_splits(const Contract &c, const StreamedSchedule &t, int64_t min_splits) {
  const int64_t cus = target_info(c.target).compute_units;
  const int64_t tiles = streamed_tiles(c, t);
  const int64_t steps = ceil_div(c.k, kMmaInstrK * t.vecs);
  const int64_t most = std::max<int64_t>(1, steps / t.ksplit);
  const int64_t cover = ceil_div(cus, tiles);
  const int64_t fewest = std::min(std::max(cover, min_splits), most);
  if (fewest <= 1) return 1;
  int64_t splits = cover > min_splits ? std::min(2 * fewest, most) : fewest;
  for (int64_t s = fewest; s <= 2 * fewest && s <= most; ++s)
    if (steps % (t.ksplit * s) == 0) {
      splits = s;
      break;
    }
  const int64_t held = workgroups_held(target_info(c.target), t.groups * t.ksplit);
  return std::max(std::min(splits, held / tiles), std::min(min_splits, splits));
}

// The grid rows a fixed M (16-bit weights, in the table's thin_rows range)
// is cut into where its 16-row blocks of one column tile leave CUs idle
// (form_choice.h), or 0.
int64_t thin_rows_of(const Contract &c) {
  const int64_t from = thin_rows_from_m(c.target);
  if (from == 0 || c.m_dynamic || c.dtype_weight == DType::kFP8E4M3 || c.m_max < from ||
      c.m_max > thin_rows_most_m(c.target))
    return 0;
  if (c.m_max <= kGemvMaxM && !thin_decode(c.target, c.n, c.k)) return 0;  // the gemv serves the decode M
  const int64_t rows = thin_grid_rows(c.target, c.n, c.k);
  if (!thin_rows_hold(c.target, c.k, c.m_max, rows)) return 0;
  return rows > ceil_div(c.m_max, 16) ? rows : 0;
}

// A piece's columns: at most 8 (16 bytes of a 16-bit out) within a column
// group, halved where a K split's partials would crowd the lane's registers.
int64_t piece_width(const Contract &c, const StreamedSchedule &t, int64_t workgroups, int64_t block) {
  int64_t vw = std::min<int64_t>(8, t.rt * t.tile_w);
  if (t.splits <= 1) return vw;
  const int64_t lane_registers = lane_registers_placed(c.target, workgroups, block);
  while (vw > kMinSplitPieceWidth && t.splits * vw > lane_registers / 2) vw /= 2;
  return vw;
}

// The table's facts: what the candidate row's blocks would make of the grid.
Facts streamed_facts(const Contract &c, const TargetInfo &info, const int64_t &thin) {
  const int64_t tile_w = info.matrix.n, cus = info.compute_units;
  return {
      {"thin_rows", [&thin](const Choice &) { return thin; }},
      // Two-tile column groups no more than the CUs.
      {"row_tiles_fit_cus", [&c, tile_w, cus](const Choice &) { return int64_t(ceil_div(c.n, 2 * tile_w) <= cus); }},
      // The row's unsplit blocks fill the CUs (a dynamic M from its smallest
      // launch above the gemv's, 17 rows).
      {"blocks_fill_cus",
       [&c, tile_w, cus](const Choice &r) {
         const int64_t rows = c.m_dynamic ? kGemvMaxM + 1 : c.m_max;
         return int64_t(ceil_div(c.n, r.get("rt", 1) * tile_w) * ceil_div(rows, 16 * r.get("mtiles", 8)) >= cus);
       }},
      // The row's blocks with its fewest K splits fit one round of the
      // workgroups the GPU holds.
      {"min_split_fits_a_round",
       [&c, &info, tile_w](const Choice &r) {
         return int64_t(ceil_div(c.n, r.get("rt", 1) * tile_w) * ceil_div(c.m_max, 16 * r.get("mtiles", 8)) *
                            r.get("splits_min", 1) <=
                        workgroups_held(info, r.get("ksplit", 1)));
       }},
  };
}

}  // namespace

bool streamed_split_exceeds_a_round(const Contract &c) {
  const StreamedSchedule t = plan_streamed(c, TuningOverride{});
  return t.splits > 1 && !split_fits_a_round(c, t);
}

StreamedSchedule plan_streamed(const Contract &c, const TuningOverride &o) {
  const TargetInfo &info = target_info(c.target);
  const FragmentShape frag = fragment_shape(c.target);
  const int64_t thin = thin_rows_of(c);
  const Choice &row = table_of(c.target).choose("streamed", c, streamed_facts(c, info, thin));
  StreamedSchedule t;
  t.tile_w = frag.tile_w, t.h_loads = frag.h_loads, t.h_stride = frag.h_stride;
  t.rt = row.get("rt", 1);
  t.ksplit = row.get("ksplit", 1);
  t.vecs = row.get("vecs", 2);
  t.unroll = row.get("unroll", 8);  // the cap before the divisor rule below
  int64_t max_mt = row.get("mtiles", 8);
  int64_t budget = row.get("budget", 128);  // registers a wave's steps in flight may take
  const int64_t splits_min = row.get("splits_min", 0);
  t.grid_resident = row.flag("unsplit");
  t.m_stride = row.flag("thin") ? ceil_div(c.m_max, thin) : 0;
  // The development override (tuning_override.h).
  if (o.has("budget")) budget = o.at("budget");
  if (o.has("groups")) t.groups = o.at("groups");
  if (o.has("ksplit")) t.ksplit = o.at("ksplit");
  if (o.has("mstride")) t.m_stride = o.at("mstride");
  if (o.has("mtiles")) max_mt = o.at("mtiles");
  if (o.has("rt")) t.rt = o.at("rt");
  if (o.has("splits")) t.splits = o.at("splits");
  if (o.has("unroll")) t.unroll = o.at("unroll");
  if (o.has("vecs")) t.vecs = o.at("vecs");
  // A block-scaled weight's step lies in one 128-wide K block (one scale per
  // weight tile and step: weight_fragments_e4m3.mlir).
  if (c.weight_scale == WeightScale::kBlock128)
    while (t.vecs > 1 && 128 % (kMmaInstrK * t.vecs) != 0) t.vecs /= 2;
  t.mt = std::min(ceil_div(c.m_max, 16), max_mt);
  // gfx950_plan=1 on sm_90: gfx950's thin grid rows and K split, in sm_90's
  // tiles (the GPU suite runs gfx950's plans on the H200).
  if (c.target == Target::kSm90 && o.has("gfx950_plan")) {
    const Contract amd = as_gfx950(c);
    if (const int64_t rows = thin_rows_of(amd); rows > 0) t.m_stride = ceil_div(c.m_max, rows);
    if (!o.has("splits")) t.splits = plan_streamed(amd, TuningOverride{}).splits;
  }
  // mrows=R (sweeps): R grid rows of ceil(M_MAX / R) rows, as the thin rows.
  if (o.has("mrows")) t.m_stride = ceil_div(c.m_max, o.at("mrows"));
  t.m_stride = t.m_stride > 0 ? std::min(t.m_stride, 16 * t.mt) : 16 * t.mt;
  // The K-split partials (KSPLIT waves x tiles x 4 x WAVE fp32) fit the
  // workgroup memory a kernel gets without opting in.
  const int64_t wave = info.wave_size;
  while (t.ksplit > 1 && t.groups * t.ksplit * t.rt * t.mt * 4 * wave * 4 > info.shared_static_budget) t.ksplit /= 2;
  while (t.groups > 1 && t.groups * t.ksplit * t.rt * t.mt * 4 * wave * 4 > info.shared_static_budget) t.groups /= 2;
  while (t.ksplit > 1 && t.ksplit * wave > kMaxBlockThreads) t.ksplit /= 2;
  while (t.groups > 1 && t.groups * t.ksplit * wave > kMaxBlockThreads) t.groups /= 2;
  // The K split across workgroups, for the block the caps above left.
  if (splits_min > 0 && !o.has("splits")) t.splits = k_splits(c, t, splits_min);
  // The split meets by poll where its grid fits one round of the workgroups
  // the GPU holds (every split the polling one waits for is then running
  // beside it) and the table's rule allows it for the weight; poll=0|1 overrides.
  const bool poll_default = table_of(c.target).choose("streamed_poll", c).flag("poll");
  t.weight_run_load = table_of(c.target).choose("streamed_weight_run", c).flag("run_load");
  t.poll = t.splits > 1 && split_fits_a_round(c, t) && (o.has("poll") ? o.at("poll") != 0 : poll_default);
  // UNROLL: steps whose loads are in flight together, within the budget
  // (a weight vector is 8 elements: 4 registers 16-bit, 2 e4m3; a live
  // hidden vector 4), the largest that divides each wave's full steps.
  const int64_t live_h_loads = std::min(t.mt * t.h_loads, ceil_div(c.m_max, t.h_stride));
  const int64_t regs_per_step = t.vecs * (t.rt * 2 * dtype_bytes(c.dtype_weight) + 4 * live_h_loads);
  const int64_t cap = std::clamp<int64_t>(budget / regs_per_step, 1, t.unroll);
  const int64_t j_full = c.k / (kMmaInstrK * t.vecs) / (t.ksplit * t.splits);
  t.unroll = 1;
  for (int64_t u = cap; u >= 1; --u)
    if (j_full % u == 0) {
      t.unroll = u;
      break;
    }
  t.unroll = std::max<int64_t>(1, std::min(t.unroll, j_full));
  t.grid_resident = t.grid_resident && t.splits == 1;
  // The epilogue's piece, for the grid this makes; vw=4|8 (sweeps) where
  // the tiles allow it (a piece's sums stay whole 16-byte vectors).
  const int64_t block = wave * t.ksplit * t.groups;
  const int64_t tiles_m = c.m_max > t.m_stride ? ceil_div(c.m_max, t.m_stride) : 1;
  t.piece_width = piece_width(c, t, ceil_div(c.n, t.groups * t.rt * t.tile_w) * tiles_m * t.splits, block);
  const int64_t widest = std::min<int64_t>(8, t.rt * t.tile_w);
  if (o.has("vw") && (o.at("vw") == 4 || o.at("vw") == 8) && widest % o.at("vw") == 0) t.piece_width = o.at("vw");
  // The epilogue an element at a time where the table's rule says so
  // (elements=0|1 overrides): only without a K split, for an out in attn's
  // dtype and a 16-bit weight (no scales on the sums).
  const Choice *epilogue = table_of(c.target).find("streamed_epilogue", c);
  t.element_finish = o.has("elements") ? o.at("elements") != 0 : epilogue && epilogue->flag("elements");
  t.element_finish = t.element_finish && t.splits == 1 && !c.fp8_out() && c.dtype_weight != DType::kFP8E4M3;
  return t;
}

}  // namespace gatejit::compiler
