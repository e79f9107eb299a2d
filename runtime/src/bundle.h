// Kernel bundles: many precompiled kernels, for several targets, in one file.
// A bundle is the deployment artifact: GATEJIT_BUNDLE_PATH names bundle files
// and the runtime serves kernels from them without compiling anything.
//
// Each entry's payload is exactly an encode_kernel_binary() blob (optionally
// zstd-compressed), so cache entries and bundle entries share one codec. The
// byte layout is in docs/bundle-format.md; the constants below are that layout.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gatejit/kernel_binary.h"
#include "gatejit/status.h"

namespace gatejit {

// The on-disk layout, shared by the reader, the writer, the tests and the
// fuzzer (which re-seals checksums to reach past them).
namespace bundle_format {
inline constexpr char kMagic[8] = {'G', 'J', 'B', 'U', 'N', 'D', 'L', 'E'};
// A reader refuses any other major version; it reads any minor version of its
// major (minor bumps only add things an older reader may ignore).
inline constexpr uint16_t kMajorVersion = 1;
inline constexpr uint16_t kMinorVersion = 0;

inline constexpr size_t kHeaderSize = 64;
inline constexpr size_t kHeaderMajorOffset = 8;        // u16
inline constexpr size_t kHeaderMinorOffset = 10;       // u16
inline constexpr size_t kHeaderFlagsOffset = 12;       // u32, must be 0 in 1.x
inline constexpr size_t kHeaderCountOffset = 16;       // u64 entry count
inline constexpr size_t kHeaderIndexOffset = 24;       // u64 index offset
inline constexpr size_t kHeaderIndexSizeOffset = 32;   // u64 index size
inline constexpr size_t kHeaderRecordSizeOffset = 40;  // u32 index record size
inline constexpr size_t kHeaderReservedOffset = 44;    // u32, 0
inline constexpr size_t kHeaderIndexSumOffset = 48;    // u64 XXH3-64 of the index
inline constexpr size_t kHeaderSumOffset = 56;         // u64 XXH3-64 of bytes [0, 56)

inline constexpr size_t kRecordSize = 128;             // what a 1.0 writer emits
inline constexpr size_t kRecordKeyOffset = 0;          // 32 bytes, lowercase hex
inline constexpr size_t kKeySize = 32;
inline constexpr size_t kRecordTargetOffset = 32;      // u32 target code
inline constexpr size_t kRecordFlagsOffset = 36;       // u32 entry flags
inline constexpr size_t kRecordPayloadOffset = 40;     // u64
inline constexpr size_t kRecordStoredSizeOffset = 48;  // u64
inline constexpr size_t kRecordRawSizeOffset = 56;     // u64
inline constexpr size_t kRecordSumOffset = 64;         // u64 XXH3-64 of the stored bytes
inline constexpr size_t kRecordTargetIdOffset = 72;    // 56 bytes, NUL-padded ASCII
inline constexpr size_t kTargetIdSize = 56;

inline constexpr uint32_t kEntryFlagZstd = 1u << 0;

// Stable on-disk target codes (independent of the C++ enum's order).
inline constexpr uint32_t kTargetGfx950 = 1;
inline constexpr uint32_t kTargetGfx942 = 2;
inline constexpr uint32_t kTargetSm90 = 3;

// An entry decodes to at most this many bytes: bounds what a hostile raw
// size can make the reader allocate.
inline constexpr uint64_t kMaxRawSize = uint64_t(1) << 28;  // 256 MiB
}  // namespace bundle_format

uint32_t bundle_target_code(Target t);
// The clang offload bundle entry id of a target, e.g.
// "hipv4-amdgcn-amd-amdhsa--gfx950", "cuda-nvptx64-nvidia-cuda--sm_90".
std::string bundle_target_id(Target t);
// Whether this build can write and read zstd-compressed entries.
bool bundle_zstd_available();

struct BundleEntryInfo {
  std::string key;        // contract_key() of the kernel's contract
  Target target = Target::kGfx950;
  std::string target_id;  // clang offload bundle spelling, as stored
  bool compressed = false;
  uint64_t offset = 0;       // of the stored payload in the file
  uint64_t stored_size = 0;  // bytes in the file
  uint64_t raw_size = 0;     // bytes of the encode_kernel_binary() blob
};

// Collects kernels and writes a bundle. Adding a key twice replaces the
// earlier kernel (last one wins), so a build can re-add a recompiled kernel.
class BundleWriter {
 public:
  // Rejects a kernel whose key is not 32 lowercase hex digits (a reader would
  // refuse the bundle) — nothing else about it is checked here.
  Status add(const KernelBinary &kb);
  size_t size() const { return entries_.size(); }

  // compress: store each entry zstd-compressed where that makes it smaller.
  // Without zstd support in this build, compress=true is an error.
  StatusOr<std::vector<uint8_t>> serialize(bool compress) const;
  // serialize(), then write_file_atomic(path, ..., 0644).
  Status write(const std::string &path, bool compress) const;

 private:
  struct Pending {
    std::string key;
    Target target;
    std::vector<uint8_t> blob;  // encode_kernel_binary()
  };
  std::vector<Pending> entries_;                 // in order of first add
  std::unordered_map<std::string, size_t> slot_;  // key -> entries_ index
};

// A bundle opened for reading. The header and index are checked at open;
// each entry is checked, decompressed and decoded when it is found. Read-only
// after open: find() may be called from many threads at once.
class Bundle {
 public:
  static StatusOr<std::unique_ptr<Bundle>> open(const std::string &path);
  // `name` stands for the file in error messages.
  static StatusOr<std::unique_ptr<Bundle>> from_bytes(std::vector<uint8_t> bytes, std::string name);

  const std::string &path() const { return name_; }
  size_t size() const { return entries_.size(); }
  std::vector<BundleEntryInfo> entries() const { return entries_; }
  bool contains(const std::string &contract_key) const { return by_key_.count(contract_key) != 0; }
  // kNotFound when absent; kCorrupt when the entry fails its checksum, does
  // not decode, or holds a kernel for another key or target; kUnsupported
  // when it is compressed and this build has no zstd.
  StatusOr<KernelBinary> find(const std::string &contract_key) const;

 private:
  Bundle() = default;
  Status parse();

  std::string name_;
  std::vector<uint8_t> bytes_;
  std::vector<BundleEntryInfo> entries_;
  std::vector<uint32_t> flags_;      // raw entry flags, parallel to entries_
  std::vector<uint64_t> checksums_;  // parallel to entries_
  std::unordered_map<std::string, size_t> by_key_;
};

}  // namespace gatejit
