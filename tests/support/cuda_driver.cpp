#include "cuda_driver.h"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>

namespace gatejit::gputest {
namespace {

Driver g_driver;
std::string g_why;
bool g_ok = false;

template <typename T>
bool load(void *lib, T &fp, const char *name) {
  fp = reinterpret_cast<T>(dlsym(lib, name));
  if (!fp) g_why = std::string("libcuda.so.1 has no ") + name;
  return fp != nullptr;
}

void open_driver() {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    g_why = std::string("no NVIDIA driver (libcuda.so.1: ") + dlerror() + ")";
    return;
  }
  Driver &d = g_driver;
  bool ok = load(lib, d.cuInit, "cuInit") && load(lib, d.cuDeviceGetCount, "cuDeviceGetCount") &&
            load(lib, d.cuDeviceGet, "cuDeviceGet") && load(lib, d.cuDeviceGetName, "cuDeviceGetName") &&
            load(lib, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
            load(lib, d.cuCtxSetCurrent, "cuCtxSetCurrent") && load(lib, d.cuCtxSynchronize, "cuCtxSynchronize") &&
            load(lib, d.cuMemAlloc, "cuMemAlloc_v2") && load(lib, d.cuMemFree, "cuMemFree_v2") &&
            load(lib, d.cuMemcpyHtoD, "cuMemcpyHtoD_v2") && load(lib, d.cuMemcpyDtoH, "cuMemcpyDtoH_v2") &&
            load(lib, d.cuMemsetD8, "cuMemsetD8_v2") && load(lib, d.cuMemsetD16, "cuMemsetD16_v2") && load(lib, d.cuMemsetD32, "cuMemsetD32_v2") &&
            load(lib, d.cuStreamCreate, "cuStreamCreate") && load(lib, d.cuStreamDestroy, "cuStreamDestroy_v2") &&
            load(lib, d.cuStreamSynchronize, "cuStreamSynchronize") &&
            load(lib, d.cuStreamBeginCapture, "cuStreamBeginCapture_v2") &&
            load(lib, d.cuStreamEndCapture, "cuStreamEndCapture") &&
            load(lib, d.cuGraphInstantiate, "cuGraphInstantiateWithFlags") &&
            load(lib, d.cuGraphLaunch, "cuGraphLaunch") && load(lib, d.cuGraphDestroy, "cuGraphDestroy") &&
            load(lib, d.cuGraphExecDestroy, "cuGraphExecDestroy") && load(lib, d.cuGetErrorString, "cuGetErrorString");
  if (!ok) return;
  int count = 0;
  if (d.cuInit(0) != 0 || d.cuDeviceGetCount(&count) != 0 || count == 0) {
    g_why = "the NVIDIA driver reports no usable GPU";
    return;
  }
  int dev = 0;
  void *ctx = nullptr;
  if (d.cuDeviceGet(&dev, 0) != 0 || d.cuDevicePrimaryCtxRetain(&ctx, dev) != 0 || d.cuCtxSetCurrent(ctx) != 0) {
    g_why = "cannot make device 0's primary context current";
    return;
  }
  g_ok = true;
}

}  // namespace

const Driver *driver(std::string *why) {
  static std::once_flag once;
  std::call_once(once, open_driver);
  if (!g_ok) {
    if (why) *why = g_why;
    return nullptr;
  }
  // Test threads other than the first need the context current too.
  void *ctx = nullptr;
  int dev = 0;
  g_driver.cuDeviceGet(&dev, 0);
  g_driver.cuDevicePrimaryCtxRetain(&ctx, dev);
  g_driver.cuCtxSetCurrent(ctx);
  return &g_driver;
}

std::string device_name() {
  const Driver *d = driver(nullptr);
  if (!d) return "none";
  char name[256] = {};
  d->cuDeviceGetName(name, sizeof name, 0);
  return name;
}

void check(int r, const char *what) {
  if (r == 0) return;
  const char *text = nullptr;
  g_driver.cuGetErrorString(r, &text);
  throw std::runtime_error(std::string(what) + " failed: CUDA error " + std::to_string(r) + " " + (text ? text : ""));
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) { check(g_driver.cuMemAlloc(&ptr_, bytes), "cuMemAlloc"); }
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) g_driver.cuMemFree(ptr_);
}
void DeviceBuffer::upload(const void *src, size_t bytes, size_t offset) {
  check(g_driver.cuMemcpyHtoD(ptr_ + offset, src, bytes), "cuMemcpyHtoD");
}
void DeviceBuffer::download(void *dst, size_t bytes, size_t offset) const {
  check(g_driver.cuMemcpyDtoH(dst, ptr_ + offset, bytes), "cuMemcpyDtoH");
}

}  // namespace gatejit::gputest
