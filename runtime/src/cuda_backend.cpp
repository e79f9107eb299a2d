// CUDA driver API backend (libcuda.so.1 via dlopen). Declares the handful of
// driver types and entry points it uses, so no CUDA header is needed to build.
#include <dlfcn.h>

#include <array>
#include <atomic>
#include <mutex>
#include <vector>

#include "device_backend.h"
#include "log.h"

namespace gatejit {
namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUlinkState = void *;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr int CU_JIT_INPUT_PTX = 1;

struct CudaApi {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuLinkCreate)(unsigned, int *, void **, CUlinkState *);
  CUresult (*cuLinkAddData)(CUlinkState, int, void *, size_t, const char *, unsigned, int *, void **);
  CUresult (*cuLinkComplete)(CUlinkState, void **, size_t *);
  CUresult (*cuLinkDestroy)(CUlinkState);
  // CUDA 12+ drivers; looked up apart, so that an older driver still runs
  // every kernel without tensor maps.
  CUresult (*cuTensorMapEncodeTiled)(void *, int, unsigned, void *, const uint64_t *, const uint64_t *,
                                     const unsigned *, const unsigned *, int, int, int, int);
  CUresult (*cuStreamIsCapturing)(CUstream, int *);  // CUDA 10+; looked up apart too
  CUresult (*cuThreadExchangeStreamCaptureMode)(int *);  // CUDA 10.1+; looked up apart too
};

// The driver reads PTX as NUL-terminated text (a cubin ignores the extra byte).
std::vector<uint8_t> nul_terminated(std::span<const uint8_t> code) {
  std::vector<uint8_t> text(code.begin(), code.end());
  text.push_back(0);
  return text;
}

class CudaBackend final : public DeviceBackend {
 public:
  const char *name() const override { return "cuda"; }

  Status available() override {
    std::call_once(open_once_, [this] { open_status_ = open(); });
    return open_status_;
  }

  StatusOr<DeviceInfo> device_info(int ordinal) override {
    GATEJIT_RETURN_IF_ERROR(available());
    CUdevice dev;
    GATEJIT_RETURN_IF_ERROR(check(api_.cuDeviceGet(&dev, ordinal), "cuDeviceGet"));
    int major = 0, minor = 0;
    GATEJIT_RETURN_IF_ERROR(check(api_.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
                                  "cuDeviceGetAttribute"));
    GATEJIT_RETURN_IF_ERROR(check(api_.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
                                  "cuDeviceGetAttribute"));
    char name[256] = {};
    GATEJIT_RETURN_IF_ERROR(check(api_.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName"));
    DeviceInfo info;
    info.name = name;
    info.arch = "sm_" + std::to_string(major) + std::to_string(minor);
    auto target = target_from_arch(info.arch);
    if (!target.ok()) return target.status();
    info.target = *target;
    return info;
  }

  StatusOr<FunctionHandle> load_function(int ordinal, std::span<const uint8_t> code, const std::string &symbol,
                                         uint32_t shared_bytes, ModuleHandle *module_out) override {
    auto ctx = primary_context(ordinal);
    if (!ctx.ok()) return ctx.status();
    ContextScope scope(api_, *ctx);
    std::vector<uint8_t> text = nul_terminated(code);
    CUmodule module = nullptr;
    GATEJIT_RETURN_IF_ERROR(check(api_.cuModuleLoadData(&module, text.data()), "cuModuleLoadData"));
    CUfunction fn = nullptr;
    Status s = check(api_.cuModuleGetFunction(&fn, module, symbol.c_str()), "cuModuleGetFunction(" + symbol + ")");
    // Dynamic shared memory that takes a block past 48 KiB in all (static
    // included) is opt-in per function; opting in below that is harmless.
    constexpr int kMaxDynamicSharedSizeBytes = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    if (s.ok() && shared_bytes > 0)
      s = check(api_.cuFuncSetAttribute(fn, kMaxDynamicSharedSizeBytes, int(shared_bytes)),
                "cuFuncSetAttribute(" + symbol + ", max dynamic shared memory " + std::to_string(shared_bytes) + ")");
    if (!s.ok()) {
      api_.cuModuleUnload(module);
      return s;
    }
    *module_out = module;
    return FunctionHandle(fn);
  }

  // CU_STREAM_CAPTURE_STATUS_NONE (0) is the only state that is not a
  // capture; the legacy stream while another captures is an error (asked of
  // the device's primary context): both read as capturing.
  StatusOr<bool> stream_capturing(int ordinal, void *stream) override {
    auto ctx = primary_context(ordinal);
    if (!ctx.ok()) return ctx.status();
    if (!api_.cuStreamIsCapturing) return device_error("this CUDA driver has no cuStreamIsCapturing");
    ContextScope scope(api_, *ctx);
    int status = 0;
    GATEJIT_RETURN_IF_ERROR(check(api_.cuStreamIsCapturing(CUstream(stream), &status), "cuStreamIsCapturing"));
    return status != 0;
  }

  void relax_capture_mode_of_this_thread() override {
    if (!available().ok() || !api_.cuThreadExchangeStreamCaptureMode) return;
    int mode = 2;  // CU_STREAM_CAPTURE_MODE_RELAXED
    (void)api_.cuThreadExchangeStreamCaptureMode(&mode);  // a driver that refuses keeps the default mode
  }

  // What the driver's PTX compiler makes depends on the driver and the device.
  StatusOr<std::string> native_tag(int ordinal) override {
    auto info = device_info(ordinal);
    if (!info.ok()) return info.status();
    int version = 0;
    GATEJIT_RETURN_IF_ERROR(check(api_.cuDriverGetVersion(&version), "cuDriverGetVersion"));
    return "cuda-driver-" + std::to_string(version) + "/" + info->arch;
  }

  // PTX -> cubin through the driver's linker: the same compiler
  // cuModuleLoadData runs on PTX, with its machine code handed back.
  StatusOr<std::vector<uint8_t>> compile_native(int ordinal, std::span<const uint8_t> code) override {
    auto ctx = primary_context(ordinal);
    if (!ctx.ok()) return ctx.status();
    ContextScope scope(api_, *ctx);
    char log[4096] = {};
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof log))};
    CUlinkState link = nullptr;
    GATEJIT_RETURN_IF_ERROR(check(api_.cuLinkCreate(2, options, values, &link), "cuLinkCreate"));
    std::vector<uint8_t> text = nul_terminated(code);
    void *cubin = nullptr;
    size_t size = 0;
    Status s = check(api_.cuLinkAddData(link, CU_JIT_INPUT_PTX, text.data(), text.size(), "gatejit.ptx", 0, nullptr,
                                        nullptr),
                     "cuLinkAddData(PTX)");
    if (s.ok()) s = check(api_.cuLinkComplete(link, &cubin, &size), "cuLinkComplete");
    std::vector<uint8_t> out;
    if (s.ok()) out.assign(static_cast<const uint8_t *>(cubin), static_cast<const uint8_t *>(cubin) + size);
    api_.cuLinkDestroy(link);  // owns `cubin`
    if (!s.ok()) return Status(s.code(), s.message() + (log[0] ? std::string(": ") + log : std::string()));
    return out;
  }

  void unload_module(int ordinal, ModuleHandle module) override {
    auto ctx = primary_context(ordinal);
    if (!module || !ctx.ok()) return;
    ContextScope scope(api_, *ctx);
    api_.cuModuleUnload(CUmodule(module));
  }

  Status tensor_maps_available() override {
    GATEJIT_RETURN_IF_ERROR(available());
    if (!api_.cuTensorMapEncodeTiled)
      return device_error("this CUDA driver has no cuTensorMapEncodeTiled (CUDA 12 or newer is needed for TMA kernels)");
    return Status::Ok();
  }

  // Runs at every launch of a TMA kernel: the message is built on failure only.
  Status encode_tensor_map(const TensorMapRequest &r, TensorMap *out) override {
    GATEJIT_RETURN_IF_ERROR(tensor_maps_available());
    // CUtensorMapDataType UINT16 (a copy moves bits: bf16 and f16 alike),
    // no interleave, 128-byte swizzle (the stages' layout), L2 promotion of
    // 128 bytes, rows past the edge filled with zeros.
    constexpr int kUint16 = 1, kInterleaveNone = 0, kSwizzle128B = 3, kL2Promotion128B = 2, kOobFillZero = 0;
    const uint64_t dims[2] = {r.cols, r.rows};
    const uint64_t strides[1] = {r.ld * 2};
    const unsigned box[2] = {r.box_cols, r.box_rows};
    const unsigned element_strides[2] = {1, 1};
    const CUresult result =
        api_.cuTensorMapEncodeTiled(out->bytes, kUint16, 2, const_cast<void *>(r.base), dims, strides, box,
                                    element_strides, kInterleaveNone, kSwizzle128B, kL2Promotion128B, kOobFillZero);
    if (result == CUDA_SUCCESS) return Status::Ok();
    return check(result, std::string("cuTensorMapEncodeTiled(") + r.what + ": " + std::to_string(r.rows) + " x " +
                             std::to_string(r.cols) + ", ld " + std::to_string(r.ld) + ", box " +
                             std::to_string(r.box_rows) + " x " + std::to_string(r.box_cols) + ")");
  }

  Status launch(int ordinal, FunctionHandle fn, std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block,
                uint32_t shared_bytes, void *stream, void **args) override {
    // The module lives in the device's primary context; the caller's thread may
    // have none current, or another device's (scoped, so the caller's is kept).
    auto ctx = primary_context(ordinal);
    if (!ctx.ok()) return ctx.status();
    ContextScope scope(api_, *ctx);
    return check(api_.cuLaunchKernel(CUfunction(fn), grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                     shared_bytes, CUstream(stream), args, nullptr),
                 "cuLaunchKernel");
  }

 private:
  Status open() {
    handle_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle_) handle_ = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!handle_)
      return device_error(std::string("CUDA driver library libcuda.so.1 could not be loaded (no NVIDIA driver on this "
                                      "machine?): ") + dlerror());
    bool ok = true;
    std::string missing;
    auto sym = [&](auto &fp, const char *name) {
      fp = reinterpret_cast<std::remove_reference_t<decltype(fp)>>(dlsym(handle_, name));
      if (!fp) ok = false, missing += std::string(" ") + name;
    };
    sym(api_.cuInit, "cuInit");
    sym(api_.cuDeviceGet, "cuDeviceGet");
    sym(api_.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    sym(api_.cuDeviceGetName, "cuDeviceGetName");
    sym(api_.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(api_.cuCtxGetCurrent, "cuCtxGetCurrent");
    sym(api_.cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    sym(api_.cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    sym(api_.cuModuleLoadData, "cuModuleLoadData");
    sym(api_.cuModuleUnload, "cuModuleUnload");
    sym(api_.cuModuleGetFunction, "cuModuleGetFunction");
    sym(api_.cuFuncSetAttribute, "cuFuncSetAttribute");
    sym(api_.cuLaunchKernel, "cuLaunchKernel");
    sym(api_.cuGetErrorString, "cuGetErrorString");
    sym(api_.cuDriverGetVersion, "cuDriverGetVersion");
    sym(api_.cuLinkCreate, "cuLinkCreate_v2");
    sym(api_.cuLinkAddData, "cuLinkAddData_v2");
    sym(api_.cuLinkComplete, "cuLinkComplete");
    sym(api_.cuLinkDestroy, "cuLinkDestroy");
    if (!ok) return device_error("libcuda.so.1 lacks driver entry points:" + missing);
    api_.cuTensorMapEncodeTiled = reinterpret_cast<decltype(api_.cuTensorMapEncodeTiled)>(
        dlsym(handle_, "cuTensorMapEncodeTiled"));
    api_.cuStreamIsCapturing = reinterpret_cast<decltype(api_.cuStreamIsCapturing)>(
        dlsym(handle_, "cuStreamIsCapturing"));
    api_.cuThreadExchangeStreamCaptureMode = reinterpret_cast<decltype(api_.cuThreadExchangeStreamCaptureMode)>(
        dlsym(handle_, "cuThreadExchangeStreamCaptureMode"));
    return check(api_.cuInit(0), "cuInit");
  }

  // The device's primary context (the one PyTorch and the runtime API use),
  // retained once per device; lock-free after the first call.
  StatusOr<CUcontext> primary_context(int ordinal) {
    GATEJIT_RETURN_IF_ERROR(available());
    if (ordinal < 0 || ordinal >= int(kMaxDevices))
      return invalid_argument("device_ordinal = " + std::to_string(ordinal) + ": must be in [0, " +
                              std::to_string(kMaxDevices) + ")");
    if (CUcontext ctx = primary_[ordinal].load(std::memory_order_acquire)) return ctx;
    std::lock_guard<std::mutex> lock(retain_mu_);
    if (CUcontext ctx = primary_[ordinal].load(std::memory_order_acquire)) return ctx;
    CUdevice dev;
    GATEJIT_RETURN_IF_ERROR(check(api_.cuDeviceGet(&dev, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")"));
    CUcontext ctx = nullptr;
    GATEJIT_RETURN_IF_ERROR(check(api_.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain"));
    primary_[ordinal].store(ctx, std::memory_order_release);
    return ctx;
  }

  // Makes `ctx` current for a scope unless it already is; restores the
  // caller's context afterwards.
  class ContextScope {
   public:
    ContextScope(const CudaApi &api, CUcontext ctx) : api_(api) {
      CUcontext current = nullptr;
      if (api_.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx) return;
      pushed_ = api_.cuCtxPushCurrent(ctx) == CUDA_SUCCESS;
    }
    ~ContextScope() {
      CUcontext popped = nullptr;
      if (pushed_) api_.cuCtxPopCurrent(&popped);
    }

   private:
    const CudaApi &api_;
    bool pushed_ = false;
  };

  Status check(CUresult r, const std::string &what) {
    if (r == CUDA_SUCCESS) return Status::Ok();
    const char *text = nullptr;
    if (api_.cuGetErrorString) api_.cuGetErrorString(r, &text);
    return device_error(what + " failed: CUDA error " + std::to_string(r) + (text ? std::string(" (") + text + ")" : ""));
  }

  static constexpr size_t kMaxDevices = 64;
  std::once_flag open_once_;
  Status open_status_;
  void *handle_ = nullptr;
  CudaApi api_{};
  std::mutex retain_mu_;
  std::array<std::atomic<CUcontext>, kMaxDevices> primary_{};
};

}  // namespace

DeviceBackend &cuda_backend() {
  static CudaBackend backend;
  return backend;
}

}  // namespace gatejit
