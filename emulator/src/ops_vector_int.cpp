// Vector integer, bitwise, lane and mask operations (VOP1, VOP2, VOP3,
// VOPC). Semantics: AMD CDNA4 ISA reference (MI355X), sections "VOP2/VOP1/
// VOPC Instructions" and "VOP3A & VOP3B Instructions" (pseudo-code per
// opcode), and the CDNA3 ISA (MI300) for gfx942, which has the same ones.
// 16-bit VOP1/VOP2 results zero the upper half on gfx9 (LLVM:
// GCNSubtarget::zeroesHigh16BitsOfDest).
#include <bit>

#include "launch.h"
#include "op_table.h"
#include "valu.h"

namespace gatejit::emulator {
namespace {

// ---- 32-bit lane functions ----
uint32_t mov(uint32_t a, uint32_t, uint32_t) { return a; }
uint32_t not_b32(uint32_t a, uint32_t, uint32_t) { return ~a; }
uint32_t bfrev(uint32_t a, uint32_t, uint32_t) {
  uint32_t r = 0;
  for (int i = 0; i < 32; ++i) r |= ((a >> i) & 1) << (31 - i);
  return r;
}
uint32_t ffbh_u32(uint32_t a, uint32_t, uint32_t) { return a ? uint32_t(std::countl_zero(a)) : ~0u; }
uint32_t ffbl_b32(uint32_t a, uint32_t, uint32_t) { return a ? uint32_t(std::countr_zero(a)) : ~0u; }
uint32_t and_b32(uint32_t a, uint32_t b, uint32_t) { return a & b; }
uint32_t or_b32(uint32_t a, uint32_t b, uint32_t) { return a | b; }
uint32_t xor_b32(uint32_t a, uint32_t b, uint32_t) { return a ^ b; }
uint32_t xnor_b32(uint32_t a, uint32_t b, uint32_t) { return ~(a ^ b); }
uint32_t lshlrev(uint32_t a, uint32_t b, uint32_t) { return b << (a & 31); }
uint32_t lshrrev(uint32_t a, uint32_t b, uint32_t) { return b >> (a & 31); }
uint32_t ashrrev(uint32_t a, uint32_t b, uint32_t) { return uint32_t(int32_t(b) >> (a & 31)); }
uint32_t add_u32(uint32_t a, uint32_t b, uint32_t) { return a + b; }
uint32_t sub_u32(uint32_t a, uint32_t b, uint32_t) { return a - b; }
uint32_t subrev_u32(uint32_t a, uint32_t b, uint32_t) { return b - a; }
uint32_t mul_lo_u32(uint32_t a, uint32_t b, uint32_t) { return a * b; }
uint32_t mul_hi_u32(uint32_t a, uint32_t b, uint32_t) { return uint32_t((uint64_t(a) * b) >> 32); }
uint32_t mul_hi_i32(uint32_t a, uint32_t b, uint32_t) {
  return uint32_t(uint64_t(int64_t(int32_t(a)) * int32_t(b)) >> 32);
}
int64_t i24(uint32_t a) { return int64_t(int32_t(a << 8) >> 8); }
uint32_t mul_u32_u24(uint32_t a, uint32_t b, uint32_t) { return (a & 0xffffff) * (b & 0xffffff); }
uint32_t mul_hi_u32_u24(uint32_t a, uint32_t b, uint32_t) {
  return uint32_t((uint64_t(a & 0xffffff) * (b & 0xffffff)) >> 32);
}
uint32_t mul_i32_i24(uint32_t a, uint32_t b, uint32_t) { return uint32_t(i24(a) * i24(b)); }
uint32_t mul_hi_i32_i24(uint32_t a, uint32_t b, uint32_t) { return uint32_t(uint64_t(i24(a) * i24(b)) >> 32); }
uint32_t mad_u32_u24(uint32_t a, uint32_t b, uint32_t c) { return (a & 0xffffff) * (b & 0xffffff) + c; }
uint32_t mad_i32_i24(uint32_t a, uint32_t b, uint32_t c) { return uint32_t(i24(a) * i24(b)) + c; }
uint32_t min_u32(uint32_t a, uint32_t b, uint32_t) { return std::min(a, b); }
uint32_t max_u32(uint32_t a, uint32_t b, uint32_t) { return std::max(a, b); }
uint32_t min_i32(uint32_t a, uint32_t b, uint32_t) { return uint32_t(std::min(int32_t(a), int32_t(b))); }
uint32_t max_i32(uint32_t a, uint32_t b, uint32_t) { return uint32_t(std::max(int32_t(a), int32_t(b))); }
uint32_t min3_u32(uint32_t a, uint32_t b, uint32_t c) { return std::min({a, b, c}); }
uint32_t max3_u32(uint32_t a, uint32_t b, uint32_t c) { return std::max({a, b, c}); }
uint32_t min3_i32(uint32_t a, uint32_t b, uint32_t c) { return uint32_t(std::min({int32_t(a), int32_t(b), int32_t(c)})); }
uint32_t max3_i32(uint32_t a, uint32_t b, uint32_t c) { return uint32_t(std::max({int32_t(a), int32_t(b), int32_t(c)})); }
uint32_t med3_u32(uint32_t a, uint32_t b, uint32_t c) { return std::max(std::min(a, b), std::min(std::max(a, b), c)); }
uint32_t med3_i32(uint32_t a, uint32_t b, uint32_t c) {
  const int32_t x = int32_t(a), y = int32_t(b), z = int32_t(c);
  return uint32_t(std::max(std::min(x, y), std::min(std::max(x, y), z)));
}
uint32_t lshl_add_u32(uint32_t a, uint32_t b, uint32_t c) { return (a << (b & 31)) + c; }
uint32_t add_lshl_u32(uint32_t a, uint32_t b, uint32_t c) { return (a + b) << (c & 31); }
uint32_t add3_u32(uint32_t a, uint32_t b, uint32_t c) { return a + b + c; }
uint32_t xad_u32(uint32_t a, uint32_t b, uint32_t c) { return (a ^ b) + c; }
uint32_t lshl_or_b32(uint32_t a, uint32_t b, uint32_t c) { return (a << (b & 31)) | c; }
uint32_t and_or_b32(uint32_t a, uint32_t b, uint32_t c) { return (a & b) | c; }
uint32_t or3_b32(uint32_t a, uint32_t b, uint32_t c) { return a | b | c; }
uint32_t xor3_b32(uint32_t a, uint32_t b, uint32_t c) { return a ^ b ^ c; }
uint32_t bfe_u32(uint32_t a, uint32_t b, uint32_t c) {
  const uint32_t off = b & 31, width = c & 31;
  return width ? (a >> off) & ((1u << width) - 1) : 0;
}
uint32_t bfe_i32(uint32_t a, uint32_t b, uint32_t c) {
  const uint32_t off = b & 31, width = c & 31;
  if (!width) return 0;
  const uint32_t v = (a >> off) & ((1u << width) - 1);
  return uint32_t(int32_t(v << (32 - width)) >> (32 - width));
}
uint32_t bfi_b32(uint32_t a, uint32_t b, uint32_t c) { return (a & b) | (~a & c); }
uint32_t bfm_b32(uint32_t a, uint32_t b, uint32_t) { return ((1u << (a & 31)) - 1) << (b & 31); }
uint32_t alignbit(uint32_t a, uint32_t b, uint32_t c) { return uint32_t(((uint64_t(a) << 32) | b) >> (c & 31)); }
uint32_t alignbyte(uint32_t a, uint32_t b, uint32_t c) { return uint32_t(((uint64_t(a) << 32) | b) >> (8 * (c & 3))); }
uint32_t bcnt(uint32_t a, uint32_t b, uint32_t) { return uint32_t(std::popcount(a)) + b; }
// V_PERM_B32: each result byte picks one of the 8 bytes of {S0, S1}, a sign
// fill, 0x00 or 0xff.
uint32_t perm_b32(uint32_t a, uint32_t b, uint32_t c) {
  const uint64_t data = (uint64_t(a) << 32) | b;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t sel = (c >> (8 * i)) & 0xff;
    uint32_t byte;
    if (sel >= 13) byte = 0xff;
    else if (sel == 12) byte = 0;
    else if (sel >= 8) byte = ((data >> (16 * (sel - 8) + 15)) & 1) ? 0xff : 0;
    else byte = uint32_t(data >> (8 * sel)) & 0xff;
    r |= byte << (8 * i);
  }
  return r;
}
// 16-bit integer ops (VOP2): the result zero-extended.
uint32_t add_u16(uint32_t a, uint32_t b, uint32_t) { return (a + b) & 0xffff; }
uint32_t sub_u16(uint32_t a, uint32_t b, uint32_t) { return (a - b) & 0xffff; }
uint32_t subrev_u16(uint32_t a, uint32_t b, uint32_t) { return (b - a) & 0xffff; }
uint32_t mul_lo_u16(uint32_t a, uint32_t b, uint32_t) { return (a * b) & 0xffff; }
uint32_t lshlrev_b16(uint32_t a, uint32_t b, uint32_t) { return ((b & 0xffff) << (a & 15)) & 0xffff; }
uint32_t lshrrev_b16(uint32_t a, uint32_t b, uint32_t) { return (b & 0xffff) >> (a & 15); }
uint32_t ashrrev_i16(uint32_t a, uint32_t b, uint32_t) { return uint32_t(int16_t(b) >> (a & 15)) & 0xffff; }
uint32_t max_u16(uint32_t a, uint32_t b, uint32_t) { return std::max(a & 0xffff, b & 0xffff); }
uint32_t min_u16(uint32_t a, uint32_t b, uint32_t) { return std::min(a & 0xffff, b & 0xffff); }
uint32_t max_i16(uint32_t a, uint32_t b, uint32_t) { return uint32_t(std::max(int16_t(a), int16_t(b))) & 0xffff; }
uint32_t min_i16(uint32_t a, uint32_t b, uint32_t) { return uint32_t(std::min(int16_t(a), int16_t(b))) & 0xffff; }

// V_BITOP3_B32/B16: D[i] = TTBL[{S0[i], S1[i], S2[i]}].
uint32_t bitop3(uint32_t a, uint32_t b, uint32_t c, uint8_t table) {
  uint32_t r = 0;
  for (int idx = 0; idx < 8; ++idx) {
    if (!((table >> idx) & 1)) continue;
    r |= ((idx & 4) ? a : ~a) & ((idx & 2) ? b : ~b) & ((idx & 1) ? c : ~c);
  }
  return r;
}
template <bool B16>
void v_bitop3(Wave &w, const Inst &in) {
  const Src32 a = vsrc32(w, in.op[1], 0, 0), b = vsrc32(w, in.op[2], 0, 1), c = vsrc32(w, in.op[3], 0, 2);
  uint32_t *d = w.vgpr(in.op[0]);
  const uint8_t t = in.m.bitop3;
  for_lanes(w.exec(), [&](int l) {
    const uint32_t r = bitop3(a(l), b(l), c(l), t);
    d[l] = B16 ? (d[l] & 0xffff0000u) | (r & 0xffff) : r;
  });
}

// ---- carry ops: vdst, sdst (carry out), src0, src1 [, carry in] ----

enum class Carry { kAdd, kSub, kSubrev };
template <Carry K, bool CarryIn>
void v_carry(Wave &w, const Inst &in) {
  if (in.m.dpp || in.m.sdwa) fail("DPP/SDWA carry ops are not modelled");
  const Src32 a = vsrc32(w, in.op[2], 0, 0), b = vsrc32(w, in.op[3], 0, 1);
  const uint64_t cin = CarryIn ? sread64(w, in.op[4]) : 0;
  uint32_t *d = w.vgpr(in.op[0]);
  uint64_t cout = 0;
  for_lanes(w.exec(), [&](int l) {
    const uint64_t x = a(l), y = b(l), c = CarryIn ? (cin >> l) & 1 : 0;
    uint64_t r;
    bool carry;
    if (K == Carry::kAdd) r = x + y + c, carry = r >> 32;
    else if (K == Carry::kSub) r = x - y - c, carry = y + c > x;
    else r = y - x - c, carry = x + c > y;
    d[l] = uint32_t(r);
    cout |= uint64_t(carry) << l;
  });
  swrite64(w, in.op[1], cout);
}

// v_cndmask_b32 vdst, src0, src1, mask: D = mask[lane] ? S1 : S0.
void v_cndmask_b32(Wave &w, const Inst &in) {
  if (in.m.dpp || in.m.sdwa) fail("DPP/SDWA v_cndmask is not modelled");
  const Src32 a = vsrc32(w, in.op[1], 0x80000000u, 0), b = vsrc32(w, in.op[2], 0x80000000u, 1);
  const uint64_t mask = sread64(w, in.op[3]);
  uint32_t *d = w.vgpr(in.op[0]);
  for_lanes(w.exec(), [&](int l) { d[l] = (mask >> l) & 1 ? b(l) : a(l); });
}

// ---- 64-bit ----

void v_mov_b64(Wave &w, const Inst &in) {
  const Src64 a = vsrc64(w, in.op[1], 0, 0);
  uint32_t *lo = w.vgpr(in.op[0]), *hi = w.vgpr(in.op[0], 1);
  for_lanes(w.exec(), [&](int l) {
    const uint64_t v = a(l);
    lo[l] = uint32_t(v), hi[l] = uint32_t(v >> 32);
  });
}
template <uint64_t (*F)(uint32_t, uint64_t)>
void v_shift64(Wave &w, const Inst &in) {  // vdst, shift (32-bit), value (64-bit)
  const Src32 s = vsrc32(w, in.op[1], 0, 0);
  const Src64 v = vsrc64(w, in.op[2], 0, 1);
  uint32_t *lo = w.vgpr(in.op[0]), *hi = w.vgpr(in.op[0], 1);
  for_lanes(w.exec(), [&](int l) {
    const uint64_t r = F(s(l), v(l));
    lo[l] = uint32_t(r), hi[l] = uint32_t(r >> 32);
  });
}
uint64_t lshl64(uint32_t s, uint64_t v) { return v << (s & 63); }
uint64_t lshr64(uint32_t s, uint64_t v) { return v >> (s & 63); }
uint64_t ashr64(uint32_t s, uint64_t v) { return uint64_t(int64_t(v) >> (s & 63)); }

// V_LSHL_ADD_U64: D = (S0 << S1[2:0]) + S2; shifts above 4 act as 0.
void v_lshl_add_u64(Wave &w, const Inst &in) {
  const Src64 a = vsrc64(w, in.op[1], 0, 0), c = vsrc64(w, in.op[3], 0, 2);
  const Src32 s = vsrc32(w, in.op[2], 0, 1);
  uint32_t *lo = w.vgpr(in.op[0]), *hi = w.vgpr(in.op[0], 1);
  for_lanes(w.exec(), [&](int l) {
    uint32_t sh = s(l) & 7;
    if (sh > 4) sh = 0;
    const uint64_t r = (a(l) << sh) + c(l);
    lo[l] = uint32_t(r), hi[l] = uint32_t(r >> 32);
  });
}

// V_MAD_U64_U32 / V_MAD_I64_I32: {carry, D} = S0 * S1 + S2 (65 bits).
template <bool Signed>
void v_mad_64_32(Wave &w, const Inst &in) {
  const Src32 a = vsrc32(w, in.op[2], 0, 0), b = vsrc32(w, in.op[3], 0, 1);
  const Src64 c = vsrc64(w, in.op[4], 0, 2);
  uint32_t *lo = w.vgpr(in.op[0]), *hi = w.vgpr(in.op[0], 1);
  uint64_t carry = 0;
  for_lanes(w.exec(), [&](int l) {
    __int128 p = Signed ? __int128(int64_t(int32_t(a(l)))) * int64_t(int32_t(b(l))) + __int128(int64_t(c(l)))
                        : __int128(uint64_t(a(l)) * uint64_t(b(l))) + __int128(c(l));
    const uint64_t r = uint64_t(p);
    lo[l] = uint32_t(r), hi[l] = uint32_t(r >> 32);
    const bool over = Signed ? p < __int128(INT64_MIN) || p > __int128(INT64_MAX) : (p >> 64) != 0;
    carry |= uint64_t(over) << l;
  });
  swrite64(w, in.op[1], carry);
}

// ---- lane access ----

void v_readlane_b32(Wave &w, const Inst &in) {
  const uint32_t lane = sread32(w, in.op[2]) & 63;
  swrite32(w, in.op[0], w.vgpr(in.op[1])[lane]);
}
void v_readfirstlane_b32(Wave &w, const Inst &in) {
  const uint64_t e = w.exec();
  const int lane = e ? std::countr_zero(e) : 0;
  const Src32 s = vsrc32(w, in.op[1], 0, 0);
  swrite32(w, in.op[0], s(lane));
}
void v_writelane_b32(Wave &w, const Inst &in) {
  const uint32_t lane = sread32(w, in.op[2]) & 63;
  w.vgpr(in.op[0])[lane] = sread32(w, in.op[1]);
}
// V_MBCNT_LO/HI: the count of set bits of the mask below this lane (the low
// or high 32 lanes), plus S1.
template <bool Hi>
void v_mbcnt(Wave &w, const Inst &in) {
  const Src32 m = vsrc32(w, in.op[1], 0, 0), b = vsrc32(w, in.op[2], 0, 1);
  uint32_t *d = w.vgpr(in.op[0]);
  for_lanes(w.exec(), [&](int l) {
    const uint32_t below = Hi ? (l <= 32 ? 0u : l >= 64 ? ~0u : (1u << (l - 32)) - 1)
                              : (l >= 32 ? ~0u : (1u << l) - 1);
    d[l] = uint32_t(std::popcount(m(l) & below)) + b(l);
  });
}
void v_nop(Wave &, const Inst &) {}
void v_swap_b32(Wave &w, const Inst &in) {
  uint32_t *a = w.vgpr(in.op[0]), *b = w.vgpr(in.op[1]);
  for_lanes(w.exec(), [&](int l) { std::swap(a[l], b[l]); });
}

// ---- compares ----
template <class T> bool c_f(uint32_t, uint32_t) { return false; }
template <class T> bool c_t(uint32_t, uint32_t) { return true; }
template <class T> bool c_lt(uint32_t a, uint32_t b) { return T(a) < T(b); }
template <class T> bool c_eq(uint32_t a, uint32_t b) { return T(a) == T(b); }
template <class T> bool c_le(uint32_t a, uint32_t b) { return T(a) <= T(b); }
template <class T> bool c_gt(uint32_t a, uint32_t b) { return T(a) > T(b); }
template <class T> bool c_ne(uint32_t a, uint32_t b) { return T(a) != T(b); }
template <class T> bool c_ge(uint32_t a, uint32_t b) { return T(a) >= T(b); }
template <class T> bool d_f(uint64_t, uint64_t) { return false; }
template <class T> bool d_t(uint64_t, uint64_t) { return true; }
template <class T> bool d_lt(uint64_t a, uint64_t b) { return T(a) < T(b); }
template <class T> bool d_eq(uint64_t a, uint64_t b) { return T(a) == T(b); }
template <class T> bool d_le(uint64_t a, uint64_t b) { return T(a) <= T(b); }
template <class T> bool d_gt(uint64_t a, uint64_t b) { return T(a) > T(b); }
template <class T> bool d_ne(uint64_t a, uint64_t b) { return T(a) != T(b); }
template <class T> bool d_ge(uint64_t a, uint64_t b) { return T(a) >= T(b); }

template <class T>
void add_int_compares(OpTable &t, const std::string &type) {
#define GATEJIT_CMP(name, fn)                                                              \
  t[std::string("v_cmp_") + name + "_" + type] = OpInfo{vopc<VType::kInt, fn>, 1};        \
  t[std::string("v_cmpx_") + name + "_" + type] = OpInfo{vopc<VType::kInt, fn, true>, 1};
  GATEJIT_CMP("f", c_f<T>)
  GATEJIT_CMP("lt", c_lt<T>)
  GATEJIT_CMP("eq", c_eq<T>)
  GATEJIT_CMP("le", c_le<T>)
  GATEJIT_CMP("gt", c_gt<T>)
  GATEJIT_CMP("ne", c_ne<T>)
  GATEJIT_CMP("ge", c_ge<T>)
  GATEJIT_CMP("t", c_t<T>)
#undef GATEJIT_CMP
}

template <class T>
void add_int64_compares(OpTable &t, const std::string &type) {
#define GATEJIT_CMP(name, fn)                                                         \
  t[std::string("v_cmp_") + name + "_" + type] = OpInfo{vopc64<false, fn>, 1};        \
  t[std::string("v_cmpx_") + name + "_" + type] = OpInfo{vopc64<false, fn, true>, 1};
  GATEJIT_CMP("f", d_f<T>)
  GATEJIT_CMP("lt", d_lt<T>)
  GATEJIT_CMP("eq", d_eq<T>)
  GATEJIT_CMP("le", d_le<T>)
  GATEJIT_CMP("gt", d_gt<T>)
  GATEJIT_CMP("ne", d_ne<T>)
  GATEJIT_CMP("ge", d_ge<T>)
  GATEJIT_CMP("t", d_t<T>)
#undef GATEJIT_CMP
}

}  // namespace

void add_vector_int_ops(OpTable &t) {
  auto add = [&](const char *name, Handler fn, uint8_t ndst = 1) { t[name] = OpInfo{fn, ndst}; };
  constexpr auto I = VType::kInt;
  add("v_mov_b32", vop<1, VType::kF32, mov>);  // abs/neg allowed on a float move
  add("v_not_b32", vop<1, I, not_b32>);
  add("v_bfrev_b32", vop<1, I, bfrev>);
  add("v_ffbh_u32", vop<1, I, ffbh_u32>);
  add("v_ffbl_b32", vop<1, I, ffbl_b32>);
  add("v_and_b32", vop<2, I, and_b32>);
  add("v_or_b32", vop<2, I, or_b32>);
  add("v_xor_b32", vop<2, I, xor_b32>);
  add("v_xnor_b32", vop<2, I, xnor_b32>);
  add("v_lshlrev_b32", vop<2, I, lshlrev>);
  add("v_lshrrev_b32", vop<2, I, lshrrev>);
  add("v_ashrrev_i32", vop<2, I, ashrrev>);
  add("v_add_u32", vop<2, I, add_u32>);
  add("v_sub_u32", vop<2, I, sub_u32>);
  add("v_subrev_u32", vop<2, I, subrev_u32>);
  add("v_mul_lo_u32", vop<2, I, mul_lo_u32>);
  add("v_mul_hi_u32", vop<2, I, mul_hi_u32>);
  add("v_mul_hi_i32", vop<2, I, mul_hi_i32>);
  add("v_mul_u32_u24", vop<2, I, mul_u32_u24>);
  add("v_mul_hi_u32_u24", vop<2, I, mul_hi_u32_u24>);
  add("v_mul_i32_i24", vop<2, I, mul_i32_i24>);
  add("v_mul_hi_i32_i24", vop<2, I, mul_hi_i32_i24>);
  add("v_mad_u32_u24", vop<3, I, mad_u32_u24>);
  add("v_mad_i32_i24", vop<3, I, mad_i32_i24>);
  add("v_min_u32", vop<2, I, min_u32>);
  add("v_max_u32", vop<2, I, max_u32>);
  add("v_min_i32", vop<2, I, min_i32>);
  add("v_max_i32", vop<2, I, max_i32>);
  add("v_min3_u32", vop<3, I, min3_u32>);
  add("v_max3_u32", vop<3, I, max3_u32>);
  add("v_min3_i32", vop<3, I, min3_i32>);
  add("v_max3_i32", vop<3, I, max3_i32>);
  add("v_med3_u32", vop<3, I, med3_u32>);
  add("v_med3_i32", vop<3, I, med3_i32>);
  add("v_lshl_add_u32", vop<3, I, lshl_add_u32>);
  add("v_add_lshl_u32", vop<3, I, add_lshl_u32>);
  add("v_add3_u32", vop<3, I, add3_u32>);
  add("v_xad_u32", vop<3, I, xad_u32>);
  add("v_lshl_or_b32", vop<3, I, lshl_or_b32>);
  add("v_and_or_b32", vop<3, I, and_or_b32>);
  add("v_or3_b32", vop<3, I, or3_b32>);
  add("v_xor3_b32", vop<3, I, xor3_b32>);
  add("v_bfe_u32", vop<3, I, bfe_u32>);
  add("v_bfe_i32", vop<3, I, bfe_i32>);
  add("v_bfi_b32", vop<3, I, bfi_b32>);
  add("v_bfm_b32", vop<2, I, bfm_b32>);
  add("v_alignbit_b32", vop<3, I, alignbit>);
  add("v_alignbyte_b32", vop<3, I, alignbyte>);
  add("v_bcnt_u32_b32", vop<2, I, bcnt>);
  add("v_perm_b32", vop<3, I, perm_b32>);
  add("v_add_u16", vop<2, I, add_u16>);
  add("v_sub_u16", vop<2, I, sub_u16>);
  add("v_subrev_u16", vop<2, I, subrev_u16>);
  add("v_mul_lo_u16", vop<2, I, mul_lo_u16>);
  add("v_lshlrev_b16", vop<2, I, lshlrev_b16>);
  add("v_lshrrev_b16", vop<2, I, lshrrev_b16>);
  add("v_ashrrev_i16", vop<2, I, ashrrev_i16>);
  add("v_max_u16", vop<2, I, max_u16>);
  add("v_min_u16", vop<2, I, min_u16>);
  add("v_max_i16", vop<2, I, max_i16>);
  add("v_min_i16", vop<2, I, min_i16>);
  add("v_bitop3_b32", v_bitop3<false>);
  add("v_bitop3_b16", v_bitop3<true>);
  add("v_add_co_u32", v_carry<Carry::kAdd, false>, 2);
  add("v_sub_co_u32", v_carry<Carry::kSub, false>, 2);
  add("v_subrev_co_u32", v_carry<Carry::kSubrev, false>, 2);
  add("v_addc_co_u32", v_carry<Carry::kAdd, true>, 2);
  add("v_subb_co_u32", v_carry<Carry::kSub, true>, 2);
  add("v_subbrev_co_u32", v_carry<Carry::kSubrev, true>, 2);
  add("v_cndmask_b32", v_cndmask_b32);
  add("v_mov_b64", v_mov_b64);
  add("v_lshlrev_b64", v_shift64<lshl64>);
  add("v_lshrrev_b64", v_shift64<lshr64>);
  add("v_ashrrev_i64", v_shift64<ashr64>);
  add("v_lshl_add_u64", v_lshl_add_u64);
  add("v_mad_u64_u32", v_mad_64_32<false>, 2);
  add("v_mad_i64_i32", v_mad_64_32<true>, 2);
  add("v_readlane_b32", v_readlane_b32);
  add("v_readfirstlane_b32", v_readfirstlane_b32);
  add("v_writelane_b32", v_writelane_b32);
  add("v_mbcnt_lo_u32_b32", v_mbcnt<false>);
  add("v_mbcnt_hi_u32_b32", v_mbcnt<true>);
  add("v_nop", v_nop, 0);
  add("v_swap_b32", v_swap_b32, 2);
  add("v_accvgpr_read_b32", vop<1, I, mov>);
  add("v_accvgpr_write_b32", vop<1, I, mov>);
  add("v_accvgpr_mov_b32", vop<1, I, mov>);
  add_int_compares<int32_t>(t, "i32");
  add_int_compares<uint32_t>(t, "u32");
  add_int_compares<int16_t>(t, "i16");
  add_int_compares<uint16_t>(t, "u16");
  add_int64_compares<int64_t>(t, "i64");
  add_int64_compares<uint64_t>(t, "u64");
}

}  // namespace gatejit::emulator
