// The report of a compiled kernel, read from the code object itself: the
// AMDGPU metadata note (registers, LDS, scratch, kernarg, wave size) and an
// instruction histogram from LLVM MC's disassembler; for PTX, what the PTX
// text declares (registers, shared memory) and its instruction mix.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "gatejit/kernel_binary.h"

namespace gatejit::compiler {

StatusOr<nlohmann::json> read_code_object_report(std::span<const uint8_t> bytes);

// Guesses the format from the bytes: ELF magic = hsaco, else PTX text.
BinaryFormat sniff_format(std::span<const uint8_t> bytes);

// Human-readable rendering of a report (compile, inspect).
std::string format_report(const nlohmann::json &report);

// One line of a report's "model" (perf_model.h): the prediction, its range,
// the device, the limiter and the ideal read.
std::string format_model(const nlohmann::json &model);

}  // namespace gatejit::compiler
