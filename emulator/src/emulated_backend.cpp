// The emulated device as a runtime device backend (runtime/src/
// device_backend.h): it stands in for the HIP backend while an EmulatedGpu
// lives. Code objects are hsaco as for HIP; a launch runs to completion
// before it returns (streams are not modelled).
#include <mutex>

#include "device_backend.h"
#include "gatejit/emulator/emulated_gpu.h"

namespace gatejit::emulator {
namespace {

struct Function {
  Module *module;
  std::string symbol;
};

class EmulatedBackend final : public DeviceBackend {
 public:
  explicit EmulatedBackend(Target target) : device_(target) {}
  const char *name() const override { return "emulated"; }
  Status available() override { return Status::Ok(); }

  StatusOr<DeviceInfo> device_info(int ordinal) override {
    if (ordinal != 0) return device_error("the emulated GPU has one device, ordinal 0");
    const bool gfx950 = device_.target() == Target::kGfx950;
    DeviceInfo info;
    info.name = gfx950 ? "emulated AMD Instinct MI355X (gatejit emulator)" : "emulated AMD Instinct MI300X (gatejit emulator)";
    info.arch = gfx950 ? "gfx950:sramecc+:xnack-" : "gfx942:sramecc+:xnack-";
    info.target = device_.target();
    return info;
  }

  StatusOr<FunctionHandle> load_function(int ordinal, std::span<const uint8_t> code, const std::string &symbol,
                                         uint32_t, ModuleHandle *module_out) override {
    if (ordinal != 0) return device_error("the emulated GPU has one device, ordinal 0");
    auto m = device_.load(code);
    if (!m.ok()) return m.status();
    auto k = device_.kernel(*m, symbol);
    if (!k.ok()) {
      device_.unload(*m);
      return k.status();
    }
    std::lock_guard<std::mutex> lock(mu_);
    functions_.push_back(std::make_unique<Function>(Function{*m, symbol}));
    *module_out = *m;
    return FunctionHandle(functions_.back().get());
  }

  void unload_module(int, ModuleHandle module) override { device_.unload(static_cast<Module *>(module)); }

  // The emulated device has no graph capture: no stream is ever capturing
  // (so the background JIT swaps its kernels in here as on a GPU).
  StatusOr<bool> stream_capturing(int, void *) override { return false; }

  Status launch(int ordinal, FunctionHandle fn, std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block,
                uint32_t shared_bytes, void *, void **args) override {
    if (ordinal != 0) return device_error("the emulated GPU has one device, ordinal 0");
    const auto *f = static_cast<const Function *>(fn);
    LaunchGrid g{grid, block, shared_bytes};
    RunOptions options;
    {
      std::lock_guard<std::mutex> lock(mu_);
      options = options_;
    }
    RunStats stats;
    Status s = device_.launch(f->module, f->symbol, g, args, options, &stats);
    if (!s.ok()) return device_error("emulated launch of " + f->symbol + ": " + s.message());
    std::lock_guard<std::mutex> lock(mu_);
    launches_.push_back({f->symbol, g, std::move(stats)});
    return Status::Ok();
  }

  Device &device() { return device_; }
  void set_options(const RunOptions &o) {
    std::lock_guard<std::mutex> lock(mu_);
    options_ = o;
  }
  const RunOptions &options() const { return options_; }
  std::vector<EmulatedGpu::LaunchRecord> take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(launches_, {});
  }

 private:
  Device device_;
  std::mutex mu_;
  RunOptions options_;
  std::vector<std::unique_ptr<Function>> functions_;
  std::vector<EmulatedGpu::LaunchRecord> launches_;
};

}  // namespace

struct EmulatedGpu::Impl {
  explicit Impl(Target t) : backend(t) {}
  EmulatedBackend backend;
};

EmulatedGpu::EmulatedGpu(Target target) : impl_(std::make_unique<Impl>(target)) { set_hip_backend(&impl_->backend); }

EmulatedGpu::~EmulatedGpu() { set_hip_backend(nullptr); }

Device &EmulatedGpu::device() { return impl_->backend.device(); }
void EmulatedGpu::set_options(const RunOptions &options) { impl_->backend.set_options(options); }
const RunOptions &EmulatedGpu::options() const { return impl_->backend.options(); }
std::vector<EmulatedGpu::LaunchRecord> EmulatedGpu::take_launches() { return impl_->backend.take(); }

}  // namespace gatejit::emulator
