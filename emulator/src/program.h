// A module's text decoded once: one Inst per instruction, in address order,
// with branch targets resolved to indices (the hot loop never sees text).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "code_object.h"
#include "inst.h"

namespace gatejit::emulator {

struct Program {
  std::vector<Inst> insts;
  std::vector<std::string> texts;      // "v_add_f32_e32 v1, v2, v3", by Inst::text_id
  std::vector<std::string> mnemonics;  // by Inst::mnemonic_id
  std::unordered_map<uint64_t, uint32_t> index_of;  // address -> instruction index
  // "mnemonic (text)" of each instruction the emulator does not implement.
  std::vector<std::string> unimplemented;
  uint32_t index_at(uint64_t address) const;  // throws EmuError where no instruction starts
};

// Decodes the text of `co` loaded at `image_base` (addresses are absolute).
StatusOr<Program> decode_program(const CodeObject &co, uint64_t image_base);

}  // namespace gatejit::emulator
