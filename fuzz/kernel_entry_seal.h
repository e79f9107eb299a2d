// The checksum that seals a kernel entry (a disk-cache entry, or a bundle's
// uncompressed payload; kernel_binary.cpp): the XXH3-64 of every byte before
// it, in the entry's last 8 bytes, little-endian. The fuzzers reseal what
// they mutate, so that the reader gets past the checksum to the fields.
#pragma once

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gatejit::fuzz {

inline bool is_kernel_entry(const uint8_t *entry, size_t size) {
  return size >= 16 && std::memcmp(entry, "GJKB", 4) == 0;
}

inline void seal_kernel_entry(uint8_t *entry, size_t size) {
  const uint64_t sum = XXH3_64bits(entry, size - 8);
  for (int i = 0; i < 8; ++i) entry[size - 8 + i] = uint8_t(sum >> (8 * i));
}

}  // namespace gatejit::fuzz
