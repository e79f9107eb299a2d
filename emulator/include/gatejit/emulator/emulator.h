// The CDNA emulator: runs gfx950 (CDNA4) and gfx942 (CDNA3) code objects on
// the host, one wave64 at a time, interleaved. It decodes with LLVM's MC
// disassembler and implements the instructions gatejit's kernels contain;
// any other instruction stops the run with an error naming it. Besides the
// results it checks what a hardware run cannot show deterministically:
// results read before the s_waitcnt that retires them, LDS races between
// waves, and (cross-XCD mode) meetings that rely on cache behaviour the
// memory model does not promise. docs/emulator.md says what a run proves.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gatejit/contract.h"
#include "gatejit/status.h"

namespace gatejit::emulator {

// The order the scheduler gives waves their turns: by workgroup and wave
// index, the reverse, or a seeded random permutation every round.
enum class WaveOrder { kRoundRobin, kReverse, kRandom };

struct RunOptions {
  WaveOrder order = WaveOrder::kRoundRobin;
  uint64_t seed = 1;           // kRandom's
  uint32_t quantum = 64;       // instructions a wave runs before the next wave's turn
  // Eight XCD-private L2 caches, workgroups dealt round-robin (MI355X); a
  // store reaches another XCD only through the memory model's scope bits,
  // write-backs and invalidates.
  bool cross_xcd = false;
  bool check_waits = true;     // a load's destination read before its s_waitcnt is an error
  bool check_lds_races = true; // two waves on the same LDS bytes, one writing, no barrier between
  // A wave that runs this many instructions is reported as hung (a spin that
  // never ends), with its PC and instruction.
  uint64_t max_wave_instructions = 20'000'000;
};

struct WaveCount {
  std::array<uint32_t, 3> workgroup{};
  uint32_t wave = 0;       // within the workgroup
  uint64_t instructions = 0;
};

struct RunStats {
  uint64_t instructions = 0;        // all waves
  uint64_t waves = 0;
  uint64_t workgroups = 0;
  std::vector<WaveCount> per_wave;  // every wave's dynamic instruction count
  // Dynamic counts by mnemonic, most frequent first.
  std::vector<std::pair<std::string, uint64_t>> by_mnemonic;
};

class Device;

// One instruction of a code object's text, where it sits in the file (for
// tools, and for the tests that seed defects into a code object).
struct CodeInstruction {
  uint64_t file_offset = 0;
  uint32_t size = 0;
  std::string text;  // as LLVM's MC prints it: "s_waitcnt vmcnt(0)"
};
StatusOr<std::vector<CodeInstruction>> disassemble_code_object(std::span<const uint8_t> code_object);

// A loaded code object (its image lives in the device's memory; module
// globals keep their values across launches until it is unloaded).
struct Module;

// A kernel of a module: its descriptor and argument layout.
struct KernelInfo {
  std::string name;
  uint32_t group_segment_bytes = 0;    // static LDS
  uint32_t private_segment_bytes = 0;  // scratch per lane
  uint32_t kernarg_bytes = 0;
  uint32_t vgprs = 0, agprs = 0, sgprs = 0;
  uint32_t max_workgroup_size = 0;
  struct Arg {
    uint32_t offset = 0, size = 0;
    std::string kind;  // "global_buffer", "by_value", "hidden_block_count_x", ...
  };
  std::vector<Arg> args;  // every argument, hidden ones included
  size_t explicit_args = 0;
};

struct LaunchGrid {
  std::array<uint32_t, 3> workgroups{1, 1, 1};
  std::array<uint32_t, 3> workgroup_size{64, 1, 1};
  uint32_t dynamic_lds_bytes = 0;
};

class Device {
 public:
  // target: kGfx950 or kGfx942.
  explicit Device(Target target);
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  Target target() const;

  // Memory a kernel may touch: allocations of this device (zeroed), and host
  // memory the caller registers. Any other address a kernel computes is an
  // error naming the instruction.
  void *allocate(size_t bytes);
  void release(void *p);
  void register_host(const void *p, size_t bytes);
  void unregister_host(const void *p);

  StatusOr<Module *> load(std::span<const uint8_t> code_object);
  void unload(Module *m);
  StatusOr<const KernelInfo *> kernel(Module *m, const std::string &name);
  // Every instruction of the module's text that the emulator does not
  // implement, as "mnemonic (text)": empty when it can run all of it.
  std::vector<std::string> unimplemented(Module *m) const;

  // Runs one launch to completion. `args`: one pointer per explicit
  // argument, as hipModuleLaunchKernel's kernelParams; the kernarg buffer
  // is laid out from the code object's metadata, hidden arguments filled as
  // the HIP runtime fills them.
  Status launch(Module *m, const std::string &kernel, const LaunchGrid &grid, void **args,
                const RunOptions &options, RunStats *stats = nullptr);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gatejit::emulator
