// The instructions the emulator implements: mnemonic -> handler and the few
// facts the decoder and the checks need. Each group of handlers registers
// itself from its own file, which names the ISA source of its semantics.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "gatejit/contract.h"
#include "inst.h"

namespace gatejit::emulator {

enum class Counter : uint8_t { kNone = 0, kVm = 1, kLgkm = 2 };

struct OpInfo {
  Handler fn = nullptr;
  uint8_t ndst = 1;            // leading operands written (0 for stores, branches)
  Counter counter = Counter::kNone;  // a memory result retired by this counter
  uint8_t float_width = 0;     // width of inline float constants; 0: from the mnemonic
};

using OpTable = std::unordered_map<std::string, OpInfo>;

// The table, built once. Keys are mnemonics without the _e32/_e64/_dpp/_sdwa
// encoding suffix ("v_add_f32").
const OpTable &op_table();

// Registration, one per group.
void add_scalar_ops(OpTable &t);
void add_vector_int_ops(OpTable &t);
void add_vector_float_ops(OpTable &t);
void add_packed_ops(OpTable &t);
void add_matrix_ops(OpTable &t);
void add_lds_ops(OpTable &t);
void add_memory_ops(OpTable &t);

// The 8-bit float conversions, whose format depends on the target (gfx950:
// OCP e4m3; gfx942: e4m3 fnuz); nullptr for other mnemonics.
Handler fp8_handler(const std::string &base, Target target);

// The handler of an instruction the table does not have: an error naming it.
void op_unimplemented(Wave &w, const Inst &in);

}  // namespace gatejit::emulator
