// The instructions of an AMDGPU code object's text, as LLVM MC's
// disassembler prints them, with each branch's resolved target: what the
// report's histogram and the performance model's loop replay read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gatejit/status.h"
#include "llvm/ADT/ArrayRef.h"
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

// One word of code as LLVM MC's AMDGPU disassembler reads it: the printed
// instruction (leading blanks trimmed), its size and a branch's resolved
// target (-1 otherwise). A word that does not decode comes back with
// `decoded` false and size 4. The emulator's decoder reads code this way too.
struct DecodedWord {
  uint64_t address = 0;
  uint32_t size = 0;
  std::string text;
  int64_t branch_target = -1;
  bool decoded = false;
};

// Decodes `bytes`, the first at `address`, for processor `cpu` ("gfx950").
StatusOr<std::vector<DecodedWord>> decode_amdgpu(llvm::ArrayRef<uint8_t> bytes, uint64_t address,
                                                 const std::string &cpu);

// Disassembles every text section of `obj` for processor `cpu` ("gfx950").
StatusOr<Disassembly> disassemble_amdgpu(const llvm::object::ObjectFile &obj, const std::string &cpu);

}  // namespace gatejit::compiler
