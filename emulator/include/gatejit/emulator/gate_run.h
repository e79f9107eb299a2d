// One gate epilogue on the emulated GPU, end to end: compile the contract
// (through the disk cache), fill seeded random inputs as the GPU suite does,
// launch through the runtime's C API (its loader, argument packing and
// launch geometry) or, for a dynamic-M kernel at a chosen M, through the
// kernel's declared ABI directly, and check every output element against
// the host reference (tests/support/gate_reference.h). Shared by the
// emulate test suite and `gatejit emulate`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gatejit/contract.h"
#include "gatejit/emulator/emulated_gpu.h"
#include "gatejit/kernel_binary.h"

namespace gatejit::emulator {

struct GateRunRequest {
  Contract contract;         // the target is the emulated GPU's; m_dynamic allowed
  int64_t launch_m = 0;      // the call's M (0: contract.m); a dynamic-M contract needs it
  bool in_place = false;     // out is attn's buffer
  size_t misalign_bytes = 0;     // every base pointer this far past an aligned one
  size_t attn_out_misalign = 0;  // attn and out further still
  uint64_t seed = 1;
  // Launches of the one loaded module, each with fresh inputs and checked:
  // more than one shows that module state (a K split's workspace, the fp8
  // out's group counters) is left ready for the next launch.
  int launches = 1;
  RunOptions options;
  // The runtime's C API (true) or the kernel's ABI directly (a dynamic-M
  // kernel at launch_m, or a code object given as bytes).
  bool through_runtime = true;
  // A code object to run instead of compiling (its ABI and geometry as a
  // KernelBinary carries them); empty: compile `contract`.
  const KernelBinary *binary = nullptr;
  // Through the runtime in background JIT mode, with these bundles loaded
  // (the shipped generic bundle, say): launch 0 is served by what they hold
  // while the contract compiles; before launch 1 the compile is waited for
  // (the launch then posts the module load to the runtime's loader thread);
  // before each later launch, the swap. (A contract served without a
  // compile, the generic kernel it asks for say, waits for nothing.) Each
  // launch's explanation, taken just before it, is in GateRunReport::paths.
  bool background_jit = false;
  std::vector<std::string> bundles;
};

struct GateRunReport {
  std::string path;   // the runtime's explanation, or "direct launch"
  std::vector<std::string> paths;  // background_jit: the explanation before each launch
  std::string form;   // "mma_tiled 128x64, split 5 by poll", from the plan the compiler reports
  std::string kernel; // the kernel symbol
  int64_t checked = 0, exact_required = 0, mismatches = 0, unwritten = 0;  // over every launch
  std::vector<std::string> first_mismatches;  // "out[3, 17] = ... not in [...]"
  std::vector<EmulatedGpu::LaunchRecord> launches;
  double emulate_seconds = 0;
  bool passed() const { return checked > 0 && mismatches == 0 && unwritten == 0; }
};

// The form of a compiled kernel as its report names it (template, tile,
// K split and its meeting, persistent grid): two contracts with the same
// form run the same code paths.
std::string kernel_form(const KernelBinary &kb);

// Compiles `c` (or takes it from the disk cache, $GATEJIT_CACHE_DIR).
StatusOr<KernelBinary> compile_cached(const Contract &c);

// Runs one request. A launch error (an emulator check, an unimplemented
// instruction, a hang) is the returned Status; a wrong result is a report
// with mismatches.
StatusOr<GateRunReport> run_gate(EmulatedGpu &gpu, const GateRunRequest &request);

}  // namespace gatejit::emulator
