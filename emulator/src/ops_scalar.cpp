// Scalar ALU, program control and scalar memory (SOP1, SOP2, SOPC, SOPK,
// SOPP, SMEM). Semantics: AMD "AMD Instinct MI300 Instruction Set
// Architecture" (CDNA3), chapters "Scalar ALU Operations" and "Scalar Memory
// Operations", and the CDNA4 ISA reference (MI355X), which keeps them.
#include <bit>

#include "launch.h"
#include "op_table.h"
#include "valu.h"

namespace gatejit::emulator {
namespace {

// ---- SOP2: D = f(S0, S1) ----

template <uint32_t (*F)(Wave &, uint32_t, uint32_t)>
void sop2_32(Wave &w, const Inst &in) {
  swrite32(w, in.op[0], F(w, sread32(w, in.op[1]), sread32(w, in.op[2])));
}
template <uint64_t (*F)(Wave &, uint64_t, uint64_t)>
void sop2_64(Wave &w, const Inst &in) {
  swrite64(w, in.op[0], F(w, sread64(w, in.op[1]), sread64(w, in.op[2])));
}
// Shifts and bfe of 64-bit values take a 32-bit second operand.
template <uint64_t (*F)(Wave &, uint64_t, uint32_t)>
void sop2_64_32(Wave &w, const Inst &in) {
  swrite64(w, in.op[0], F(w, sread64(w, in.op[1]), sread32(w, in.op[2])));
}

uint32_t add_u32(Wave &w, uint32_t a, uint32_t b) {
  const uint64_t r = uint64_t(a) + b;
  w.scc = r >> 32;
  return uint32_t(r);
}
uint32_t addc_u32(Wave &w, uint32_t a, uint32_t b) {
  const uint64_t r = uint64_t(a) + b + w.scc;
  w.scc = r >> 32;
  return uint32_t(r);
}
uint32_t sub_u32(Wave &w, uint32_t a, uint32_t b) {
  w.scc = b > a;
  return a - b;
}
uint32_t subb_u32(Wave &w, uint32_t a, uint32_t b) {
  const uint64_t sub = uint64_t(b) + w.scc;
  w.scc = sub > a;
  return uint32_t(a - sub);
}
uint32_t add_i32(Wave &w, uint32_t a, uint32_t b) {
  const uint32_t r = a + b;
  w.scc = ((a ^ r) & (b ^ r)) >> 31;  // signed overflow
  return r;
}
uint32_t sub_i32(Wave &w, uint32_t a, uint32_t b) {
  const uint32_t r = a - b;
  w.scc = ((a ^ b) & (a ^ r)) >> 31;
  return r;
}
uint32_t mul_i32(Wave &, uint32_t a, uint32_t b) { return a * b; }
uint32_t mul_hi_u32(Wave &, uint32_t a, uint32_t b) { return uint32_t((uint64_t(a) * b) >> 32); }
uint32_t mul_hi_i32(Wave &, uint32_t a, uint32_t b) {
  return uint32_t(uint64_t(int64_t(int32_t(a)) * int64_t(int32_t(b))) >> 32);
}
template <class T>
uint32_t setscc(Wave &w, T r) {
  w.scc = r != 0;
  return uint32_t(r);
}
uint32_t and_b32(Wave &w, uint32_t a, uint32_t b) { return setscc(w, a & b); }
uint32_t or_b32(Wave &w, uint32_t a, uint32_t b) { return setscc(w, a | b); }
uint32_t xor_b32(Wave &w, uint32_t a, uint32_t b) { return setscc(w, a ^ b); }
uint32_t andn2_b32(Wave &w, uint32_t a, uint32_t b) { return setscc(w, a & ~b); }
uint32_t orn2_b32(Wave &w, uint32_t a, uint32_t b) { return setscc(w, a | ~b); }
uint32_t nand_b32(Wave &w, uint32_t a, uint32_t b) { return setscc(w, ~(a & b)); }
uint32_t nor_b32(Wave &w, uint32_t a, uint32_t b) { return setscc(w, ~(a | b)); }
uint32_t xnor_b32(Wave &w, uint32_t a, uint32_t b) { return setscc(w, ~(a ^ b)); }
uint32_t lshl_b32(Wave &w, uint32_t a, uint32_t b) { return setscc(w, a << (b & 31)); }
uint32_t lshr_b32(Wave &w, uint32_t a, uint32_t b) { return setscc(w, a >> (b & 31)); }
uint32_t ashr_i32(Wave &w, uint32_t a, uint32_t b) { return setscc(w, uint32_t(int32_t(a) >> (b & 31))); }
uint32_t bfm_b32(Wave &, uint32_t a, uint32_t b) { return ((1u << (a & 31)) - 1) << (b & 31); }
uint32_t bfe_u32(Wave &w, uint32_t a, uint32_t b) {
  const uint32_t off = b & 31, width = (b >> 16) & 0x7f;
  const uint32_t r = width == 0 ? 0 : width >= 32 ? a >> off : (a >> off) & ((1u << width) - 1);
  return setscc(w, r);
}
uint32_t bfe_i32(Wave &w, uint32_t a, uint32_t b) {
  const uint32_t off = b & 31, width = (b >> 16) & 0x7f;
  if (width == 0) return setscc(w, 0u);
  if (width >= 32) return setscc(w, uint32_t(int32_t(a) >> off));
  const int32_t v = int32_t(a << (32 - off - std::min<uint32_t>(width, 32 - off))) >> (32 - std::min<uint32_t>(width, 32 - off));
  return setscc(w, uint32_t(v));
}
uint32_t min_i32(Wave &w, uint32_t a, uint32_t b) { return (w.scc = int32_t(a) < int32_t(b)) ? a : b; }
uint32_t max_i32(Wave &w, uint32_t a, uint32_t b) { return (w.scc = int32_t(a) > int32_t(b)) ? a : b; }
uint32_t min_u32(Wave &w, uint32_t a, uint32_t b) { return (w.scc = a < b) ? a : b; }
uint32_t max_u32(Wave &w, uint32_t a, uint32_t b) { return (w.scc = a > b) ? a : b; }
uint32_t cselect_b32(Wave &w, uint32_t a, uint32_t b) { return w.scc ? a : b; }
uint32_t absdiff_i32(Wave &w, uint32_t a, uint32_t b) {
  const int64_t d = int64_t(int32_t(a)) - int32_t(b);
  return setscc(w, uint32_t(d < 0 ? -d : d));
}
template <int N>
uint32_t lshl_add_u32(Wave &w, uint32_t a, uint32_t b) {
  const uint64_t r = (uint64_t(a) << N) + b;
  w.scc = r >> 32;
  return uint32_t(r);
}
uint32_t pack_ll(Wave &, uint32_t a, uint32_t b) { return (a & 0xffff) | b << 16; }
uint32_t pack_lh(Wave &, uint32_t a, uint32_t b) { return (a & 0xffff) | (b & 0xffff0000u); }
uint32_t pack_hh(Wave &, uint32_t a, uint32_t b) { return a >> 16 | (b & 0xffff0000u); }

uint64_t and_b64(Wave &w, uint64_t a, uint64_t b) { return w.scc = (a & b) != 0, a & b; }
uint64_t or_b64(Wave &w, uint64_t a, uint64_t b) { return w.scc = (a | b) != 0, a | b; }
uint64_t xor_b64(Wave &w, uint64_t a, uint64_t b) { return w.scc = (a ^ b) != 0, a ^ b; }
uint64_t andn2_b64(Wave &w, uint64_t a, uint64_t b) { return w.scc = (a & ~b) != 0, a & ~b; }
uint64_t orn2_b64(Wave &w, uint64_t a, uint64_t b) { return w.scc = (a | ~b) != 0, a | ~b; }
uint64_t nand_b64(Wave &w, uint64_t a, uint64_t b) { return w.scc = ~(a & b) != 0, ~(a & b); }
uint64_t nor_b64(Wave &w, uint64_t a, uint64_t b) { return w.scc = ~(a | b) != 0, ~(a | b); }
uint64_t xnor_b64(Wave &w, uint64_t a, uint64_t b) { return w.scc = ~(a ^ b) != 0, ~(a ^ b); }
uint64_t cselect_b64(Wave &w, uint64_t a, uint64_t b) { return w.scc ? a : b; }
uint64_t lshl_b64(Wave &w, uint64_t a, uint32_t b) { return w.scc = (a << (b & 63)) != 0, a << (b & 63); }
uint64_t lshr_b64(Wave &w, uint64_t a, uint32_t b) { return w.scc = (a >> (b & 63)) != 0, a >> (b & 63); }
uint64_t ashr_i64(Wave &w, uint64_t a, uint32_t b) {
  const uint64_t r = uint64_t(int64_t(a) >> (b & 63));
  return w.scc = r != 0, r;
}
uint64_t bfe_u64(Wave &w, uint64_t a, uint32_t b) {
  const uint32_t off = b & 63, width = (b >> 16) & 0x7f;
  const uint64_t r = width == 0 ? 0 : width >= 64 ? a >> off : (a >> off) & ((1ull << width) - 1);
  return w.scc = r != 0, r;
}

// ---- SOP1 ----

void s_mov_b32(Wave &w, const Inst &in) { swrite32(w, in.op[0], sread32(w, in.op[1])); }
void s_mov_b64(Wave &w, const Inst &in) { swrite64(w, in.op[0], sread64(w, in.op[1])); }
void s_cmov_b32(Wave &w, const Inst &in) {
  if (w.scc) swrite32(w, in.op[0], sread32(w, in.op[1]));
}
void s_cmov_b64(Wave &w, const Inst &in) {
  if (w.scc) swrite64(w, in.op[0], sread64(w, in.op[1]));
}
void s_not_b32(Wave &w, const Inst &in) { swrite32(w, in.op[0], setscc(w, ~sread32(w, in.op[1]))); }
void s_not_b64(Wave &w, const Inst &in) {
  const uint64_t r = ~sread64(w, in.op[1]);
  w.scc = r != 0;
  swrite64(w, in.op[0], r);
}
void s_brev_b32(Wave &w, const Inst &in) {
  uint32_t v = sread32(w, in.op[1]), r = 0;
  for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1) << (31 - i);
  swrite32(w, in.op[0], r);
}
void s_bcnt1_i32_b32(Wave &w, const Inst &in) {
  swrite32(w, in.op[0], setscc(w, uint32_t(std::popcount(sread32(w, in.op[1])))));
}
void s_bcnt1_i32_b64(Wave &w, const Inst &in) {
  swrite32(w, in.op[0], setscc(w, uint32_t(std::popcount(sread64(w, in.op[1])))));
}
void s_ff1_i32_b32(Wave &w, const Inst &in) {
  const uint32_t v = sread32(w, in.op[1]);
  swrite32(w, in.op[0], v ? uint32_t(std::countr_zero(v)) : ~0u);
}
void s_ff1_i32_b64(Wave &w, const Inst &in) {
  const uint64_t v = sread64(w, in.op[1]);
  swrite32(w, in.op[0], v ? uint32_t(std::countr_zero(v)) : ~0u);
}
void s_flbit_i32_b32(Wave &w, const Inst &in) {
  const uint32_t v = sread32(w, in.op[1]);
  swrite32(w, in.op[0], v ? uint32_t(std::countl_zero(v)) : ~0u);
}
void s_flbit_i32_b64(Wave &w, const Inst &in) {
  const uint64_t v = sread64(w, in.op[1]);
  swrite32(w, in.op[0], v ? uint32_t(std::countl_zero(v)) : ~0u);
}
void s_abs_i32(Wave &w, const Inst &in) {
  const int32_t v = int32_t(sread32(w, in.op[1]));
  swrite32(w, in.op[0], setscc(w, uint32_t(v < 0 ? -int64_t(v) : v)));
}
void s_sext_i32_i8(Wave &w, const Inst &in) { swrite32(w, in.op[0], uint32_t(int32_t(int8_t(sread32(w, in.op[1]))))); }
void s_sext_i32_i16(Wave &w, const Inst &in) {
  swrite32(w, in.op[0], uint32_t(int32_t(int16_t(sread32(w, in.op[1])))));
}
void s_bitset0_b32(Wave &w, const Inst &in) { w.s[in.op[0].reg] &= ~(1u << (sread32(w, in.op[1]) & 31)); }
void s_bitset1_b32(Wave &w, const Inst &in) { w.s[in.op[0].reg] |= 1u << (sread32(w, in.op[1]) & 31); }

// D = EXEC; EXEC = f(S0, EXEC); SCC = EXEC != 0.
template <uint64_t (*F)(uint64_t, uint64_t)>
void saveexec(Wave &w, const Inst &in) {
  const uint64_t s0 = sread64(w, in.op[1]), e = w.exec();
  swrite64(w, in.op[0], e);
  const uint64_t ne = F(s0, e);
  w.set_exec(ne);
  w.scc = ne != 0;
}
uint64_t se_and(uint64_t s, uint64_t e) { return s & e; }
uint64_t se_or(uint64_t s, uint64_t e) { return s | e; }
uint64_t se_xor(uint64_t s, uint64_t e) { return s ^ e; }
uint64_t se_andn2(uint64_t s, uint64_t e) { return s & ~e; }
uint64_t se_orn2(uint64_t s, uint64_t e) { return s | ~e; }
uint64_t se_nand(uint64_t s, uint64_t e) { return ~(s & e); }
uint64_t se_nor(uint64_t s, uint64_t e) { return ~(s | e); }
uint64_t se_xnor(uint64_t s, uint64_t e) { return ~(s ^ e); }

void s_getpc_b64(Wave &w, const Inst &in) { swrite64(w, in.op[0], in.address + in.size); }
void s_setpc_b64(Wave &w, const Inst &in) { w.pc = w.launch->program->index_at(sread64(w, in.op[0])); }
void s_swappc_b64(Wave &w, const Inst &in) {
  const uint64_t target = sread64(w, in.op[1]);
  swrite64(w, in.op[0], in.address + in.size);
  w.pc = w.launch->program->index_at(target);
}

// ---- SOPC ----

template <class T, bool (*F)(T, T)>
void sopc32(Wave &w, const Inst &in) {
  w.scc = F(T(sread32(w, in.op[0])), T(sread32(w, in.op[1])));
}
template <bool (*F)(uint64_t, uint64_t)>
void sopc64(Wave &w, const Inst &in) {
  w.scc = F(sread64(w, in.op[0]), sread64(w, in.op[1]));
}
template <class T> bool eq(T a, T b) { return a == b; }
template <class T> bool ne(T a, T b) { return a != b; }
template <class T> bool gt(T a, T b) { return a > b; }
template <class T> bool ge(T a, T b) { return a >= b; }
template <class T> bool lt(T a, T b) { return a < b; }
template <class T> bool le(T a, T b) { return a <= b; }
void s_bitcmp0_b32(Wave &w, const Inst &in) { w.scc = !((sread32(w, in.op[0]) >> (sread32(w, in.op[1]) & 31)) & 1); }
void s_bitcmp1_b32(Wave &w, const Inst &in) { w.scc = (sread32(w, in.op[0]) >> (sread32(w, in.op[1]) & 31)) & 1; }

// ---- SOPK: the 16-bit immediate is the last operand ----

void s_movk_i32(Wave &w, const Inst &in) { swrite32(w, in.op[0], uint32_t(int32_t(int16_t(in.op[1].value)))); }
void s_cmovk_i32(Wave &w, const Inst &in) {
  if (w.scc) swrite32(w, in.op[0], uint32_t(int32_t(int16_t(in.op[1].value))));
}
void s_addk_i32(Wave &w, const Inst &in) {
  w.s[in.op[0].reg] = add_i32(w, w.s[in.op[0].reg], uint32_t(int32_t(int16_t(in.op[1].value))));
}
void s_mulk_i32(Wave &w, const Inst &in) {
  w.s[in.op[0].reg] = w.s[in.op[0].reg] * uint32_t(int32_t(int16_t(in.op[1].value)));
}
template <class T, bool (*F)(T, T), bool Signed>
void sopk_cmp(Wave &w, const Inst &in) {
  const uint32_t imm = Signed ? uint32_t(int32_t(int16_t(in.op[1].value))) : uint32_t(uint16_t(in.op[1].value));
  w.scc = F(T(w.s[in.op[0].reg]), T(imm));
}

// ---- SOPP: program control ----

void s_nop(Wave &, const Inst &) {}
void s_endpgm(Wave &w, const Inst &) { end_wave(w); }
void s_branch(Wave &w, const Inst &in) {
  w.pc = uint32_t(in.target);
  if (in.target <= int32_t(in.index)) branch_back(w, in);
}
template <bool (*C)(const Wave &)>
void cbranch(Wave &w, const Inst &in) {
  if (!C(w)) return;
  w.pc = uint32_t(in.target);
  if (in.target <= int32_t(in.index)) branch_back(w, in);
}
bool c_scc0(const Wave &w) { return !w.scc; }
bool c_scc1(const Wave &w) { return w.scc; }
bool c_vccz(const Wave &w) { return w.vcc() == 0; }
bool c_vccnz(const Wave &w) { return w.vcc() != 0; }
bool c_execz(const Wave &w) { return w.exec() == 0; }
bool c_execnz(const Wave &w) { return w.exec() != 0; }
void s_barrier(Wave &w, const Inst &) { barrier_arrive(w); }
void s_waitcnt(Wave &w, const Inst &in) { wait_counts(w, in.m.vmcnt, in.m.lgkmcnt); }
// Scheduling hints and cache hints without effect on results: s_sleep
// yields in hardware; here every wave gets its turns anyway.
void s_hint(Wave &, const Inst &) {}
void s_trap(Wave &, const Inst &) { fail("s_trap: the kernel trapped (an assertion or abort in the kernel)"); }

uint64_t memtime_counter = 0;
void s_memtime(Wave &w, const Inst &in) { swrite64(w, in.op[0], memtime_counter += 64); }

// s_getreg / s_setreg of the MODE register (CDNA3 ISA, "MODE"; hwreg id 1).
void s_getreg_b32(Wave &w, const Inst &in) {
  const Modifiers &m = in.m;
  uint64_t value = 0;
  switch (m.hwreg_id) {
    case 1: value = w.hwreg_mode; break;
    case 4: value = uint64_t(w.id_in_group & 0xf); break;  // HW_ID: wave id within the SIMD
    case 20: value = uint64_t(w.wg->xcd); break;           // XCC_ID
    default: fail("s_getreg of hardware register " + std::to_string(m.hwreg_id) + " is not modelled");
  }
  const uint32_t mask = m.hwreg_size >= 32 ? ~0u : (1u << m.hwreg_size) - 1;
  swrite32(w, in.op[0], uint32_t(value >> m.hwreg_offset) & mask);
}
void set_mode(Wave &w, const Inst &in, uint32_t value) {
  const Modifiers &m = in.m;
  if (m.hwreg_id != 1) fail("s_setreg of hardware register " + std::to_string(m.hwreg_id) + " is not modelled");
  const uint32_t mask = (m.hwreg_size >= 32 ? ~0u : (1u << m.hwreg_size) - 1) << m.hwreg_offset;
  w.hwreg_mode = (w.hwreg_mode & ~uint64_t(mask)) | ((uint64_t(value) << m.hwreg_offset) & mask);
  if (w.hwreg_mode & 0xf) fail("s_setreg sets a rounding mode other than round-to-nearest-even (not modelled)");
  w.mode.flush_f32 = ((w.hwreg_mode >> 4) & 3) != 3;
  w.mode.flush_f16_64 = ((w.hwreg_mode >> 6) & 3) != 3;
  w.mode.dx10_clamp = (w.hwreg_mode >> 8) & 1;
  w.mode.ieee = (w.hwreg_mode >> 9) & 1;
  g_flush_f32 = w.mode.flush_f32;
}
void s_setreg_b32(Wave &w, const Inst &in) { set_mode(w, in, sread32(w, in.op[1])); }
void s_setreg_imm32_b32(Wave &w, const Inst &in) { set_mode(w, in, uint32_t(in.op[1].value)); }

// ---- SMEM: s_load_dword{,x2,x4,x8,x16} sdst, sbase, offset ----

template <int N>
void s_load(Wave &w, const Inst &in) {
  uint64_t addr = sread64(w, in.op[1]);
  if (in.nops > 2) addr += in.op[2].kind == OpKind::kConst ? uint64_t(int64_t(in.op[2].value)) : sread32(w, in.op[2]);
  addr += uint64_t(int64_t(in.m.offset));
  addr &= ~3ull;  // scalar memory addresses are dword aligned
  uint32_t data[N];
  global_load(w, addr, data, 4 * N, AccessScope{in.m.sc0, in.m.sc1, in.m.nt});
  issue_memory(w, in, Counter::kLgkm, true, &in.op[0], N);
  for (int i = 0; i < N; ++i) w.s[in.op[0].reg + i] = data[i];
}

// s_buffer_load_dword{,xN} sdst, sbase (a buffer resource), offset.
template <int N>
void s_buffer_load(Wave &w, const Inst &in) {
  const uint64_t base = sread64(w, in.op[1]) & 0xffffffffffffull;
  const uint32_t num_records = w.s[in.op[1].reg + 2];
  uint64_t off = in.op[2].kind == OpKind::kConst ? in.op[2].value : sread32(w, in.op[2]);
  off = (off + uint64_t(int64_t(in.m.offset))) & ~3ull;
  uint32_t data[N];
  for (int i = 0; i < N; ++i) {
    if (off + 4 * i + 4 > num_records) data[i] = 0;
    else global_load(w, base + off + 4 * i, &data[i], 4, AccessScope{in.m.sc0, in.m.sc1, in.m.nt});
  }
  issue_memory(w, in, Counter::kLgkm, true, &in.op[0], N);
  for (int i = 0; i < N; ++i) w.s[in.op[0].reg + i] = data[i];
}

void s_dcache(Wave &, const Inst &) {}  // the scalar cache is not modelled apart from the L2

}  // namespace

void add_scalar_ops(OpTable &t) {
  auto add = [&](const char *name, Handler fn, uint8_t ndst = 1) { t[name] = OpInfo{fn, ndst}; };
  add("s_add_u32", sop2_32<add_u32>);
  add("s_addc_u32", sop2_32<addc_u32>);
  add("s_sub_u32", sop2_32<sub_u32>);
  add("s_subb_u32", sop2_32<subb_u32>);
  add("s_add_i32", sop2_32<add_i32>);
  add("s_sub_i32", sop2_32<sub_i32>);
  add("s_mul_i32", sop2_32<mul_i32>);
  add("s_mul_hi_u32", sop2_32<mul_hi_u32>);
  add("s_mul_hi_i32", sop2_32<mul_hi_i32>);
  add("s_and_b32", sop2_32<and_b32>);
  add("s_or_b32", sop2_32<or_b32>);
  add("s_xor_b32", sop2_32<xor_b32>);
  add("s_andn2_b32", sop2_32<andn2_b32>);
  add("s_orn2_b32", sop2_32<orn2_b32>);
  add("s_nand_b32", sop2_32<nand_b32>);
  add("s_nor_b32", sop2_32<nor_b32>);
  add("s_xnor_b32", sop2_32<xnor_b32>);
  add("s_lshl_b32", sop2_32<lshl_b32>);
  add("s_lshr_b32", sop2_32<lshr_b32>);
  add("s_ashr_i32", sop2_32<ashr_i32>);
  add("s_bfm_b32", sop2_32<bfm_b32>);
  add("s_bfe_u32", sop2_32<bfe_u32>);
  add("s_bfe_i32", sop2_32<bfe_i32>);
  add("s_min_i32", sop2_32<min_i32>);
  add("s_max_i32", sop2_32<max_i32>);
  add("s_min_u32", sop2_32<min_u32>);
  add("s_max_u32", sop2_32<max_u32>);
  add("s_cselect_b32", sop2_32<cselect_b32>);
  add("s_absdiff_i32", sop2_32<absdiff_i32>);
  add("s_lshl1_add_u32", sop2_32<lshl_add_u32<1>>);
  add("s_lshl2_add_u32", sop2_32<lshl_add_u32<2>>);
  add("s_lshl3_add_u32", sop2_32<lshl_add_u32<3>>);
  add("s_lshl4_add_u32", sop2_32<lshl_add_u32<4>>);
  add("s_pack_ll_b32_b16", sop2_32<pack_ll>);
  add("s_pack_lh_b32_b16", sop2_32<pack_lh>);
  add("s_pack_hh_b32_b16", sop2_32<pack_hh>);
  add("s_and_b64", sop2_64<and_b64>);
  add("s_or_b64", sop2_64<or_b64>);
  add("s_xor_b64", sop2_64<xor_b64>);
  add("s_andn2_b64", sop2_64<andn2_b64>);
  add("s_orn2_b64", sop2_64<orn2_b64>);
  add("s_nand_b64", sop2_64<nand_b64>);
  add("s_nor_b64", sop2_64<nor_b64>);
  add("s_xnor_b64", sop2_64<xnor_b64>);
  add("s_cselect_b64", sop2_64<cselect_b64>);
  add("s_lshl_b64", sop2_64_32<lshl_b64>);
  add("s_lshr_b64", sop2_64_32<lshr_b64>);
  add("s_ashr_i64", sop2_64_32<ashr_i64>);
  add("s_bfe_u64", sop2_64_32<bfe_u64>);

  add("s_mov_b32", s_mov_b32);
  add("s_mov_b64", s_mov_b64);
  add("s_cmov_b32", s_cmov_b32);
  add("s_cmov_b64", s_cmov_b64);
  add("s_not_b32", s_not_b32);
  add("s_not_b64", s_not_b64);
  add("s_brev_b32", s_brev_b32);
  add("s_bcnt1_i32_b32", s_bcnt1_i32_b32);
  add("s_bcnt1_i32_b64", s_bcnt1_i32_b64);
  add("s_ff1_i32_b32", s_ff1_i32_b32);
  add("s_ff1_i32_b64", s_ff1_i32_b64);
  add("s_flbit_i32_b32", s_flbit_i32_b32);
  add("s_flbit_i32_b64", s_flbit_i32_b64);
  add("s_abs_i32", s_abs_i32);
  add("s_sext_i32_i8", s_sext_i32_i8);
  add("s_sext_i32_i16", s_sext_i32_i16);
  add("s_bitset0_b32", s_bitset0_b32);
  add("s_bitset1_b32", s_bitset1_b32);
  add("s_and_saveexec_b64", saveexec<se_and>);
  add("s_or_saveexec_b64", saveexec<se_or>);
  add("s_xor_saveexec_b64", saveexec<se_xor>);
  add("s_andn2_saveexec_b64", saveexec<se_andn2>);
  add("s_orn2_saveexec_b64", saveexec<se_orn2>);
  add("s_nand_saveexec_b64", saveexec<se_nand>);
  add("s_nor_saveexec_b64", saveexec<se_nor>);
  add("s_xnor_saveexec_b64", saveexec<se_xnor>);
  add("s_getpc_b64", s_getpc_b64);
  add("s_setpc_b64", s_setpc_b64, 0);
  add("s_swappc_b64", s_swappc_b64);

  add("s_cmp_eq_i32", sopc32<int32_t, eq<int32_t>>, 0);
  add("s_cmp_lg_i32", sopc32<int32_t, ne<int32_t>>, 0);
  add("s_cmp_gt_i32", sopc32<int32_t, gt<int32_t>>, 0);
  add("s_cmp_ge_i32", sopc32<int32_t, ge<int32_t>>, 0);
  add("s_cmp_lt_i32", sopc32<int32_t, lt<int32_t>>, 0);
  add("s_cmp_le_i32", sopc32<int32_t, le<int32_t>>, 0);
  add("s_cmp_eq_u32", sopc32<uint32_t, eq<uint32_t>>, 0);
  add("s_cmp_lg_u32", sopc32<uint32_t, ne<uint32_t>>, 0);
  add("s_cmp_gt_u32", sopc32<uint32_t, gt<uint32_t>>, 0);
  add("s_cmp_ge_u32", sopc32<uint32_t, ge<uint32_t>>, 0);
  add("s_cmp_lt_u32", sopc32<uint32_t, lt<uint32_t>>, 0);
  add("s_cmp_le_u32", sopc32<uint32_t, le<uint32_t>>, 0);
  add("s_cmp_eq_u64", sopc64<eq<uint64_t>>, 0);
  add("s_cmp_lg_u64", sopc64<ne<uint64_t>>, 0);
  add("s_bitcmp0_b32", s_bitcmp0_b32, 0);
  add("s_bitcmp1_b32", s_bitcmp1_b32, 0);

  add("s_movk_i32", s_movk_i32);
  add("s_cmovk_i32", s_cmovk_i32);
  add("s_addk_i32", s_addk_i32);
  add("s_mulk_i32", s_mulk_i32);
  add("s_cmpk_eq_i32", sopk_cmp<int32_t, eq<int32_t>, true>, 0);
  add("s_cmpk_lg_i32", sopk_cmp<int32_t, ne<int32_t>, true>, 0);
  add("s_cmpk_gt_i32", sopk_cmp<int32_t, gt<int32_t>, true>, 0);
  add("s_cmpk_ge_i32", sopk_cmp<int32_t, ge<int32_t>, true>, 0);
  add("s_cmpk_lt_i32", sopk_cmp<int32_t, lt<int32_t>, true>, 0);
  add("s_cmpk_le_i32", sopk_cmp<int32_t, le<int32_t>, true>, 0);
  add("s_cmpk_eq_u32", sopk_cmp<uint32_t, eq<uint32_t>, false>, 0);
  add("s_cmpk_lg_u32", sopk_cmp<uint32_t, ne<uint32_t>, false>, 0);
  add("s_cmpk_gt_u32", sopk_cmp<uint32_t, gt<uint32_t>, false>, 0);
  add("s_cmpk_ge_u32", sopk_cmp<uint32_t, ge<uint32_t>, false>, 0);
  add("s_cmpk_lt_u32", sopk_cmp<uint32_t, lt<uint32_t>, false>, 0);
  add("s_cmpk_le_u32", sopk_cmp<uint32_t, le<uint32_t>, false>, 0);

  add("s_nop", s_nop, 0);
  add("s_endpgm", s_endpgm, 0);
  add("s_branch", s_branch, 0);
  add("s_cbranch_scc0", cbranch<c_scc0>, 0);
  add("s_cbranch_scc1", cbranch<c_scc1>, 0);
  add("s_cbranch_vccz", cbranch<c_vccz>, 0);
  add("s_cbranch_vccnz", cbranch<c_vccnz>, 0);
  add("s_cbranch_execz", cbranch<c_execz>, 0);
  add("s_cbranch_execnz", cbranch<c_execnz>, 0);
  add("s_barrier", s_barrier, 0);
  add("s_waitcnt", s_waitcnt, 0);
  add("s_sleep", s_hint, 0);
  add("s_setprio", s_hint, 0);
  add("s_sethalt", s_hint, 0);
  add("s_trap", s_trap, 0);
  add("s_memtime", s_memtime);
  add("s_memrealtime", s_memtime);
  add("s_getreg_b32", s_getreg_b32);
  add("s_setreg_b32", s_setreg_b32, 0);
  add("s_setreg_imm32_b32", s_setreg_imm32_b32, 0);
  add("s_dcache_inv", s_dcache, 0);
  add("s_dcache_wb", s_dcache, 0);

  for (auto [name, fn] : std::initializer_list<std::pair<const char *, Handler>>{
           {"s_load_dword", s_load<1>}, {"s_load_dwordx2", s_load<2>}, {"s_load_dwordx4", s_load<4>},
           {"s_load_dwordx8", s_load<8>}, {"s_load_dwordx16", s_load<16>},
           {"s_buffer_load_dword", s_buffer_load<1>}, {"s_buffer_load_dwordx2", s_buffer_load<2>},
           {"s_buffer_load_dwordx4", s_buffer_load<4>}, {"s_buffer_load_dwordx8", s_buffer_load<8>},
           {"s_buffer_load_dwordx16", s_buffer_load<16>}})
    t[name] = OpInfo{fn, 1, Counter::kLgkm};
}

}  // namespace gatejit::emulator
