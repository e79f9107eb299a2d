// The vector ALU framework: an operation on 32-bit lane values applied over
// the wave's active lanes, plus what the encodings add around it (CDNA3 ISA,
// "Vector ALU Operations"): VOP3 abs/neg on float sources, clamp and output
// modifiers, DPP (src0 from another lane; row and bank write masks;
// bound_ctrl), SDWA (sub-dword source selects, destination select). The
// common case (no DPP/SDWA/clamp/omod) is a tight loop.
#pragma once

#include <cmath>

#include "machine.h"
#include "numeric.h"

namespace gatejit::emulator {

enum class VType : uint8_t { kInt, kF32, kF16, kBF16 };

constexpr uint32_t sign_bit(VType t) {
  return t == VType::kF32 ? 0x80000000u : (t == VType::kF16 || t == VType::kBF16) ? 0x8000u : 0u;
}

// Denormal flushing by the wave's MODE (set when a wave gets its turn).
inline thread_local bool g_flush_f32 = false;
inline float in_f32(uint32_t b) {
  float f = as_f32(b);
  if (g_flush_f32 && std::fpclassify(f) == FP_SUBNORMAL) f = std::copysign(0.0f, f);
  return f;
}
inline uint32_t out_f32(float f) {
  if (g_flush_f32 && std::fpclassify(f) == FP_SUBNORMAL) f = std::copysign(0.0f, f);
  return f32_bits(f);
}

// DPP: the lane lane `l` reads its src0 from under `ctrl`, or -1 where the
// pattern has no source (CDNA3 ISA, "DPP"; DPP_CTRL enumeration).
inline int dpp_source(uint16_t ctrl, int l) {
  const int row = l & ~15, in_row = l & 15;
  if (ctrl <= 0xff) return (l & ~3) | ((ctrl >> (2 * (l & 3))) & 3);
  if (ctrl >= 0x101 && ctrl <= 0x10f) {
    const int n = ctrl - 0x100;
    return in_row + n < 16 ? l + n : -1;
  }
  if (ctrl >= 0x111 && ctrl <= 0x11f) {
    const int n = ctrl - 0x110;
    return in_row >= n ? l - n : -1;
  }
  if (ctrl >= 0x121 && ctrl <= 0x12f) return row | ((in_row - (ctrl - 0x120)) & 15);
  switch (ctrl) {
    case 0x130: return l < 63 ? l + 1 : -1;   // wave_shl:1
    case 0x134: return (l + 1) & 63;           // wave_rol:1
    case 0x138: return l > 0 ? l - 1 : -1;     // wave_shr:1
    case 0x13c: return (l - 1) & 63;           // wave_ror:1
    case 0x140: return row | (15 - in_row);    // row_mirror
    case 0x141: return (l & ~7) | (7 - (l & 7));  // row_half_mirror
    case 0x142: return l >= 16 ? row - 1 : -1;    // row_bcast:15: the previous row's lane 15
    case 0x143: return l >= 32 ? 31 : -1;         // row_bcast:31: lane 31 to rows 2 and 3
  }
  fail("DPP control 0x" + std::to_string(ctrl) + " is not defined");
}

// SDWA source select: the selected byte/word, zero- or sign-extended.
inline uint32_t sdwa_select(uint32_t v, uint8_t sel, bool sext) {
  switch (sel) {
    case kByte0: case kByte1: case kByte2: case kByte3: {
      const uint32_t b = (v >> (8 * sel)) & 0xff;
      return sext ? uint32_t(int32_t(int8_t(b))) : b;
    }
    case kWord0: case kWord1: {
      const uint32_t h = (v >> (16 * (sel - kWord0))) & 0xffff;
      return sext ? uint32_t(int32_t(int16_t(h))) : h;
    }
  }
  return v;
}

// SDWA destination: the result's low bits into the selected field; the rest
// zero (UNUSED_PAD), sign-extended (UNUSED_SEXT) or kept (UNUSED_PRESERVE).
inline uint32_t sdwa_merge(uint32_t old, uint32_t r, uint8_t sel, uint8_t unused) {
  if (sel == kDword) return r;
  const int shift = sel <= kByte3 ? 8 * sel : 16 * (sel - kWord0);
  const int width = sel <= kByte3 ? 8 : 16;
  const uint32_t field = ((1u << width) - 1) << shift;
  const uint32_t placed = (r << shift) & field;
  switch (unused) {
    case kUnusedPreserve: return (old & ~field) | placed;
    case kUnusedSext: {
      const bool neg = (r >> (width - 1)) & 1;
      const uint32_t above = shift + width >= 32 ? 0u : ~0u << (shift + width);
      return placed | (neg ? above : 0u);
    }
    default: return placed;
  }
}

// Output modifier and clamp of a float result (CDNA3 ISA, "OMOD", "Clamp").
template <VType T>
inline uint32_t output_modifiers(const Modifiers &m, uint32_t r) {
  if constexpr (T == VType::kF32) {
    float f = as_f32(r);
    if (m.omod == 1) f *= 2.0f;
    else if (m.omod == 2) f *= 4.0f;
    else if (m.omod == 3) f *= 0.5f;
    if (m.clamp) f = std::isnan(f) ? 0.0f : std::fmin(std::fmax(f, 0.0f), 1.0f);
    return f32_bits(f);
  } else if constexpr (T == VType::kF16) {
    float f = f16_to_f32(uint16_t(r));
    if (m.omod == 1) f *= 2.0f;
    else if (m.omod == 2) f *= 4.0f;
    else if (m.omod == 3) f *= 0.5f;
    if (m.clamp) f = std::isnan(f) ? 0.0f : std::fmin(std::fmax(f, 0.0f), 1.0f);
    return (r & 0xffff0000u) | f32_to_f16(f);
  } else {
    if (m.omod || m.clamp) fail("clamp/output modifier on an integer or bf16 operation");
    return r;
  }
}

using Op32 = uint32_t (*)(uint32_t, uint32_t, uint32_t);

// Sources op[first .. first + N - 1]; `Acc`: the destination is also the
// last source (v_fmac, v_dot2c).
template <int N, VType T, Op32 F, bool Acc = false, int First = 1>
void vop_special(Wave &w, const Inst &in) {
  const Modifiers &m = in.m;
  const uint64_t exec = w.exec();
  uint64_t write = exec;
  uint32_t *d = w.vgpr(in.op[0]);
  constexpr uint32_t sb = sign_bit(T);
  uint32_t(*src)[64] = w.tmp;
  for (int i = 0; i < N; ++i) {
    const Operand &o = in.op[First + i];
    const Src32 s = vsrc32(w, o, 0, i);
    for (int l = 0; l < 64; ++l) src[i][l] = s(l);
  }
  if (Acc) std::memcpy(src[N], d, sizeof src[N]);
  if (m.dpp) {
    uint32_t moved[64];
    for_lanes(exec, [&](int l) {
      if (!((m.row_mask >> (l >> 4)) & 1) || !((m.bank_mask >> ((l & 15) >> 2)) & 1)) {
        write &= ~(1ull << l);
        return;
      }
      const int sl = dpp_source(m.dpp_ctrl, l);
      if (sl >= 0 && ((exec >> sl) & 1)) moved[l] = src[0][sl];
      else if (m.bound_ctrl) moved[l] = 0;
      else write &= ~(1ull << l);
    });
    for_lanes(write, [&](int l) { src[0][l] = moved[l]; });
  }
  for (int i = 0; i < N; ++i) {
    const Operand &o = in.op[First + i];
    if (m.sdwa && i < 2)
      for_lanes(write, [&](int l) { src[i][l] = sdwa_select(src[i][l], m.src_sel[i], o.sext); });
    if (sb && (o.abs || o.neg)) {
      const uint32_t andm = o.abs ? ~sb : ~0u, xorm = o.neg ? sb : 0u;
      for_lanes(write, [&](int l) { src[i][l] = (src[i][l] & andm) ^ xorm; });
    }
  }
  const int cs = Acc ? N : 2;
  for_lanes(write, [&](int l) {
    uint32_t r = F(src[0][l], N > 1 ? src[1][l] : 0, N > 2 || Acc ? src[cs][l] : 0);
    if (m.omod || m.clamp) r = output_modifiers<T>(m, r);
    d[l] = m.sdwa ? sdwa_merge(d[l], r, m.dst_sel, m.dst_unused) : r;
  });
}

// A VOP1/VOP2/VOP3 instruction: op[0] = vdst, op[1..N] = sources.
template <int N, VType T, Op32 F, bool Acc = false>
void vop(Wave &w, const Inst &in) {
  if (in.m.dpp || in.m.sdwa || in.m.clamp || in.m.omod) return vop_special<N, T, F, Acc>(w, in);
  constexpr uint32_t sb = sign_bit(T);
  uint32_t *d = w.vgpr(in.op[0]);
  const Src32 a = vsrc32(w, in.op[1], sb, 0);
  const Src32 b = N > 1 ? vsrc32(w, in.op[2], sb, 1) : a;
  const Src32 c = Acc ? Src32{d, 1} : N > 2 ? vsrc32(w, in.op[3], sb, 2) : a;
  const uint64_t exec = w.exec();
  if (exec == ~0ull) {
    for (int l = 0; l < 64; ++l) d[l] = F(a(l), b(l), c(l));
  } else {
    for_lanes(exec, [&](int l) { d[l] = F(a(l), b(l), c(l)); });
  }
}

// A compare: op[0] = the mask destination (vcc or an SGPR pair), op[1..2]
// sources; inactive lanes' bits are 0. v_cmpx also writes EXEC.
using Cmp32 = bool (*)(uint32_t, uint32_t);
template <VType T, Cmp32 F, bool Cmpx = false>
void vopc(Wave &w, const Inst &in) {
  if (in.m.dpp || in.m.sdwa) fail("DPP/SDWA compares are not modelled");
  constexpr uint32_t sb = sign_bit(T);
  const Src32 a = vsrc32(w, in.op[1], sb, 0), b = vsrc32(w, in.op[2], sb, 1);
  uint64_t r = 0;
  for_lanes(w.exec(), [&](int l) { r |= uint64_t(F(a(l), b(l))) << l; });
  swrite64(w, in.op[0], r);
  if (Cmpx) w.set_exec(r);
}

using Cmp64 = bool (*)(uint64_t, uint64_t);
template <bool Float, Cmp64 F, bool Cmpx = false>
void vopc64(Wave &w, const Inst &in) {
  const uint64_t sb = Float ? 0x8000000000000000ull : 0;
  const Src64 a = vsrc64(w, in.op[1], sb, 0), b = vsrc64(w, in.op[2], sb, 2);
  uint64_t r = 0;
  for_lanes(w.exec(), [&](int l) { r |= uint64_t(F(a(l), b(l))) << l; });
  swrite64(w, in.op[0], r);
  if (Cmpx) w.set_exec(r);
}

}  // namespace gatejit::emulator
