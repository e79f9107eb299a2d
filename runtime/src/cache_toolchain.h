// The toolchain a disk cache was last written by, so a runtime without the
// compiler can read the cache (docs/runtime.md, "Runtime-only builds and the
// disk cache"). Every JIT compile that writes an entry records its compiler's
// fingerprint in <dir>/v1/toolchain; a runtime with no compiler attached looks
// entries up under that fingerprint and under no other, so an entry written
// by any other toolchain (a stale one) is never loaded. The trade-off: where
// two toolchains take turns writing one cache, a compiler-less runtime sees
// only the entries of the one that wrote last.
#pragma once

#include <string>

#include "disk_cache.h"

namespace gatejit {

// The recorded fingerprint; kNotFound when none is recorded. The file must be
// a regular file of ours, not group- or world-writable (like every entry);
// it is opened without blocking and its type checked before it is read, so a
// FIFO at the name is an error at once.
StatusOr<std::string> recorded_toolchain(const DiskCache &cache);

// Records `fingerprint` (atomically; a no-op when it is already recorded).
// Whatever else is at the name, a FIFO or a link included, is replaced.
Status record_toolchain(const DiskCache &cache, const std::string &fingerprint);

// <dir>/v1/toolchain
std::string toolchain_record_path(const DiskCache &cache);

}  // namespace gatejit
