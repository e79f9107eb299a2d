// Lane-to-element layouts of the matrix-core instructions the `mma` template
// uses, and the template's load scheme on top of them, described once here and
// checked on the host (tests/compiler/mma_layout_test.cpp), since no AMD GPU
// is reachable. templates/mma_sm90.mlir and mma_gfx950.mlir implement exactly
// these functions in IR; the GPU suite runs the sm_90 one.
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

// How the mma template feeds an instruction from 16-byte loads. Per K step of
// `kstep` elements a lane loads 8 consecutive K elements, from offset
// k_offset(lane), of weight row w_row(lane) and of hidden rows
// h_row(lane, q) (q < h_loads). Those 8 values become fragment slots of
// `instructions` consecutive instructions: slot i of instruction j's A takes
// element a_elem(j, i) of hidden load a_load(j, i); slot i of B takes element
// b_elem(j, i) of the weight vector. Any such assignment is a valid product as
// long as A and B agree on which physical K sits in each logical K slot: the
// host test checks that by simulation.
struct MmaLoadScheme {
  const MmaLayout *layout;
  int kstep, instructions, h_loads;
  int (*w_row)(int lane);
  int (*h_row)(int lane, int q);
  int (*k_offset)(int lane);
  int (*a_load)(int instr, int slot);
  int (*a_elem)(int instr, int slot);
  int (*b_elem)(int instr, int slot);
};

const MmaLoadScheme &mma_load_scheme(Target target);

// sm_90a warpgroup MMA (wgmma.mma_async m64nNk16, fp32 accumulate), as
// mma_tiled's wgmma form uses it (templates/tile_products_wgmma.mlir):
// accumulator register `reg` (< N / 2) of `thread` (< 128, the warpgroup)
// holds element (row in m = 64, col in n) of D. Both operands come from
// shared memory, so D is the only lane layout the template depends on: it
// hands register 4 e + q of warp w to the epilogue as element q of the
// mma.sync C fragment of tile (16 w hidden rows, 8 e weight rows).
Element wgmma_m64_accumulator(int thread, int reg);

}  // namespace gatejit::compiler
