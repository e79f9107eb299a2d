// The CUDA driver API for the GPU tests, opened with dlopen (as the runtime
// does), so the suite builds everywhere and skips where no GPU is present.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gatejit::gputest {

using CUdeviceptr = unsigned long long;
using CUstream = void *;
using CUgraph = void *;
using CUgraphExec = void *;

struct Driver {
  int (*cuInit)(unsigned);
  int (*cuDeviceGetCount)(int *);
  int (*cuDeviceGet)(int *, int);
  int (*cuDeviceGetName)(char *, int, int);
  int (*cuDevicePrimaryCtxRetain)(void **, int);
  int (*cuCtxSetCurrent)(void *);
  int (*cuCtxSynchronize)();
  int (*cuMemAlloc)(CUdeviceptr *, size_t);
  int (*cuMemFree)(CUdeviceptr);
  int (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  int (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  int (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  int (*cuMemsetD16)(CUdeviceptr, unsigned short, size_t);
  int (*cuMemsetD32)(CUdeviceptr, unsigned, size_t);
  int (*cuStreamCreate)(CUstream *, unsigned);
  int (*cuStreamDestroy)(CUstream);
  int (*cuStreamSynchronize)(CUstream);
  int (*cuStreamBeginCapture)(CUstream, int);
  int (*cuStreamEndCapture)(CUstream, CUgraph *);
  int (*cuGraphInstantiate)(CUgraphExec *, CUgraph, unsigned long long);
  int (*cuGraphLaunch)(CUgraphExec, CUstream);
  int (*cuGraphDestroy)(CUgraph);
  int (*cuGraphExecDestroy)(CUgraphExec);
  int (*cuGetErrorString)(int, const char **);
};

// The driver with a current primary context on device 0, or null with
// `why` saying what is missing (no libcuda, no device).
const Driver *driver(std::string *why);
std::string device_name();

// Throws std::runtime_error naming the call when r != 0.
void check(int r, const char *what);

// A device allocation freed on destruction.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  void *ptr() const { return reinterpret_cast<void *>(ptr_); }
  CUdeviceptr dptr() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  void upload(const void *src, size_t bytes, size_t offset = 0);
  void download(void *dst, size_t bytes, size_t offset = 0) const;

 private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_;
};

}  // namespace gatejit::gputest
