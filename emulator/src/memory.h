// Global memory as the emulator sees it: host memory, but only the ranges
// the device knows (its allocations, caller-registered host buffers, loaded
// code object images, kernarg buffers). In cross-XCD mode every access goes
// through one of eight XCD-private L2 caches that follow the CDNA3/CDNA4
// memory model (LLVM AMDGPUUsage, "Memory Model GFX942"): a plain store stays
// in its XCD's L2 until a write-back (buffer_wbl2 sc1) or the kernel's end;
// a plain load may hit a stale line until an invalidate (buffer_inv sc1);
// sc1 (agent/system scope) loads read memory, sc1 stores write through, and
// device-scope atomics (sc1) act on memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace gatejit::emulator {

class GlobalMemory {
 public:
  void add(uint64_t base, uint64_t bytes, std::string what);
  void remove(uint64_t base);
  // The host bytes of [addr, addr + bytes), or nullptr when they do not lie
  // within one known range.
  uint8_t *find(uint64_t addr, uint64_t bytes) const {
    if (last_ && addr >= last_->base && addr + bytes <= last_->base + last_->bytes && addr + bytes >= addr)
      return reinterpret_cast<uint8_t *>(addr);
    return find_slow(addr, bytes);
  }
  // "no known range holds [addr, addr + bytes); nearest: weight buffer ..."
  std::string describe_miss(uint64_t addr, uint64_t bytes) const;

 private:
  struct Range {
    uint64_t base, bytes;
    std::string what;
  };
  uint8_t *find_slow(uint64_t addr, uint64_t bytes) const;
  std::map<uint64_t, Range> ranges_;
  mutable const Range *last_ = nullptr;
};

// How an access is scoped by its cache-policy bits.
struct AccessScope {
  bool sc0 = false, sc1 = false, nt = false;
  bool device() const { return sc1; }  // agent or system scope: coherent across XCDs
};

// Who stored bytes: the wave (launch index + 1) and its instruction.
struct Writer {
  uint32_t wave = 0, inst = 0;
  int xcd = -1;
};

// A load that sees an old value under the memory model: the bytes it reads
// were stored by another XCD that has not released them (they sit dirty in
// that XCD's L2), or were released to memory after this XCD's L2 took its
// copy and no acquire (buffer_inv sc1) dropped it.
struct StaleRead {
  bool found = false;
  bool unreleased = false;  // true: the writer's XCD still holds them; false: this XCD's copy is old
  uint64_t addr = 0;
  Writer writer;
};

class XcdCaches {
 public:
  static constexpr uint64_t kLine = 128;  // L2 line bytes (MI300/MI355X)
  explicit XcdCaches(int xcds) : l2_(size_t(xcds)) {}
  int xcds() const { return int(l2_.size()); }

  StaleRead load(int xcd, uint8_t *host, uint64_t addr, void *dst, uint32_t bytes, AccessScope scope);
  void store(int xcd, uint8_t *host, uint64_t addr, const void *src, uint32_t bytes, AccessScope scope, Writer who);
  // Read-modify-write of `bytes` (4 or 8) at addr: `op` maps the old value to
  // the new one; returns the old value. Device scope (sc1) acts on memory.
  template <class Op>
  uint64_t atomic(int xcd, uint8_t *host, uint64_t addr, uint32_t bytes, AccessScope scope, Writer who, Op op,
                  StaleRead *stale) {
    uint64_t old = 0;
    if (scope.device()) {
      // At memory: this XCD's own dirty bytes of the line reach memory first
      // (its L2 orders them before the atomic), its copy is refreshed after.
      write_back_line(xcd, host - (addr & (kLine - 1)), addr & ~(kLine - 1));
      *stale = unreleased_elsewhere(xcd, addr, bytes);
      std::memcpy(&old, host, bytes);
      const uint64_t nv = op(old);
      std::memcpy(host, &nv, bytes);
      memory_writer_[addr & ~(kLine - 1)] = who;
      refresh(xcd, host, addr, bytes);
    } else {
      *stale = load(xcd, host, addr, &old, bytes, scope);
      const uint64_t nv = op(old);
      store(xcd, host, addr, &nv, bytes, scope, who);
    }
    return old;
  }
  // buffer_wbl2 sc1: this XCD's dirty bytes reach memory.
  void write_back(int xcd);
  // buffer_inv sc1: this XCD's clean lines are dropped (dirty bytes stay).
  void invalidate(int xcd);
  // The kernel's end: every XCD written back and emptied.
  void flush_all();

 private:
  struct Line {
    uint8_t data[kLine];
    uint64_t dirty[2] = {0, 0};  // a bit per byte
    uint8_t *host = nullptr;     // memory of the line's first byte
    Writer writer;               // the last store into it
  };
  Line &line(int xcd, uint8_t *line_host, uint64_t line_addr, bool fill, bool *filled = nullptr);
  void write_back_line(int xcd, uint8_t *line_host, uint64_t line_addr);
  void refresh(int xcd, uint8_t *host, uint64_t addr, uint32_t bytes);
  StaleRead unreleased_elsewhere(int xcd, uint64_t addr, uint32_t bytes) const;
  std::vector<std::unordered_map<uint64_t, Line>> l2_;
  std::unordered_map<uint64_t, uint8_t> dirty_xcds_;    // line -> XCDs holding dirty bytes of it
  std::unordered_map<uint64_t, Writer> memory_writer_;  // line -> the last store that reached memory
};

}  // namespace gatejit::emulator
