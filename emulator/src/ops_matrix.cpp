// Matrix fused multiply-add (MFMA) of 16-bit inputs into f32 (VOP3P-MAI).
// Operand layouts: AMD CDNA4 ISA reference, "Matrix Arithmetic
// Instructions" (dependent register layouts), as the AMD Matrix Instruction
// Calculator prints them for a single-block MxNxK instruction of a wave64:
//   A (M x K): lane i + M * (k / kpl) holds A[i][k] as element k % kpl,
//   B (K x N): lane j + N * (k / kpl) holds B[k][j] as element k % kpl,
//   C, D (M x N): lane j + N * g holds D[4 * g + r][j] in register r of each
//   group of 4 (16x16), and for 32x32 row 8 * (r / 4) + 4 * (lane / 32) + r % 4,
// with kpl = K / (64 / M) elements per lane. The products are exact in f64
// and summed there with C, then rounded once to f32: the matrix unit's
// internal rounding is not modelled (docs/emulator.md).
#include "launch.h"
#include "op_table.h"
#include "valu.h"

namespace gatejit::emulator {
namespace {

template <int M, int N, int K, bool Bf16>
void v_mfma(Wave &w, const Inst &in) {
  static_assert(M == N && (M == 16 || M == 32), "single-block 16x16 or 32x32 only");
  if (in.m.cbsz || in.m.abid || in.m.blgp) fail("MFMA broadcast controls (cbsz/abid/blgp) are not modelled");
  if (in.op[1].neg || in.op[2].neg || in.m.neg_lo || in.m.neg_hi) fail("MFMA negation modifiers are not modelled");
  if (w.exec() != ~0ull) fail("MFMA with a partial EXEC mask is not modelled");
  constexpr int groups = 64 / M;       // lane groups along K
  constexpr int kpl = K / groups;      // elements per lane
  constexpr int regs = M * N / 64;     // D registers per lane
  const Operand &da = in.op[1], &db = in.op[2], &dc = in.op[3];
  if (da.kind == OpKind::kConst || db.kind == OpKind::kConst) fail("MFMA A/B operands must be registers");
  double a[M][K], b[N][K];  // b transposed: b[j][k] = B[k][j]
  auto elem = [&](const Operand &o, int lane, int e) {
    const uint32_t word = w.vgpr(o, e / 2)[lane];
    const uint16_t v = uint16_t(word >> (16 * (e & 1)));
    return Bf16 ? double(bf16_to_f32(v)) : double(f16_to_f32(v));
  };
  for (int lane = 0; lane < 64; ++lane)
    for (int e = 0; e < kpl; ++e) {
      const int k = (lane / M) * kpl + e;
      a[lane % M][k] = elem(da, lane, e);
      b[lane % N][k] = elem(db, lane, e);
    }
  float out[regs][64];
  for (int lane = 0; lane < 64; ++lane) {
    const int j = lane % N, g = lane / N;
    for (int r = 0; r < regs; ++r) {
      const int i = M == 16 ? 4 * g + r : 8 * (r / 4) + 4 * g + r % 4;
      double c;
      if (dc.kind == OpKind::kConst) c = double(as_f32(uint32_t(dc.value)));
      else c = double(as_f32(w.vgpr(dc, r)[lane]));
      double sum = c;
      for (int k = 0; k < K; ++k) sum += a[i][k] * b[j][k];
      out[r][lane] = float(sum);
    }
  }
  for (int r = 0; r < regs; ++r) std::memcpy(w.vgpr(in.op[0], r), out[r], sizeof out[r]);
}

}  // namespace

void add_matrix_ops(OpTable &t) {
  auto add = [&](const char *name, Handler fn) { t[name] = OpInfo{fn, 1}; };
  add("v_mfma_f32_16x16x32_bf16", v_mfma<16, 16, 32, true>);
  add("v_mfma_f32_16x16x32_f16", v_mfma<16, 16, 32, false>);
  add("v_mfma_f32_32x32x16_bf16", v_mfma<32, 32, 16, true>);
  add("v_mfma_f32_32x32x16_f16", v_mfma<32, 32, 16, false>);
  add("v_mfma_f32_16x16x16_bf16", v_mfma<16, 16, 16, true>);
  add("v_mfma_f32_16x16x16_f16", v_mfma<16, 16, 16, false>);
  add("v_mfma_f32_16x16x16f16", v_mfma<16, 16, 16, false>);
  add("v_mfma_f32_16x16x16bf16_1k", v_mfma<16, 16, 16, true>);
  add("v_mfma_f32_32x32x8_bf16", v_mfma<32, 32, 8, true>);
  add("v_mfma_f32_32x32x8_f16", v_mfma<32, 32, 8, false>);
  add("v_mfma_f32_32x32x8f16", v_mfma<32, 32, 8, false>);
  add("v_mfma_f32_32x32x8bf16_1k", v_mfma<32, 32, 8, true>);
}

}  // namespace gatejit::emulator
