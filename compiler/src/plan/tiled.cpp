// The tiled mma's schedule: the table's rule "tiled_shape" gives the block
// tile, waves and stage budget (and, on gfx950, where the form applies at
// all); the stages, the K split, the persistent grid and the split's
// meeting follow from the target's workgroup memory, threads and registers.
#include <algorithm>
#include <climits>

#include "gatejit/target_info.h"
#include "gatejit/template_choice.h"
#include "plan/forms.h"
#include "plan/fragment.h"
#include "plan/grid_facts.h"
#include "plan/tiled_layout.h"

namespace gatejit::compiler {
namespace {

// The 1-byte static declaration behind gpu.dynamic_shared_memory takes one
// 128-byte allocation unit.
constexpr int64_t kDynamicSharedDeclarationBytes = 128;
// Stages a block may take at most (a stage ring's slots).
constexpr int64_t kMaxRingStages = 8;
// attn loaded before the K loop (4 registers a piece, held across it) where
// the accumulators, and a K split's partials loaded back beside them, leave
// room within this many registers.
constexpr int64_t kEarlyAttnRegisterBudget = 192;

// What the tiled form needs to know about a target.
struct TiledTarget {
  int64_t compute_units;
  int64_t smem_limit;     // workgroup memory an override may take
  int64_t blocks_per_cu;  // the table's default for the K split (tiled_defaults)
  int64_t smem_per_cu;
  int64_t smem_reserved;  // taken per block besides the stages
  int64_t threads_per_cu;
  bool stages_in_globals;  // gfx9: a workgroup global per stage; sm_90: dynamic shared memory
};

TiledTarget tiled_target(Target t) {
  const TargetInfo &info = target_info(t);
  // On sm_90 a block takes what the hardware reserves and the allocation
  // unit of the dynamic memory's declaration; gfx9's stages are globals.
  const bool globals = info.amdgpu;
  const int64_t reserved = globals ? 0 : info.shared_reserved_per_workgroup + kDynamicSharedDeclarationBytes;
  const int64_t per_cu = table_of(t).choose("tiled_defaults", Contract{.target = t}).get("per_cu", 1);
  return {info.compute_units, info.shared_per_workgroup_max, per_cu, info.shared_per_cu,
          reserved, info.max_threads_per_cu, globals};
}

int64_t tile_count(const Contract &c, int64_t bn, int64_t bm) { return ceil_div(c.n, bn) * ceil_div(c.m_max, bm); }

// The K split a grid of `tiles` gets in a round of `held` workgroups: as
// many as fill it, each split a few K tiles long.
int64_t round_splits(const Contract &c, int64_t tiles, int64_t held) {
  const int64_t max_splits = std::max<int64_t>(1, (c.k / kTiledBk) / kTiledMinKTilesPerSplit);
  return std::clamp<int64_t>(held / tiles, 1, max_splits);
}

// The shape rows' facts, for the candidate row's tile (its bn x bm, stages
// and workgroups a CU).
Facts shape_facts(const Contract &c, const TuningOverride &o, const TiledTarget &tt) {
  auto tiles = [&c](const Choice &r) { return tile_count(c, r.get("bn", 64), r.get("bm", 64)); };
  auto round = [&tt](const Choice &r) { return r.get("per_cu", tt.blocks_per_cu) * tt.compute_units; };
  return {
      {"tiles_per_cu", [=, &tt](const Choice &r) { return tiles(r) / tt.compute_units; }},
      {"in_round", [=](const Choice &r) { return int64_t(tiles(r) <= round(r)); }},
      {"half_round", [=](const Choice &r) { return int64_t(2 * tiles(r) <= round(r)); }},
      {"round_three_quarters", [=](const Choice &r) { return int64_t(4 * tiles(r) >= 3 * round(r)); }},
      // Eighths of the last tile row's hidden rows M fills.
      {"m_fill_eighths",
       [&c](const Choice &r) {
         const int64_t bm = r.get("bm", 64);
         return 8 * c.m_max / (ceil_div(c.m_max, bm) * bm);
       }},
      {"round_splits", [=, &c](const Choice &r) { return round_splits(c, tiles(r), round(r)); }},
      // Eighths of the round the tiles and their K split fill.
      {"split_round_fill_eighths",
       [=, &c](const Choice &r) { return 8 * tiles(r) * round_splits(c, tiles(r), round(r)) / round(r); }},
      // Rings of the row's stages a split's K loop takes.
      {"split_rings",
       [=, &c](const Choice &r) {
         return (c.k / kTiledBk) / (r.get("stages", 4) * round_splits(c, tiles(r), round(r)));
       }},
      {"streamed_split_exceeds_a_round", [&c](const Choice &) { return int64_t(streamed_split_exceeds_a_round(c)); }},
      // tile128=0 keeps gfx950 off its 128 x 128 tiles (the sweeps' other arm).
      {"tile128_allowed", [&o](const Choice &) { return int64_t(!o.has("tile128") || o.at("tile128") != 0); }},
  };
}

// The shape row for `c`, or null where the register-streamed form serves it.
const Choice *shape_row(const Contract &c, const TuningOverride &o, const TiledTarget &tt) {
  return table_of(c.target).find("tiled_shape", c, shape_facts(c, o, tt));
}

bool tiled_shape_ok(const TiledSchedule &t, Target target, const TiledTarget &tt) {
  const int64_t wave = target_wave_size(target);
  const int64_t warps_m = t.waves / t.warps_n;
  const int64_t rows_per_pass = wave * t.waves / (t.bk / 8);
  return t.warps_n >= 1 && t.waves % t.warps_n == 0 && wave * t.waves <= 1024 && t.bn % rows_per_pass == 0 &&
         t.bm % rows_per_pass == 0 && t.bn % (fragment_shape(target).tile_w * t.warps_n) == 0 &&
         t.bm % (16 * warps_m) == 0 && (t.wgmma ? 3 : 2) * stage_bytes(t) <= tt.smem_limit &&
         (!t.wgmma || (t.bm == kWgmmaM * t.waves / 4 && t.bk == 64 && t.warps_n == 1 && t.bn <= kWgmmaMaxN &&
                       t.accs * t.bn / 2 <= kWgmmaMaxAccRegisters));
}

// Workgroups of `t` one CU holds at once, by workgroup memory and threads
// (the registers are the code's: the occupancy gate checks them).
int64_t tiled_workgroups_per_cu(const TiledSchedule &t, const TiledTarget &tt, int64_t wave) {
  const int64_t per_block = t.stages * stage_bytes(t) + tt.smem_reserved + (t.tma ? kStageBarrierBytes * t.stages : 0);
  return std::max<int64_t>(1, std::min(tt.smem_per_cu / per_block, tt.threads_per_cu / (wave * t.waves)));
}

// The grid (with its K split) fits one round of what the CUs hold.
bool tiled_fits_a_round(const Contract &c, const TiledSchedule &t, const TiledTarget &tt) {
  return tile_count(c, t.bn, t.bm) * t.splits <=
         tiled_workgroups_per_cu(t, tt, target_wave_size(c.target)) * tt.compute_units;
}

// The persistent order's group height, in tile rows: the power of two (up
// to the tile rows) whose band of a round reads the fewest weight and
// hidden rows.
int64_t band_group_tile_rows(const TiledSchedule &t, int64_t band, int64_t tiles_m) {
  int64_t best = 1, best_rows = INT64_MAX;
  for (int64_t g = 1; g <= std::max<int64_t>(1, tiles_m); g *= 2) {
    const int64_t rows = std::min(g, tiles_m) * t.bm + (band + g - 1) / g * t.bn;
    if (rows < best_rows) best = g, best_rows = rows;
  }
  return best;
}

// A persistent grid (tile_order.mlir) where the table asks for one: as many
// workgroups as the GPU holds, each looping over tiles in the kernel's own
// order, banded by die. Not with a K split (its meeting is per launch) or
// TMA (its barriers' phases would run on across tiles). persistent=0|1 overrides.
void plan_persistent_grid(const Contract &c, const TiledTarget &tt, const TuningOverride &o, TiledSchedule &t) {
  const TargetInfo &info = target_info(c.target);
  const int64_t held = tiled_workgroups_per_cu(t, tt, info.wave_size) * tt.compute_units;
  const int64_t tiles_n = ceil_div(c.n, t.bn), tiles_m = ceil_div(c.m_max, t.bm);
  const Facts facts = {{"tiles_exceed_a_round", [&](const Choice &) { return int64_t(tiles_n * tiles_m > held); }}};
  bool persistent = table_of(c.target).choose("tiled_persistent", c, facts).flag("persistent");
  if (o.has("persistent")) persistent = o.at("persistent") != 0;
  if (!persistent || t.splits > 1 || t.tma) return;
  t.persistent_workgroups = std::min(held, tiles_n * tiles_m);
  t.dies = info.dies;
  t.tile_group_m = band_group_tile_rows(t, std::max<int64_t>(1, t.persistent_workgroups / t.dies), tiles_m);
}

// Splits whose partials the last block loads together, one L2 round trip a
// round: every split at once where their registers fit beside the rest of
// the tail (the table's rule tiled_tail: what the target's code objects
// held) in what a lane holds at the waves the grid places; else rounds of
// 64 registers. oneround=0 keeps the rounds; round=N (sweeps) asks for N.
int64_t split_round(const Contract &c, const TiledSchedule &t, const TuningOverride &o, int64_t workgroups,
                    int64_t block, int64_t registers_per_split) {
  if (t.splits <= 1) return 1;
  if (o.has("round")) return std::clamp<int64_t>(o.at("round"), 1, t.splits);
  const bool one_round = !o.has("oneround") || o.at("oneround") != 0;
  if (one_round) {
    const Choice &tail = table_of(c.target).choose("tiled_tail", c);
    const int64_t rest = tail.get("registers", 64) *
                         (tail.flag("per_four_waves") ? std::max<int64_t>(1, t.waves / kTiledWaves) : 1);
    if (t.splits * registers_per_split <= lane_registers_placed(c.target, workgroups, block) - rest) return t.splits;
  }
  return std::clamp<int64_t>(64 / registers_per_split, 1, t.splits);
}

// The meeting's rounds: the arrival's (split_round), and the poll's over
// the splits the last one polls.
void plan_meeting(const Contract &c, const TuningOverride &o, TiledSchedule &t) {
  const int64_t block = target_wave_size(c.target) * t.waves;
  const int64_t warps_m = t.waves / t.warps_n;
  const int64_t rt = t.bn / (fragment_shape(c.target).tile_w * t.warps_n);
  const int64_t mt = t.bm / (16 * warps_m);
  t.split_round = split_round(c, t, o, tile_count(c, t.bn, t.bm) * t.splits, block, rt * mt * 4);
  t.poll_others = std::max<int64_t>(1, t.splits - 1);
  t.poll_round = std::min(t.split_round, t.poll_others);
  t.poll_rounds = ceil_div(t.poll_others, t.poll_round);
  // The split meets by poll where its grid fits a round and its polls take
  // at most the table's rounds (each round of polls waits for its own
  // loads, where the arrival's rounds may share one wait), or poll=1 asks.
  const int64_t rounds_max = table_of(c.target).choose("tiled_poll", c).get("rounds_max", 1);
  t.poll = t.poll_allowed && (o.has("poll") || t.poll_rounds <= rounds_max);
}

// The shape, stages, K split and persistent grid of `c` (planned again for
// gfx950's contract where gfx950_plan=1 mirrors its plans on sm_90).
TiledSchedule tiled_tuning(const Contract &c, const TuningOverride &o) {
  const TiledTarget tt = tiled_target(c.target);
  TiledSchedule t;
  t.blocks_per_cu = tt.blocks_per_cu;
  t.weight_bytes = dtype_bytes(c.dtype_weight);
  t.hidden_bytes = dtype_bytes(c.dtype_hidden);
  const bool k128 = c.k % 128 == 0;
  auto use_wgmma = [](TiledSchedule &u, int64_t warpgroups) {
    u.wgmma = true, u.tma = true;
    u.warps_n = 1, u.bk = 64;
    u.waves = 4 * warpgroups;
    u.bm = kWgmmaM * warpgroups;
  };
  // The table's shape (the rule ends with the row for a contract only
  // tiled=1 brings here).
  const Choice *row = shape_row(c, o, tt);
  int64_t budget = 0;  // the stages' workgroup memory
  if (row) {
    if (const int64_t wg = row->get("wgmma", 0)) use_wgmma(t, wg);
    t.bn = row->get("bn", t.bn);
    t.bm = row->get("bm", t.bm);
    t.waves = row->get("waves", t.waves);
    if (row->get("bk", kTiledBk) == 128 && k128) t.bk = 128;
    t.blocks_per_cu = row->get("per_cu", tt.blocks_per_cu);
    budget = row->values.count("stages") ? row->get("stages", 1) * stage_bytes(t) : row->get("stage_budget", 0);
  }
  // gfx950_plan=1 (sm_90 only): gfx950's own tiled plan for this contract,
  // its K loop too, so the H200 runs the plans gfx950 takes. Other keys do
  // not apply with it; a shape sm_90 cannot take keeps sm_90's table.
  if (c.target == Target::kSm90 && o.has("gfx950_plan")) {
    TiledSchedule mirrored =
        tiled_tuning(as_gfx950(c), override_subset(o, {"persistent", "poll", "tile128", "splits"}));
    mirrored.gfx950_loop = true;
    if (tiled_shape_ok(mirrored, c.target, tt)) {
      // The poll's one round is this GPU's.
      if (!o.has("poll")) mirrored.poll_allowed = mirrored.poll_allowed && tiled_fits_a_round(c, mirrored, tt);
      return mirrored;
    }
  }
  TiledSchedule asked = t;
  auto take = [&](const char *key, int64_t &field) {
    if (o.has(key)) field = o.at(key);
  };
  // wgmma=1 / wg=1|2 / wgmma=0 switch the form; the shape keys refine it.
  int64_t wgmma = t.wgmma, warpgroups = t.waves / 4;
  take("wgmma", wgmma);
  take("wg", warpgroups);
  if (wgmma && c.target == Target::kSm90) {
    use_wgmma(asked, std::clamp<int64_t>(warpgroups, 1, 2));
  } else if (asked.wgmma) {
    // Fragments where the table has wgmma: the fragment form's own large-M
    // shape, which the shape keys may refine.
    asked.wgmma = false, asked.tma = false, asked.waves = kTiledWaves, asked.warps_n = 2;
    asked.bn = 64, asked.bm = 64, asked.bk = k128 ? 128 : 64, budget = 64 * 1024;
    asked.blocks_per_cu = tt.blocks_per_cu;
  }
  if (asked.wgmma) {
    int64_t tma = asked.tma;
    take("tma", tma);
    asked.tma = tma != 0;
  }
  take("pending", asked.wgmma_pending);
  asked.wgmma_pending = asked.tma ? std::clamp<int64_t>(asked.wgmma_pending, 0, 1) : 1;
  take("accs", asked.accs);
  if (!asked.wgmma || (asked.accs != 1 && asked.accs != 2 && asked.accs != 4)) asked.accs = 1;
  take("bn", asked.bn);
  if (!asked.wgmma) take("bm", asked.bm);
  if (!asked.wgmma) take("waves", asked.waves);
  take("warps_n", asked.warps_n);
  take("bk", asked.bk);
  if (asked.bk != 64 && (asked.bk != 128 || !k128)) asked.bk = kTiledBk;
  if (tiled_shape_ok(asked, c.target, tt)) t = asked;  // an impossible override keeps the table's shape
  t.stages = std::min<int64_t>(kMaxRingStages, budget / stage_bytes(t));
  take("stages", t.stages);
  take("bps", t.blocks_per_cu);
  t.blocks_per_cu =
      std::clamp<int64_t>(t.blocks_per_cu, 1, tt.threads_per_cu / (target_wave_size(c.target) * t.waves));
  // The blocks a CU the K split counts on must fit together, each with the
  // pipeline's fewest stages (wgmma keeps one more in use); fewer where not.
  const int64_t min_stages = t.wgmma ? 3 : 2;
  auto fitting = [&](int64_t blocks) {
    const int64_t per_block = std::min(tt.smem_limit, tt.smem_per_cu / blocks - tt.smem_reserved);
    return (per_block - (t.tma ? kStageBarrierBytes * kMaxStages : 0)) / stage_bytes(t);
  };
  while (t.blocks_per_cu > 1 && fitting(t.blocks_per_cu) < min_stages) --t.blocks_per_cu;
  t.stages = std::clamp<int64_t>(t.stages, min_stages, std::max(min_stages, fitting(t.blocks_per_cu)));
  if (t.tma) t.stages = std::min(t.stages, kMaxStages);
  if (tt.stages_in_globals) t.stages = std::min(t.stages, kStageObjects);
  // As many K splits as keep every block in one round of blocks_per_cu a
  // CU, each split at least a few K tiles long.
  const int64_t kt = c.k / t.bk;
  const int64_t max_splits = std::max<int64_t>(1, kt / kTiledMinKTilesPerSplit);
  t.splits = std::clamp<int64_t>(t.blocks_per_cu * tt.compute_units / tile_count(c, t.bn, t.bm), 1, max_splits);
  take("splits", t.splits);
  t.splits = std::clamp<int64_t>(t.splits, 1, kt);
  plan_persistent_grid(c, tt, o, t);
  // The split may meet by poll where its grid fits one round of what the
  // CUs hold (every split the polling one waits for has then started);
  // plan_meeting counts its rounds. poll=0 keeps the arrival; poll=1 polls
  // any split grid (progress past one round rests on in-order dispatch).
  t.poll_allowed = t.splits > 1 && t.persistent_workgroups == 0 && tiled_fits_a_round(c, t, tt);
  if (o.has("poll")) t.poll_allowed = t.splits > 1 && t.persistent_workgroups == 0 && o.at("poll") != 0;
  return t;
}

// The epilogue staged through workgroup memory (tile_output_places.mlir),
// where 8-element row pieces are whole 16-byte accesses (N and the attn and
// out strides multiples of 8; the base pointers are checked at run time):
// the BM x BN f32 tile lies over the stages, free after the K loop, in
// parts (epilogue_parts). attn is loaded before the K loop where the
// registers allow, with a K split by every block of a tile (only the last
// uses it), never in a persistent grid (its code must fit the waves it
// places; the CU's other workgroups cover the round trip).
void plan_staged_epilogue(const Contract &c, TiledSchedule &t) {
  const int64_t block = target_wave_size(c.target) * t.waves;
  const EpilogueParts parts = epilogue_parts(t);
  const int64_t pieces_per_thread = ceil_div(t.bm * (t.bn / 8), block);
  const bool whole_pieces = c.n % 8 == 0 && c.ld_attn % 8 == 0 && c.ld_out % 8 == 0 && t.bn % 8 == 0;
  t.epi_staged = whole_pieces && parts.rows > 0 && parts.count <= t.stages;
  const int64_t acc_registers = t.accs * t.bn * t.bm / block + (t.splits > 1 ? t.bn * t.bm / block : 0);
  t.epi_attn_early = t.epi_staged && acc_registers + 4 * pieces_per_thread <= kEarlyAttnRegisterBudget &&
                     t.persistent_workgroups == 0;
  t.epi_parts = std::max<int64_t>(1, parts.count);
  t.epi_part_rows = std::max<int64_t>(1, parts.rows);
}

// Where the shape row asks for it, the tiled form applies only if its K
// split meets by poll in gfx950's own default plan.
bool shape_applies(const Contract &c, const TuningOverride &o) {
  const Choice *row = shape_row(c, o, tiled_target(c.target));
  if (!row || row->flag("asked_only")) return false;
  if (!row->flag("only_polled")) return true;
  const TuningOverride keys = override_subset(o, {"tile128", "splits", "oneround", "round", "poll"});
  TiledSchedule t = tiled_tuning(c, keys);
  plan_meeting(c, keys, t);
  return t.poll;
}

}  // namespace

bool tiled_applies(const Contract &c, const TuningOverride &o) {
  // The tiled form stages 16-bit tiles (an e4m3 weight takes the
  // register-streamed form, which decodes each lane's fragments) and has no
  // fp8 out's group epilogue; its stages are whole K tiles.
  if (!mma_available(c.target) || c.k % kTiledBk != 0 || c.dtype_weight == DType::kFP8E4M3 || c.fp8_out())
    return false;
  if (o.has("tiled")) return o.at("tiled") != 0;
  // gfx950_plan=1 on sm_90: the form gfx950 takes for this contract.
  if (c.target == Target::kSm90 && o.has("gfx950_plan")) return shape_applies(as_gfx950(c), o);
  return shape_applies(c, o);
}

TiledSchedule plan_tiled(const Contract &c, const TuningOverride &o) {
  TiledSchedule t = tiled_tuning(c, o);
  plan_meeting(c, o, t);
  // The K loop's ring where it is unrolled by STAGES (gfx9's stage globals,
  // and their mirror): every slot refilled every tile, past the end with
  // the last tile again (a refill under a branch made the backend wait for
  // every LDS-DMA load in flight). Where every split has more tiles than
  // stages the last ring is peeled instead (DRAIN: nothing in flight when
  // the loop ends), but not with two stages, whose tiles each wait for
  // their own copies alone. refill=0|1, drain=0|1 override.
  const bool unrolled_ring = tiled_target(c.target).stages_in_globals || t.gfx950_loop;
  t.refill_always = !t.tma && (o.has("refill") ? o.at("refill") != 0 : unrolled_ring);
  const int64_t fewest_tiles = c.k / t.bk / t.splits;
  const bool drain_fits = !t.tma && !t.wgmma && unrolled_ring && fewest_tiles > t.stages;
  t.drain = drain_fits && (o.has("drain") ? o.at("drain") != 0 : t.stages > 2 && !o.has("refill"));
  plan_staged_epilogue(c, t);
  return t;
}

}  // namespace gatejit::compiler
