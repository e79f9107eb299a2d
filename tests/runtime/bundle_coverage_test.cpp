// Issue 19, point 8: every byte of a bundle lies under a checksum (nothing
// trailing, no gap), and a record's two spellings of its target agree.
#include <gtest/gtest.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstring>

#include "bundle.h"
#include "gatejit/contract.h"

namespace gatejit {
namespace {

namespace bf = bundle_format;

KernelBinary kernel_for(Target target, int64_t n) {
  Contract c;
  c.target = target;
  c.n = n;
  c.k = 1024;
  auto norm = normalize(c);
  EXPECT_TRUE(norm.ok()) << norm.status().to_string();
  KernelBinary kb;
  kb.key = contract_key(*norm);
  kb.contract_text = canonical_text(*norm);
  kb.target = target;
  kb.format = target_is_amdgpu(target) ? BinaryFormat::kHsaco : BinaryFormat::kPtx;
  kb.symbol = "k" + std::to_string(n);
  kb.geometry = {256, 64, false, 0u, 1u};
  kb.toolchain = "tc";
  kb.report_json = "{}";
  kb.code.assign(64, uint8_t(n));
  return kb;
}

std::vector<uint8_t> two_kernel_bundle() {
  BundleWriter w;
  EXPECT_TRUE(w.add(kernel_for(Target::kGfx950, 512)).ok());
  EXPECT_TRUE(w.add(kernel_for(Target::kSm90, 256)).ok());
  auto bytes = w.serialize(false);
  EXPECT_TRUE(bytes.ok());
  return *bytes;
}

uint64_t u64_at(const std::vector<uint8_t> &b, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(b[at + i]) << (8 * i);
  return v;
}
void put_u64_at(std::vector<uint8_t> &b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = uint8_t(v >> (8 * i));
}
size_t record_at(size_t i) { return bf::kHeaderSize + i * bf::kRecordSize; }

// Index and header checksums recomputed after an edit, so the reader's
// structural checks are what refuse it.
void reseal_sums(std::vector<uint8_t> &b) {
  const uint64_t off = u64_at(b, bf::kHeaderIndexOffset), size = u64_at(b, bf::kHeaderIndexSizeOffset);
  put_u64_at(b, bf::kHeaderIndexSumOffset, XXH3_64bits(b.data() + off, size));
  put_u64_at(b, bf::kHeaderSumOffset, XXH3_64bits(b.data(), bf::kHeaderSumOffset));
}

std::string open_error(std::vector<uint8_t> b) {
  auto r = Bundle::from_bytes(std::move(b), "cover.gjb");
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  return r.status().message();
}

TEST(BundleCoverage, WriterOutputOpens) { EXPECT_EQ(open_error(two_kernel_bundle()), ""); }

TEST(BundleCoverage, TrailingBytesAreRefused) {
  for (size_t extra : {1, 7, 4096}) {
    auto b = two_kernel_bundle();
    b.insert(b.end(), extra, 0x5a);
    EXPECT_NE(open_error(b).find("lie in no entry, so no checksum covers them"), std::string::npos) << extra;
  }
}

TEST(BundleCoverage, GapBetweenPayloadsIsRefused) {
  auto b = two_kernel_bundle();
  // Move the second payload 16 bytes on, leaving a gap no checksum covers.
  const size_t rec = record_at(1) + bf::kRecordPayloadOffset;
  const uint64_t off = u64_at(b, rec), size = u64_at(b, record_at(1) + bf::kRecordStoredSizeOffset);
  std::vector<uint8_t> payload(b.begin() + off, b.begin() + off + size);
  b.resize(off);
  b.insert(b.end(), 16, 0);
  b.insert(b.end(), payload.begin(), payload.end());
  put_u64_at(b, rec, off + 16);
  reseal_sums(b);
  EXPECT_NE(open_error(b).find("bytes [" + std::to_string(off) + ", " + std::to_string(off + 16) + ") lie in no entry"),
            std::string::npos)
      << open_error(b);
}

TEST(BundleCoverage, TargetIdWithoutTerminatorIsRefused) {
  auto b = two_kernel_bundle();
  std::memset(b.data() + record_at(0) + bf::kRecordTargetIdOffset, 'x', bf::kTargetIdSize);
  reseal_sums(b);
  EXPECT_NE(open_error(b).find("without a NUL terminator"), std::string::npos) << open_error(b);
}

TEST(BundleCoverage, TargetIdMustMatchTargetCode) {
  auto b = two_kernel_bundle();
  // Record 0 is the gfx950 kernel; give it gfx942's id.
  const std::string other = bundle_target_id(Target::kGfx942);
  uint8_t *id = b.data() + record_at(0) + bf::kRecordTargetIdOffset;
  std::memset(id, 0, bf::kTargetIdSize);
  std::memcpy(id, other.data(), other.size());
  reseal_sums(b);
  const std::string e = open_error(b);
  EXPECT_NE(e.find("does not match target code 1"), std::string::npos) << e;
  EXPECT_NE(e.find(bundle_target_id(Target::kGfx950)), std::string::npos) << e;
}

}  // namespace
}  // namespace gatejit
