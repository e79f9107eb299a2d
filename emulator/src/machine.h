// The state the handlers work on: a wave (SGPRs, the unified VGPR/AGPR file,
// EXEC, VCC, SCC, M0, mode), its workgroup (LDS), and the launch it belongs
// to (memory, program, checks). Handlers throw EmuError on anything the
// emulator cannot or must not run; the launch turns it into a Status that
// names the wave, the PC and the instruction.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "inst.h"
#include "numeric.h"

namespace gatejit::emulator {

struct EmuError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string &message);

struct Launch;
struct Workgroup;
struct WaitTracker;

// Per-wave floating-point mode (the MODE register's round and denorm
// fields; CDNA3 ISA, "MODE").
struct FloatMode {
  bool flush_f32 = false;     // FP_DENORM single: 0 flushes inputs and outputs
  bool flush_f16_64 = false;
  bool ieee = true;
  bool dx10_clamp = true;
};

struct Wave {
  uint32_t s[kSgprFile] = {};
  bool scc = false;
  uint32_t *v = nullptr;     // unified file: register r of lane l at v[r * 64 + l]
  uint32_t vregs = 0;        // registers in the unified file
  uint32_t accum_offset = 0; // first AGPR
  uint32_t pc = 0;           // instruction index
  enum class State : uint8_t { kReady, kBarrier, kDone } state = State::kReady;
  Workgroup *wg = nullptr;
  Launch *launch = nullptr;
  uint32_t id_in_group = 0;  // wave index within the workgroup
  uint32_t id = 0;           // wave index within the launch
  uint64_t instructions = 0;
  uint64_t hwreg_mode = 0;   // the MODE register's bits as s_getreg sees them
  FloatMode mode;
  WaitTracker *waits = nullptr;
  // Spin detection: the loop this wave last branched back to, how often in a
  // row with no write by any wave, and whether its state stopped changing.
  uint32_t loop_target = ~0u, loop_branch = 0, loop_repeats = 0;
  uint64_t loop_epoch = 0, loop_hash = 0, spin_epoch = ~0ull;
  uint8_t *scratch = nullptr;  // private segment: lane l's bytes at scratch + l * private_bytes
  // Work space for DPP / SDWA sources and results.
  alignas(64) uint32_t tmp[4][64];
  uint32_t scalar_tmp[4] = {};

  uint64_t exec() const { return uint64_t(s[kSgprExec]) | uint64_t(s[kSgprExec + 1]) << 32; }
  void set_exec(uint64_t e) {
    s[kSgprExec] = uint32_t(e);
    s[kSgprExec + 1] = uint32_t(e >> 32);
  }
  uint64_t vcc() const { return uint64_t(s[kSgprVcc]) | uint64_t(s[kSgprVcc + 1]) << 32; }
  uint32_t *vgpr(const Operand &o) { return v + size_t(o.kind == OpKind::kAgpr ? accum_offset + o.reg : o.reg) * 64; }
  uint32_t *vgpr(const Operand &o, int k) { return vgpr(o) + size_t(k) * 64; }
};

template <class F>
inline void for_lanes(uint64_t mask, F &&f) {
  while (mask) {
    const int l = __builtin_ctzll(mask);
    mask &= mask - 1;
    f(l);
  }
}

// Scalar reads of an operand (SGPRs, constants, the special sources).
inline uint32_t sread32(const Wave &w, const Operand &o) {
  switch (o.kind) {
    case OpKind::kSgpr: return w.s[o.reg];
    case OpKind::kConst:
    case OpKind::kShared: return uint32_t(o.value);
    case OpKind::kScc: return w.scc;
    case OpKind::kExecz: return w.exec() == 0;
    case OpKind::kVccz: return w.vcc() == 0;
    default: fail("a scalar operand is not an SGPR or a constant");
  }
}
inline uint64_t sread64(const Wave &w, const Operand &o) {
  switch (o.kind) {
    case OpKind::kSgpr: return uint64_t(w.s[o.reg]) | uint64_t(w.s[o.reg + 1]) << 32;
    case OpKind::kConst:
    case OpKind::kShared: return o.value;
    case OpKind::kScc: return w.scc;
    case OpKind::kExecz: return w.exec() == 0;
    case OpKind::kVccz: return w.vcc() == 0;
    default: fail("a 64-bit scalar operand is not an SGPR pair or a constant");
  }
}
inline void swrite32(Wave &w, const Operand &o, uint32_t v) {
  if (o.kind != OpKind::kSgpr) fail("the destination is not an SGPR");
  w.s[o.reg] = v;
}
inline void swrite64(Wave &w, const Operand &o, uint64_t v) {
  if (o.kind != OpKind::kSgpr) fail("the destination is not an SGPR pair");
  w.s[o.reg] = uint32_t(v);
  w.s[o.reg + 1] = uint32_t(v >> 32);
}

// A 32-bit source of a vector instruction, lane by lane: VGPRs (stride 1) or
// one scalar value for every lane (stride 0); `andm`/`xorm` apply abs/neg.
struct Src32 {
  const uint32_t *p;
  uint32_t stride;
  uint32_t andm = ~0u, xorm = 0;
  uint32_t operator()(int l) const { return (p[l * stride] & andm) ^ xorm; }
};

// `sign` is the float sign bit the abs/neg modifiers act on (0 for integers).
inline Src32 vsrc32(Wave &w, const Operand &o, uint32_t sign, int slot, int dword = 0) {
  Src32 s{nullptr, 0};
  switch (o.kind) {
    case OpKind::kVgpr:
    case OpKind::kAgpr: s.p = w.vgpr(o, dword), s.stride = 1; break;
    case OpKind::kSgpr: s.p = &w.s[o.reg + dword]; break;
    default:
      w.scalar_tmp[slot] = dword ? uint32_t(o.value >> 32) : sread32(w, o);
      s.p = &w.scalar_tmp[slot];
  }
  if (sign) {
    if (o.abs) s.andm = ~sign;
    if (o.neg) s.xorm = sign;
  }
  return s;
}

// A 64-bit source: two dwords per lane.
struct Src64 {
  const uint32_t *lo, *hi;
  uint32_t stride;
  uint64_t andm = ~0ull, xorm = 0;
  uint64_t operator()(int l) const {
    return ((uint64_t(lo[l * stride]) | uint64_t(hi[l * stride]) << 32) & andm) ^ xorm;
  }
};

inline Src64 vsrc64(Wave &w, const Operand &o, uint64_t sign, int slot) {
  Src64 s{nullptr, nullptr, 0};
  switch (o.kind) {
    case OpKind::kVgpr:
    case OpKind::kAgpr: s.lo = w.vgpr(o), s.hi = w.vgpr(o, 1), s.stride = 1; break;
    case OpKind::kSgpr: s.lo = &w.s[o.reg], s.hi = &w.s[o.reg + 1]; break;
    default: {
      const uint64_t v = sread64(w, o);
      w.scalar_tmp[slot] = uint32_t(v);
      w.scalar_tmp[slot + 1] = uint32_t(v >> 32);
      s.lo = &w.scalar_tmp[slot], s.hi = &w.scalar_tmp[slot + 1];
    }
  }
  if (sign) {
    if (o.abs) s.andm = ~sign;
    if (o.neg) s.xorm = sign;
  }
  return s;
}

// A register list's text, for messages ("v[4:7]").
std::string operand_text(const Operand &o);

}  // namespace gatejit::emulator
