// Decoding: LLVM's MC disassembler for AMDGPU (the compiler's decode_amdgpu)
// turns the bytes into MCInsts and prints them in the assembler's syntax
// (LLVM AMDGPUUsage, "AMDGPU Instruction Syntax"; AMDGPUOperandSyntax); the
// emulator parses that printed form once per module into Inst operands and
// modifiers. No bit of the encoding is decoded here by hand.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include "amdgpu_disassembly.h"
#include "machine.h"
#include "op_table.h"
#include "program.h"

namespace gatejit::emulator {
namespace {

struct Raw {
  uint64_t address;
  uint32_t size;
  std::string text;
  int64_t branch_target;
};

StatusOr<std::vector<Raw>> disassemble(const CodeObject &co, uint64_t image_base) {
  const CodeObject::Segment *seg = nullptr;
  for (const auto &s : co.segments)
    if (co.text_vaddr >= s.vaddr && co.text_vaddr + co.text_bytes <= s.vaddr + s.file_bytes) seg = &s;
  if (!seg) return corrupt("code object: .text is not in a loadable segment");
  llvm::ArrayRef<uint8_t> bytes(co.file.data() + seg->file_offset + (co.text_vaddr - seg->vaddr), co.text_bytes);
  auto words = compiler::decode_amdgpu(bytes, image_base + co.text_vaddr,
                                       co.target == Target::kGfx950 ? "gfx950" : "gfx942");
  if (!words.ok()) return words.status();
  std::vector<Raw> out;
  out.reserve(words->size());
  for (compiler::DecodedWord &w : *words)  // a word that did not decode is one nothing may execute
    out.push_back({w.address, w.size, w.decoded ? std::move(w.text) : "<undecodable>", w.branch_target});
  return out;
}

// ---- the printed syntax ----

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits at `sep` outside brackets, parentheses and quotes.
std::vector<std::string_view> split_top(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  bool quote = false;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') quote = !quote;
    if (quote) continue;
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == sep && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  out.push_back(trim(s.substr(start)));
  std::vector<std::string_view> nonempty;
  for (auto p : out)
    if (!p.empty()) nonempty.push_back(p);
  return nonempty;
}

bool parse_int(std::string_view s, int64_t &v) {
  if (s.empty()) return false;
  std::string t(s);
  char *end = nullptr;
  const bool hex = t.size() > 2 && (t.rfind("0x", 0) == 0 || t.rfind("-0x", 0) == 0);
  if (hex) {
    const bool negative = t[0] == '-';
    const unsigned long long u = std::strtoull(t.c_str() + (negative ? 3 : 2), &end, 16);
    if (*end) return false;
    v = negative ? -int64_t(u) : int64_t(u);
    return true;
  }
  v = std::strtoll(t.c_str(), &end, 10);
  return *end == 0;
}

bool parse_register(std::string_view t, Operand &o) {
  struct Named {
    const char *name;
    int reg, count;
  };
  static const Named named[] = {
      {"vcc", kSgprVcc, 2},           {"vcc_lo", kSgprVcc, 1},        {"vcc_hi", kSgprVcc + 1, 1},
      {"exec", kSgprExec, 2},         {"exec_lo", kSgprExec, 1},      {"exec_hi", kSgprExec + 1, 1},
      {"m0", kSgprM0, 1},             {"flat_scratch", kSgprFlatScratch, 2},
      {"flat_scratch_lo", kSgprFlatScratch, 1}, {"flat_scratch_hi", kSgprFlatScratch + 1, 1},
      {"xnack_mask", kSgprXnackMask, 2}, {"xnack_mask_lo", kSgprXnackMask, 1}, {"xnack_mask_hi", kSgprXnackMask + 1, 1},
  };
  for (const auto &n : named)
    if (t == n.name) {
      o.kind = OpKind::kSgpr, o.reg = uint16_t(n.reg), o.count = uint8_t(n.count);
      return true;
    }
  if (t == "off") {
    o.kind = OpKind::kOff;
    return true;
  }
  if (t == "src_scc") return o.kind = OpKind::kScc, true;
  if (t == "src_execz") return o.kind = OpKind::kExecz, true;
  if (t == "src_vccz") return o.kind = OpKind::kVccz, true;
  OpKind kind;
  size_t prefix = 1;
  if (t.rfind("ttmp", 0) == 0) kind = OpKind::kSgpr, prefix = 4;
  else if (t[0] == 'v') kind = OpKind::kVgpr;
  else if (t[0] == 's') kind = OpKind::kSgpr;
  else if (t[0] == 'a') kind = OpKind::kAgpr;
  else return false;
  std::string_view rest = t.substr(prefix);
  int64_t first = 0, last = 0;
  if (!rest.empty() && rest[0] == '[') {
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos || rest.back() != ']') {
      if (!parse_int(rest.substr(1, rest.size() - 2), first)) return false;
      last = first;
    } else if (!parse_int(rest.substr(1, colon - 1), first) ||
               !parse_int(rest.substr(colon + 1, rest.size() - colon - 2), last)) {
      return false;
    }
  } else {
    if (!parse_int(rest, first)) return false;
    last = first;
  }
  if (last < first || last - first >= 32) return false;
  o.kind = kind;
  o.reg = uint16_t(first + (prefix == 4 ? kSgprTtmp : 0));
  o.count = uint8_t(last - first + 1);
  return true;
}

// Values of the special 64-bit sources (apertures) the emulator gives:
// none of gatejit's kernels use flat addressing of LDS or scratch, so these
// are values that no global allocation can have.
constexpr uint64_t kSharedBase = 0x1000000000000ull, kPrivateBase = 0x2000000000000ull;

bool parse_source(std::string_view t, Operand &o) {
  // lit(x) / lit64(x): a literal the encoding keeps even where an inline
  // constant would do (a resolved relocation, say).
  for (std::string_view wrap : {"lit64(", "lit("})
    if (t.rfind(wrap, 0) == 0 && t.back() == ')') t = t.substr(wrap.size(), t.size() - wrap.size() - 1);
  if (t.rfind("sext(", 0) == 0 && t.back() == ')') {
    o.sext = true;
    t = t.substr(5, t.size() - 6);
  }
  if (t.rfind("neg(", 0) == 0 && t.back() == ')') {
    o.neg = true;
    t = t.substr(4, t.size() - 5);
  }
  if (t.rfind("abs(", 0) == 0 && t.back() == ')') {
    o.abs = true;
    t = t.substr(4, t.size() - 5);
  }
  if (t.size() > 1 && t[0] == '-' && (t[1] == '|' || std::isalpha(static_cast<unsigned char>(t[1])))) {
    o.neg = true;
    t.remove_prefix(1);
  }
  if (t.size() > 2 && t.front() == '|' && t.back() == '|') {
    o.abs = true;
    t = t.substr(1, t.size() - 2);
  }
  if (parse_register(t, o)) return true;
  static const std::pair<const char *, uint64_t> special[] = {
      {"src_shared_base", kSharedBase},
      {"src_shared_limit", kSharedBase + 0xffffffffull},
      {"src_private_base", kPrivateBase},
      {"src_private_limit", kPrivateBase + 0xffffffffull},
  };
  for (auto &[name, v] : special)
    if (t == name) {
      o.kind = OpKind::kShared, o.value = v, o.count = 2;
      return true;
    }
  int64_t v = 0;
  if (parse_int(t, v)) {
    o.kind = OpKind::kConst;
    o.value = uint64_t(v);  // decimal: sign-extended; hex: as written
    return true;
  }
  std::string s(t);
  char *end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end && *end == 0 && s.find('.') != std::string::npos) {
    o.kind = OpKind::kConst;
    o.float_const = true;
    o.fvalue = d;
    return true;
  }
  return false;
}

uint8_t sdwa_sel(std::string_view v) {
  static const char *names[] = {"BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"};
  for (int i = 0; i < 7; ++i)
    if (v == names[i]) return uint8_t(i);
  fail("unknown SDWA select " + std::string(v));
}

uint8_t bit_list(std::string_view v) {  // "[1,0,1]" -> 0b101
  uint8_t r = 0;
  int i = 0;
  for (char c : v) {
    if (c == '0' || c == '1') r |= uint8_t((c - '0') << i++);
  }
  return r;
}

uint16_t swizzle_offset(std::string_view v) {
  // offset:swizzle(MODE,...) (AMDGPUModifierSyntax, "swizzle pattern"), as
  // the ds_swizzle offset field encodes it (CDNA3 ISA, DS_SWIZZLE_B32).
  if (v.rfind("swizzle(", 0) != 0) {
    int64_t x = 0;
    if (!parse_int(v, x)) fail("ds_swizzle offset " + std::string(v));
    return uint16_t(x);
  }
  auto parts = split_top(v.substr(8, v.size() - 9), ',');
  if (parts.empty()) fail("empty swizzle pattern");
  auto num = [&](size_t i) {
    int64_t x = 0;
    if (i >= parts.size() || !parse_int(parts[i], x)) fail("swizzle pattern " + std::string(v));
    return uint16_t(x);
  };
  if (parts[0] == "QUAD_PERM") return uint16_t(0x8000 | num(1) | num(2) << 2 | num(3) << 4 | num(4) << 6);
  uint16_t and_mask = 0x1f, or_mask = 0, xor_mask = 0;
  if (parts[0] == "SWAP") xor_mask = num(1);
  else if (parts[0] == "REVERSE") xor_mask = uint16_t(num(1) - 1);
  else if (parts[0] == "BROADCAST") and_mask = uint16_t(0x1f & ~(num(1) - 1)), or_mask = num(2);
  else if (parts[0] == "BITMASK_PERM") {
    std::string_view mask = parts.size() > 1 ? parts[1] : "";
    if (mask.size() == 7) mask = mask.substr(1, 5);
    if (mask.size() != 5) fail("swizzle pattern " + std::string(v));
    and_mask = 0;
    for (int i = 0; i < 5; ++i) {
      const int bit = 4 - i;
      switch (mask[size_t(i)]) {
        case '0': break;
        case '1': or_mask |= uint16_t(1 << bit); break;
        case 'p': and_mask |= uint16_t(1 << bit); break;
        case 'i': and_mask |= uint16_t(1 << bit), xor_mask |= uint16_t(1 << bit); break;
        default: fail("swizzle pattern " + std::string(v));
      }
    }
  } else {
    fail("swizzle mode " + std::string(parts[0]) + " (the emulator knows QUAD_PERM, BITMASK_PERM, SWAP, REVERSE, BROADCAST)");
  }
  return uint16_t(and_mask | or_mask << 5 | xor_mask << 10);
}

uint16_t dpp_control(std::string_view key, std::string_view value) {
  int64_t n = 0;
  if (key == "quad_perm") {
    int sel[4] = {0, 1, 2, 3}, i = 0;
    for (char c : value)
      if (c >= '0' && c <= '3' && i < 4) sel[i++] = c - '0';
    return uint16_t(sel[0] | sel[1] << 2 | sel[2] << 4 | sel[3] << 6);
  }
  if (!value.empty() && !parse_int(value, n)) fail("DPP control " + std::string(key) + ":" + std::string(value));
  if (key == "row_shl") return uint16_t(0x100 + n);
  if (key == "row_shr") return uint16_t(0x110 + n);
  if (key == "row_ror") return uint16_t(0x120 + n);
  if (key == "wave_shl") return 0x130;
  if (key == "wave_rol") return 0x134;
  if (key == "wave_shr") return 0x138;
  if (key == "wave_ror") return 0x13c;
  if (key == "row_mirror") return 0x140;
  if (key == "row_half_mirror") return 0x141;
  if (key == "row_bcast") return n == 15 ? 0x142 : 0x143;
  fail("DPP control " + std::string(key));
}

uint8_t hwreg_id(std::string_view name) {
  static const std::pair<const char *, uint8_t> ids[] = {
      {"HW_REG_MODE", 1},    {"HW_REG_STATUS", 2},      {"HW_REG_TRAPSTS", 3},   {"HW_REG_HW_ID", 4},
      {"HW_REG_GPR_ALLOC", 5}, {"HW_REG_LDS_ALLOC", 6}, {"HW_REG_IB_STS", 7},    {"HW_REG_SH_MEM_BASES", 15},
      {"HW_REG_XCC_ID", 20},
  };
  for (auto &[n, id] : ids)
    if (name == n) return id;
  int64_t v = 0;
  if (parse_int(name, v)) return uint8_t(v);
  fail("hardware register " + std::string(name));
}

bool is_flag_word(std::string_view t) {
  static const char *flags[] = {"sc0", "sc1", "nt", "glc", "slc", "dlc", "lds", "offen", "idxen", "addr64",
                                "gds", "clamp", "row_mirror", "row_half_mirror", "tfe", "lwe", "d16"};
  for (const char *f : flags)
    if (t == f) return true;
  return false;
}

bool is_modifier(std::string_view t) {
  if (is_flag_word(t)) return true;
  const size_t colon = t.find(':');
  if (colon == std::string_view::npos) return false;
  // "v[4:7]" has a colon inside brackets.
  return t.find('[') == std::string_view::npos || t.find('[') > colon;
}

void apply_modifier(std::string_view t, Modifiers &m) {
  if (t == "sc0" || t == "glc") return void(m.sc0 = true);
  if (t == "sc1" || t == "slc") return void(m.sc1 = true);
  if (t == "nt") return void(m.nt = true);
  if (t == "lds") return void(m.lds = true);
  if (t == "offen") return void(m.offen = true);
  if (t == "idxen") return void(m.idxen = true);
  if (t == "clamp") return void(m.clamp = true);
  if (t == "row_mirror" || t == "row_half_mirror") {
    m.dpp = true;
    m.dpp_ctrl = dpp_control(t, "");
    return;
  }
  if (is_flag_word(t)) fail("modifier " + std::string(t) + " is not modelled by the emulator");
  const size_t colon = t.find(':');
  const std::string_view key = t.substr(0, colon), value = t.substr(colon + 1);
  int64_t n = 0;
  auto number = [&] {
    if (!parse_int(value, n)) fail("modifier " + std::string(t));
    return n;
  };
  if (key == "offset") {
    if (value.rfind("swizzle", 0) == 0) m.swizzle = swizzle_offset(value);
    else m.offset = int32_t(number()), m.swizzle = uint16_t(m.offset);
  } else if (key == "offset0") m.offset0 = int32_t(number());
  else if (key == "offset1") m.offset1 = int32_t(number());
  else if (key == "mul") m.omod = number() == 2 ? 1 : 2;
  else if (key == "div") m.omod = 3;
  else if (key == "op_sel") m.op_sel = bit_list(value);
  else if (key == "op_sel_hi") m.op_sel_hi = bit_list(value), m.has_op_sel_hi = true;
  else if (key == "neg_lo") m.neg_lo = bit_list(value);
  else if (key == "neg_hi") m.neg_hi = bit_list(value);
  else if (key == "quad_perm" || key == "row_shl" || key == "row_shr" || key == "row_ror" || key == "wave_shl" ||
           key == "wave_rol" || key == "wave_shr" || key == "wave_ror" || key == "row_bcast") {
    m.dpp = true;
    m.dpp_ctrl = dpp_control(key, value);
  } else if (key == "row_mask") m.row_mask = uint8_t(number());
  else if (key == "bank_mask") m.bank_mask = uint8_t(number());
  else if (key == "bound_ctrl") m.bound_ctrl = true;  // printed when the BOUND_CTRL bit is set
  else if (key == "fi") (void)number();
  else if (key == "dst_sel") m.sdwa = true, m.dst_sel = sdwa_sel(value);
  else if (key == "dst_unused")
    m.sdwa = true, m.dst_unused = value == "UNUSED_PAD" ? kUnusedPad : value == "UNUSED_SEXT" ? kUnusedSext : kUnusedPreserve;
  else if (key == "src0_sel") m.sdwa = true, m.src_sel[0] = sdwa_sel(value);
  else if (key == "src1_sel") m.sdwa = true, m.src_sel[1] = sdwa_sel(value);
  else if (key == "bitop3") m.bitop3 = uint8_t(number());
  else if (key == "cbsz") m.cbsz = uint8_t(number());
  else if (key == "abid") m.abid = uint8_t(number());
  else if (key == "blgp") m.blgp = uint8_t(number());
  else fail("modifier " + std::string(t) + " is not modelled by the emulator");
}

void parse_waitcnt(std::string_view ops, Modifiers &m) {
  int64_t raw = 0;
  if (parse_int(ops, raw)) {  // gfx9 SIMM16: vmcnt [3:0] + [15:14], expcnt [6:4], lgkmcnt [11:8]
    m.vmcnt = uint8_t((raw & 0xf) | ((raw >> 14) & 3) << 4);
    m.expcnt = uint8_t((raw >> 4) & 7);
    m.lgkmcnt = uint8_t((raw >> 8) & 0xf);
    return;
  }
  for (auto part : split_top(ops, ' ')) {
    for (auto p : split_top(part, '&')) {
      const size_t open = p.find('(');
      int64_t n = 0;
      if (open == std::string_view::npos || !parse_int(p.substr(open + 1, p.size() - open - 2), n))
        fail("s_waitcnt operand " + std::string(p));
      const auto key = p.substr(0, open);
      if (key == "vmcnt") m.vmcnt = uint8_t(n);
      else if (key == "expcnt") m.expcnt = uint8_t(n);
      else if (key == "lgkmcnt") m.lgkmcnt = uint8_t(n);
      else fail("s_waitcnt operand " + std::string(p));
    }
  }
}

std::string_view base_mnemonic(std::string_view mn) {
  for (const char *suffix : {"_e32", "_e64", "_dpp", "_sdwa"}) {
    const size_t n = std::strlen(suffix);
    if (mn.size() > n && mn.substr(mn.size() - n) == suffix) return mn.substr(0, mn.size() - n);
  }
  return mn;
}

// Width of inline float constants for an instruction, from the type of its
// sources in the mnemonic (the last type suffix: v_cvt_f32_f16 -> 16).
uint8_t float_width_of(std::string_view mn) {
  uint8_t w = 32;
  size_t best = 0;
  for (auto [suffix, width] : {std::pair{"16", 16}, {"32", 32}, {"64", 64}}) {
    for (const char *t : {"_f", "_b", "_u", "_i", "_bf"}) {
      const std::string s = std::string(t) + suffix;
      for (size_t at = mn.find(s); at != std::string_view::npos; at = mn.find(s, at + 1)) {
        const size_t end = at + s.size();
        if ((end == mn.size() || mn[end] == '_') && end >= best) best = end, w = uint8_t(width);
      }
    }
  }
  return w;
}

uint64_t float_const_bits(double d, uint8_t width) {
  if (width == 64) return f64_bits(d);
  const float f = float(d);
  if (width == 16) {
    // The inline constants (+-0.5, 1, 2, 4, 1/(2 pi)) as binary16.
    struct {
      double v;
      uint16_t h;
    } static const table[] = {{0.5, 0x3800}, {-0.5, 0xb800}, {1.0, 0x3c00}, {-1.0, 0xbc00}, {2.0, 0x4000},
                              {-2.0, 0xc000}, {4.0, 0x4400}, {-4.0, 0xc400}, {0.15915494, 0x3118}};
    for (auto &e : table)
      if (std::abs(e.v - d) < 1e-7) return e.h;
    fail("16-bit inline constant " + std::to_string(d));
  }
  return f32_bits(f);
}

Inst parse_inst(const Raw &raw, Target target, Program &p, std::unordered_map<std::string, uint16_t> &mnemonic_ids) {
  Inst in;
  in.address = raw.address;
  in.size = uint8_t(raw.size);
  const std::string_view text(raw.text);
  const size_t sp = text.find_first_of(" \t");
  const std::string_view mn = sp == std::string_view::npos ? text : text.substr(0, sp);
  const std::string_view ops = sp == std::string_view::npos ? std::string_view() : trim(text.substr(sp));
  const std::string base(base_mnemonic(mn));
  auto [it, inserted] = mnemonic_ids.try_emplace(std::string(mn), uint16_t(p.mnemonics.size()));
  if (inserted) p.mnemonics.emplace_back(mn);
  in.mnemonic_id = it->second;

  const OpTable &table = op_table();
  auto op = table.find(base);
  static const OpInfo fp8_info{};
  const Handler fp8 = fp8_handler(base, target);
  const OpInfo *info = fp8 ? &fp8_info : op == table.end() ? nullptr : &op->second;
  in.fn = fp8 ? fp8 : info ? info->fn : op_unimplemented;
  if (!info) p.unimplemented.push_back(std::string(mn) + " (" + raw.text + ")");
  if (info) {
    in.ndst = info->ndst;
    in.counter = uint8_t(info->counter);
  }
  // VOP3P mix instructions default op_sel_hi to 0 (f32 sources); others to 1.
  if (base.rfind("v_fma_mix", 0) == 0 || base.rfind("v_mad_mix", 0) == 0) in.m.op_sel_hi = 0;

  if (base == "s_waitcnt") {
    parse_waitcnt(ops, in.m);
    return in;
  }
  auto parts = split_top(ops, ',');
  // The last part holds the last operand and the space-separated modifiers.
  std::vector<std::string_view> operands;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i + 1 < parts.size()) {
      operands.push_back(parts[i]);
      continue;
    }
    auto words = split_top(parts[i], ' ');
    for (size_t k = 0; k < words.size(); ++k) {
      if (k == 0 && !is_modifier(words[k])) operands.push_back(words[k]);
      else apply_modifier(words[k], in.m);
    }
  }
  if (operands.size() > kMaxOperands) fail("too many operands");
  const uint8_t fw = info && info->float_width ? info->float_width : float_width_of(base);
  for (size_t i = 0; i < operands.size(); ++i) {
    Operand &o = in.op[i];
    std::string_view t = operands[i];
    if (t.rfind("hwreg(", 0) == 0) {
      auto f = split_top(t.substr(6, t.size() - 7), ',');
      in.m.hwreg_id = hwreg_id(f.empty() ? "" : f[0]);
      int64_t v = 0;
      if (f.size() > 1 && parse_int(f[1], v)) in.m.hwreg_offset = uint8_t(v);
      if (f.size() > 2 && parse_int(f[2], v)) in.m.hwreg_size = uint8_t(v);
      o.kind = OpKind::kNone;
      continue;
    }
    if (!parse_source(t, o)) {
      // A branch target label or a symbolic operand: branches have their
      // target from MC; anything else is an operand the emulator cannot read.
      if (raw.branch_target >= 0) {
        o.kind = OpKind::kNone;
        continue;
      }
      fail("operand '" + std::string(t) + "'");
    }
    if (o.float_const) {
      o.value = float_const_bits(o.fvalue, fw);
      o.float_const = false;
    }
  }
  in.nops = uint8_t(operands.size());
  // An atomic without sc0 (GLC) returns nothing: its first operand is the address.
  if (base.find("_atomic_") != std::string::npos && !in.m.sc0) in.ndst = 0;
  return in;
}

}  // namespace

StatusOr<std::vector<CodeInstruction>> disassemble_code_object(std::span<const uint8_t> code_object) {
  auto co = parse_code_object(code_object);
  if (!co.ok()) return co.status();
  auto raw = disassemble(*co, 0);
  if (!raw.ok()) return raw.status();
  const CodeObject::Segment *seg = nullptr;
  for (const auto &s : co->segments)
    if (co->text_vaddr >= s.vaddr && co->text_vaddr + co->text_bytes <= s.vaddr + s.file_bytes) seg = &s;
  std::vector<CodeInstruction> out;
  for (const Raw &r : *raw) out.push_back({seg->file_offset + (r.address - seg->vaddr), r.size, r.text});
  return out;
}

uint32_t Program::index_at(uint64_t address) const {
  auto it = index_of.find(address);
  if (it == index_of.end()) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "jump to 0x%llx, where no instruction starts", (unsigned long long)address);
    fail(buf);
  }
  return it->second;
}

StatusOr<Program> decode_program(const CodeObject &co, uint64_t image_base) {
  auto raw = disassemble(co, image_base);
  if (!raw.ok()) return raw.status();
  if (raw->size() >= 0xffff) return unsupported("code object has more than 65534 instructions");
  Program p;
  std::unordered_map<std::string, uint16_t> mnemonic_ids;
  p.insts.reserve(raw->size());
  for (size_t i = 0; i < raw->size(); ++i) {
    const Raw &r = (*raw)[i];
    Inst in;
    try {
      in = parse_inst(r, co.target, p, mnemonic_ids);
    } catch (const EmuError &e) {
      return unsupported(std::string("cannot decode '") + r.text + "': " + e.what());
    }
    in.index = uint32_t(i);
    in.text_id = uint32_t(p.texts.size());
    p.texts.push_back(r.text);
    p.index_of[r.address] = uint32_t(i);
    p.insts.push_back(in);
  }
  for (size_t i = 0; i < raw->size(); ++i) {
    const int64_t bt = (*raw)[i].branch_target;
    if (bt < 0) continue;
    auto it = p.index_of.find(uint64_t(bt));
    if (it == p.index_of.end()) return corrupt("branch at " + (*raw)[i].text + " targets no instruction");
    p.insts[i].target = int32_t(it->second);
  }
  return p;
}

}  // namespace gatejit::emulator
