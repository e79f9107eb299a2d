// Vector floating-point operations: f32 and f16 arithmetic, transcendental
// approximations, the division macro's steps, conversions (f16, bf16,
// integers, the 8-bit floats) and float compares. Semantics: AMD CDNA4 ISA
// reference (MI355X), "VOP2/VOP1/VOPC Instructions" and "VOP3A & VOP3B
// Instructions"; CDNA3 ISA (MI300) for gfx942. The transcendental
// instructions (v_exp, v_log, v_rcp, v_rsq, v_sqrt) are specified to 1 ULP;
// the emulator gives the correctly rounded value, which lies within it.
#include <cfenv>
#include <cmath>

#include "launch.h"
#include "op_table.h"
#include "valu.h"

namespace gatejit::emulator {
namespace {

using F = float;
inline F f(uint32_t b) { return in_f32(b); }
inline uint32_t r(F x) { return out_f32(x); }

uint32_t add_f32(uint32_t a, uint32_t b, uint32_t) { return r(f(a) + f(b)); }
uint32_t sub_f32(uint32_t a, uint32_t b, uint32_t) { return r(f(a) - f(b)); }
uint32_t subrev_f32(uint32_t a, uint32_t b, uint32_t) { return r(f(b) - f(a)); }
uint32_t mul_f32(uint32_t a, uint32_t b, uint32_t) { return r(f(a) * f(b)); }
uint32_t fma_f32(uint32_t a, uint32_t b, uint32_t c) { return r(std::fma(f(a), f(b), f(c))); }
// V_MIN/MAX_F32 in IEEE mode: a quiet NaN operand yields the other operand.
uint32_t min_f32(uint32_t a, uint32_t b, uint32_t) { return r(std::fmin(f(a), f(b))); }
uint32_t max_f32(uint32_t a, uint32_t b, uint32_t) { return r(std::fmax(f(a), f(b))); }
uint32_t min3_f32(uint32_t a, uint32_t b, uint32_t c) { return r(std::fmin(std::fmin(f(a), f(b)), f(c))); }
uint32_t max3_f32(uint32_t a, uint32_t b, uint32_t c) { return r(std::fmax(std::fmax(f(a), f(b)), f(c))); }
uint32_t med3_f32(uint32_t a, uint32_t b, uint32_t c) {
  const F x = f(a), y = f(b), z = f(c);
  if (std::isnan(x) || std::isnan(y) || std::isnan(z)) return r(std::fmin(std::fmin(x, y), z));
  return r(std::fmax(std::fmin(x, y), std::fmin(std::fmax(x, y), z)));
}
// V_MINIMUM3/MAXIMUM3_F32 (CDNA4): IEEE 754-2019 minimum/maximum, NaN
// propagating, -0 below +0.
F minimum(F x, F y) {
  if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<F>::quiet_NaN();
  if (x == y) return std::signbit(x) ? x : y;
  return x < y ? x : y;
}
F maximum(F x, F y) {
  if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<F>::quiet_NaN();
  if (x == y) return std::signbit(x) ? y : x;
  return x > y ? x : y;
}
uint32_t minimum3_f32(uint32_t a, uint32_t b, uint32_t c) { return r(minimum(minimum(f(a), f(b)), f(c))); }
uint32_t maximum3_f32(uint32_t a, uint32_t b, uint32_t c) { return r(maximum(maximum(f(a), f(b)), f(c))); }
uint32_t exp_f32(uint32_t a, uint32_t, uint32_t) { return r(std::exp2(f(a))); }
uint32_t log_f32(uint32_t a, uint32_t, uint32_t) { return r(std::log2(f(a))); }
uint32_t rcp_f32(uint32_t a, uint32_t, uint32_t) { return r(1.0f / f(a)); }
uint32_t rsq_f32(uint32_t a, uint32_t, uint32_t) { return r(float(1.0 / std::sqrt(double(f(a))))); }
uint32_t sqrt_f32(uint32_t a, uint32_t, uint32_t) { return r(std::sqrt(f(a))); }
uint32_t ldexp_f32(uint32_t a, uint32_t b, uint32_t) { return r(std::ldexp(f(a), int32_t(b))); }
uint32_t frexp_mant_f32(uint32_t a, uint32_t, uint32_t) {
  const F x = f(a);
  if (std::isnan(x) || std::isinf(x)) return a;
  int e;
  return r(std::frexp(x, &e));
}
uint32_t frexp_exp_i32_f32(uint32_t a, uint32_t, uint32_t) {
  const F x = f(a);
  if (std::isnan(x) || std::isinf(x)) return 0;
  int e;
  std::frexp(x, &e);
  return uint32_t(e);
}
uint32_t fract_f32(uint32_t a, uint32_t, uint32_t) {
  const F x = f(a);
  if (std::isinf(x)) return r(std::numeric_limits<F>::quiet_NaN());
  return r(std::fmin(x - std::floor(x), 0x1.fffffep-1f));
}
uint32_t trunc_f32(uint32_t a, uint32_t, uint32_t) { return r(std::trunc(f(a))); }
uint32_t ceil_f32(uint32_t a, uint32_t, uint32_t) { return r(std::ceil(f(a))); }
uint32_t floor_f32(uint32_t a, uint32_t, uint32_t) { return r(std::floor(f(a))); }
uint32_t rndne_f32(uint32_t a, uint32_t, uint32_t) { return r(std::nearbyint(f(a))); }

// Conversions to integers saturate; NaN gives 0.
uint32_t cvt_u32_f32(uint32_t a, uint32_t, uint32_t) {
  const F x = f(a);
  if (std::isnan(x) || x <= 0) return 0;
  if (x >= 4294967296.0f) return ~0u;
  return uint32_t(x);
}
uint32_t cvt_i32_f32(uint32_t a, uint32_t, uint32_t) {
  const F x = f(a);
  if (std::isnan(x)) return 0;
  if (x >= 2147483648.0f) return 0x7fffffffu;
  if (x <= -2147483648.0f) return 0x80000000u;
  return uint32_t(int32_t(x));
}
uint32_t cvt_rpi_i32_f32(uint32_t a, uint32_t, uint32_t) { return cvt_i32_f32(f32_bits(std::floor(f(a) + 0.5f)), 0, 0); }
uint32_t cvt_flr_i32_f32(uint32_t a, uint32_t, uint32_t) { return cvt_i32_f32(f32_bits(std::floor(f(a))), 0, 0); }
uint32_t cvt_f32_u32(uint32_t a, uint32_t, uint32_t) { return r(F(a)); }
uint32_t cvt_f32_i32(uint32_t a, uint32_t, uint32_t) { return r(F(int32_t(a))); }
template <int Byte>
uint32_t cvt_f32_ubyte(uint32_t a, uint32_t, uint32_t) { return r(F((a >> (8 * Byte)) & 0xff)); }
uint32_t cvt_f32_f16(uint32_t a, uint32_t, uint32_t) { return r(f16_to_f32(uint16_t(a))); }
uint32_t cvt_f16_f32(uint32_t a, uint32_t, uint32_t) { return f32_to_f16(f(a)); }
uint32_t cvt_f32_bf16(uint32_t a, uint32_t, uint32_t) { return r(bf16_to_f32(uint16_t(a))); }
// V_CVT_PK_BF16_F32 (CDNA4): D = { bf16(S1), bf16(S0) }, round to nearest even.
uint32_t cvt_pk_bf16_f32(uint32_t a, uint32_t b, uint32_t) {
  return uint32_t(f32_to_bf16(f(a))) | uint32_t(f32_to_bf16(f(b))) << 16;
}
uint32_t cvt_pk_f16_f32(uint32_t a, uint32_t b, uint32_t) {
  return uint32_t(f32_to_f16(f(a))) | uint32_t(f32_to_f16(f(b))) << 16;
}
// V_CVT_PKRTZ_F16_F32: both halves rounded toward zero.
uint16_t f16_rtz(float x) {
  if (std::isnan(x) || std::isinf(x)) return f32_to_f16(x);
  uint16_t h = f32_to_f16(x);
  if ((h & 0x7fff) == 0x7c00) return uint16_t((h & 0x8000) | 0x7bff);
  if (std::fabs(f16_to_f32(h)) > std::fabs(x)) --h;
  return h;
}
uint32_t cvt_pkrtz_f16_f32(uint32_t a, uint32_t b, uint32_t) { return f16_rtz(f(a)) | uint32_t(f16_rtz(f(b))) << 16; }

// ---- f16 arithmetic (VOP2/VOP1: the result in the low half, upper half 0) ----
inline double h(uint32_t a) { return double(f16_to_f32(uint16_t(a))); }
uint32_t add_f16(uint32_t a, uint32_t b, uint32_t) { return f64_to_f16(h(a) + h(b)); }
uint32_t sub_f16(uint32_t a, uint32_t b, uint32_t) { return f64_to_f16(h(a) - h(b)); }
uint32_t subrev_f16(uint32_t a, uint32_t b, uint32_t) { return f64_to_f16(h(b) - h(a)); }
uint32_t mul_f16(uint32_t a, uint32_t b, uint32_t) { return f64_to_f16(h(a) * h(b)); }
uint32_t max_f16(uint32_t a, uint32_t b, uint32_t) { return f64_to_f16(std::fmax(h(a), h(b))); }
uint32_t min_f16(uint32_t a, uint32_t b, uint32_t) { return f64_to_f16(std::fmin(h(a), h(b))); }
uint32_t fmac_f16(uint32_t a, uint32_t b, uint32_t c) { return f64_to_f16(std::fma(h(a), h(b), h(c))); }
uint32_t ldexp_f16(uint32_t a, uint32_t b, uint32_t) { return f64_to_f16(std::ldexp(h(a), int16_t(b))); }
uint32_t rcp_f16(uint32_t a, uint32_t, uint32_t) { return f64_to_f16(1.0 / h(a)); }
uint32_t exp_f16(uint32_t a, uint32_t, uint32_t) { return f64_to_f16(std::exp2(h(a))); }
uint32_t log_f16(uint32_t a, uint32_t, uint32_t) { return f64_to_f16(std::log2(h(a))); }
uint32_t sqrt_f16(uint32_t a, uint32_t, uint32_t) { return f64_to_f16(std::sqrt(h(a))); }
uint32_t rndne_f16(uint32_t a, uint32_t, uint32_t) { return f64_to_f16(std::nearbyint(h(a))); }

// VOP3-only f16 instructions write 16 bits chosen by op_sel[3] and keep the rest.
template <uint32_t (*Op)(uint32_t, uint32_t, uint32_t)>
void vop3_f16_preserve(Wave &w, const Inst &in) {
  constexpr uint32_t sb = 0x8000;
  const Src32 a = vsrc32(w, in.op[1], sb, 0), b = vsrc32(w, in.op[2], sb, 1), c = vsrc32(w, in.op[3], sb, 2);
  const uint8_t os = in.m.op_sel;
  uint32_t *d = w.vgpr(in.op[0]);
  auto half = [](uint32_t v, bool hi) { return hi ? v >> 16 : v & 0xffff; };
  for_lanes(w.exec(), [&](int l) {
    const uint32_t x = Op(half(a(l), os & 1), half(b(l), os & 2), half(c(l), os & 4)) & 0xffff;
    d[l] = os & 8 ? (d[l] & 0xffff) | x << 16 : (d[l] & 0xffff0000u) | x;
  });
}
uint32_t fma_f16(uint32_t a, uint32_t b, uint32_t c) { return f64_to_f16(std::fma(h(a), h(b), h(c))); }

// ---- the division macro (CDNA4 ISA: V_DIV_SCALE_F32, V_DIV_FMAS_F32, V_DIV_FIXUP_F32) ----

int exponent(F x) { return (f32_bits(x) >> 23) & 0xff; }
bool is_denorm(F x) { return std::fpclassify(x) == FP_SUBNORMAL; }
bool is_denorm(double x) { return std::fpclassify(x) == FP_SUBNORMAL; }

// vdst, vcc-out, S0 (the value to scale), S1 (denominator), S2 (numerator).
void v_div_scale_f32(Wave &w, const Inst &in) {
  constexpr uint32_t sb = 0x80000000u;
  const Src32 s0 = vsrc32(w, in.op[2], sb, 0), s1 = vsrc32(w, in.op[3], sb, 1), s2 = vsrc32(w, in.op[4], sb, 2);
  uint32_t *d = w.vgpr(in.op[0]);
  uint64_t vcc = 0;
  for_lanes(w.exec(), [&](int l) {
    const F x = as_f32(s0(l)), den = as_f32(s1(l)), num = as_f32(s2(l));
    F out = x;
    bool post = false;
    if (num == 0 || den == 0) {
      out = std::numeric_limits<F>::quiet_NaN();
    } else if (exponent(num) - exponent(den) >= 96) {
      post = true;  // N/D near the largest float: only the denominator is scaled
      if (x == den) out = std::ldexp(x, 64);
    } else if (is_denorm(den)) {
      out = std::ldexp(x, 64);
    } else if (is_denorm(1.0 / double(den)) && is_denorm(num / den)) {
      post = true;
      if (x == den) out = std::ldexp(x, 64);
    } else if (is_denorm(1.0 / double(den))) {
      out = std::ldexp(x, -64);
    } else if (is_denorm(num / den)) {
      post = true;
      if (x == num) out = std::ldexp(x, 64);
    } else if (exponent(num) <= 23) {
      out = std::ldexp(x, 64);  // the numerator is tiny
    }
    d[l] = f32_bits(out);
    vcc |= uint64_t(post) << l;
  });
  swrite64(w, in.op[1], vcc);
}

// The ISA's pseudo-code writes the post-scale as 2^32; the scale that undoes
// V_DIV_SCALE_F32's 2^64 is 2^+64 for a large quotient and 2^-64 for a small
// one (as tinygrad's emulator, checked against hardware, also applies it).
void v_div_fmas_f32(Wave &w, const Inst &in) {
  constexpr uint32_t sb = 0x80000000u;
  const Src32 a = vsrc32(w, in.op[1], sb, 0), b = vsrc32(w, in.op[2], sb, 1), c = vsrc32(w, in.op[3], sb, 2);
  const uint64_t vcc = w.vcc();
  uint32_t *d = w.vgpr(in.op[0]);
  for_lanes(w.exec(), [&](int l) {
    const F s2 = as_f32(c(l));
    F v = std::fma(as_f32(a(l)), as_f32(b(l)), s2);
    if ((vcc >> l) & 1) v = std::ldexp(v, exponent(s2) > 127 ? 64 : -64);
    d[l] = out_f32(v);
  });
}

// S0 = quotient, S1 = denominator, S2 = numerator.
uint32_t div_fixup_f32(uint32_t q, uint32_t den_b, uint32_t num_b) {
  const F s0 = as_f32(q), den = as_f32(den_b), num = as_f32(num_b);
  const bool neg = std::signbit(den) != std::signbit(num);
  if (std::isnan(num)) return num_b | 0x00400000u;
  if (std::isnan(den)) return den_b | 0x00400000u;
  if (den == 0 && num == 0) return 0xffc00000u;
  if (std::isinf(den) && std::isinf(num)) return 0xffc00000u;
  if (den == 0 || std::isinf(num)) return neg ? 0xff800000u : 0x7f800000u;
  if (std::isinf(den) || num == 0) return neg ? 0x80000000u : 0u;
  if (exponent(num) - exponent(den) < -150) return neg ? 0x80000000u : 0u;  // underflow
  if (exponent(den) == 255) return neg ? 0xff800000u : 0x7f800000u;         // overflow
  if (std::isnan(s0)) return neg ? 0xff800000u : 0x7f800000u;
  return f32_bits(neg ? -std::fabs(s0) : std::fabs(s0));
}

// ---- 8-bit floats (CDNA4: OCP e4m3 "fp8"; CDNA3: e4m3 fnuz) ----

template <bool Fnuz>
void v_cvt_pk_f32_fp8(Wave &w, const Inst &in) {
  // Two fp8 values from bits [15:0] (or the word SDWA / op_sel selects) into two f32.
  const Src32 s = vsrc32(w, in.op[1], 0, 0);
  const bool hi_word = (in.m.sdwa && in.m.src_sel[0] == kWord1) || (in.m.op_sel & 1);
  if (in.m.sdwa && in.m.src_sel[0] != kWord1 && in.m.src_sel[0] != kWord0 && in.m.src_sel[0] != kDword)
    fail("v_cvt_pk_f32_fp8 with a byte select");
  uint32_t *lo = w.vgpr(in.op[0]), *hi = w.vgpr(in.op[0], 1);
  for_lanes(w.exec(), [&](int l) {
    const uint32_t v = hi_word ? s(l) >> 16 : s(l);
    lo[l] = f32_bits(fp8_e4m3_to_f32(uint8_t(v), Fnuz));
    hi[l] = f32_bits(fp8_e4m3_to_f32(uint8_t(v >> 8), Fnuz));
  });
}
template <bool Fnuz>
void v_cvt_f32_fp8(Wave &w, const Inst &in) {
  const Src32 s = vsrc32(w, in.op[1], 0, 0);
  int byte = in.m.sdwa && in.m.src_sel[0] <= kByte3 ? in.m.src_sel[0] : (in.m.op_sel & 3);
  uint32_t *d = w.vgpr(in.op[0]);
  for_lanes(w.exec(), [&](int l) { d[l] = f32_bits(fp8_e4m3_to_f32(uint8_t(s(l) >> (8 * byte)), Fnuz)); });
}
// V_CVT_PK_FP8_F32: { fp8(S1), fp8(S0) } into the word op_sel[3] picks, the
// other word kept; clamp saturates.
template <bool Fnuz>
void v_cvt_pk_fp8_f32(Wave &w, const Inst &in) {
  const Src32 a = vsrc32(w, in.op[1], 0x80000000u, 0), b = vsrc32(w, in.op[2], 0x80000000u, 1);
  uint32_t *d = w.vgpr(in.op[0]);
  const bool hi = in.m.op_sel & 8;
  for_lanes(w.exec(), [&](int l) {
    const uint32_t pk = f32_to_fp8_e4m3(as_f32(a(l)), Fnuz, in.m.clamp) |
                        uint32_t(f32_to_fp8_e4m3(as_f32(b(l)), Fnuz, in.m.clamp)) << 8;
    d[l] = hi ? (d[l] & 0xffff) | pk << 16 : (d[l] & 0xffff0000u) | pk;
  });
}

// ---- compares ----

#define GATEJIT_FCMP(name, expr)                                         \
  bool name##_32(uint32_t a_, uint32_t b_) {                            \
    const double a = in_f32(a_), b = in_f32(b_);                        \
    (void)a, (void)b;                                                   \
    return expr;                                                         \
  }                                                                      \
  bool name##_16(uint32_t a_, uint32_t b_) {                            \
    const double a = f16_to_f32(uint16_t(a_)), b = f16_to_f32(uint16_t(b_)); \
    (void)a, (void)b;                                                   \
    return expr;                                                         \
  }
GATEJIT_FCMP(fc_f, false)
GATEJIT_FCMP(fc_lt, a < b)
GATEJIT_FCMP(fc_eq, a == b)
GATEJIT_FCMP(fc_le, a <= b)
GATEJIT_FCMP(fc_gt, a > b)
GATEJIT_FCMP(fc_lg, a < b || a > b)
GATEJIT_FCMP(fc_ge, a >= b)
GATEJIT_FCMP(fc_o, !std::isnan(a) && !std::isnan(b))
GATEJIT_FCMP(fc_u, std::isnan(a) || std::isnan(b))
GATEJIT_FCMP(fc_nge, !(a >= b))
GATEJIT_FCMP(fc_nlg, !(a < b || a > b))
GATEJIT_FCMP(fc_ngt, !(a > b))
GATEJIT_FCMP(fc_nle, !(a <= b))
GATEJIT_FCMP(fc_neq, !(a == b))
GATEJIT_FCMP(fc_nlt, !(a < b))
GATEJIT_FCMP(fc_tru, true)
#undef GATEJIT_FCMP

// V_CMP_CLASS_F32: S1's bit for S0's class (0 sNaN, 1 qNaN, 2 -inf, 3 -normal,
// 4 -denorm, 5 -0, 6 +0, 7 +denorm, 8 +normal, 9 +inf).
bool cmp_class_32(uint32_t a, uint32_t mask) {
  const F x = as_f32(a);
  int cls;
  if (std::isnan(x)) cls = (a & 0x00400000u) ? 1 : 0;
  else if (std::isinf(x)) cls = x < 0 ? 2 : 9;
  else if (x == 0) cls = std::signbit(x) ? 5 : 6;
  else if (std::fpclassify(x) == FP_SUBNORMAL) cls = x < 0 ? 4 : 7;
  else cls = x < 0 ? 3 : 8;
  return (mask >> cls) & 1;
}

}  // namespace

void add_vector_float_ops(OpTable &t) {
  auto add = [&](const char *name, Handler fn, uint8_t ndst = 1) { t[name] = OpInfo{fn, ndst}; };
  constexpr auto F32 = VType::kF32, F16 = VType::kF16;
  add("v_add_f32", vop<2, F32, add_f32>);
  add("v_sub_f32", vop<2, F32, sub_f32>);
  add("v_subrev_f32", vop<2, F32, subrev_f32>);
  add("v_mul_f32", vop<2, F32, mul_f32>);
  add("v_fma_f32", vop<3, F32, fma_f32>);
  add("v_fmac_f32", vop<2, F32, fma_f32, true>);
  add("v_min_f32", vop<2, F32, min_f32>);
  add("v_max_f32", vop<2, F32, max_f32>);
  add("v_min3_f32", vop<3, F32, min3_f32>);
  add("v_max3_f32", vop<3, F32, max3_f32>);
  add("v_med3_f32", vop<3, F32, med3_f32>);
  add("v_minimum3_f32", vop<3, F32, minimum3_f32>);
  add("v_maximum3_f32", vop<3, F32, maximum3_f32>);
  add("v_exp_f32", vop<1, F32, exp_f32>);
  add("v_log_f32", vop<1, F32, log_f32>);
  add("v_rcp_f32", vop<1, F32, rcp_f32>);
  add("v_rcp_iflag_f32", vop<1, F32, rcp_f32>);  // the reciprocal, flagging integer-division exceptions
  add("v_rsq_f32", vop<1, F32, rsq_f32>);
  add("v_sqrt_f32", vop<1, F32, sqrt_f32>);
  add("v_ldexp_f32", vop<2, F32, ldexp_f32>);
  add("v_frexp_mant_f32", vop<1, F32, frexp_mant_f32>);
  add("v_frexp_exp_i32_f32", vop<1, F32, frexp_exp_i32_f32>);
  add("v_fract_f32", vop<1, F32, fract_f32>);
  add("v_trunc_f32", vop<1, F32, trunc_f32>);
  add("v_ceil_f32", vop<1, F32, ceil_f32>);
  add("v_floor_f32", vop<1, F32, floor_f32>);
  add("v_rndne_f32", vop<1, F32, rndne_f32>);
  add("v_cvt_u32_f32", vop<1, F32, cvt_u32_f32>);
  add("v_cvt_i32_f32", vop<1, F32, cvt_i32_f32>);
  add("v_cvt_rpi_i32_f32", vop<1, F32, cvt_rpi_i32_f32>);
  add("v_cvt_flr_i32_f32", vop<1, F32, cvt_flr_i32_f32>);
  add("v_cvt_f32_u32", vop<1, VType::kInt, cvt_f32_u32>);
  add("v_cvt_f32_i32", vop<1, VType::kInt, cvt_f32_i32>);
  add("v_cvt_f32_ubyte0", vop<1, VType::kInt, cvt_f32_ubyte<0>>);
  add("v_cvt_f32_ubyte1", vop<1, VType::kInt, cvt_f32_ubyte<1>>);
  add("v_cvt_f32_ubyte2", vop<1, VType::kInt, cvt_f32_ubyte<2>>);
  add("v_cvt_f32_ubyte3", vop<1, VType::kInt, cvt_f32_ubyte<3>>);
  add("v_cvt_f32_f16", vop<1, F16, cvt_f32_f16>);
  add("v_cvt_f16_f32", vop<1, F32, cvt_f16_f32>);
  add("v_cvt_f32_bf16", vop<1, VType::kBF16, cvt_f32_bf16>);
  add("v_cvt_pk_bf16_f32", vop<2, F32, cvt_pk_bf16_f32>);
  add("v_cvt_pk_f16_f32", vop<2, F32, cvt_pk_f16_f32>);
  add("v_cvt_pkrtz_f16_f32", vop<2, F32, cvt_pkrtz_f16_f32>);
  add("v_add_f16", vop<2, F16, add_f16>);
  add("v_sub_f16", vop<2, F16, sub_f16>);
  add("v_subrev_f16", vop<2, F16, subrev_f16>);
  add("v_mul_f16", vop<2, F16, mul_f16>);
  add("v_max_f16", vop<2, F16, max_f16>);
  add("v_min_f16", vop<2, F16, min_f16>);
  add("v_fmac_f16", vop<2, F16, fmac_f16, true>);
  add("v_ldexp_f16", vop<2, F16, ldexp_f16>);
  add("v_rcp_f16", vop<1, F16, rcp_f16>);
  add("v_exp_f16", vop<1, F16, exp_f16>);
  add("v_log_f16", vop<1, F16, log_f16>);
  add("v_sqrt_f16", vop<1, F16, sqrt_f16>);
  add("v_rndne_f16", vop<1, F16, rndne_f16>);
  add("v_fma_f16", vop3_f16_preserve<fma_f16>);
  add("v_div_scale_f32", v_div_scale_f32, 2);
  add("v_div_fmas_f32", v_div_fmas_f32);
  add("v_div_fixup_f32", vop<3, F32, div_fixup_f32>);
#define GATEJIT_FCMP_ADD(name)                                                                          \
  t["v_cmp_" #name "_f32"] = OpInfo{vopc<F32, fc_##name##_32>, 1};                                     \
  t["v_cmpx_" #name "_f32"] = OpInfo{vopc<F32, fc_##name##_32, true>, 1};                              \
  t["v_cmp_" #name "_f16"] = OpInfo{vopc<F16, fc_##name##_16>, 1};                                     \
  t["v_cmpx_" #name "_f16"] = OpInfo{vopc<F16, fc_##name##_16, true>, 1};
  GATEJIT_FCMP_ADD(f)
  GATEJIT_FCMP_ADD(lt)
  GATEJIT_FCMP_ADD(eq)
  GATEJIT_FCMP_ADD(le)
  GATEJIT_FCMP_ADD(gt)
  GATEJIT_FCMP_ADD(lg)
  GATEJIT_FCMP_ADD(ge)
  GATEJIT_FCMP_ADD(o)
  GATEJIT_FCMP_ADD(u)
  GATEJIT_FCMP_ADD(nge)
  GATEJIT_FCMP_ADD(nlg)
  GATEJIT_FCMP_ADD(ngt)
  GATEJIT_FCMP_ADD(nle)
  GATEJIT_FCMP_ADD(neq)
  GATEJIT_FCMP_ADD(nlt)
  GATEJIT_FCMP_ADD(tru)
#undef GATEJIT_FCMP_ADD
  t["v_cmp_class_f32"] = OpInfo{vopc<VType::kInt, cmp_class_32>, 1};
  t["v_cmpx_class_f32"] = OpInfo{vopc<VType::kInt, cmp_class_32, true>, 1};
}

// The 8-bit float conversions differ by target: registered by the program
// loader for its target (gfx950 OCP e4m3, gfx942 fnuz).
Handler fp8_handler(const std::string &base, Target target) {
  const bool fnuz = target == Target::kGfx942;
  if (base == "v_cvt_pk_f32_fp8") return fnuz ? v_cvt_pk_f32_fp8<true> : v_cvt_pk_f32_fp8<false>;
  if (base == "v_cvt_f32_fp8") return fnuz ? v_cvt_f32_fp8<true> : v_cvt_f32_fp8<false>;
  if (base == "v_cvt_pk_fp8_f32") return fnuz ? v_cvt_pk_fp8_f32<true> : v_cvt_pk_fp8_f32<false>;
  return nullptr;
}

}  // namespace gatejit::emulator
