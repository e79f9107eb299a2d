// A device backend: the module API of one GPU runtime (CUDA driver API or
// HIP), opened at run time with dlopen so gatejit builds and loads where
// neither is installed. A backend that cannot open its library answers every
// call with a device_error that says exactly what is missing.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gatejit/contract.h"
#include "gatejit/kernel_binary.h"
#include "gatejit/status.h"

namespace gatejit {

struct DeviceInfo {
  std::string name;     // "NVIDIA H200", "AMD Instinct MI355X"
  std::string arch;     // "sm_90", "gfx950:sramecc+:xnack-"
  Target target;        // what gatejit compiles for it
};

// A TMA descriptor (CUtensorMap): opaque bytes, passed to a kernel by value.
struct alignas(64) TensorMap {
  uint8_t bytes[kTensorMapBytes];
};
// A row-major 2-D tensor of 16-bit elements and the box a kernel copies of it
// (kernel_binary.h, TensorMapBoxes).
struct TensorMapRequest {
  const char *what = "";  // "weight" | "hidden", for messages
  const void *base = nullptr;
  uint64_t rows = 0, cols = 0;
  uint64_t ld = 0;  // elements between row starts
  uint32_t box_cols = 0, box_rows = 0;
};

// Opaque handles of the underlying API.
using ModuleHandle = void *;
using FunctionHandle = void *;

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual const char *name() const = 0;  // "cuda" | "hip"
  // Whether the library could be opened; the status says why not.
  virtual Status available() = 0;
  virtual StatusOr<DeviceInfo> device_info(int ordinal) = 0;
  // Loads a code object (hsaco / PTX) for `ordinal` and looks up `symbol`;
  // the function is made able to take `shared_bytes` of dynamic shared memory.
  virtual StatusOr<FunctionHandle> load_function(int ordinal, std::span<const uint8_t> code, const std::string &symbol,
                                                 uint32_t shared_bytes, ModuleHandle *module_out) = 0;
  virtual void unload_module(int ordinal, ModuleHandle module) = 0;
  // Machine code for portable code objects (native_code_cache.h). The tag
  // names what the machine code depends on besides its source ("cuda-
  // driver-13000/sm_90"); empty when the backend's code objects are machine
  // code already (hsaco), and then compile_native is never asked.
  virtual StatusOr<std::string> native_tag(int /*ordinal*/) { return std::string(); }
  // Compiles a code object to the machine code load_function also accepts.
  virtual StatusOr<std::vector<uint8_t>> compile_native(int /*ordinal*/, std::span<const uint8_t> /*code*/) {
    return unsupported(std::string("the ") + name() + " backend has no native compilation");
  }
  // Whether this backend can encode tensor maps; asked when a kernel that
  // takes them is loaded, so that a driver without them fails at prepare
  // or resolve time, not in the middle of a graph capture.
  virtual Status tensor_maps_available() {
    return unsupported(std::string("tensor maps: the ") + name() + " backend has none (CUDA sm_90 kernels only)");
  }
  // Encodes a tensor map (128-byte swizzled boxes, zero past the edges).
  // Only the CUDA backend has them: no gfx950 kernel asks for one.
  virtual Status encode_tensor_map(const TensorMapRequest &, TensorMap *) { return tensor_maps_available(); }
  // Whether `stream` (on device `ordinal`) is capturing a graph now: the
  // background JIT never swaps a kernel in during a capture. An error where
  // the backend cannot tell (then nothing is swapped).
  virtual StatusOr<bool> stream_capturing(int /*ordinal*/, void * /*stream*/) {
    return unsupported(std::string("the ") + name() + " backend cannot tell a capturing stream");
  }
  // Lets this thread load modules while another thread captures a graph
  // (relaxed capture mode): the background JIT's loader thread, whose load
  // would otherwise fail and spoil that capture. No-op where not needed.
  virtual void relax_capture_mode_of_this_thread() {}
  // Launches; `args` points at the kernel's argument slots, one per argument
  // its binary declares (launch_args.h).
  virtual Status launch(int ordinal, FunctionHandle fn, std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block,
                        uint32_t shared_bytes, void *stream, void **args) = 0;
};

// Process-wide backends (opened lazily, never closed).
DeviceBackend &cuda_backend();
DeviceBackend &hip_backend();

// Puts `backend` in the HIP backend's place for this process (nullptr puts
// the HIP runtime's back): the emulator (emulator/, which needs LLVM and so
// lives outside the runtime) installs its emulated gfx950/gfx942 device here,
// so that the runtime's own loader, argument packing and launch geometry
// drive it. Runtimes created afterwards see it.
void set_hip_backend(DeviceBackend *backend);

// "gfx950:sramecc+:xnack-" -> gfx950; "sm_90" -> sm_90; unknown -> error.
StatusOr<Target> target_from_arch(const std::string &arch);

}  // namespace gatejit
