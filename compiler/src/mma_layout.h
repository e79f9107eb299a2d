// Lane-to-element layouts of the matrix-core instructions the planned `mma`
// template (issue 6) will use, described once here and checked on the host
// (tests/compiler/mma_layout_test.cpp), since no AMD GPU is reachable.
//
// For the gate epilogue, A is a tile of hidden (rows = M, padded to the tile),
// B a tile of weight^T (K x N: column n of B is row n of weight), and C/D the
// fp32 accumulator tile of out before the epilogue.
#pragma once

#include <string>

#include "gatejit/contract.h"

namespace gatejit::compiler {

struct Element {
  int row, col;
  bool operator==(const Element &) const = default;
};

struct MmaLayout {
  std::string instruction;  // e.g. "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
  int m, n, k;              // tile: A is m x k, B is k x n, C/D is m x n
  int lanes;                // wave/warp size
  int a_per_lane, b_per_lane, c_per_lane;
  // Where element i of `lane`'s fragment sits in the tile.
  Element (*a)(int lane, int i);  // (row in m, col in k)
  Element (*b)(int lane, int i);  // (row in k, col in n)
  Element (*c)(int lane, int i);  // (row in m, col in n)
};

// sm_90: mma.sync m16n8k16 (bf16/f16 in, fp32 accumulate), one warp of 32.
const MmaLayout &nvidia_m16n8k16();
// gfx950: v_mfma_f32_16x16x32_bf16 / _f16, one wave of 64.
const MmaLayout &amdgpu_mfma_16x16x32();

// The layout the mma template uses on `target`.
const MmaLayout &mma_layout(Target target);

}  // namespace gatejit::compiler
