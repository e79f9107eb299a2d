#include "bundle.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#if GATEJIT_HAVE_ZSTD
#include <zstd.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include "file_io.h"
#include "input_echo.h"
#include "input_limits.h"
#include "log.h"

namespace gatejit {
namespace {

namespace bf = bundle_format;

#if GATEJIT_HAVE_ZSTD
// Bundles are built once and read many times, and zstd decompression speed
// does not depend on the level: spend the time at build.
constexpr int kZstdLevel = 19;
#endif
// Bounds a hostile record size; 1.x records are 128 bytes.
constexpr uint64_t kMaxRecordSize = 4096;

void put_u16(uint8_t *p, uint16_t v) {
  for (int i = 0; i < 2; ++i) p[i] = uint8_t(v >> (8 * i));
}
void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
// Callers have checked that [p, p + width) lies inside the buffer.
uint16_t get_u16(const uint8_t *p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

bool is_key(std::string_view s) {
  if (s.size() != bf::kKeySize) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool target_from_code(uint32_t code, Target &t) {
  switch (code) {
    case bf::kTargetGfx950: t = Target::kGfx950; return true;
    case bf::kTargetGfx942: t = Target::kGfx942; return true;
    case bf::kTargetSm90: t = Target::kSm90; return true;
  }
  return false;
}

// [offset, offset + size) lies inside [0, limit), without overflow.
bool in_range(uint64_t offset, uint64_t size, uint64_t limit) { return offset <= limit && size <= limit - offset; }

bool overlaps(uint64_t a_off, uint64_t a_size, uint64_t b_off, uint64_t b_size) {
  // Both ranges are already known to be in range, so the sums cannot overflow.
  return a_off < b_off + b_size && b_off < a_off + a_size;
}

}  // namespace

uint32_t bundle_target_code(Target t) {
  switch (t) {
    case Target::kGfx950: return bf::kTargetGfx950;
    case Target::kGfx942: return bf::kTargetGfx942;
    case Target::kSm90: return bf::kTargetSm90;
  }
  return 0;
}

std::string bundle_target_id(Target t) {
  // <offload kind>-<triple with 4 components>-<processor>, as clang spells it.
  return std::string(target_is_amdgpu(t) ? "hipv4-" : "cuda-") + target_triple_id(t);
}

bool bundle_zstd_available() {
#if GATEJIT_HAVE_ZSTD
  return true;
#else
  return false;
#endif
}

// ---------------------------------------------------------------- writer

Status BundleWriter::add(const KernelBinary &kb) {
  if (!is_key(kb.key))
    return invalid_argument("bundle: kernel key '" + kb.key + "' is not a contract key (32 lowercase hex digits)");
  Pending p{kb.key, kb.target, encode_kernel_binary(kb)};
  auto [it, inserted] = slot_.emplace(kb.key, entries_.size());
  if (inserted)
    entries_.push_back(std::move(p));
  else
    entries_[it->second] = std::move(p);  // last one wins
  return Status::Ok();
}

StatusOr<std::vector<uint8_t>> BundleWriter::serialize(bool compress) const {
#if !GATEJIT_HAVE_ZSTD
  if (compress) return unsupported("bundle: compression was requested, but this build has no zstd support");
#endif
  // Sorted by (target, key): the bytes do not depend on the order of add().
  std::vector<const Pending *> order;
  order.reserve(entries_.size());
  for (const Pending &p : entries_) order.push_back(&p);
  std::sort(order.begin(), order.end(), [](const Pending *a, const Pending *b) {
    const uint32_t ta = bundle_target_code(a->target), tb = bundle_target_code(b->target);
    return ta != tb ? ta < tb : a->key < b->key;
  });

  const uint64_t index_size = uint64_t(order.size()) * bf::kRecordSize;
  std::vector<uint8_t> out(bf::kHeaderSize + index_size, 0);
  for (size_t i = 0; i < order.size(); ++i) {
    const Pending &p = *order[i];
    std::span<const uint8_t> stored(p.blob);
    uint32_t flags = 0;
#if GATEJIT_HAVE_ZSTD
    std::vector<uint8_t> packed;
    if (compress) {
      packed.resize(ZSTD_compressBound(p.blob.size()));
      const size_t n = ZSTD_compress(packed.data(), packed.size(), p.blob.data(), p.blob.size(), kZstdLevel);
      if (ZSTD_isError(n))
        return internal_error("bundle: zstd failed on entry " + p.key + ": " + ZSTD_getErrorName(n));
      // Store raw where zstd does not help: no decompression cost for nothing.
      if (n < p.blob.size()) {
        packed.resize(n);
        stored = packed;
        flags |= bf::kEntryFlagZstd;
      }
    }
#endif
    const uint64_t offset = out.size();
    out.insert(out.end(), stored.begin(), stored.end());

    uint8_t *rec = out.data() + bf::kHeaderSize + i * bf::kRecordSize;
    std::memcpy(rec + bf::kRecordKeyOffset, p.key.data(), bf::kKeySize);
    put_u32(rec + bf::kRecordTargetOffset, bundle_target_code(p.target));
    put_u32(rec + bf::kRecordFlagsOffset, flags);
    put_u64(rec + bf::kRecordPayloadOffset, offset);
    put_u64(rec + bf::kRecordStoredSizeOffset, stored.size());
    put_u64(rec + bf::kRecordRawSizeOffset, p.blob.size());
    put_u64(rec + bf::kRecordSumOffset, XXH3_64bits(stored.data(), stored.size()));
    const std::string id = bundle_target_id(p.target);
    std::memcpy(rec + bf::kRecordTargetIdOffset, id.data(), std::min(id.size(), bf::kTargetIdSize));
  }

  uint8_t *h = out.data();
  std::memcpy(h, bf::kMagic, sizeof bf::kMagic);
  put_u16(h + bf::kHeaderMajorOffset, bf::kMajorVersion);
  put_u16(h + bf::kHeaderMinorOffset, bf::kMinorVersion);
  put_u32(h + bf::kHeaderFlagsOffset, 0);
  put_u64(h + bf::kHeaderCountOffset, order.size());
  put_u64(h + bf::kHeaderIndexOffset, bf::kHeaderSize);
  put_u64(h + bf::kHeaderIndexSizeOffset, index_size);
  put_u32(h + bf::kHeaderRecordSizeOffset, bf::kRecordSize);
  put_u32(h + bf::kHeaderReservedOffset, 0);
  put_u64(h + bf::kHeaderIndexSumOffset, XXH3_64bits(out.data() + bf::kHeaderSize, index_size));
  put_u64(h + bf::kHeaderSumOffset, XXH3_64bits(h, bf::kHeaderSumOffset));
  return out;
}

Status BundleWriter::write(const std::string &path, bool compress) const {
  auto bytes = serialize(compress);
  if (!bytes.ok()) return Status(bytes.status().code(), path + ": " + bytes.status().message());
  // A deployment artifact: readable by the services that load it.
  GATEJIT_RETURN_IF_ERROR(write_file_atomic(path, *bytes, 0644));
  log::info("bundle " + path + ": wrote " + std::to_string(entries_.size()) + " entries, " +
            std::to_string(bytes->size()) + " bytes");
  return Status::Ok();
}

// ---------------------------------------------------------------- reader

StatusOr<std::unique_ptr<Bundle>> Bundle::open(const std::string &path) {
  auto bytes = read_file(path, limits::kBundleBytes);
  if (!bytes.ok()) return Status(bytes.status().code(), "bundle " + bytes.status().message());
  return from_bytes(std::move(*bytes), path);
}

StatusOr<std::unique_ptr<Bundle>> Bundle::from_bytes(std::vector<uint8_t> bytes, std::string name) {
  std::unique_ptr<Bundle> b(new Bundle());
  b->name_ = std::move(name);
  b->bytes_ = std::move(bytes);
  GATEJIT_RETURN_IF_ERROR(b->parse());
  log::debug("bundle " + b->name_ + ": opened, " + std::to_string(b->entries_.size()) + " entries");
  return b;
}

Status Bundle::parse() {
  const std::string where = "bundle " + escape_input(name_) + ": ";
  const uint8_t *d = bytes_.data();
  const uint64_t size = bytes_.size();

  // Header: magic and version first, since a newer major version may lay out
  // (and checksum) the rest of its header differently.
  if (size == 0) return corrupt(where + "the file is empty");
  if (size < sizeof bf::kMagic || std::memcmp(d, bf::kMagic, sizeof bf::kMagic) != 0)
    return corrupt(where + "not a gatejit bundle (the file does not start with 'GJBUNDLE')");
  if (size < bf::kHeaderSize)
    return corrupt(where + "truncated: " + std::to_string(size) + " bytes is shorter than the " +
                   std::to_string(bf::kHeaderSize) + "-byte header");
  const uint16_t major = get_u16(d + bf::kHeaderMajorOffset), minor = get_u16(d + bf::kHeaderMinorOffset);
  const std::string version = std::to_string(major) + "." + std::to_string(minor);
  if (major > bf::kMajorVersion)
    return corrupt(where + "format version " + version + " is newer than this build reads (" +
                   std::to_string(bf::kMajorVersion) + ".x); upgrade gatejit or rebuild the bundle");
  if (major < bf::kMajorVersion) return corrupt(where + "format version " + version + " is not a valid version");
  if (XXH3_64bits(d, bf::kHeaderSumOffset) != get_u64(d + bf::kHeaderSumOffset))
    return corrupt(where + "header checksum mismatch");
  const uint32_t flags = get_u32(d + bf::kHeaderFlagsOffset);
  if (flags != 0) return corrupt(where + "header flags " + hex(flags) + " are not understood by this reader");

  // Index: in the file, after the header, exactly count records.
  const uint64_t count = get_u64(d + bf::kHeaderCountOffset);
  const uint64_t index_off = get_u64(d + bf::kHeaderIndexOffset);
  const uint64_t index_size = get_u64(d + bf::kHeaderIndexSizeOffset);
  const uint64_t record_size = get_u32(d + bf::kHeaderRecordSizeOffset);
  if (record_size < bf::kRecordSize || record_size > kMaxRecordSize)
    return corrupt(where + "index record size " + std::to_string(record_size) + " is outside [" +
                   std::to_string(bf::kRecordSize) + ", " + std::to_string(kMaxRecordSize) + "]");
  if (index_off < bf::kHeaderSize || !in_range(index_off, index_size, size))
    return corrupt(where + "index [" + std::to_string(index_off) + ", +" + std::to_string(index_size) +
                   ") lies outside the file (" + std::to_string(size) + " bytes) or overlaps the header");
  // Divide rather than multiply: count * record_size may overflow.
  if (index_size % record_size != 0 || index_size / record_size != count)
    return corrupt(where + "entry count " + std::to_string(count) + " does not match the index size " +
                   std::to_string(index_size) + " (" + std::to_string(record_size) + " bytes per entry)");
  if (XXH3_64bits(d + index_off, index_size) != get_u64(d + bf::kHeaderIndexSumOffset))
    return corrupt(where + "index checksum mismatch");

  struct Range {
    uint64_t off, size;
    size_t record;
  };
  std::vector<Range> ranges;
  ranges.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t *rec = d + index_off + i * record_size;
    const std::string key(reinterpret_cast<const char *>(rec + bf::kRecordKeyOffset), bf::kKeySize);
    const std::string what = where + "entry " + std::to_string(i);
    if (!is_key(key)) return corrupt(what + ": key is not 32 lowercase hex digits");
    const std::string entry = what + " (" + key + ")";

    BundleEntryInfo info;
    info.key = key;
    const uint32_t code = get_u32(rec + bf::kRecordTargetOffset);
    const uint32_t eflags = get_u32(rec + bf::kRecordFlagsOffset);
    info.offset = get_u64(rec + bf::kRecordPayloadOffset);
    info.stored_size = get_u64(rec + bf::kRecordStoredSizeOffset);
    info.raw_size = get_u64(rec + bf::kRecordRawSizeOffset);
    info.compressed = (eflags & bf::kEntryFlagZstd) != 0;

    const char *id = reinterpret_cast<const char *>(rec + bf::kRecordTargetIdOffset);
    const size_t id_len = strnlen(id, bf::kTargetIdSize);
    if (id_len == bf::kTargetIdSize)
      return corrupt(entry + ": target id fills all " + std::to_string(bf::kTargetIdSize) +
                     " bytes without a NUL terminator");
    for (size_t j = 0; j < bf::kTargetIdSize; ++j) {
      const char c = id[j];
      if (j < id_len ? (c < 0x21 || c > 0x7e) : c != 0)
        return corrupt(entry + ": target id is not NUL-padded printable ASCII");
    }
    info.target_id.assign(id, id_len);

    if (info.stored_size == 0) return corrupt(entry + ": stored size is 0");
    if (info.offset < bf::kHeaderSize || !in_range(info.offset, info.stored_size, size))
      return corrupt(entry + ": payload [" + std::to_string(info.offset) + ", +" + std::to_string(info.stored_size) +
                     ") lies outside the file (" + std::to_string(size) + " bytes) or overlaps the header");
    if (overlaps(info.offset, info.stored_size, index_off, index_size))
      return corrupt(entry + ": payload overlaps the index");
    if (info.compressed ? (info.raw_size == 0 || info.raw_size > bf::kMaxRawSize) : info.raw_size != info.stored_size)
      return corrupt(entry + ": raw size " + std::to_string(info.raw_size) + " is not valid for stored size " +
                     std::to_string(info.stored_size));
    ranges.push_back({info.offset, info.stored_size, size_t(i)});

    // A target this build does not know (added by a newer writer) cannot be
    // asked for, since the target is part of every key: skip it.
    if (!target_from_code(code, info.target)) {
      log::debug(entry + ": skipped, unknown target code " + std::to_string(code) + " ('" + info.target_id + "')");
      continue;
    }
    // The two spellings of the target must name the same one.
    if (const std::string expected = bundle_target_id(info.target); info.target_id != expected)
      return corrupt(entry + ": target id '" + info.target_id + "' does not match target code " +
                     std::to_string(code) + " ('" + expected + "')");
    if (!by_key_.emplace(key, entries_.size()).second) return corrupt(entry + ": duplicate key");
    entries_.push_back(std::move(info));
    flags_.push_back(eflags);
    checksums_.push_back(get_u64(rec + bf::kRecordSumOffset));
  }

  // Every byte after the header lies in the index or in exactly one payload,
  // so every byte is under a checksum: no gap, no overlap, nothing trailing.
  constexpr size_t kIndex = size_t(-1);
  if (index_size) ranges.push_back({index_off, index_size, kIndex});
  std::sort(ranges.begin(), ranges.end(), [](const Range &a, const Range &b) { return a.off < b.off; });
  const auto name = [](const Range &r) {
    return r.record == kIndex ? std::string("the index") : "entry " + std::to_string(r.record);
  };
  uint64_t covered = bf::kHeaderSize;
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].off < covered)
      return corrupt(where + "the payloads of " + name(ranges[i - 1]) + " and " + name(ranges[i]) + " overlap");
    if (ranges[i].off > covered)
      return corrupt(where + "bytes [" + std::to_string(covered) + ", " + std::to_string(ranges[i].off) +
                     ") lie in no entry, so no checksum covers them");
    covered = ranges[i].off + ranges[i].size;
  }
  if (covered != size)
    return corrupt(where + std::to_string(size - covered) + " bytes after offset " + std::to_string(covered) +
                   " lie in no entry, so no checksum covers them");
  return Status::Ok();
}

StatusOr<KernelBinary> Bundle::find(const std::string &contract_key) const {
  auto it = by_key_.find(contract_key);
  if (it == by_key_.end())
    return not_found("bundle " + escape_input(name_) + ": no entry for contract key " + escape_input(contract_key, 64));
  const size_t i = it->second;
  const BundleEntryInfo &e = entries_[i];
  const std::string entry = "bundle " + escape_input(name_) + ": entry " + e.key + " (" + target_name(e.target) + ")";

  // Offsets and sizes were checked against the file at open.
  const std::span<const uint8_t> stored(bytes_.data() + e.offset, size_t(e.stored_size));
  if (XXH3_64bits(stored.data(), stored.size()) != checksums_[i]) return corrupt(entry + ": checksum mismatch");
  if ((flags_[i] & ~bf::kEntryFlagZstd) != 0)
    return unsupported(entry + ": entry flags " + hex(flags_[i]) + " are not understood by this build");

  std::span<const uint8_t> raw = stored;
#if GATEJIT_HAVE_ZSTD
  std::vector<uint8_t> unpacked;
  if (e.compressed) {
    // Exactly one frame that declares exactly raw_size bytes.
    const unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
    if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN || declared != e.raw_size)
      return corrupt(entry + ": not a zstd frame of " + std::to_string(e.raw_size) + " bytes");
    const size_t frame = ZSTD_findFrameCompressedSize(stored.data(), stored.size());
    if (ZSTD_isError(frame) || frame != stored.size())
      return corrupt(entry + ": zstd frame does not span the stored bytes");
    unpacked.resize(size_t(e.raw_size));
    const size_t n = ZSTD_decompress(unpacked.data(), unpacked.size(), stored.data(), stored.size());
    if (ZSTD_isError(n)) return corrupt(entry + ": zstd: " + ZSTD_getErrorName(n));
    if (n != e.raw_size) return corrupt(entry + ": decompressed to " + std::to_string(n) + " bytes, not the raw size");
    raw = unpacked;
  }
#else
  if (e.compressed)
    return unsupported(entry + ": compressed with zstd, but this build has no zstd support");
#endif

  auto kb = decode_kernel_binary(raw);
  if (!kb.ok()) return corrupt(entry + ": " + kb.status().message());
  // The index must not route a key to another contract's kernel.
  if (kb->key != e.key || kb->target != e.target)
    return corrupt(entry + ": holds the kernel for " + kb->key + " (" + target_name(kb->target) + ")");
  return kb;
}

}  // namespace gatejit
