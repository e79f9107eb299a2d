// The instructions of an AMDGPU code object's text, as LLVM MC's
// disassembler prints them, with each branch's resolved target: what the
// report's histogram and the performance model's loop replay read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gatejit/status.h"
#include "llvm/Object/ObjectFile.h"

namespace gatejit::compiler {

struct DisassembledInstruction {
  uint64_t address = 0;
  std::string mnemonic;       // "global_load_dwordx4"
  std::string operands;       // the rest of the printed line
  int64_t branch_target = -1; // address a branch goes to; -1 for other instructions
};

struct Disassembly {
  std::vector<DisassembledInstruction> instructions;
  int undecodable_words = 0;
};

// Disassembles every text section of `obj` for processor `cpu` ("gfx950").
StatusOr<Disassembly> disassemble_amdgpu(const llvm::object::ObjectFile &obj, const std::string &cpu);

}  // namespace gatejit::compiler
