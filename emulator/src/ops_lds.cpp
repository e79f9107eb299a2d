// LDS (data share) instructions: reads, writes, their two-address forms,
// atomics, and the cross-lane DS_SWIZZLE / DS_PERMUTE / DS_BPERMUTE.
// Semantics: AMD CDNA4 ISA reference (MI355X), "LDS / Data Share (DS)"
// instructions; address = ADDR + OFFSET (two-address forms: OFFSET0/1 in
// units of the data size, x64 for the st64 forms). Every LDS instruction is
// counted by lgkmcnt and returns in order.
#include "launch.h"
#include "op_table.h"
#include "valu.h"

namespace gatejit::emulator {
namespace {

// ds_read_b{32,64,96,128} vdst, vaddr [offset]; ds_read_{u8,i8,u16,i16}.
template <int Bytes, bool Sext = false>
void ds_read(Wave &w, const Inst &in) {
  const uint32_t *addr = w.vgpr(in.op[1]);
  constexpr int regs = Bytes < 4 ? 1 : Bytes / 4;
  uint32_t tmp[4];
  uint32_t *d[4];
  for (int k = 0; k < regs; ++k) d[k] = w.vgpr(in.op[0], k);
  issue_memory(w, in, Counter::kLgkm, false, &in.op[0], regs);
  for_lanes(w.exec(), [&](int l) {
    const uint8_t *p = lds_read(w, in, addr[l] + uint32_t(in.m.offset), Bytes);
    if (Bytes >= 4) {
      std::memcpy(tmp, p, Bytes);
      for (int k = 0; k < regs; ++k) d[k][l] = tmp[k];
    } else {
      uint32_t v = 0;
      std::memcpy(&v, p, Bytes);
      if (Sext) v = Bytes == 1 ? uint32_t(int32_t(int8_t(v))) : uint32_t(int32_t(int16_t(v)));
      d[0][l] = v;
    }
  });
}

// ds_read_u16_d16 / _hi, ds_read_u8_d16 / _hi: into one half, the other kept.
template <int Bytes, bool Hi, bool Sext>
void ds_read_d16(Wave &w, const Inst &in) {
  const uint32_t *addr = w.vgpr(in.op[1]);
  uint32_t *d = w.vgpr(in.op[0]);
  issue_memory(w, in, Counter::kLgkm, false, &in.op[0], 1);
  for_lanes(w.exec(), [&](int l) {
    uint32_t v = 0;
    std::memcpy(&v, lds_read(w, in, addr[l] + uint32_t(in.m.offset), Bytes), Bytes);
    if (Sext && Bytes == 1) v = uint32_t(int32_t(int8_t(v))) & 0xffff;
    d[l] = Hi ? (d[l] & 0xffff) | v << 16 : (d[l] & 0xffff0000u) | (v & 0xffff);
  });
}

// ds_read2{,st64}_b{32,64} vdst, vaddr offset0 offset1.
template <int Bytes, int Stride>
void ds_read2(Wave &w, const Inst &in) {
  const uint32_t *addr = w.vgpr(in.op[1]);
  constexpr int regs = Bytes / 4;
  uint32_t *d[4];
  for (int k = 0; k < 2 * regs; ++k) d[k] = w.vgpr(in.op[0], k);
  issue_memory(w, in, Counter::kLgkm, false, &in.op[0], 2 * regs);
  const uint32_t o0 = uint32_t(in.m.offset0) * Bytes * Stride, o1 = uint32_t(in.m.offset1) * Bytes * Stride;
  for_lanes(w.exec(), [&](int l) {
    // Both addresses before any result: vdst may overlap vaddr.
    const uint32_t a0 = addr[l] + o0, a1 = addr[l] + o1;
    uint32_t t[4];
    std::memcpy(t, lds_read(w, in, a0, Bytes), Bytes);
    std::memcpy(t + regs, lds_read(w, in, a1, Bytes), Bytes);
    for (int k = 0; k < 2 * regs; ++k) d[k][l] = t[k];
  });
}

// ds_write_b{8,16,32,64,96,128} vaddr, vdata [offset]; _d16_hi: the upper half.
template <int Bytes, bool HiHalf = false>
void ds_write(Wave &w, const Inst &in) {
  const uint32_t *addr = w.vgpr(in.op[0]);
  constexpr int regs = Bytes < 4 ? 1 : Bytes / 4;
  const uint32_t *s[4];
  for (int k = 0; k < regs; ++k) s[k] = w.vgpr(in.op[1], k);
  issue_memory(w, in, Counter::kLgkm, false, nullptr, 0);
  for_lanes(w.exec(), [&](int l) {
    uint32_t t[4];
    for (int k = 0; k < regs; ++k) t[k] = s[k][l];
    if (HiHalf) t[0] >>= 16;
    std::memcpy(lds_write(w, in, addr[l] + uint32_t(in.m.offset), Bytes), t, Bytes);
  });
}

template <int Bytes, int Stride>
void ds_write2(Wave &w, const Inst &in) {
  const uint32_t *addr = w.vgpr(in.op[0]);
  constexpr int regs = Bytes / 4;
  const uint32_t *a[2], *b[2];
  for (int k = 0; k < regs; ++k) a[k] = w.vgpr(in.op[1], k), b[k] = w.vgpr(in.op[2], k);
  issue_memory(w, in, Counter::kLgkm, false, nullptr, 0);
  const uint32_t o0 = uint32_t(in.m.offset0) * Bytes * Stride, o1 = uint32_t(in.m.offset1) * Bytes * Stride;
  for_lanes(w.exec(), [&](int l) {
    uint32_t t[2];
    for (int k = 0; k < regs; ++k) t[k] = a[k][l];
    std::memcpy(lds_write(w, in, addr[l] + o0, Bytes), t, Bytes);
    for (int k = 0; k < regs; ++k) t[k] = b[k][l];
    std::memcpy(lds_write(w, in, addr[l] + o1, Bytes), t, Bytes);
  });
}

// Atomics: ds_<op>_{u32,f32} vaddr, vdata; ds_<op>_rtn_* vdst, vaddr, vdata.
template <uint32_t (*F)(uint32_t, uint32_t), bool Rtn>
void ds_atomic(Wave &w, const Inst &in) {
  const int a = Rtn ? 1 : 0;
  const uint32_t *addr = w.vgpr(in.op[a]), *data = w.vgpr(in.op[a + 1]);
  uint32_t *d = Rtn ? w.vgpr(in.op[0]) : nullptr;
  issue_memory(w, in, Counter::kLgkm, false, Rtn ? &in.op[0] : nullptr, Rtn ? 1 : 0);
  for_lanes(w.exec(), [&](int l) {
    uint8_t *p = lds_atomic(w, in, addr[l] + uint32_t(in.m.offset), 4);
    uint32_t old;
    std::memcpy(&old, p, 4);
    const uint32_t nv = F(old, data[l]);
    std::memcpy(p, &nv, 4);
    if (Rtn) d[l] = old;
  });
}
uint32_t at_add(uint32_t a, uint32_t b) { return a + b; }
uint32_t at_sub(uint32_t a, uint32_t b) { return a - b; }
uint32_t at_max_u(uint32_t a, uint32_t b) { return std::max(a, b); }
uint32_t at_min_u(uint32_t a, uint32_t b) { return std::min(a, b); }
uint32_t at_max_i(uint32_t a, uint32_t b) { return uint32_t(std::max(int32_t(a), int32_t(b))); }
uint32_t at_min_i(uint32_t a, uint32_t b) { return uint32_t(std::min(int32_t(a), int32_t(b))); }
uint32_t at_and(uint32_t a, uint32_t b) { return a & b; }
uint32_t at_or(uint32_t a, uint32_t b) { return a | b; }
uint32_t at_xor(uint32_t a, uint32_t b) { return a ^ b; }
uint32_t at_xchg(uint32_t, uint32_t b) { return b; }
uint32_t at_add_f32(uint32_t a, uint32_t b) { return f32_bits(as_f32(a) + as_f32(b)); }
uint32_t at_max_f32(uint32_t a, uint32_t b) { return f32_bits(std::fmax(as_f32(a), as_f32(b))); }
uint32_t at_min_f32(uint32_t a, uint32_t b) { return f32_bits(std::fmin(as_f32(a), as_f32(b))); }

// DS_SWIZZLE_B32 (no memory access): quad-permute mode (offset bit 15) or
// bitmask mode within 32 lanes; an inactive source lane reads 0.
void ds_swizzle_b32(Wave &w, const Inst &in) {
  const uint32_t *s = w.vgpr(in.op[1]);
  const uint16_t off = in.m.swizzle;
  if (off >= 0xc000) fail("ds_swizzle rotate/FFT modes are not modelled");
  const uint64_t exec = w.exec();
  uint32_t out[64];
  for_lanes(exec, [&](int l) {
    int src;
    if (off & 0x8000) src = (l & 0x3c) + ((off >> (2 * (l & 3))) & 3);
    else src = (l & 32) + ((((l & 31) & (off & 31)) | ((off >> 5) & 31)) ^ ((off >> 10) & 31));
    out[l] = (exec >> src) & 1 ? s[src] : 0;
  });
  issue_memory(w, in, Counter::kLgkm, false, &in.op[0], 1);
  uint32_t *d = w.vgpr(in.op[0]);
  for_lanes(exec, [&](int l) { d[l] = out[l]; });
}

// DS_BPERMUTE_B32: lane l reads vdata of lane ((vaddr + offset) / 4) % 64;
// DS_PERMUTE_B32: lane l writes its vdata to that lane.
template <bool Backward>
void ds_permute(Wave &w, const Inst &in) {
  const uint32_t *addr = w.vgpr(in.op[1]), *data = w.vgpr(in.op[2]);
  const uint64_t exec = w.exec();
  uint32_t out[64] = {};
  for_lanes(exec, [&](int l) {
    const int other = int(((addr[l] + uint32_t(in.m.offset)) >> 2) & 63);
    if (Backward) out[l] = (exec >> other) & 1 ? data[other] : 0;
    else out[other] = data[l];
  });
  issue_memory(w, in, Counter::kLgkm, false, &in.op[0], 1);
  uint32_t *d = w.vgpr(in.op[0]);
  for_lanes(exec, [&](int l) { d[l] = out[l]; });
}

void ds_nop(Wave &, const Inst &) {}

}  // namespace

void add_lds_ops(OpTable &t) {
  auto load = [&](const char *name, Handler fn) { t[name] = OpInfo{fn, 1, Counter::kLgkm}; };
  auto store = [&](const char *name, Handler fn) { t[name] = OpInfo{fn, 0, Counter::kLgkm}; };
  load("ds_read_b32", ds_read<4>);
  load("ds_read_b64", ds_read<8>);
  load("ds_read_b96", ds_read<12>);
  load("ds_read_b128", ds_read<16>);
  load("ds_read_u8", ds_read<1>);
  load("ds_read_i8", ds_read<1, true>);
  load("ds_read_u16", ds_read<2>);
  load("ds_read_i16", ds_read<2, true>);
  load("ds_read_u16_d16", ds_read_d16<2, false, false>);
  load("ds_read_u16_d16_hi", ds_read_d16<2, true, false>);
  load("ds_read_u8_d16", ds_read_d16<1, false, false>);
  load("ds_read_u8_d16_hi", ds_read_d16<1, true, false>);
  load("ds_read2_b32", ds_read2<4, 1>);
  load("ds_read2_b64", ds_read2<8, 1>);
  load("ds_read2st64_b32", ds_read2<4, 64>);
  load("ds_read2st64_b64", ds_read2<8, 64>);
  store("ds_write_b8", ds_write<1>);
  store("ds_write_b16", ds_write<2>);
  store("ds_write_b32", ds_write<4>);
  store("ds_write_b64", ds_write<8>);
  store("ds_write_b96", ds_write<12>);
  store("ds_write_b128", ds_write<16>);
  store("ds_write_b16_d16_hi", ds_write<2, true>);
  store("ds_write_b8_d16_hi", ds_write<1, true>);
  store("ds_write2_b32", ds_write2<4, 1>);
  store("ds_write2_b64", ds_write2<8, 1>);
  store("ds_write2st64_b32", ds_write2<4, 64>);
  store("ds_write2st64_b64", ds_write2<8, 64>);
#define GATEJIT_DS_ATOMIC(op, type, fn)                                          \
  store("ds_" op "_" type, ds_atomic<fn, false>);                                 \
  t["ds_" op "_rtn_" type] = OpInfo{ds_atomic<fn, true>, 1, Counter::kLgkm};
  GATEJIT_DS_ATOMIC("add", "u32", at_add)
  GATEJIT_DS_ATOMIC("sub", "u32", at_sub)
  GATEJIT_DS_ATOMIC("max", "u32", at_max_u)
  GATEJIT_DS_ATOMIC("min", "u32", at_min_u)
  GATEJIT_DS_ATOMIC("max", "i32", at_max_i)
  GATEJIT_DS_ATOMIC("min", "i32", at_min_i)
  GATEJIT_DS_ATOMIC("and", "b32", at_and)
  GATEJIT_DS_ATOMIC("or", "b32", at_or)
  GATEJIT_DS_ATOMIC("xor", "b32", at_xor)
  GATEJIT_DS_ATOMIC("add", "f32", at_add_f32)
  GATEJIT_DS_ATOMIC("max", "f32", at_max_f32)
  GATEJIT_DS_ATOMIC("min", "f32", at_min_f32)
#undef GATEJIT_DS_ATOMIC
  t["ds_wrxchg_rtn_b32"] = OpInfo{ds_atomic<at_xchg, true>, 1, Counter::kLgkm};
  load("ds_swizzle_b32", ds_swizzle_b32);
  load("ds_bpermute_b32", ds_permute<true>);
  load("ds_permute_b32", ds_permute<false>);
  store("ds_nop", ds_nop);
}

}  // namespace gatejit::emulator
