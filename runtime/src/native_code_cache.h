// Machine code for PTX kernels, kept in the disk cache.
//
// The CUDA driver compiles PTX to machine code at every module load: 25 to
// 130 ms a kernel on the H200 unless the driver's own compute cache
// (~/.nv/ComputeCache, absent or off in many containers) already has it. So
// the runtime asks the driver for that machine code once (compile_native)
// and keeps it as a "cubin" entry of gatejit's disk cache, keyed by the PTX
// kernel's contract key and toolchain plus the backend's native tag (driver
// version and device): the ownership, checksum, atomic-write and eviction
// rules of every entry hold for it. A later process loads the cubin, no
// compile. Whatever fails on this path (no cache, a read-only cache, a driver
// without the linker) falls back to loading the PTX as before.
//
// Off unless GATEJIT_NATIVE_CODE=1: the driver's linker compiles PTX as
// relocatable code, and its machine code is not what cuModuleLoadData makes
// of the same PTX. Measured on the H200 (research/perf-notes.md): the
// decode mma kernels ran 17-23% slower from the linker's cubin (N = 1536,
// M = 1: 7.75 -> 9.54 µs), some forced gemv kernels faster. So the default
// keeps the driver's own compile (and its compute cache); the opt-in trades
// that for a warm start of about 1 ms without the driver's cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "device_backend.h"
#include "disk_cache.h"
#include "gatejit/kernel_binary.h"

namespace gatejit {

struct NativeCode {
  std::vector<uint8_t> code;  // what load_function gets: the cubin, or kb's own code
  // "cache hit" | "compiled, cached" | "compiled, not cached: <why>" |
  // "not native: <why>" (the driver compiles kb's code at load)
  std::string how;
};

// The toolchain string of the native entry made from `kb` with `tag`.
std::string native_toolchain(const KernelBinary &kb, const std::string &tag);

// The code to load for `kb` on `ordinal`: for a PTX kernel on a backend with
// native compilation, its cubin from `cache` (may be null) or freshly
// compiled (and then stored); otherwise kb.code. The runtime asks only when
// RuntimeOptions::native_code (GATEJIT_NATIVE_CODE=1) is on.
NativeCode native_code_for(DeviceBackend &backend, int ordinal, const KernelBinary &kb, DiskCache *cache);

}  // namespace gatejit
