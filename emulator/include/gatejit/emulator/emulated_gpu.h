// An emulated AMD GPU behind the runtime's device backend interface: while
// an EmulatedGpu lives, the runtime's HIP device (GATEJIT_DEVICE_HIP,
// ordinal 0) is this emulator, so a gatejit_gate_epilogue call goes through
// the runtime's own resolution, module loading, argument packing and launch
// geometry and then runs on the emulator. Tensors must lie in memory the
// emulator knows: device().allocate(), or host memory given to
// device().register_host(). Destroy runtimes that used it before it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gatejit/emulator/emulator.h"

namespace gatejit::emulator {

class EmulatedGpu {
 public:
  // target: kGfx950 (an emulated MI355X) or kGfx942 (MI300X).
  explicit EmulatedGpu(Target target = Target::kGfx950);
  ~EmulatedGpu();
  EmulatedGpu(const EmulatedGpu &) = delete;
  EmulatedGpu &operator=(const EmulatedGpu &) = delete;

  Device &device();
  // How the next launches run (order, cross-XCD mode, checks).
  void set_options(const RunOptions &options);
  const RunOptions &options() const;

  struct LaunchRecord {
    std::string kernel;
    LaunchGrid grid;
    RunStats stats;
  };
  // The launches run since the last call, in order.
  std::vector<LaunchRecord> take_launches();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gatejit::emulator
