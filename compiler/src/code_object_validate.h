// Checks a code object by hand before the report readers see it. LLVM's
// ELF and msgpack readers trust parts of their input (a map keyed by an
// array reaches llvm_unreachable, an unknown processor makes the AMDGPU
// disassembler call report_fatal_error), so a malformed file must be refused
// here, with a message, instead of killing the process there.
#pragma once

#include <cstdint>
#include <span>

#include "gatejit/status.h"

namespace gatejit::compiler {

// Ok when `bytes` is a 64-bit little-endian AMDGPU ELF whose headers,
// sections and note segments lie inside the file, whose AMDGPU metadata note
// is well-formed msgpack within the bounds below (string map keys, no key
// twice, printable ASCII strings, nesting at most kMaxMsgpackDepth), and
// whose amdhsa.target names a processor the disassembler reads (gfx8 on).
// Otherwise kCorrupt naming the first problem.
inline constexpr int kMaxMsgpackDepth = 16;
Status validate_code_object(std::span<const uint8_t> bytes);

// Ok when `bytes` is PTX-like text: printable ASCII, tabs and line breaks
// only, no line longer than kMaxPtxLineBytes (the report's regular
// expressions recurse once per character of a match).
inline constexpr size_t kMaxPtxLineBytes = 16384;
Status validate_ptx_text(std::span<const uint8_t> bytes);

}  // namespace gatejit::compiler
