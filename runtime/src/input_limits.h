// The bounds on everything gatejit reads from outside: one place, so the
// readers, the tests and docs/runtime.md agree. Past a bound the reader stops
// and reports an error naming the input; it never allocates or recurses more.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gatejit::limits {

// A contract (--contract FILE, the C API's contract JSON): a dozen keys.
inline constexpr uint64_t kContractJsonBytes = uint64_t(1) << 20;  // 1 MiB
// A precompile spec: a list of contracts.
inline constexpr uint64_t kSpecBytes = uint64_t(16) << 20;  // 16 MiB
// The contracts of one precompile spec, counted as the spec expands them
// (each m value of each item, once per target, before duplicates merge):
// a deployment bundle holds tens to hundreds, and past this a spec is a
// mistake that would compile for hours (docs/runtime.md says why this many).
inline constexpr size_t kPrecompileContracts = 16384;
// Nesting of any JSON input (a contract is 2 levels deep, a spec 4).
inline constexpr size_t kJsonDepth = 64;
// A bundle file (read whole at open).
inline constexpr uint64_t kBundleBytes = uint64_t(4) << 30;  // 4 GiB
// A code object given to `gatejit inspect`.
inline constexpr uint64_t kCodeObjectBytes = uint64_t(256) << 20;  // 256 MiB
// One disk-cache entry (one kernel).
inline constexpr uint64_t kCacheEntryBytes = uint64_t(1) << 30;  // 1 GiB
// A compiler's toolchain fingerprint (the cache's toolchain record, what a
// JIT library reports): one line of printable text.
inline constexpr size_t kToolchainBytes = 4096;
// An environment variable's value (paths, byte counts, flags).
inline constexpr size_t kEnvValueBytes = 4096;

}  // namespace gatejit::limits
