// The tiled form's fixed geometry (templates/mma_tiled.mlir): what its
// stages, barriers and staged epilogue take, shared by its planner and its
// template parameters.
#pragma once

#include <cstdint>

#include "plan/schedule.h"

namespace gatejit::compiler {

inline constexpr int64_t kTiledBk = 64;                // K a stage (128-byte rows, 8 chunks); 128 where K allows
inline constexpr int64_t kTiledWaves = 4;              // a block's waves; a copy pass covers BLOCK / 8 rows
inline constexpr int64_t kTiledMinKTilesPerSplit = 4;  // K tiles a split needs for the pipeline to fill
inline constexpr int64_t kStageObjects = 8;            // gfx950: stage globals in async_copy_gfx950.mlir
inline constexpr int64_t kWgmmaM = 64;                 // wgmma's m: hidden rows a warpgroup
inline constexpr int64_t kWgmmaMaxN = 256;             // wgmma's largest n: weight rows a block
inline constexpr int64_t kWgmmaMaxAccRegisters = 192;  // of a thread's 255, for its accumulators
inline constexpr int64_t kMbarrierBytes = 8;           // TMA: a stage's mbarrier, after the stages
inline constexpr int64_t kSlotCounterBytes = 4;        // TMA: a slot's release counter, after the barriers
inline constexpr int64_t kStageBarrierBytes = kMbarrierBytes + kSlotCounterBytes;
inline constexpr int64_t kMaxStages = 16;              // TMA: the barriers' room the stage fit reserves

// One stage: BN weight rows and BM hidden rows of BK elements each.
inline int64_t stage_bytes(const TiledSchedule &t) { return (t.bn * t.weight_bytes + t.bm * t.hidden_bytes) * t.bk; }

// Tiles in flight ahead of the one in use: STAGES - 1; with wgmma STAGES -
// 2 (a stage's products still run while the next stage's start), but TMA
// refills tile i - 1's slot once tile i's products are issued (STAGES - 1),
// and with WGMMA_PENDING = 0 tile i's own slot (STAGES).
inline int64_t stages_ahead(const TiledSchedule &t) {
  return !t.wgmma ? t.stages - 1 : !t.tma ? t.stages - 2 : t.stages - t.wgmma_pending;
}

// The staged epilogue's tile: BM rows of BN products, EPI_LD = BN + pad
// floats apart, EPI_LD = 8 mod 32 (a lane's two neighbouring products one
// 8-byte store; a half warp's 16 lanes cover the 32 banks once).
inline int64_t epilogue_tile_ld(const TiledSchedule &t) { return t.bn + ((8 - t.bn) % 32 + 32) % 32; }

// The tile in parts, part i over stage slot i: the whole tile where one
// stage holds it, else the largest power of two of rows one does (the
// division finding a row's part folds to a shift), or as many as fit where
// a power of two would need more parts than there are stages. {0, 0}: not
// even one row fits a stage.
struct EpilogueParts {
  int64_t rows = 0, count = 0;
};
inline EpilogueParts epilogue_parts(const TiledSchedule &t) {
  const int64_t row_bytes = epilogue_tile_ld(t) * 4;
  const int64_t fit = stage_bytes(t) / row_bytes;
  if (fit == 0) return {0, 0};
  if (t.bm <= fit) return {t.bm, 1};
  int64_t rows = 1;
  while (rows * 2 <= fit) rows *= 2;
  if ((t.bm + rows - 1) / rows > t.stages) rows = fit;
  return {rows, (t.bm + rows - 1) / rows};
}

}  // namespace gatejit::compiler
