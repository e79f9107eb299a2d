// HIP backend (libamdhip64.so via dlopen): the ROCm HIP runtime's module API.
// Types come from the HIP headers when the build has them (Debian's
// libamdhip64-dev); without them the backend still builds and reports that HIP
// support was not compiled in. Not executed here: no AMD GPU is reachable.
#include <dlfcn.h>

#include <atomic>
#include <mutex>

#include "device_backend.h"

#if __has_include(<hip/hip_runtime_api.h>)
#define GATEJIT_HAVE_HIP_HEADERS 1
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#else
#define GATEJIT_HAVE_HIP_HEADERS 0
#endif

namespace gatejit {
namespace {

#if GATEJIT_HAVE_HIP_HEADERS

struct HipApi {
  hipError_t (*hipInit)(unsigned);
  hipError_t (*hipGetDeviceProperties)(hipDeviceProp_t *, int);
  hipError_t (*hipSetDevice)(int);
  hipError_t (*hipGetDevice)(int *);
  hipError_t (*hipModuleLoadData)(hipModule_t *, const void *);
  hipError_t (*hipModuleUnload)(hipModule_t);
  hipError_t (*hipModuleGetFunction)(hipFunction_t *, hipModule_t, const char *);
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, hipStream_t, void **, void **);
  const char *(*hipGetErrorString)(hipError_t);
  hipError_t (*hipStreamIsCapturing)(hipStream_t, hipStreamCaptureStatus *);  // looked up apart
  hipError_t (*hipThreadExchangeStreamCaptureMode)(int *);                     // looked up apart
};

class HipBackend final : public DeviceBackend {
 public:
  const char *name() const override { return "hip"; }

  Status available() override {
    std::call_once(open_once_, [this] { open_status_ = open(); });
    return open_status_;
  }

  StatusOr<DeviceInfo> device_info(int ordinal) override {
    GATEJIT_RETURN_IF_ERROR(available());
    hipDeviceProp_t props{};
    GATEJIT_RETURN_IF_ERROR(check(api_.hipGetDeviceProperties(&props, ordinal), "hipGetDeviceProperties"));
    DeviceInfo info;
    info.name = props.name;
    info.arch = props.gcnArchName;  // e.g. "gfx950:sramecc+:xnack-"
    auto target = target_from_arch(info.arch);
    if (!target.ok()) return target.status();
    info.target = *target;
    return info;
  }

  // gfx9 gives a workgroup its dynamic LDS without an opt-in.
  StatusOr<FunctionHandle> load_function(int ordinal, std::span<const uint8_t> code, const std::string &symbol,
                                         uint32_t /*shared_bytes*/, ModuleHandle *module_out) override {
    GATEJIT_RETURN_IF_ERROR(available());
    // hipModuleLoadData loads for the current device only: one module per GPU.
    // The caller's current device is restored afterwards.
    DeviceScope scope(api_, ordinal);
    GATEJIT_RETURN_IF_ERROR(check(scope.status(), "hipSetDevice"));
    hipModule_t module = nullptr;
    GATEJIT_RETURN_IF_ERROR(check(api_.hipModuleLoadData(&module, code.data()),
                                  "hipModuleLoadData (mismatched target chip?)"));
    hipFunction_t fn = nullptr;
    Status s = check(api_.hipModuleGetFunction(&fn, module, symbol.c_str()), "hipModuleGetFunction(" + symbol + ")");
    if (!s.ok()) {
      (void)api_.hipModuleUnload(module);  // clean-up: the lookup error is the one to report
      return s;
    }
    *module_out = module;
    return FunctionHandle(fn);
  }

  void unload_module(int ordinal, ModuleHandle module) override {
    DeviceScope scope(api_, ordinal);
    // Teardown has no caller to report to: a failed unload only leaks the module.
    if (module && scope.status() == hipSuccess) (void)api_.hipModuleUnload(hipModule_t(module));
  }

  // A null stream is the current device's: make `ordinal` current for the
  // launch (the module was loaded there), and restore the caller's device.
  Status launch(int ordinal, FunctionHandle fn, std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block,
                uint32_t shared_bytes, void *stream, void **args) override {
    DeviceScope scope(api_, ordinal);
    if (scope.status() != hipSuccess) return check(scope.status(), "hipSetDevice");
    return check(api_.hipModuleLaunchKernel(hipFunction_t(fn), grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                            shared_bytes, hipStream_t(stream), args, nullptr),
                 "hipModuleLaunchKernel");
  }

  void relax_capture_mode_of_this_thread() override {
    if (!available().ok() || !api_.hipThreadExchangeStreamCaptureMode) return;
    int mode = 2;  // hipStreamCaptureModeRelaxed
    (void)api_.hipThreadExchangeStreamCaptureMode(&mode);  // a driver that refuses keeps the default mode
  }

  // Anything but hipStreamCaptureStatusNone reads as capturing.
  StatusOr<bool> stream_capturing(int ordinal, void *stream) override {
    GATEJIT_RETURN_IF_ERROR(available());
    if (!api_.hipStreamIsCapturing) return device_error("this HIP runtime has no hipStreamIsCapturing");
    DeviceScope scope(api_, ordinal);
    if (scope.status() != hipSuccess) return check(scope.status(), "hipSetDevice");
    hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
    GATEJIT_RETURN_IF_ERROR(check(api_.hipStreamIsCapturing(hipStream_t(stream), &status), "hipStreamIsCapturing"));
    return status != hipStreamCaptureStatusNone;
  }

 private:
  // Makes `ordinal` the current device for a scope; restores the caller's.
  class DeviceScope {
   public:
    DeviceScope(const HipApi &api, int ordinal) : api_(api) {
      if (api_.hipGetDevice(&previous_) != hipSuccess) previous_ = -1;
      status_ = previous_ == ordinal ? hipSuccess : api_.hipSetDevice(ordinal);
    }
    ~DeviceScope() {
      if (previous_ >= 0) (void)api_.hipSetDevice(previous_);  // best effort in a destructor
    }
    hipError_t status() const { return status_; }

   private:
    const HipApi &api_;
    int previous_ = -1;
    hipError_t status_ = hipSuccess;
  };

  Status open() {
    handle_ = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
    for (const char *alt : {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"})
      if (!handle_) handle_ = dlopen(alt, RTLD_NOW | RTLD_LOCAL);
    if (!handle_)
      return device_error(std::string("HIP runtime library libamdhip64.so could not be loaded (ROCm not installed?): ") +
                          dlerror());
    std::string missing;
    auto sym = [&](auto &fp, std::initializer_list<const char *> names) {
      for (const char *name : names)
        if (!fp) fp = reinterpret_cast<std::remove_reference_t<decltype(fp)>>(dlsym(handle_, name));
      if (!fp) missing += std::string(" ") + *names.begin();
    };
    sym(api_.hipInit, {"hipInit"});
    // The entry point whose struct layout matches the headers we built with:
    // ROCm 6+ headers define the R0600 layout; 5.x headers the R0000 one,
    // which ROCm 6+ still exports under the R0000 name.
#if defined(HIP_VERSION_MAJOR) && HIP_VERSION_MAJOR >= 6
    sym(api_.hipGetDeviceProperties, {"hipGetDevicePropertiesR0600"});
#else
    sym(api_.hipGetDeviceProperties, {"hipGetDevicePropertiesR0000", "hipGetDeviceProperties"});
#endif
    sym(api_.hipSetDevice, {"hipSetDevice"});
    sym(api_.hipGetDevice, {"hipGetDevice"});
    sym(api_.hipModuleLoadData, {"hipModuleLoadData"});
    sym(api_.hipModuleUnload, {"hipModuleUnload"});
    sym(api_.hipModuleGetFunction, {"hipModuleGetFunction"});
    sym(api_.hipModuleLaunchKernel, {"hipModuleLaunchKernel"});
    sym(api_.hipGetErrorString, {"hipGetErrorString"});
    if (!missing.empty()) return device_error("libamdhip64.so lacks entry points:" + missing);
    api_.hipStreamIsCapturing =
        reinterpret_cast<decltype(api_.hipStreamIsCapturing)>(dlsym(handle_, "hipStreamIsCapturing"));
    api_.hipThreadExchangeStreamCaptureMode = reinterpret_cast<decltype(api_.hipThreadExchangeStreamCaptureMode)>(
        dlsym(handle_, "hipThreadExchangeStreamCaptureMode"));
    return check(api_.hipInit(0), "hipInit");
  }

  Status check(hipError_t r, const std::string &what) {
    if (r == hipSuccess) return Status::Ok();
    const char *text = api_.hipGetErrorString ? api_.hipGetErrorString(r) : nullptr;
    return device_error(what + " failed: HIP error " + std::to_string(int(r)) +
                        (text ? std::string(" (") + text + ")" : ""));
  }

  std::once_flag open_once_;
  Status open_status_;
  void *handle_ = nullptr;
  HipApi api_{};
};

#else  // no HIP headers at build time

class HipBackend final : public DeviceBackend {
 public:
  const char *name() const override { return "hip"; }
  Status available() override {
    return device_error("this gatejit build has no HIP support (built without the HIP headers, libamdhip64-dev)");
  }
  StatusOr<DeviceInfo> device_info(int) override { return available(); }
  StatusOr<FunctionHandle> load_function(int, std::span<const uint8_t>, const std::string &, uint32_t,
                                         ModuleHandle *) override {
    return available();
  }
  void unload_module(int, ModuleHandle) override {}
  Status launch(int, FunctionHandle, std::array<uint32_t, 3>, std::array<uint32_t, 3>, uint32_t, void *,
                void **) override {
    return available();
  }
};

#endif

std::atomic<DeviceBackend *> g_hip_stand_in{nullptr};

}  // namespace

DeviceBackend &hip_backend() {
  if (DeviceBackend *stand_in = g_hip_stand_in.load(std::memory_order_acquire)) return *stand_in;
  static HipBackend backend;
  return backend;
}

void set_hip_backend(DeviceBackend *backend) { g_hip_stand_in.store(backend, std::memory_order_release); }

}  // namespace gatejit
