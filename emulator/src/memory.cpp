#include "memory.h"

#include <cstring>

namespace gatejit::emulator {

void GlobalMemory::add(uint64_t base, uint64_t bytes, std::string what) {
  ranges_[base] = Range{base, bytes, std::move(what)};
  last_ = nullptr;
}

void GlobalMemory::remove(uint64_t base) {
  ranges_.erase(base);
  last_ = nullptr;
}

uint8_t *GlobalMemory::find_slow(uint64_t addr, uint64_t bytes) const {
  auto it = ranges_.upper_bound(addr);
  if (it == ranges_.begin()) return nullptr;
  --it;
  const Range &r = it->second;
  if (addr + bytes < addr || addr + bytes > r.base + r.bytes) return nullptr;
  last_ = &r;
  return reinterpret_cast<uint8_t *>(addr);
}

std::string GlobalMemory::describe_miss(uint64_t addr, uint64_t bytes) const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "address 0x%llx (%llu bytes) lies in no allocation", (unsigned long long)addr,
                (unsigned long long)bytes);
  std::string s = buf;
  auto it = ranges_.upper_bound(addr);
  if (it != ranges_.begin()) {
    --it;
    const Range &r = it->second;
    std::snprintf(buf, sizeof buf, "; nearest below: %s at 0x%llx, %llu bytes", r.what.c_str(),
                  (unsigned long long)r.base, (unsigned long long)r.bytes);
    s += buf;
  }
  return s;
}

XcdCaches::Line &XcdCaches::line(int xcd, uint8_t *line_host, uint64_t line_addr, bool fill, bool *filled) {
  auto &cache = l2_[size_t(xcd)];
  auto it = cache.find(line_addr);
  if (filled) *filled = it == cache.end();
  if (it != cache.end()) return it->second;
  Line &l = cache[line_addr];
  l.host = line_host;
  if (fill) std::memcpy(l.data, line_host, kLine);
  return l;
}

static inline bool is_dirty(const uint64_t d[2], uint32_t i) { return (d[i >> 6] >> (i & 63)) & 1; }

StaleRead XcdCaches::unreleased_elsewhere(int xcd, uint64_t addr, uint32_t bytes) const {
  StaleRead r;
  const uint64_t la = addr & ~(kLine - 1);
  auto d = dirty_xcds_.find(la);
  if (d == dirty_xcds_.end() || !(d->second & ~(1u << xcd))) return r;
  const uint32_t off = uint32_t(addr - la);
  for (int other = 0; other < xcds(); ++other) {
    if (other == xcd || !((d->second >> other) & 1)) continue;
    const auto &cache = l2_[size_t(other)];
    auto it = cache.find(la);
    if (it == cache.end()) continue;
    for (uint32_t i = off; i < off + bytes && i < kLine; ++i)
      if (is_dirty(it->second.dirty, i)) {
        r.found = r.unreleased = true;
        r.addr = la + i;
        r.writer = it->second.writer;
        r.writer.xcd = other;
        return r;
      }
  }
  return r;
}

StaleRead XcdCaches::load(int xcd, uint8_t *host, uint64_t addr, void *dst, uint32_t bytes, AccessScope scope) {
  StaleRead stale;
  auto *out = static_cast<uint8_t *>(dst);
  while (bytes) {
    const uint64_t la = addr & ~(kLine - 1);
    const uint32_t off = uint32_t(addr - la);
    const uint32_t n = std::min<uint32_t>(bytes, uint32_t(kLine) - off);
    uint8_t *lh = host - off;
    if (!stale.found) stale = unreleased_elsewhere(xcd, addr, n);
    if (scope.device()) {
      // Past the L2 to memory; this XCD's own unwritten stores stay visible to it.
      std::memcpy(out, host, n);
      auto &cache = l2_[size_t(xcd)];
      auto it = cache.find(la);
      if (it != cache.end())
        for (uint32_t i = 0; i < n; ++i)
          if (is_dirty(it->second.dirty, off + i)) out[i] = it->second.data[off + i];
    } else {
      bool filled = false;
      Line &l = line(xcd, lh, la, true, &filled);
      std::memcpy(out, l.data + off, n);
      // A copy older than memory: released by another XCD since it was taken.
      if (!filled && !stale.found)
        for (uint32_t i = 0; i < n; ++i)
          if (!is_dirty(l.dirty, off + i) && l.data[off + i] != host[i]) {
            stale.found = true;
            stale.addr = addr + i;
            auto w = memory_writer_.find(la);
            if (w != memory_writer_.end()) stale.writer = w->second;
            break;
          }
    }
    addr += n, host += n, out += n, bytes -= n;
  }
  return stale;
}

void XcdCaches::store(int xcd, uint8_t *host, uint64_t addr, const void *src, uint32_t bytes, AccessScope scope,
                      Writer who) {
  who.xcd = xcd;
  auto *in = static_cast<const uint8_t *>(src);
  while (bytes) {
    const uint64_t la = addr & ~(kLine - 1);
    const uint32_t off = uint32_t(addr - la);
    const uint32_t n = std::min<uint32_t>(bytes, uint32_t(kLine) - off);
    uint8_t *lh = host - off;
    if (scope.device()) {
      // Write-through: memory, and this XCD's copy if it has the line.
      std::memcpy(host, in, n);
      memory_writer_[la] = who;
      auto &cache = l2_[size_t(xcd)];
      auto it = cache.find(la);
      if (it != cache.end()) {
        std::memcpy(it->second.data + off, in, n);
        for (uint32_t i = 0; i < n; ++i) it->second.dirty[(off + i) >> 6] &= ~(1ull << ((off + i) & 63));
      }
    } else {
      Line &l = line(xcd, lh, la, true);
      std::memcpy(l.data + off, in, n);
      for (uint32_t i = 0; i < n; ++i) l.dirty[(off + i) >> 6] |= 1ull << ((off + i) & 63);
      l.writer = who;
      dirty_xcds_[la] |= uint8_t(1u << xcd);
    }
    addr += n, host += n, in += n, bytes -= n;
  }
}

void XcdCaches::write_back_line(int xcd, uint8_t *line_host, uint64_t line_addr) {
  auto &cache = l2_[size_t(xcd)];
  auto it = cache.find(line_addr);
  if (it == cache.end()) return;
  Line &l = it->second;
  if (!(l.dirty[0] | l.dirty[1])) return;
  for (uint32_t i = 0; i < kLine; ++i)
    if (is_dirty(l.dirty, i)) line_host[i] = l.data[i];
  l.dirty[0] = l.dirty[1] = 0;
  memory_writer_[line_addr] = l.writer;
  auto d = dirty_xcds_.find(line_addr);
  if (d != dirty_xcds_.end() && !(d->second &= uint8_t(~(1u << xcd)))) dirty_xcds_.erase(d);
}

void XcdCaches::refresh(int xcd, uint8_t *host, uint64_t addr, uint32_t bytes) {
  auto &cache = l2_[size_t(xcd)];
  auto it = cache.find(addr & ~(kLine - 1));
  if (it == cache.end()) return;
  const uint32_t off = uint32_t(addr & (kLine - 1));
  std::memcpy(it->second.data + off, host, std::min<uint32_t>(bytes, uint32_t(kLine) - off));
}

void XcdCaches::write_back(int xcd) {
  for (auto &[la, l] : l2_[size_t(xcd)]) write_back_line(xcd, l.host, la);
}

void XcdCaches::invalidate(int xcd) {
  auto &cache = l2_[size_t(xcd)];
  for (auto it = cache.begin(); it != cache.end();) {
    Line &l = it->second;
    if (!(l.dirty[0] | l.dirty[1])) {
      it = cache.erase(it);
      continue;
    }
    for (uint32_t i = 0; i < kLine; ++i)
      if (!is_dirty(l.dirty, i)) l.data[i] = l.host[i];
    ++it;
  }
}

void XcdCaches::flush_all() {
  for (int x = 0; x < xcds(); ++x) {
    write_back(x);
    l2_[size_t(x)].clear();
  }
  dirty_xcds_.clear();
}

}  // namespace gatejit::emulator
