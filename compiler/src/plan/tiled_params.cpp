// The tiled mma's template parameters, geometry and facts, from its
// schedule (templates/mma_tiled.mlir documents the parameters).
#include <fmt/format.h>

#include <algorithm>

#include "gatejit/target_info.h"
#include "plan/forms.h"
#include "plan/fragment.h"
#include "plan/grid_facts.h"
#include "plan/template_params.h"
#include "plan/tiled_layout.h"

namespace gatejit::compiler {
namespace {

// wgmma's accumulator is a struct of BN / 2 f32 registers; the template's
// is TILES x 4 (the mma.sync C layout per 8 weight rows, the same order).
// Struct fields take constant positions only, so the conversions are
// written out here, one line per register.
void set_wgmma_params(TemplateParams &P, const Contract &c, const TiledSchedule &t) {
  const int64_t regs = t.bn / 2, tiles = t.bn / 8;
  std::string fields, pack, unpack;
  for (int64_t i = 0; i < regs; ++i) fields += i ? ", f32" : "f32";
  const std::string acc = fmt::format("!llvm.struct<({})>", fields);
  const std::string vec = fmt::format("vector<{}x4xf32>", tiles);
  for (int64_t i = 0; i < regs; ++i) {
    pack += fmt::format("      %x{0} = vector.extract %acc[{1}, {2}] : f32 from {3}\n"
                        "      %s{4} = llvm.insertvalue %x{0}, %s{0}[{0}] : {5}\n",
                        i, i / 4, i % 4, vec, i + 1, acc);
    unpack += fmt::format("      %y{0} = llvm.extractvalue %s[{0}] : {1}\n"
                          "      %v{2} = vector.insert %y{0}, %v{0} [{3}, {4}] : f32 into {5}\n",
                          i, acc, i + 1, i / 4, i % 4, vec);
  }
  pack += fmt::format("      return %s{} : {}", regs, acc);
  unpack += fmt::format("      return %v{} : {}", regs, vec);
  P["WGMMA_ACC"] = acc;
  P["WGMMA_PACK"] = pack;
  P["WGMMA_UNPACK"] = unpack;
  // WGMMA_ACCS accumulators (an array; ACC), K step s of a stage into
  // accumulator s mod WGMMA_ACCS; begun as zeros and summed in array order.
  const std::string accs = fmt::format("!llvm.array<{} x {}>", t.accs, acc);
  std::string begin = fmt::format("      %a0 = llvm.mlir.poison : {}\n", accs);
  std::string end = fmt::format("      %e0 = llvm.extractvalue %d[0] : {}\n"
                                "      %sum0 = func.call @struct_to_acc(%e0) : ({}) -> {}\n",
                                accs, acc, vec);
  for (int64_t a = 0; a < t.accs; ++a) {
    begin += fmt::format("      %a{0} = llvm.insertvalue %s, %a{1}[{1}] : {2}\n", a + 1, a, accs);
    if (a == 0) continue;
    end += fmt::format("      %e{0} = llvm.extractvalue %d[{0}] : {1}\n"
                       "      %v{0} = func.call @struct_to_acc(%e{0}) : ({2}) -> {3}\n"
                       "      %sum{0} = arith.addf %sum{4}, %v{0} : {3}\n",
                       a, accs, acc, vec, a - 1);
  }
  begin += fmt::format("      return %a{} : {}", t.accs, accs);
  end += fmt::format("      return %sum{} : {}", t.accs - 1, vec);
  P["ACC"] = accs;
  P["WGMMA_ACCS_BEGIN"] = begin;
  P["WGMMA_ACCS_END"] = end;
  for (int64_t s = 0; s < 4; ++s) P[fmt::format("WGMMA_ACC_OF_K{}", s)] = fmt::format("{}", s % t.accs);
  P["WGMMA_TYPE"] = c.dtype_weight == DType::kBF16 ? "bf16" : "f16";
}

// The staged epilogue (plan_staged_epilogue decided it): part i of the tile
// over stage slot i, on gfx950 each slot its own global, on sm_90 the same
// parts in the same slots.
void set_staged_epilogue_params(TemplateParams &P, const TiledSchedule &t, int64_t block) {
  const int64_t ld = epilogue_tile_ld(t);
  const int64_t per_row = t.bn / 8;
  const int64_t pieces = t.bm * per_row;
  P["EPI_STAGED"] = t.epi_staged ? "1" : "0";
  P["EPI_ATTN_EARLY"] = t.epi_attn_early ? "1" : "0";
  P["EPI_LD"] = fmt::format("{}", ld);
  P["EPI_PARTS"] = fmt::format("{}", t.epi_parts);
  P["EPI_PART_ROWS"] = fmt::format("{}", t.epi_part_rows);
  P["EPI_PART_FLOATS"] = fmt::format("{}", t.epi_part_rows * ld);
  P["EPI_PIECES"] = fmt::format("{}", pieces);
  P["EPI_PIECES_PER_ROW"] = fmt::format("{}", per_row);
  P["EPI_PIECES_PER_THREAD"] = fmt::format("{}", ceil_div(pieces, block));
}

}  // namespace

void apply_tiled(KernelPlan &p, const TiledSchedule &t) {
  const Contract &c = p.contract;
  const bool amd = target_is_amdgpu(c.target);
  const int64_t wave = target_wave_size(c.target);
  const int64_t block = wave * t.waves;
  const int64_t warps_m = t.waves / t.warps_n;
  const int64_t rt = t.bn / (fragment_shape(c.target).tile_w * t.warps_n);
  const int64_t mt = t.bm / (16 * warps_m);
  const int64_t tiles_n = ceil_div(c.n, t.bn);
  const int64_t tiles_m = ceil_div(c.m_max, t.bm);
  const int64_t w_cpt = t.bn * (t.bk / 8) / block;
  const int64_t h_cpt = t.bm * (t.bk / 8) / block;
  auto &P = p.params;
  set_problem_params(P, c);
  if (!t.tma) set_operand_params(P, c);
  auto set = [&](const char *name, int64_t v) { P[name] = fmt::format("{}", v); };
  set("WAVE", wave);
  set("BLOCK", block);
  set("WARPS_N", t.warps_n);
  set("RT", rt);
  set("MT", mt);
  set("TILES", rt * mt);
  set("BN", t.bn);
  set("BM", t.bm);
  set("ROWS", t.bn + t.bm);
  set("BK", t.bk);
  set("KSUB", t.bk / 64);
  if (!t.wgmma) set("VECS", 2);  // a lane's chunks a row in one 64-K part (@mma_tiles)
  set("STAGES", t.stages);
  const int64_t ahead = stages_ahead(t);
  set("STAGES_AHEAD", ahead);
  // In flight while the oldest stage is used: STAGES - 2 later stages, as
  // copy groups (sm_90) or as each thread's loads (gfx950 counts loads).
  if (!amd && !t.tma) set("PENDING", ahead - 1);  // async_copy_sm90's (gfx950's: WAIT_YOUNGER_CASES)
  set("KT", c.k / t.bk);
  set("SPLITS", t.splits);
  P["SPLIT_K"] = t.splits > 1 ? "true" : "false";
  set("TILES_N", tiles_n);
  if (!t.tma) {  // stage_copy_chunks: every thread copies 16-byte chunks
    set("CHUNKS", t.bk / 8);
    set("W_CPT", w_cpt);
    set("H_CPT", h_cpt);
    P["SWIZZLE_SOURCE"] = amd ? "true" : "false";
  }
  set("SPLIT_ROUND", t.split_round);
  set("SPLIT_ROUNDS_END", ceil_div(t.splits, t.split_round) * t.split_round);
  P["SPLIT_POLL"] = t.poll ? "1" : "0";
  P["WS_INIT"] = t.poll ? "dense<0.0>" : "uninitialized";
  set("POLL_OTHERS", t.poll_others);
  set("POLL_ROUND", t.poll_round);
  set("POLL_ROUNDS_END", t.poll_rounds * t.poll_round);
  set("TILE_PAIRS", rt * mt * 2);
  set("BLOCK_WAVES", t.waves);
  P["DEVICE_SCOPE"] = amd ? "agent" : "device";  // the poll's accesses (split_poll.mlir)
  // Without a split the workspace is folded away; one element keeps the
  // declarations well-formed.
  set("WS_SIZE", t.splits > 1 ? t.splits * tiles_n * tiles_m * rt * mt * 4 * block : 1);
  set("WS_TILES", t.splits > 1 ? tiles_n * tiles_m : 1);
  set_fragment_params(P, c);
  if (t.wgmma) {
    // wgmma reads both operands from the stage: no per-lane fragments.
    P.erase("H_LOADS");
    P.erase("H_STRIDE");
    set_wgmma_params(P, c, t);
    set("WGMMA_PENDING", t.wgmma_pending);
    P["GENERIC_PROXY_COPIES"] = t.tma ? "false" : "true";
  } else {
    P["ACC"] = fmt::format("vector<{}x4xf32>", rt * mt);
  }
  P["KERNEL_ATTRS"] = amd ? "" : fmt::format(", nvvm.minctasm = {} : i32", t.blocks_per_cu);
  P["STAGE_MEMREF"] = fmt::format("memref<{}x{}x{}, strided<[{}, 1], offset: ?>, #gpu.address_space<workgroup>>",
                                  t.bn + t.bm, t.bk, P["T"], t.bk);
  // Where the stages live (templates/stage_pick_*.mlir): sm_90 in the
  // dynamic workgroup memory, a slot per tile i mod STAGES; gfx950 a
  // workgroup global per stage, the K loop unrolled by STAGES so that every
  // slot is a constant.
  set("SLOT_RING", amd || t.gfx950_loop ? t.stages : 1);
  p.body_fragments["PICK_STAGE"] = amd ? "stage_pick_gfx950" : "stage_pick_sm90";
  p.body_fragments["PICK_EPILOGUE_PART"] = amd ? "epilogue_part_gfx950" : "epilogue_part_sm90";
  // What the copies read: two tensor maps passed by value (TMA, made
  // 128-byte grid constants by the mark-tensor-map-args pass), or the
  // weight and hidden memrefs.
  set("STAGE_BYTES", stage_bytes(t));
  if (t.tma) {
    set("BARRIERS", t.stages * stage_bytes(t));
    set("COUNTERS_AFTER_BARRIERS", t.stages * kMbarrierBytes);
    set("WARPGROUPS", t.waves / 4);
  }
  P["REFILL_EARLY"] = t.tma ? "false" : "true";
  P["REFILL_ALWAYS"] = t.refill_always && !t.drain ? "true" : "false";
  P["DRAIN"] = t.drain ? "true" : "false";
  // Where the splits divide the K tiles evenly, every split has the same
  // idle positions: a constant, so the first ring's checks fold away.
  const int64_t k_tiles = c.k / t.bk;
  const int64_t fewest_tiles = k_tiles / t.splits;
  const bool even_split = k_tiles % t.splits == 0;
  P["DRAIN_S0_KNOWN"] = even_split ? "true" : "false";
  set("DRAIN_S0", even_split ? (t.stages - fewest_tiles % t.stages) % t.stages : 0);
  // gfx950's wait for a tile with `younger` tiles issued after it: a case
  // each (this thread's loads of that many stages), none for 0.
  std::string wait_cases;
  for (int64_t y = 1; y < ahead; ++y)
    wait_cases += fmt::format("      case {} {{\n        amdgpu.memory_counter_wait load({})\n        scf.yield\n      }}\n",
                              y, y * (w_cpt + h_cpt));
  if (amd) P["WAIT_YOUNGER_CASES"] = wait_cases;
  if (t.tma) {
    P["COPY_ARGS"] = ", %w_src: !llvm.ptr, %h_src: !llvm.ptr";
    P["COPY_SRC"] = "!llvm.ptr";
    P["KERNEL_ATTRS"] += fmt::format(", gatejit.tensor_maps = {} : i32", kTensorMapArgCount);
  } else {
    P["COPY_ARGS"] = "";
    P["COPY_SRC"] = fmt::format("memref<?x{}, #gpu.address_space<global>>", P["T"]);
  }
  p.body_fragments["COPY_SOURCES"] = t.tma ? "copy_sources_tensor_map" : "copy_sources_memref";
  set_staged_epilogue_params(P, t, block);
  p.template_file = "mma_tiled";
  P["PERSISTENT"] = t.persistent_workgroups > 0 ? "true" : "false";
  set("DIES", t.dies);
  set("TILE_GROUP_M", t.tile_group_m);
  set("PERSISTENT_WORKGROUPS", t.persistent_workgroups);
  p.snippets = {fragment_snippet(c.target), "tile_output_places", "split_arrival", "split_poll", "split_poll_tile",
                "tile_order", fallback_mark_snippet(c.target)};
  if (t.tma) p.snippets.push_back("async_copy_sm90_tma");
  else p.snippets.insert(p.snippets.end(), {amd ? "async_copy_gfx950" : "async_copy_sm90", "stage_copy_chunks"});
  if (t.wgmma) p.snippets.push_back("tile_products_wgmma");
  else p.snippets.insert(p.snippets.end(), {"mma_tiles", "tile_products_fragments"});
}

void layout_tiled(KernelPlan &p, const TiledSchedule &t) {
  const Contract &c = p.contract;
  const bool amd = target_is_amdgpu(c.target);
  const int64_t block = target_wave_size(c.target) * t.waves;
  const int64_t warps_m = t.waves / t.warps_n;
  // Dynamic workgroup memory: the stages on sm_90; on gfx950 (stages in
  // globals, counted in the code object's LDS) the K-split flag alone.
  const int64_t dynamic_bytes = !amd ? t.stages * stage_bytes(t) + (t.tma ? t.stages * kStageBarrierBytes : 0)
                                     : (t.splits > 1 ? 16 : 0);
  p.geometry = {uint32_t(block), uint32_t(t.bn), false, uint32_t(t.bm), uint32_t(t.splits), uint32_t(dynamic_bytes)};
  if (t.tma) p.geometry.tensor_maps = {uint32_t(t.bk), uint32_t(t.bn), uint32_t(t.bm)};
  p.geometry.persistent_workgroups = uint32_t(t.persistent_workgroups);
  const int64_t rounds = t.splits <= 1 ? 0 : t.poll ? t.poll_rounds : ceil_div(t.splits, t.split_round);
  p.facts = {.form = "mma_tiled", .weight_rows_per_block = t.bn, .hidden_rows_per_block = t.bm,
             .splits = t.splits, .split_poll = t.poll, .stages_ahead = stages_ahead(t), .stage_bytes = stage_bytes(t),
             .reduction_rounds = rounds,
             .matrix = true,
             .warpgroup_matrix = t.wgmma,
             // Fragments: each weight row of a stage is read by the WARPS_M
             // warps of its column, each hidden row by the WARPS_N of its
             // row, over the K tiles of the busiest split.
             .shared_operand_bytes = t.wgmma ? 0
                                             : (warps_m * t.bn * t.weight_bytes + t.warps_n * t.bm * t.hidden_bytes) *
                                                   (ceil_div(c.k / t.bk, t.splits) * t.bk)};
}

TuningValues report_tiled(const TiledSchedule &t) {
  return {{"BN", t.bn},
          {"BM", t.bm},
          {"BK", t.bk},
          {"STAGES", t.stages},
          {"SPLITS", t.splits},
          {"WARPS_N", t.warps_n},
          {"WGMMA", t.wgmma},
          {"TMA", t.tma},
          {"WGMMA_PENDING", t.wgmma_pending},
          {"ACCS", t.accs},
          {"EPI_STAGED", t.epi_staged},
          {"EPI_ATTN_EARLY", t.epi_attn_early},
          {"EPI_PARTS", t.epi_parts},
          {"EPI_PART_ROWS", t.epi_part_rows},
          {"PERSISTENT_WORKGROUPS", t.persistent_workgroups},
          {"TILE_GROUP_M", t.tile_group_m},
          {"SPLIT_ROUND", t.split_round},
          {"SPLIT_POLL", t.poll}};
}

}  // namespace gatejit::compiler
