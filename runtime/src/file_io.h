// Whole-file reads and crash-safe writes, shared by the disk cache, bundles
// and the tools. A write goes to a unique temporary file in the same
// directory, is flushed, then renamed over the target: readers see the old
// file or the new one, never a partial one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gatejit/status.h"

namespace gatejit {

// Reads at most `max_bytes` (a larger file is an error, not a truncation).
StatusOr<std::vector<uint8_t>> read_file(const std::string &path, uint64_t max_bytes = uint64_t(1) << 32);

// Writes `bytes` to `path` atomically with permissions `mode` (before umask).
// On any failure the temporary file is removed and `path` is untouched.
Status write_file_atomic(const std::string &path, std::span<const uint8_t> bytes, unsigned mode = 0600);

}  // namespace gatejit
