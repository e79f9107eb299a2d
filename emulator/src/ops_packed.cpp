// Packed and mixed-precision vector operations (VOP3P: v_pk_*, v_fma_mix*,
// v_dot2*; and the VOP2 accumulating dot products v_dot2c_*). Semantics: AMD
// CDNA4 ISA reference (MI355X), "Packed Vector (VOP3P)" and "VOP2/VOP1/VOPC
// Instructions" (V_DOT2C_F32_BF16, V_DOT2C_F32_F16); CDNA3 ISA for gfx942.
// A dot product's products are exact in f64 and summed there, then rounded
// once to f32: the hardware's internal rounding of the sum is not modelled.
#include "launch.h"
#include "op_table.h"
#include "valu.h"

namespace gatejit::emulator {
namespace {

double bf(uint32_t v, int half) { return double(bf16_to_f32(uint16_t(v >> (16 * half)))); }
double hf(uint32_t v, int half) { return double(f16_to_f32(uint16_t(v >> (16 * half)))); }

uint32_t dot2_bf16(uint32_t a, uint32_t b, uint32_t c) {
  return out_f32(float(bf(a, 0) * bf(b, 0) + bf(a, 1) * bf(b, 1) + double(in_f32(c))));
}
uint32_t dot2_f16(uint32_t a, uint32_t b, uint32_t c) {
  return out_f32(float(hf(a, 0) * hf(b, 0) + hf(a, 1) * hf(b, 1) + double(in_f32(c))));
}

// VOP3P v_dot2_f32_{bf16,f16} vdst, src0, src1, src2 (neg_lo/neg_hi negate halves).
template <double (*H)(uint32_t, int)>
void v_dot2(Wave &w, const Inst &in) {
  if (in.m.op_sel || in.m.op_sel_hi != 7) fail("op_sel on a dot product is not modelled");
  const Src32 a = vsrc32(w, in.op[1], 0, 0), b = vsrc32(w, in.op[2], 0, 1), c = vsrc32(w, in.op[3], 0x80000000u, 2);
  const uint8_t nl = in.m.neg_lo, nh = in.m.neg_hi;
  uint32_t *d = w.vgpr(in.op[0]);
  for_lanes(w.exec(), [&](int l) {
    const double a0 = (nl & 1 ? -1 : 1) * H(a(l), 0), a1 = (nh & 1 ? -1 : 1) * H(a(l), 1);
    const double b0 = (nl & 2 ? -1 : 1) * H(b(l), 0), b1 = (nh & 2 ? -1 : 1) * H(b(l), 1);
    float r = float(a0 * b0 + a1 * b1 + double(in_f32(c(l))));
    if (in.m.clamp) r = std::fmin(std::fmax(r, 0.0f), 1.0f);
    d[l] = out_f32(r);
  });
}

// ---- packed f32 (GFX90A+): 64-bit register pairs ----

// Dword `k` of a packed-f32 source; an inline constant or literal stands in
// both dwords.
struct Pk32 {
  Src64 s;
  bool scalar_const;
  uint32_t k;
  uint32_t get(int l, int dword) const {
    if (scalar_const) return k;
    const uint64_t v = s(l);
    return dword ? uint32_t(v >> 32) : uint32_t(v);
  }
};
Pk32 pk32(Wave &w, const Operand &o, int slot) {
  Pk32 p{vsrc64(w, o, 0, slot), o.kind == OpKind::kConst, uint32_t(o.value)};
  return p;
}

template <int N, float (*F)(float, float, float)>
void v_pk_f32(Wave &w, const Inst &in) {
  Pk32 s[3] = {pk32(w, in.op[1], 0), pk32(w, in.op[N > 1 ? 2 : 1], 2)};
  if (N > 2) s[2] = pk32(w, in.op[3], 4);
  const Modifiers &m = in.m;
  uint32_t *lo = w.vgpr(in.op[0]), *hi = w.vgpr(in.op[0], 1);
  for_lanes(w.exec(), [&](int l) {
    float x[2][3];
    for (int i = 0; i < N; ++i) {
      x[0][i] = in_f32(s[i].get(l, (m.op_sel >> i) & 1));
      x[1][i] = in_f32(s[i].get(l, (m.op_sel_hi >> i) & 1));
      if ((m.neg_lo >> i) & 1) x[0][i] = -x[0][i];
      if ((m.neg_hi >> i) & 1) x[1][i] = -x[1][i];
    }
    float r0 = F(x[0][0], N > 1 ? x[0][1] : 0, N > 2 ? x[0][2] : 0);
    float r1 = F(x[1][0], N > 1 ? x[1][1] : 0, N > 2 ? x[1][2] : 0);
    if (m.clamp) r0 = std::fmin(std::fmax(r0, 0.0f), 1.0f), r1 = std::fmin(std::fmax(r1, 0.0f), 1.0f);
    lo[l] = out_f32(r0), hi[l] = out_f32(r1);
  });
}
float pk_add(float a, float b, float) { return a + b; }
float pk_mul(float a, float b, float) { return a * b; }
float pk_fma(float a, float b, float c) { return std::fma(a, b, c); }

// V_PK_MOV_B32: D.lo = S0's dword op_sel[0], D.hi = S1's dword op_sel[1].
void v_pk_mov_b32(Wave &w, const Inst &in) {
  const Pk32 a = pk32(w, in.op[1], 0), b = pk32(w, in.op[2], 2);
  uint32_t *lo = w.vgpr(in.op[0]), *hi = w.vgpr(in.op[0], 1);
  for_lanes(w.exec(), [&](int l) {
    const uint32_t x = a.get(l, in.m.op_sel & 1), y = b.get(l, (in.m.op_sel >> 1) & 1);
    lo[l] = x, hi[l] = y;
  });
}

// ---- packed 16-bit ----

template <int N, uint16_t (*F)(uint16_t, uint16_t, uint16_t), bool Float>
void v_pk_16(Wave &w, const Inst &in) {
  const Src32 s[3] = {vsrc32(w, in.op[1], 0, 0), vsrc32(w, in.op[N > 1 ? 2 : 1], 0, 1),
                      vsrc32(w, in.op[N > 2 ? 3 : 1], 0, 2)};
  const Modifiers &m = in.m;
  uint32_t *d = w.vgpr(in.op[0]);
  for_lanes(w.exec(), [&](int l) {
    uint16_t x[2][3] = {};
    for (int i = 0; i < N; ++i) {
      const uint32_t v = s[i](l);
      x[0][i] = uint16_t(v >> (16 * ((m.op_sel >> i) & 1)));
      x[1][i] = uint16_t(v >> (16 * ((m.op_sel_hi >> i) & 1)));
      if (Float && ((m.neg_lo >> i) & 1)) x[0][i] ^= 0x8000;
      if (Float && ((m.neg_hi >> i) & 1)) x[1][i] ^= 0x8000;
    }
    d[l] = uint32_t(F(x[0][0], x[0][1], x[0][2])) | uint32_t(F(x[1][0], x[1][1], x[1][2])) << 16;
  });
}
double h16(uint16_t v) { return double(f16_to_f32(v)); }
uint16_t pk_add_f16(uint16_t a, uint16_t b, uint16_t) { return f64_to_f16(h16(a) + h16(b)); }
uint16_t pk_mul_f16(uint16_t a, uint16_t b, uint16_t) { return f64_to_f16(h16(a) * h16(b)); }
uint16_t pk_fma_f16(uint16_t a, uint16_t b, uint16_t c) { return f64_to_f16(std::fma(h16(a), h16(b), h16(c))); }
uint16_t pk_max_f16(uint16_t a, uint16_t b, uint16_t) { return f64_to_f16(std::fmax(h16(a), h16(b))); }
uint16_t pk_min_f16(uint16_t a, uint16_t b, uint16_t) { return f64_to_f16(std::fmin(h16(a), h16(b))); }
uint16_t pk_add_u16(uint16_t a, uint16_t b, uint16_t) { return uint16_t(a + b); }
uint16_t pk_sub_u16(uint16_t a, uint16_t b, uint16_t) { return uint16_t(a - b); }
uint16_t pk_mul_lo_u16(uint16_t a, uint16_t b, uint16_t) { return uint16_t(a * b); }
uint16_t pk_lshlrev_b16(uint16_t a, uint16_t b, uint16_t) { return uint16_t(b << (a & 15)); }
uint16_t pk_lshrrev_b16(uint16_t a, uint16_t b, uint16_t) { return uint16_t(b >> (a & 15)); }
uint16_t pk_max_u16(uint16_t a, uint16_t b, uint16_t) { return std::max(a, b); }
uint16_t pk_min_u16(uint16_t a, uint16_t b, uint16_t) { return std::min(a, b); }

// ---- mixed precision: v_fma_mix_f32 / v_fma_mixlo_f16 / v_fma_mixhi_f16 ----
// Source i is f16 (half op_sel[i]) where op_sel_hi[i] is set, else f32;
// neg_lo negates and neg_hi takes the absolute value (CDNA4 ISA, V_FMA_MIX_F32).
enum class Mix { kF32, kLo, kHi };
template <Mix K>
void v_fma_mix(Wave &w, const Inst &in) {
  const Src32 s[3] = {vsrc32(w, in.op[1], 0, 0), vsrc32(w, in.op[2], 0, 1), vsrc32(w, in.op[3], 0, 2)};
  const Modifiers &m = in.m;
  uint32_t *d = w.vgpr(in.op[0]);
  for_lanes(w.exec(), [&](int l) {
    float x[3];
    for (int i = 0; i < 3; ++i) {
      const uint32_t v = s[i](l);
      x[i] = (m.op_sel_hi >> i) & 1 ? f16_to_f32(uint16_t(v >> (16 * ((m.op_sel >> i) & 1)))) : in_f32(v);
      if (in.op[1 + i].abs || ((m.neg_hi >> i) & 1)) x[i] = std::fabs(x[i]);
      if (in.op[1 + i].neg || ((m.neg_lo >> i) & 1)) x[i] = -x[i];
    }
    float r = std::fma(x[0], x[1], x[2]);
    if (m.clamp) r = std::fmin(std::fmax(r, 0.0f), 1.0f);
    if (K == Mix::kF32) d[l] = out_f32(r);
    else if (K == Mix::kLo) d[l] = (d[l] & 0xffff0000u) | f32_to_f16(r);
    else d[l] = (d[l] & 0xffff) | uint32_t(f32_to_f16(r)) << 16;
  });
}

// V_PACK_B32_F16: D = { S1.f16, S0.f16 }, each half chosen by op_sel.
void v_pack_b32_f16(Wave &w, const Inst &in) {
  const Src32 a = vsrc32(w, in.op[1], 0x8000, 0), b = vsrc32(w, in.op[2], 0x8000, 1);
  const uint8_t os = in.m.op_sel;
  uint32_t *d = w.vgpr(in.op[0]);
  for_lanes(w.exec(), [&](int l) {
    const uint32_t x = (os & 1 ? a(l) >> 16 : a(l)) & 0xffff, y = (os & 2 ? b(l) >> 16 : b(l)) & 0xffff;
    d[l] = x | y << 16;
  });
}

}  // namespace

void add_packed_ops(OpTable &t) {
  auto add = [&](const char *name, Handler fn, uint8_t ndst = 1) { t[name] = OpInfo{fn, ndst}; };
  add("v_dot2c_f32_bf16", vop<2, VType::kInt, dot2_bf16, true>);
  add("v_dot2c_f32_f16", vop<2, VType::kInt, dot2_f16, true>);
  add("v_dot2_f32_bf16", v_dot2<bf>);
  add("v_dot2_f32_f16", v_dot2<hf>);
  add("v_pk_add_f32", v_pk_f32<2, pk_add>);
  add("v_pk_mul_f32", v_pk_f32<2, pk_mul>);
  add("v_pk_fma_f32", v_pk_f32<3, pk_fma>);
  add("v_pk_mov_b32", v_pk_mov_b32);
  add("v_pk_add_f16", v_pk_16<2, pk_add_f16, true>);
  add("v_pk_mul_f16", v_pk_16<2, pk_mul_f16, true>);
  add("v_pk_fma_f16", v_pk_16<3, pk_fma_f16, true>);
  add("v_pk_max_f16", v_pk_16<2, pk_max_f16, true>);
  add("v_pk_min_f16", v_pk_16<2, pk_min_f16, true>);
  add("v_pk_add_u16", v_pk_16<2, pk_add_u16, false>);
  add("v_pk_sub_u16", v_pk_16<2, pk_sub_u16, false>);
  add("v_pk_mul_lo_u16", v_pk_16<2, pk_mul_lo_u16, false>);
  add("v_pk_lshlrev_b16", v_pk_16<2, pk_lshlrev_b16, false>);
  add("v_pk_lshrrev_b16", v_pk_16<2, pk_lshrrev_b16, false>);
  add("v_pk_max_u16", v_pk_16<2, pk_max_u16, false>);
  add("v_pk_min_u16", v_pk_16<2, pk_min_u16, false>);
  add("v_fma_mix_f32", v_fma_mix<Mix::kF32>);
  add("v_fma_mixlo_f16", v_fma_mix<Mix::kLo>);
  add("v_fma_mixhi_f16", v_fma_mix<Mix::kHi>);
  add("v_pack_b32_f16", v_pack_b32_f16);
}

}  // namespace gatejit::emulator
