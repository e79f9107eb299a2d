// The planner's decisions for one contract, typed: one schedule per form
// (the gemv, the register-streamed mma, the tiled mma, the generic kernel),
// from which the template parameters (to_params) and the report's tuning
// values (report) are both derived.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace gatejit::compiler {

// gemv (templates/gemv.mlir): 4 column groups a workgroup, each of ROWS
// weight rows a wave, K split over KSPLIT waves.
struct GemvSchedule {
  int64_t rows = 1;    // weight rows a wave: each hidden vector loaded serves them all
  int64_t unroll = 1;  // 16-byte loads a row in flight before their products
  int64_t ksplit = 1;  // waves splitting one group's K (partials meet in workgroup memory)
  int64_t part = 1;    // partial sums an accumulator (independent product chains)
  bool weights_first = false;  // a group's weight loads all go out before its hidden loads
};

// The register-streamed mma (templates/mma.mlir): one wave holds RT weight
// tiles x MT hidden tiles and 1 / KSPLIT of the K steps; grid z splits K
// across SPLITS workgroups.
struct StreamedSchedule {
  int64_t tile_w = 8, h_loads = 1, h_stride = 16;  // the fragment's shape (the target's instruction)
  int64_t rt = 1, mt = 1, ksplit = 1, vecs = 2, unroll = 1, groups = 1;
  int64_t m_stride = 16;  // hidden rows a grid row owns (thin rows: fewer than MT x 16)
  int64_t splits = 1;     // K split across workgroups (grid z)
  bool poll = false;      // the split meets by poll (split_poll.mlir), not by arrival
  bool grid_resident = false;  // the grid is placed at once, its occupancy pinned
  int64_t piece_width = 8;     // VW: the epilogue piece's columns
  bool weight_run_load = false;  // a lane's VECS weight vectors of a row loaded as one run
  bool element_finish = false;   // each wave finishes the outputs it sums (ELEMENT_FINISH), no pieces
};

// The tiled mma (templates/mma_tiled.mlir): BN x BM block tiles streaming
// K through STAGES stages of workgroup memory.
struct TiledSchedule {
  int64_t bn = 64, bm = 32, bk = 64, warps_n = 2, waves = 4, stages = 4, splits = 1;
  int64_t blocks_per_cu = 1;  // what the K split counts on (sm_90: the occupancy asked of ptxas)
  int64_t weight_bytes = 2, hidden_bytes = 2;
  bool wgmma = false, tma = false;
  bool gfx950_loop = false;  // gfx950's K loop realised on sm_90 (gfx950_plan=1)
  int64_t wgmma_pending = 1, accs = 1;
  int64_t persistent_workgroups = 0, dies = 1, tile_group_m = 1;
  bool poll_allowed = false;  // the split's grid fits a round (the poll may apply)
  // The K split's meeting: splits a round of the arrival's loads, and the poll's rounds.
  int64_t split_round = 1, poll_round = 1, poll_rounds = 1, poll_others = 1;
  bool poll = false;
  // The K loop's ring (gfx950's, and its mirror): every slot refilled, or the last ring peeled.
  bool refill_always = false, drain = false;
  // The epilogue staged through workgroup memory, attn loaded before the K loop.
  bool epi_staged = false, epi_attn_early = false;
  int64_t epi_parts = 1, epi_part_rows = 1;
};

struct GenericSchedule {};

// Where the gemv and register-streamed epilogues load attn: 0 in the
// epilogue, 1 after the main loop, 2 before it; and whether sm_90 asks its
// lines into L2 at the kernel's start.
struct AttnPlacement {
  int64_t at = 0;
  bool prefetch = false;
};

// AMDGPU: the waves a SIMD the code is scheduled for ("amdgpu-waves-per-eu"
// = "min,max"); max 0: no limit. pinned: the fewest is the grid's own (a
// grid placed at once must fit), not the default 1.
struct WavesPerSimd {
  int64_t min = 1, max = 0;
  bool pinned = false;
};

using FormSchedule = std::variant<GenericSchedule, GemvSchedule, StreamedSchedule, TiledSchedule>;

// The report's tuning values ("tuning"), in the order a reader takes them.
using TuningValues = std::vector<std::pair<std::string, int64_t>>;

struct Schedule {
  FormSchedule form;
  AttnPlacement attn;  // gemv and streamed only
  WavesPerSimd waves;
};

}  // namespace gatejit::compiler
