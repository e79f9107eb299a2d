// One decoded instruction: what LLVM's MC disassembler printed for it,
// parsed once into operands and modifiers, and the handler that executes it.
// The hot loop reads only this struct; the text is kept for messages.
#pragma once

#include <cstdint>
#include <string>

namespace gatejit::emulator {

struct Wave;
struct Inst;
using Handler = void (*)(Wave &, const Inst &);

// SGPR numbers as the ISA encodes them (CDNA3/CDNA4 ISA, "Scalar registers").
inline constexpr int kSgprFlatScratch = 102;
inline constexpr int kSgprXnackMask = 104;
inline constexpr int kSgprVcc = 106;
inline constexpr int kSgprTtmp = 108;
inline constexpr int kSgprM0 = 124;
inline constexpr int kSgprExec = 126;
inline constexpr int kSgprFile = 128;

enum class OpKind : uint8_t {
  kNone,
  kSgpr,      // reg = first SGPR number (vcc, exec, m0 included)
  kVgpr,
  kAgpr,
  kConst,     // value holds the bits (inline constant or literal)
  kOff,       // "off": no address register
  kShared,    // src_shared_base / limit, src_private_base / limit: value holds it
  kScc,       // src_scc
  kExecz,     // src_execz
  kVccz,      // src_vccz
};

struct Operand {
  OpKind kind = OpKind::kNone;
  uint8_t count = 1;  // 32-bit registers
  bool neg = false, abs = false, sext = false;
  bool float_const = false;  // an inline float constant not yet given its width
  uint16_t reg = 0;
  uint64_t value = 0;
  double fvalue = 0;
};

// SDWA selects (CDNA3 ISA, "SDWA"): BYTE_0..3, WORD_0..1, DWORD.
enum SdwaSel : uint8_t { kByte0, kByte1, kByte2, kByte3, kWord0, kWord1, kDword };
enum SdwaUnused : uint8_t { kUnusedPad, kUnusedSext, kUnusedPreserve };

struct Modifiers {
  int32_t offset = 0, offset0 = 0, offset1 = 0;
  bool sc0 = false, sc1 = false, nt = false;
  bool offen = false, idxen = false, lds = false;
  bool clamp = false;
  uint8_t omod = 0;  // 0 none, 1 mul:2, 2 mul:4, 3 div:2
  uint8_t op_sel = 0, op_sel_hi = 7, neg_lo = 0, neg_hi = 0;
  bool has_op_sel_hi = false;
  // DPP (CDNA3 ISA, "DPP"): the control as encoded (quad_perm 0x00-0xff,
  // row_shl 0x101-, row_shr 0x111-, row_ror 0x121-, wave_* 0x130-0x13c,
  // row_mirror 0x140, row_half_mirror 0x141, row_bcast:15 0x142, :31 0x143).
  bool dpp = false;
  uint16_t dpp_ctrl = 0;
  uint8_t row_mask = 0xf, bank_mask = 0xf;
  bool bound_ctrl = false;
  bool sdwa = false;
  uint8_t dst_sel = kDword, dst_unused = kUnusedPad, src_sel[2] = {kDword, kDword};
  uint8_t bitop3 = 0;
  uint8_t cbsz = 0, abid = 0, blgp = 0;
  uint16_t swizzle = 0;  // ds_swizzle's offset field
  // s_waitcnt: the counts it waits down to (gfx9: vmcnt 6 bits, expcnt 3, lgkmcnt 4).
  uint8_t vmcnt = 63, expcnt = 7, lgkmcnt = 15;
  // s_setreg / s_getreg: hwreg(id, offset, size)
  uint8_t hwreg_id = 0, hwreg_offset = 0, hwreg_size = 32;
};

inline constexpr int kMaxOperands = 6;

struct Inst {
  Handler fn = nullptr;
  uint64_t address = 0;  // where it sits in the loaded image
  uint8_t size = 4;      // bytes
  uint8_t nops = 0;
  Operand op[kMaxOperands];
  Modifiers m;
  int32_t target = -1;   // branch target: instruction index
  uint16_t mnemonic_id = 0;
  uint32_t index = 0;    // own instruction index
  uint32_t text_id = 0;  // into the program's texts
  bool waits_tracked = false;  // the instruction's result arrives later (a memory load)
  uint8_t counter = 0;         // 0 none, 1 vmcnt, 2 lgkmcnt (its result retires by this counter)
  uint8_t ndst = 0;            // leading operands that are destinations
};

}  // namespace gatejit::emulator
