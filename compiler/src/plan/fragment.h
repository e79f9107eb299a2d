// The matrix fragment both mma forms build on (mma_sm90 / mma_gfx950; the
// lane layouts are in compiler/src/mma_layout.cpp): TILE_W weight rows a
// tile (the target's instruction n), 16 hidden rows a tile loaded as
// H_LOADS 16-byte loads a lane, H_STRIDE rows apart.
#pragma once

#include <cstdint>

#include "gatejit/target_info.h"

namespace gatejit::compiler {

struct FragmentShape {
  int64_t tile_w, h_loads, h_stride;
};

inline FragmentShape fragment_shape(Target t) {
  const int64_t tile_w = target_info(t).matrix.n;
  if (target_is_amdgpu(t)) return {tile_w, 1, 16};  // MFMA 16x16x32: lane l, row l % 16 of both
  return {tile_w, 2, 8};                            // mma.sync m16n8k16: weight row g, hidden rows g, g + 8
}

// K a vector column of both fragments covers: two m16n8k16, or one 16x16x32.
inline constexpr int64_t kMmaInstrK = 32;

}  // namespace gatejit::compiler
