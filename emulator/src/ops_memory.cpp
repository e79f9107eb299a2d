// Vector memory: global (FLAT-global), flat, scratch and buffer (MUBUF)
// loads, stores and atomics, the LDS DMA loads (global_load_lds_*), and the
// cache controls buffer_wbl2 / buffer_inv. Semantics: AMD CDNA4 ISA
// reference (MI355X), "Buffer & Flat (MUBUF/MTBUF/FLAT/Scratch/Global)";
// cache-policy bits sc0/sc1/nt and the cache controls as LLVM AMDGPUUsage's
// "Memory Model GFX942" uses them (memory.h models their effect). Every
// instruction here is counted by vmcnt.
#include "launch.h"
#include "op_table.h"
#include "valu.h"

namespace gatejit::emulator {
namespace {

AccessScope scope_of(const Inst &in) { return AccessScope{in.m.sc0, in.m.sc1, in.m.nt}; }

// FLAT-global addressing: saddr off -> vaddr is a 64-bit address; else
// saddr (64-bit SGPRs) + vaddr (32-bit, zero-extended); plus the offset.
struct GlobalAddress {
  const uint32_t *lo = nullptr, *hi = nullptr;
  uint64_t base = 0;
  int64_t offset = 0;
  uint64_t operator()(int l) const {
    if (hi) return (uint64_t(lo[l]) | uint64_t(hi[l]) << 32) + uint64_t(offset);
    return base + (lo ? lo[l] : 0) + uint64_t(offset);
  }
};
GlobalAddress global_address(Wave &w, const Inst &in, const Operand &vaddr, const Operand &saddr) {
  GlobalAddress a;
  a.offset = in.m.offset;
  if (saddr.kind == OpKind::kOff) {
    if (vaddr.count != 2) fail("global access without saddr needs a 64-bit vaddr");
    a.lo = w.vgpr(vaddr), a.hi = w.vgpr(vaddr, 1);
  } else {
    a.base = sread64(w, saddr);
    if (vaddr.kind == OpKind::kVgpr) a.lo = w.vgpr(vaddr);
  }
  return a;
}

// Loads: vdst, vaddr, saddr. `Bytes` per lane; sub-dword loads zero- or
// sign-extend, or (D16) fill one half and keep the other.
enum class Ext { kNone, kZero, kSign, kD16Lo, kD16Hi };
template <int Bytes, Ext E = Ext::kNone>
void global_load_op(Wave &w, const Inst &in) {
  const GlobalAddress a = global_address(w, in, in.op[1], in.op[2]);
  constexpr int regs = Bytes < 4 ? 1 : Bytes / 4;
  uint32_t *d[4];
  for (int k = 0; k < regs; ++k) d[k] = w.vgpr(in.op[0], k);
  const AccessScope sc = scope_of(in);
  issue_memory(w, in, Counter::kVm, false, &in.op[0], regs);
  for_lanes(w.exec(), [&](int l) {
    uint32_t t[4] = {0, 0, 0, 0};
    global_load(w, a(l), t, Bytes, sc);
    if constexpr (E == Ext::kNone || E == Ext::kZero) {
      for (int k = 0; k < regs; ++k) d[k][l] = t[k];
    } else if constexpr (E == Ext::kSign) {
      d[0][l] = Bytes == 1 ? uint32_t(int32_t(int8_t(t[0]))) : uint32_t(int32_t(int16_t(t[0])));
    } else if constexpr (E == Ext::kD16Lo) {
      d[0][l] = (d[0][l] & 0xffff0000u) | (t[0] & 0xffff);
    } else {
      d[0][l] = (d[0][l] & 0xffff) | t[0] << 16;
    }
  });
}

// Stores: vaddr, vdata, saddr.
template <int Bytes, bool HiHalf = false>
void global_store_op(Wave &w, const Inst &in) {
  const GlobalAddress a = global_address(w, in, in.op[0], in.op[2]);
  constexpr int regs = Bytes < 4 ? 1 : Bytes / 4;
  const uint32_t *s[4];
  for (int k = 0; k < regs; ++k) s[k] = w.vgpr(in.op[1], k);
  const AccessScope sc = scope_of(in);
  issue_memory(w, in, Counter::kVm, false, nullptr, 0);
  for_lanes(w.exec(), [&](int l) {
    uint32_t t[4];
    for (int k = 0; k < regs; ++k) t[k] = s[k][l];
    if (HiHalf) t[0] >>= 16;
    global_store(w, a(l), t, Bytes, sc);
  });
}

// Atomics: [vdst,] vaddr, vdata, saddr; sc0 returns the old value (GFX940+).
template <int Bytes, uint64_t (*F)(uint64_t, uint64_t, uint64_t)>
void global_atomic_op(Wave &w, const Inst &in) {
  const bool rtn = in.m.sc0;
  const int base = rtn ? 1 : 0;
  const GlobalAddress a = global_address(w, in, in.op[base], in.op[base + 2]);
  const Operand &data = in.op[base + 1];
  constexpr int regs = Bytes / 4;
  const bool cmpswap = F == nullptr;
  const uint32_t *s[4];
  for (int k = 0; k < (cmpswap ? 2 : 1) * regs; ++k) s[k] = w.vgpr(data, k);
  uint32_t *d[2] = {nullptr, nullptr};
  if (rtn)
    for (int k = 0; k < regs; ++k) d[k] = w.vgpr(in.op[0], k);
  const AccessScope sc = scope_of(in);
  issue_memory(w, in, Counter::kVm, false, rtn ? &in.op[0] : nullptr, rtn ? regs : 0);
  for_lanes(w.exec(), [&](int l) {
    const uint64_t addr = a(l);
    uint64_t v = s[0][l], cmp = 0;
    if (regs == 2) v |= uint64_t(s[1][l]) << 32;
    if (cmpswap) {  // vdata = { new value, compare value }
      cmp = regs == 2 ? uint64_t(s[2][l]) | uint64_t(s[3][l]) << 32 : s[1][l];
    }
    uint8_t *host = global_bytes(w, addr, Bytes);
    note_write(w);
    auto op = [&](uint64_t old) {
      if (cmpswap) return old == cmp ? v : old;
      return F(old, v, 0);
    };
    uint64_t old;
    if (w.launch->xcd) {
      StaleRead stale;
      old = w.launch->xcd->atomic(w.wg->xcd, host, addr, Bytes, sc, writer_of(w), op, &stale);
      check_stale(w, stale);
    } else {
      old = 0;
      std::memcpy(&old, host, Bytes);
      const uint64_t nv = op(old);
      std::memcpy(host, &nv, Bytes);
    }
    if (rtn) {
      d[0][l] = uint32_t(old);
      if (regs == 2) d[1][l] = uint32_t(old >> 32);
    }
  });
}
uint64_t a_add32(uint64_t o, uint64_t v, uint64_t) { return uint32_t(o + v); }
uint64_t a_sub32(uint64_t o, uint64_t v, uint64_t) { return uint32_t(o - v); }
uint64_t a_swap(uint64_t, uint64_t v, uint64_t) { return v; }
uint64_t a_and(uint64_t o, uint64_t v, uint64_t) { return o & v; }
uint64_t a_or(uint64_t o, uint64_t v, uint64_t) { return o | v; }
uint64_t a_xor(uint64_t o, uint64_t v, uint64_t) { return o ^ v; }
uint64_t a_umax32(uint64_t o, uint64_t v, uint64_t) { return std::max(uint32_t(o), uint32_t(v)); }
uint64_t a_umin32(uint64_t o, uint64_t v, uint64_t) { return std::min(uint32_t(o), uint32_t(v)); }
uint64_t a_smax32(uint64_t o, uint64_t v, uint64_t) { return uint32_t(std::max(int32_t(o), int32_t(v))); }
uint64_t a_smin32(uint64_t o, uint64_t v, uint64_t) { return uint32_t(std::min(int32_t(o), int32_t(v))); }
uint64_t a_inc32(uint64_t o, uint64_t v, uint64_t) { return uint32_t(o) >= uint32_t(v) ? 0 : uint32_t(o + 1); }
uint64_t a_dec32(uint64_t o, uint64_t v, uint64_t) {
  return uint32_t(o) == 0 || uint32_t(o) > uint32_t(v) ? uint32_t(v) : uint32_t(o - 1);
}
uint64_t a_add_f32(uint64_t o, uint64_t v, uint64_t) { return f32_bits(as_f32(uint32_t(o)) + as_f32(uint32_t(v))); }
uint64_t a_add64(uint64_t o, uint64_t v, uint64_t) { return o + v; }
uint64_t a_sub64(uint64_t o, uint64_t v, uint64_t) { return o - v; }

// global_load_lds_{dword,dwordx3,dwordx4} vaddr, saddr [offset]: each active
// lane's bytes land in LDS at M0 + offset + lane * size (a wave's lanes in
// consecutive slots); no VGPR is written. Retired by vmcnt.
template <int Bytes>
void global_load_lds_op(Wave &w, const Inst &in) {
  const GlobalAddress a = global_address(w, in, in.op[0], in.op[1]);
  const AccessScope sc = scope_of(in);
  const uint64_t seq = issue_lds_dma(w, in);
  const uint32_t base = w.s[kSgprM0] + uint32_t(in.m.offset);
  for_lanes(w.exec(), [&](int l) {
    uint8_t t[16];
    global_load(w, a(l), t, Bytes, sc);
    std::memcpy(lds_dma_write(w, in, base + uint32_t(l) * Bytes, Bytes, seq), t, Bytes);
  });
}

// ---- buffer (MUBUF) ----

// The buffer resource (V#): base [47:0], stride [61:48], num_records
// [95:64]; raw buffers (stride 0) check offset + size <= num_records:
// loads out of range read 0, stores out of range are dropped.
struct Buffer {
  uint64_t base;
  uint32_t stride, num_records;
};
Buffer buffer_of(Wave &w, const Operand &r) {
  if (r.kind != OpKind::kSgpr || r.count != 4) fail("buffer resource is not four SGPRs");
  const uint64_t w01 = uint64_t(w.s[r.reg]) | uint64_t(w.s[r.reg + 1]) << 32;
  return Buffer{w01 & 0xffffffffffffull, uint32_t((w01 >> 48) & 0x3fff), w.s[r.reg + 2]};
}
template <bool Load>
struct BufferAccess {
  Buffer b;
  const uint32_t *v0 = nullptr, *v1 = nullptr;
  uint64_t soffset = 0;
  int32_t offset = 0;
  bool offen = false, idxen = false;
  // Address and whether [offset, offset + bytes) is in range.
  std::pair<uint64_t, bool> operator()(int l, uint32_t bytes) const {
    const uint64_t index = idxen ? v0[l] : 0;
    const uint64_t off = (offen ? (idxen ? v1[l] : v0[l]) : 0) + uint64_t(int64_t(offset));
    if (b.stride == 0) return {b.base + soffset + off, off + bytes <= b.num_records};
    return {b.base + soffset + index * b.stride + off, index < b.num_records && off + bytes <= b.stride};
  }
};
template <bool Load>
BufferAccess<Load> buffer_access(Wave &w, const Inst &in, int vaddr_at) {
  BufferAccess<Load> a;
  a.b = buffer_of(w, in.op[vaddr_at + 1]);
  a.offen = in.m.offen, a.idxen = in.m.idxen, a.offset = in.m.offset;
  const Operand &va = in.op[vaddr_at];
  if (va.kind == OpKind::kVgpr) {
    a.v0 = w.vgpr(va);
    if (va.count > 1) a.v1 = w.vgpr(va, 1);
  }
  a.soffset = sread32(w, in.op[vaddr_at + 2]);
  return a;
}

// buffer_load_* vdata, vaddr, srsrc, soffset [offen] [idxen] offset:N [lds].
template <int Bytes, Ext E = Ext::kNone>
void buffer_load_op(Wave &w, const Inst &in) {
  const auto a = buffer_access<true>(w, in, 1);
  const AccessScope sc = scope_of(in);
  if (in.m.lds) {
    const uint64_t seq = issue_lds_dma(w, in);
    const uint32_t base = w.s[kSgprM0] + uint32_t(in.m.offset);
    for_lanes(w.exec(), [&](int l) {
      uint8_t t[16] = {};
      const auto [addr, ok] = a(l, Bytes);
      if (ok) global_load(w, addr, t, Bytes, sc);
      std::memcpy(lds_dma_write(w, in, base + uint32_t(l) * Bytes, Bytes, seq), t, Bytes);
    });
    return;
  }
  constexpr int regs = Bytes < 4 ? 1 : Bytes / 4;
  uint32_t *d[4];
  for (int k = 0; k < regs; ++k) d[k] = w.vgpr(in.op[0], k);
  issue_memory(w, in, Counter::kVm, false, &in.op[0], regs);
  for_lanes(w.exec(), [&](int l) {
    uint32_t t[4] = {0, 0, 0, 0};
    const auto [addr, ok] = a(l, Bytes);
    if (ok) global_load(w, addr, t, Bytes, sc);
    if constexpr (E == Ext::kSign) t[0] = Bytes == 1 ? uint32_t(int32_t(int8_t(t[0]))) : uint32_t(int32_t(int16_t(t[0])));
    if constexpr (E == Ext::kD16Lo) {
      d[0][l] = (d[0][l] & 0xffff0000u) | (t[0] & 0xffff);
    } else if constexpr (E == Ext::kD16Hi) {
      d[0][l] = (d[0][l] & 0xffff) | t[0] << 16;
    } else {
      for (int k = 0; k < regs; ++k) d[k][l] = t[k];
    }
  });
}
template <int Bytes, bool HiHalf = false>
void buffer_store_op(Wave &w, const Inst &in) {
  const auto a = buffer_access<false>(w, in, 1);
  constexpr int regs = Bytes < 4 ? 1 : Bytes / 4;
  const uint32_t *s[4];
  for (int k = 0; k < regs; ++k) s[k] = w.vgpr(in.op[0], k);
  const AccessScope sc = scope_of(in);
  issue_memory(w, in, Counter::kVm, false, nullptr, 0);
  for_lanes(w.exec(), [&](int l) {
    uint32_t t[4];
    for (int k = 0; k < regs; ++k) t[k] = s[k][l];
    if (HiHalf) t[0] >>= 16;
    const auto [addr, ok] = a(l, Bytes);
    if (ok) global_store(w, addr, t, Bytes, sc);
  });
}

// buffer_wbl2 sc1: the XCD's L2 written back; buffer_inv sc1: its clean
// lines dropped. Without sc1 they act on the wave's L1 only, which the
// emulator does not keep (every load already reads the L2 or memory).
void buffer_wbl2(Wave &w, const Inst &in) {
  issue_memory(w, in, Counter::kVm, false, nullptr, 0);
  if (w.launch->xcd && in.m.sc1) w.launch->xcd->write_back(w.wg->xcd);
}
void buffer_inv(Wave &w, const Inst &in) {
  issue_memory(w, in, Counter::kVm, false, nullptr, 0);
  if (w.launch->xcd && in.m.sc1) w.launch->xcd->invalidate(w.wg->xcd);
}

// ---- scratch: per-lane private memory ----

template <int Bytes, bool Store>
void scratch_op(Wave &w, const Inst &in) {
  const uint32_t bytes = w.launch->kernel->kd.private_segment_bytes;
  const Operand &vaddr = in.op[Store ? 0 : 1], &saddr = in.op[2];
  const Operand &data = in.op[Store ? 1 : 0];
  const uint32_t *v = vaddr.kind == OpKind::kVgpr ? w.vgpr(vaddr) : nullptr;
  const uint32_t s = saddr.kind == OpKind::kSgpr ? w.s[saddr.reg] : 0;
  constexpr int regs = Bytes < 4 ? 1 : Bytes / 4;
  issue_memory(w, in, Counter::kVm, false, Store ? nullptr : &data, Store ? 0 : regs);
  for_lanes(w.exec(), [&](int l) {
    const uint32_t at = (v ? v[l] : 0) + s + uint32_t(in.m.offset);
    if (!w.scratch || uint64_t(at) + Bytes > bytes)
      fail("scratch access at " + std::to_string(at) + " outside the " + std::to_string(bytes) + "-byte private segment");
    uint8_t *p = w.scratch + size_t(l) * bytes + at;
    for (int k = 0; k < regs; ++k) {
      uint32_t *r = w.vgpr(data, k) + l;
      const int n = Bytes < 4 ? Bytes : 4;
      if (Store) std::memcpy(p + 4 * k, r, size_t(n));
      else {
        *r = 0;
        std::memcpy(r, p + 4 * k, size_t(n));
      }
    }
  });
}

// flat_*: the emulator's kernels address global memory through FLAT only.
template <int Bytes>
void flat_load_op(Wave &w, const Inst &in) {
  const uint32_t *lo = w.vgpr(in.op[1]), *hi = w.vgpr(in.op[1], 1);
  constexpr int regs = Bytes / 4;
  issue_memory(w, in, Counter::kVm, false, &in.op[0], regs);
  for_lanes(w.exec(), [&](int l) {
    const uint64_t addr = (uint64_t(lo[l]) | uint64_t(hi[l]) << 32) + uint64_t(int64_t(in.m.offset));
    if (addr >> 48) fail("flat access to the LDS or private aperture is not modelled");
    uint32_t t[4];
    global_load(w, addr, t, Bytes, scope_of(in));
    for (int k = 0; k < regs; ++k) w.vgpr(in.op[0], k)[l] = t[k];
  });
}
template <int Bytes>
void flat_store_op(Wave &w, const Inst &in) {
  const uint32_t *lo = w.vgpr(in.op[0]), *hi = w.vgpr(in.op[0], 1);
  constexpr int regs = Bytes / 4;
  issue_memory(w, in, Counter::kVm, false, nullptr, 0);
  for_lanes(w.exec(), [&](int l) {
    const uint64_t addr = (uint64_t(lo[l]) | uint64_t(hi[l]) << 32) + uint64_t(int64_t(in.m.offset));
    if (addr >> 48) fail("flat access to the LDS or private aperture is not modelled");
    uint32_t t[4];
    for (int k = 0; k < regs; ++k) t[k] = w.vgpr(in.op[1], k)[l];
    global_store(w, addr, t, Bytes, scope_of(in));
  });
}

}  // namespace

void add_memory_ops(OpTable &t) {
  auto load = [&](const char *name, Handler fn) { t[name] = OpInfo{fn, 1, Counter::kVm}; };
  auto store = [&](const char *name, Handler fn) { t[name] = OpInfo{fn, 0, Counter::kVm}; };
  load("global_load_dword", global_load_op<4>);
  load("global_load_dwordx2", global_load_op<8>);
  load("global_load_dwordx3", global_load_op<12>);
  load("global_load_dwordx4", global_load_op<16>);
  load("global_load_ubyte", global_load_op<1, Ext::kZero>);
  load("global_load_sbyte", global_load_op<1, Ext::kSign>);
  load("global_load_ushort", global_load_op<2, Ext::kZero>);
  load("global_load_sshort", global_load_op<2, Ext::kSign>);
  load("global_load_short_d16", global_load_op<2, Ext::kD16Lo>);
  load("global_load_short_d16_hi", global_load_op<2, Ext::kD16Hi>);
  load("global_load_ubyte_d16", global_load_op<1, Ext::kD16Lo>);
  load("global_load_ubyte_d16_hi", global_load_op<1, Ext::kD16Hi>);
  store("global_store_dword", global_store_op<4>);
  store("global_store_dwordx2", global_store_op<8>);
  store("global_store_dwordx3", global_store_op<12>);
  store("global_store_dwordx4", global_store_op<16>);
  store("global_store_byte", global_store_op<1>);
  store("global_store_short", global_store_op<2>);
  store("global_store_byte_d16_hi", global_store_op<1, true>);
  store("global_store_short_d16_hi", global_store_op<2, true>);
  store("global_load_lds_dword", global_load_lds_op<4>);
  store("global_load_lds_dwordx3", global_load_lds_op<12>);
  store("global_load_lds_dwordx4", global_load_lds_op<16>);
  // Atomics: the decoder makes the no-return forms (no sc0) write nothing.
  load("global_atomic_add", global_atomic_op<4, a_add32>);
  load("global_atomic_sub", global_atomic_op<4, a_sub32>);
  load("global_atomic_swap", global_atomic_op<4, a_swap>);
  load("global_atomic_cmpswap", global_atomic_op<4, nullptr>);
  load("global_atomic_and", global_atomic_op<4, a_and>);
  load("global_atomic_or", global_atomic_op<4, a_or>);
  load("global_atomic_xor", global_atomic_op<4, a_xor>);
  load("global_atomic_umax", global_atomic_op<4, a_umax32>);
  load("global_atomic_umin", global_atomic_op<4, a_umin32>);
  load("global_atomic_smax", global_atomic_op<4, a_smax32>);
  load("global_atomic_smin", global_atomic_op<4, a_smin32>);
  load("global_atomic_inc", global_atomic_op<4, a_inc32>);
  load("global_atomic_dec", global_atomic_op<4, a_dec32>);
  load("global_atomic_add_f32", global_atomic_op<4, a_add_f32>);
  load("global_atomic_add_x2", global_atomic_op<8, a_add64>);
  load("global_atomic_sub_x2", global_atomic_op<8, a_sub64>);
  load("global_atomic_swap_x2", global_atomic_op<8, a_swap>);
  load("global_atomic_cmpswap_x2", global_atomic_op<8, nullptr>);
  load("buffer_load_dword", buffer_load_op<4>);
  load("buffer_load_dwordx2", buffer_load_op<8>);
  load("buffer_load_dwordx3", buffer_load_op<12>);
  load("buffer_load_dwordx4", buffer_load_op<16>);
  load("buffer_load_ubyte", buffer_load_op<1, Ext::kZero>);
  load("buffer_load_sbyte", buffer_load_op<1, Ext::kSign>);
  load("buffer_load_ushort", buffer_load_op<2, Ext::kZero>);
  load("buffer_load_sshort", buffer_load_op<2, Ext::kSign>);
  load("buffer_load_short_d16", buffer_load_op<2, Ext::kD16Lo>);
  load("buffer_load_short_d16_hi", buffer_load_op<2, Ext::kD16Hi>);
  store("buffer_store_dword", buffer_store_op<4>);
  store("buffer_store_dwordx2", buffer_store_op<8>);
  store("buffer_store_dwordx3", buffer_store_op<12>);
  store("buffer_store_dwordx4", buffer_store_op<16>);
  store("buffer_store_byte", buffer_store_op<1>);
  store("buffer_store_short", buffer_store_op<2>);
  store("buffer_store_short_d16_hi", buffer_store_op<2, true>);
  store("buffer_wbl2", buffer_wbl2);
  store("buffer_inv", buffer_inv);
  load("scratch_load_dword", scratch_op<4, false>);
  load("scratch_load_dwordx2", scratch_op<8, false>);
  load("scratch_load_dwordx3", scratch_op<12, false>);
  load("scratch_load_dwordx4", scratch_op<16, false>);
  store("scratch_store_dword", scratch_op<4, true>);
  store("scratch_store_dwordx2", scratch_op<8, true>);
  store("scratch_store_dwordx3", scratch_op<12, true>);
  store("scratch_store_dwordx4", scratch_op<16, true>);
  load("flat_load_dword", flat_load_op<4>);
  load("flat_load_dwordx2", flat_load_op<8>);
  load("flat_load_dwordx4", flat_load_op<16>);
  store("flat_store_dword", flat_store_op<4>);
  store("flat_store_dwordx2", flat_store_op<8>);
  store("flat_store_dwordx4", flat_store_op<16>);
}

}  // namespace gatejit::emulator
