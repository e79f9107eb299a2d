#include "mma_layout.h"

namespace gatejit::compiler {
namespace {

// PTX ISA, "Matrix fragments for mma.m16n8k16" (bf16/f16): groupID = lane / 4,
// threadID_in_group = lane % 4; A holds 8 values (4 x .b32 pairs), B 4, C 4.
Element nv_a(int lane, int i) {
  const int group = lane >> 2, t = lane & 3;
  const int row = group + ((i >> 1) & 1) * 8;      // a0,a1: g; a2,a3: g+8; a4,a5: g; a6,a7: g+8
  const int col = t * 2 + (i & 1) + (i >> 2) * 8;  // a4..a7: k + 8
  return {row, col};
}
Element nv_b(int lane, int i) {
  const int group = lane >> 2, t = lane & 3;
  return {t * 2 + (i & 1) + (i >> 1) * 8, group};  // b0,b1: k = 2t+{0,1}; b2,b3: +8; n = g
}
Element nv_c(int lane, int i) {
  const int group = lane >> 2, t = lane & 3;
  return {group + (i >> 1) * 8, t * 2 + (i & 1)};  // c0,c1: row g; c2,c3: row g+8
}

// CDNA3/4 ISA, MFMA 16x16 with 64 lanes: lane l works on column/row l % 16 and
// the k block l / 16; the 16x16x32 bf16/f16 forms take 8 values per lane.
Element amd_a(int lane, int i) { return {lane % 16, (lane / 16) * 8 + i}; }
Element amd_b(int lane, int i) { return {(lane / 16) * 8 + i, lane % 16}; }
Element amd_c(int lane, int i) { return {(lane / 16) * 4 + i, lane % 16}; }

// sm_90 load scheme: lane 4g + t loads K [8t, 8t + 8) of weight row g and of
// hidden rows g and g + 8. Instruction j takes pairs 2j and 2j + 1 of each
// vector: A slots (a0..a7) = hidden g pair 2j, hidden g+8 pair 2j, hidden g
// pair 2j+1, hidden g+8 pair 2j+1; B slots (b0..b3) = weight pairs 2j, 2j+1.
int nv_w_row(int lane) { return lane >> 2; }
int nv_h_row(int lane, int q) { return (lane >> 2) + 8 * q; }
int nv_k_offset(int lane) { return (lane & 3) * 8; }
int nv_a_load(int, int slot) { return (slot >> 1) & 1; }
int nv_a_elem(int instr, int slot) { return (2 * instr + (slot >> 2)) * 2 + (slot & 1); }
int nv_b_elem(int instr, int slot) { return (2 * instr + (slot >> 1)) * 2 + (slot & 1); }

// gfx950 load scheme: the fragment is the load (lane l: K [8 (l / 16), +8) of
// row l % 16 of both operands), one instruction per step.
int amd_w_row(int lane) { return lane % 16; }
int amd_h_row(int lane, int) { return lane % 16; }
int amd_k_offset(int lane) { return (lane / 16) * 8; }
int amd_a_load(int, int) { return 0; }
int amd_elem(int, int slot) { return slot; }

}  // namespace

const MmaLayout &nvidia_m16n8k16() {
  static const MmaLayout layout{"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, 8, 16, 32, 8, 4, 4,
                                nv_a, nv_b, nv_c};
  return layout;
}

const MmaLayout &amdgpu_mfma_16x16x32() {
  static const MmaLayout layout{"v_mfma_f32_16x16x32_bf16", 16, 16, 32, 64, 8, 8, 4, amd_a, amd_b, amd_c};
  return layout;
}

// PTX ISA, "Register fragment layout for accumulator D" of wgmma .m64nNk16:
// warp w of the warpgroup owns rows 16 w .. 16 w + 15; within it lane
// 4 g + t holds rows g and g + 8 and columns 8 j + 2 t, + 1 for every j.
Element wgmma_m64_accumulator(int thread, int reg) {
  const int warp = thread / 32, lane = thread % 32;
  return {16 * warp + lane / 4 + 8 * ((reg % 4) / 2), 8 * (reg / 4) + 2 * (lane % 4) + reg % 2};
}

const MmaLayout &mma_layout(Target target) {
  return target_is_amdgpu(target) ? amdgpu_mfma_16x16x32() : nvidia_m16n8k16();
}

const MmaLoadScheme &mma_load_scheme(Target target) {
  static const MmaLoadScheme nv{&nvidia_m16n8k16(), 32, 2, 2, nv_w_row, nv_h_row, nv_k_offset,
                                nv_a_load, nv_a_elem, nv_b_elem};
  static const MmaLoadScheme amd{&amdgpu_mfma_16x16x32(), 32, 1, 1, amd_w_row, amd_h_row, amd_k_offset,
                                 amd_a_load, amd_elem, amd_elem};
  return target_is_amdgpu(target) ? amd : nv;
}

}  // namespace gatejit::compiler
