// Bundle reader and writer: round trips through real files, and every kind of
// damaged bundle the reader must refuse (without reading out of bounds).
#include "bundle.h"
#include "bundle_extract.h"

#define XXH_INLINE_ALL
#include <xxhash.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "gatejit/contract.h"

namespace gatejit {
namespace {

namespace bf = bundle_format;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gatejit-bundle-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void write_plain(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
}

KernelBinary make_kernel(Target target, int64_t n, size_t code_size) {
  Contract c;
  c.target = target;
  c.n = n;
  c.k = 7168;
  auto norm = normalize(c);
  EXPECT_TRUE(norm.ok()) << norm.status().to_string();
  KernelBinary kb;
  kb.key = contract_key(*norm);
  kb.contract_text = canonical_text(*norm);
  kb.target = target;
  kb.format = target_is_amdgpu(target) ? BinaryFormat::kHsaco : BinaryFormat::kPtx;
  kb.symbol = "gatejit_gate_" + std::to_string(n);
  // Grid-y tiling for some, a K split (grid z) for others, a persistent
  // grid for some of the row-tiled ones without a split.
  kb.geometry = {256, 64, false, n % 3 == 0 ? 128u : 0u, n % 5 == 0 ? 4u : 1u};
  if (n % 3 == 0 && n % 5 != 0 && n % 2 == 0) kb.geometry.persistent_workgroups = 768;
  kb.toolchain = "test-toolchain";
  kb.report_json = R"({"vgprs": 32})";
  // Repetitive, so zstd has something to gain.
  for (size_t i = 0; i < code_size; ++i) kb.code.push_back(uint8_t("hsaco-body-"[i % 11] + n % 7));
  return kb;
}

std::vector<KernelBinary> sample_kernels() {
  std::vector<KernelBinary> v;
  for (Target t : {Target::kGfx950, Target::kGfx942, Target::kSm90})
    for (int64_t n : {1536, 4096}) v.push_back(make_kernel(t, n, 3000));
  return v;
}

// A bundle small enough to damage at every byte.
std::vector<KernelBinary> small_kernels() {
  return {make_kernel(Target::kGfx950, 512, 40), make_kernel(Target::kSm90, 256, 24)};
}

std::vector<uint8_t> serialize(const std::vector<KernelBinary> &kernels, bool compress = false) {
  BundleWriter w;
  for (const auto &kb : kernels) EXPECT_TRUE(w.add(kb).ok());
  auto bytes = w.serialize(compress);
  EXPECT_TRUE(bytes.ok()) << bytes.status().to_string();
  return bytes.ok() ? *bytes : std::vector<uint8_t>{};
}

void expect_same(const KernelBinary &a, const KernelBinary &b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.contract_text, b.contract_text);
  EXPECT_EQ(a.target, b.target);
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.symbol, b.symbol);
  EXPECT_EQ(a.geometry.block_x, b.geometry.block_x);
  EXPECT_EQ(a.geometry.n_per_block, b.geometry.n_per_block);
  EXPECT_EQ(a.geometry.grid_y_is_m, b.geometry.grid_y_is_m);
  EXPECT_EQ(a.geometry.m_per_block, b.geometry.m_per_block);
  EXPECT_EQ(a.geometry.k_blocks, b.geometry.k_blocks);
  EXPECT_EQ(a.geometry.shared_bytes, b.geometry.shared_bytes);
  EXPECT_EQ(a.geometry.persistent_workgroups, b.geometry.persistent_workgroups);
  EXPECT_EQ(a.toolchain, b.toolchain);
  EXPECT_EQ(a.report_json, b.report_json);
  EXPECT_EQ(a.code, b.code);
}

uint64_t get64(const std::vector<uint8_t> &b, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(b[at + i]) << (8 * i);
  return v;
}
void set64(std::vector<uint8_t> &b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = uint8_t(v >> (8 * i));
}
void set32(std::vector<uint8_t> &b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = uint8_t(v >> (8 * i));
}
void set16(std::vector<uint8_t> &b, size_t at, uint16_t v) {
  for (int i = 0; i < 2; ++i) b[at + i] = uint8_t(v >> (8 * i));
}
size_t record(size_t i) { return bf::kHeaderSize + i * bf::kRecordSize; }

// Recomputes the index and header checksums after a deliberate edit, so the
// test reaches the structural check behind them.
void reseal(std::vector<uint8_t> &b) {
  const uint64_t off = get64(b, bf::kHeaderIndexOffset), size = get64(b, bf::kHeaderIndexSizeOffset);
  if (off <= b.size() && size <= b.size() - off) set64(b, bf::kHeaderIndexSumOffset, XXH3_64bits(b.data() + off, size));
  set64(b, bf::kHeaderSumOffset, XXH3_64bits(b.data(), bf::kHeaderSumOffset));
}

StatusOr<std::unique_ptr<Bundle>> open_bytes(std::vector<uint8_t> b) { return Bundle::from_bytes(std::move(b), "test.gjb"); }

void expect_corrupt_at_open(std::vector<uint8_t> b, const std::string &needle) {
  auto r = open_bytes(std::move(b));
  ASSERT_FALSE(r.ok()) << "expected the reader to refuse: " << needle;
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt) << r.status().to_string();
  EXPECT_NE(r.status().message().find("test.gjb"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
}

// ------------------------------------------------------------ round trips

void round_trip(bool compress) {
  TempDir dir;
  const auto kernels = sample_kernels();
  BundleWriter w;
  for (const auto &kb : kernels) ASSERT_TRUE(w.add(kb).ok());
  const std::string path = dir.file(compress ? "z.gjb" : "plain.gjb");
  ASSERT_TRUE(w.write(path, compress).ok());

  auto b = Bundle::open(path);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ((*b)->path(), path);
  ASSERT_EQ((*b)->size(), kernels.size());
  for (const auto &kb : kernels) {
    EXPECT_TRUE((*b)->contains(kb.key));
    auto got = (*b)->find(kb.key);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    expect_same(*got, kb);
  }
  size_t compressed = 0;
  for (const auto &e : (*b)->entries()) {
    EXPECT_EQ(e.target_id, bundle_target_id(e.target));
    compressed += e.compressed;
    if (!e.compressed) EXPECT_EQ(e.raw_size, e.stored_size);
  }
  EXPECT_EQ(compressed, compress ? kernels.size() : 0u);
}

TEST(BundleTest, RoundTripUncompressed) { round_trip(false); }

TEST(BundleTest, RoundTripCompressed) {
  if (!bundle_zstd_available()) {
    BundleWriter w;
    ASSERT_TRUE(w.add(make_kernel(Target::kGfx950, 64, 100)).ok());
    auto r = w.serialize(true);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(r.status().message().find("no zstd support"), std::string::npos);
    return;
  }
  round_trip(true);
  EXPECT_LT(serialize(sample_kernels(), true).size(), serialize(sample_kernels(), false).size());
}

TEST(BundleTest, TargetIdsFollowClangOffloadBundleSpelling) {
  EXPECT_EQ(bundle_target_id(Target::kGfx950), "hipv4-amdgcn-amd-amdhsa--gfx950");
  EXPECT_EQ(bundle_target_id(Target::kGfx942), "hipv4-amdgcn-amd-amdhsa--gfx942");
  EXPECT_EQ(bundle_target_id(Target::kSm90), "cuda-nvptx64-nvidia-cuda--sm_90");
}

TEST(BundleTest, EmptyBundleRoundTrips) {
  auto b = open_bytes(serialize({}));
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ((*b)->size(), 0u);
  EXPECT_EQ(serialize({}).size(), bf::kHeaderSize);
}

TEST(BundleTest, FindMissingKey) {
  auto b = open_bytes(serialize(sample_kernels()));
  ASSERT_TRUE(b.ok());
  const std::string missing = make_kernel(Target::kGfx950, 999, 10).key;
  EXPECT_FALSE((*b)->contains(missing));
  auto r = (*b)->find(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find(missing), std::string::npos);
  EXPECT_NE(r.status().message().find("test.gjb"), std::string::npos);
  EXPECT_EQ((*b)->find("not-a-key").status().code(), StatusCode::kNotFound);
}

TEST(BundleTest, OpenMissingFile) {
  TempDir dir;
  auto r = Bundle::open(dir.file("absent.gjb"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST(BundleTest, WriterLastAddWins) {
  KernelBinary a = make_kernel(Target::kGfx942, 128, 50), b = a;
  b.symbol = "replacement";
  BundleWriter w;
  ASSERT_TRUE(w.add(a).ok());
  ASSERT_TRUE(w.add(b).ok());
  EXPECT_EQ(w.size(), 1u);
  auto bytes = w.serialize(false);
  ASSERT_TRUE(bytes.ok());
  auto bundle = open_bytes(*bytes);
  ASSERT_TRUE(bundle.ok());
  auto got = (*bundle)->find(a.key);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->symbol, "replacement");
}

TEST(BundleTest, WriterRejectsKeyThatIsNotAContractKey) {
  KernelBinary kb = make_kernel(Target::kGfx950, 64, 10);
  BundleWriter w;
  for (std::string bad : {std::string(""), std::string("abc"), kb.key + "0", std::string(32, 'G')}) {
    kb.key = bad;
    Status s = w.add(kb);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(w.size(), 0u);
}

TEST(BundleTest, BytesDoNotDependOnAddOrder) {
  auto kernels = sample_kernels();
  const auto forward = serialize(kernels);
  std::reverse(kernels.begin(), kernels.end());
  EXPECT_EQ(serialize(kernels), forward);
}

TEST(BundleTest, ConcurrentFind) {
  const auto kernels = sample_kernels();
  auto b = open_bytes(serialize(kernels, bundle_zstd_available()));
  ASSERT_TRUE(b.ok());
  const Bundle &bundle = **b;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const auto &kb = kernels[size_t(t + i) % kernels.size()];
        auto got = bundle.find(kb.key);
        if (!got.ok() || got->code != kb.code || got->key != kb.key) failures++;
      }
    });
  for (auto &th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// ------------------------------------------------------------ malformed files

// ---- bundle extract's plan (issue 45): names only from validated fields

TEST(BundleExtractTest, NamesComeFromTheTargetTemplateKeyAndFormatOnly) {
  auto bundle = Bundle::from_bytes(serialize(sample_kernels()), "sample.gjb");
  ASSERT_TRUE(bundle.ok()) << bundle.status().to_string();
  auto plan = plan_extract(**bundle);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->files.size(), sample_kernels().size());
  size_t lines = 0;
  for (char c : plan->index_tsv) lines += c == '\n';
  EXPECT_EQ(lines, plan->files.size() + 1);
  for (const ExtractedFile &f : plan->files) {
    SCOPED_TRACE(f.name);
    EXPECT_TRUE(std::all_of(f.name.begin(), f.name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    }));
    EXPECT_TRUE(f.name.ends_with(".hsaco") || f.name.ends_with(".ptx"));
    EXPECT_NE(plan->index_tsv.find("\n" + f.name + "\tgatejit_gate_"), std::string::npos);
    EXPECT_FALSE(f.code.empty());
  }
}

TEST(BundleExtractTest, AnEntryWithAForgedTemplateSymbolOrContractIsRefusedByKey) {
  const KernelBinary base = make_kernel(Target::kGfx950, 512, 40);
  const std::string tmpl = " template=";
  const size_t at = base.contract_text.find(tmpl) + tmpl.size();
  const auto with_template = [&](const std::string &t) {
    KernelBinary kb = base;
    kb.contract_text = base.contract_text.substr(0, at) + t + base.contract_text.substr(base.contract_text.find(' ', at));
    return kb;
  };
  std::vector<std::pair<KernelBinary, std::string>> cases;
  cases.push_back({with_template("../../etc/x"), "template '../../etc/x' is not a template name"});
  cases.push_back({with_template(std::string("gemv\0x", 6)), "template 'gemv\\0x'"});
  cases.push_back({with_template(std::string(33, 'a')), "is not a template name"});
  KernelBinary symbol = base;
  symbol.symbol = "k\tforged";
  cases.push_back({symbol, "symbol 'k\\tforged' is not a kernel symbol"});
  KernelBinary contract = base;
  contract.contract_text += "\nforged.hsaco\tk\tc";
  cases.push_back({contract, "is not one line of printable ASCII"});
  for (const auto &[kb, needle] : cases) {
    SCOPED_TRACE(needle);
    auto bundle = Bundle::from_bytes(serialize({kb}), "forged.gjb");
    ASSERT_TRUE(bundle.ok()) << bundle.status().to_string();
    auto plan = plan_extract(**bundle);
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(plan.status().message().find("entry " + kb.key + " (gfx950): "), std::string::npos)
        << plan.status().message();
    EXPECT_NE(plan.status().message().find(needle), std::string::npos) << plan.status().message();
  }
}

TEST(BundleFormatTest, RejectsEmptyFile) {
  TempDir dir;
  write_plain(dir.file("empty.gjb"), {});
  auto r = Bundle::open(dir.file("empty.gjb"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(r.status().message().find(dir.file("empty.gjb")), std::string::npos);
  EXPECT_NE(r.status().message().find("empty"), std::string::npos);
}

TEST(BundleFormatTest, RejectsBadMagic) {
  auto b = serialize(small_kernels());
  b[3] = 'X';
  expect_corrupt_at_open(b, "not a gatejit bundle");
  // A kernel-binary blob is not a bundle either.
  expect_corrupt_at_open(encode_kernel_binary(small_kernels()[0]), "not a gatejit bundle");
}

TEST(BundleFormatTest, RejectsNewerMajorVersion) {
  auto b = serialize(small_kernels());
  set16(b, bf::kHeaderMajorOffset, bf::kMajorVersion + 1);
  expect_corrupt_at_open(b, "newer than this build reads");
  // Even unsealed: the version is checked before a checksum whose layout may differ.
  reseal(b);
  expect_corrupt_at_open(b, "newer than this build reads");
  set16(b, bf::kHeaderMajorOffset, 0);
  reseal(b);
  expect_corrupt_at_open(b, "not a valid version");
}

TEST(BundleFormatTest, AcceptsNewerMinorVersionWithLongerRecords) {
  // A 1.x writer may append fields to each record; a 1.0 reader skips them.
  const auto kernels = small_kernels();
  auto b = serialize(kernels);
  const size_t count = kernels.size(), extra = 16, rs = bf::kRecordSize + extra;
  std::vector<uint8_t> grown(b.begin(), b.begin() + bf::kHeaderSize);
  for (size_t i = 0; i < count; ++i) {
    grown.insert(grown.end(), b.begin() + record(i), b.begin() + record(i) + bf::kRecordSize);
    grown.insert(grown.end(), extra, 0xAB);
  }
  const uint64_t shift = count * extra;
  grown.insert(grown.end(), b.begin() + record(count), b.end());
  for (size_t i = 0; i < count; ++i) {
    const size_t at = bf::kHeaderSize + i * rs + bf::kRecordPayloadOffset;
    set64(grown, at, get64(grown, at) + shift);
  }
  set16(grown, bf::kHeaderMinorOffset, 7);
  set32(grown, bf::kHeaderRecordSizeOffset, uint32_t(rs));
  set64(grown, bf::kHeaderIndexSizeOffset, count * rs);
  reseal(grown);
  auto r = open_bytes(grown);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  for (const auto &kb : kernels) {
    auto got = (*r)->find(kb.key);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    expect_same(*got, kb);
  }
}

void expect_every_prefix_rejected(const std::vector<uint8_t> &b) {
  TempDir dir;
  const std::string path = dir.file("cut.gjb");
  write_plain(path, b);
  // Cut the one file shorter and shorter: cheaper than rewriting it each time.
  for (size_t len = b.size(); len-- > 0;) {
    ASSERT_EQ(truncate(path.c_str(), off_t(len)), 0);
    auto r = Bundle::open(path);
    ASSERT_FALSE(r.ok()) << "a " << len << "-byte prefix of a " << b.size() << "-byte bundle was accepted";
    EXPECT_EQ(r.status().code(), StatusCode::kCorrupt) << len << ": " << r.status().to_string();
    EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
  }
  write_plain(path, b);
  EXPECT_TRUE(Bundle::open(path).ok());
}

TEST(BundleFormatTest, EveryTruncationRejected) {
  expect_every_prefix_rejected(serialize(small_kernels()));
  if (bundle_zstd_available()) expect_every_prefix_rejected(serialize(small_kernels(), true));
}

// Every single-bit flip anywhere in the file is caught at open or at find.
void expect_every_bit_flip_detected(const std::vector<uint8_t> &b, const std::vector<KernelBinary> &kernels) {
  for (size_t bit = 0; bit < b.size() * 8; ++bit) {
    std::vector<uint8_t> flipped = b;
    flipped[bit / 8] ^= uint8_t(1u << (bit % 8));
    auto r = open_bytes(std::move(flipped));
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kCorrupt) << "bit " << bit << ": " << r.status().to_string();
      continue;
    }
    bool detected = false;
    for (const auto &kb : kernels) {
      auto got = (*r)->find(kb.key);
      if (!got.ok()) {
        detected = true;
        EXPECT_EQ(got.status().code(), StatusCode::kCorrupt) << "bit " << bit << ": " << got.status().to_string();
        EXPECT_NE(got.status().message().find(kb.key), std::string::npos) << got.status().message();
      }
    }
    EXPECT_TRUE(detected) << "flipping bit " << bit % 8 << " of byte " << bit / 8 << " went unnoticed";
  }
}

TEST(BundleFormatTest, EveryBitFlipDetected) {
  const auto kernels = small_kernels();
  expect_every_bit_flip_detected(serialize(kernels), kernels);
  if (bundle_zstd_available()) expect_every_bit_flip_detected(serialize(kernels, true), kernels);
}

TEST(BundleFormatTest, RejectsHeaderChecksumMismatchAndUnknownHeaderFlags) {
  auto b = serialize(small_kernels());
  b[bf::kHeaderCountOffset] ^= 1;
  expect_corrupt_at_open(b, "header checksum mismatch");
  b = serialize(small_kernels());
  set32(b, bf::kHeaderFlagsOffset, 4);
  reseal(b);
  expect_corrupt_at_open(b, "header flags 0x4");
}

TEST(BundleFormatTest, RejectsIndexChecksumMismatch) {
  auto b = serialize(small_kernels());
  b[record(1) + bf::kRecordRawSizeOffset] ^= 0x10;
  expect_corrupt_at_open(b, "index checksum mismatch");
}

TEST(BundleFormatTest, RejectsIndexOutsideTheFile) {
  const auto good = serialize(small_kernels());
  auto b = good;
  set64(b, bf::kHeaderIndexOffset, good.size() + 8);
  reseal(b);
  expect_corrupt_at_open(b, "index [");
  b = good;
  set64(b, bf::kHeaderIndexOffset, UINT64_MAX - 8);  // offset + size wraps around
  reseal(b);
  expect_corrupt_at_open(b, "index [");
  b = good;
  set64(b, bf::kHeaderIndexOffset, 0);  // inside the header
  reseal(b);
  expect_corrupt_at_open(b, "overlaps the header");
}

TEST(BundleFormatTest, RejectsHugeCounts) {
  const auto good = serialize(small_kernels());
  auto b = good;
  set64(b, bf::kHeaderCountOffset, uint64_t(1) << 60);
  reseal(b);
  expect_corrupt_at_open(b, "entry count 1152921504606846976");
  b = good;
  set64(b, bf::kHeaderCountOffset, uint64_t(1) << 60);
  set64(b, bf::kHeaderIndexSizeOffset, (uint64_t(1) << 60) * bf::kRecordSize);  // wraps to 0
  reseal(b);
  expect_corrupt_at_open(b, "entry count");
  b = good;
  set64(b, bf::kHeaderIndexSizeOffset, UINT64_MAX);
  reseal(b);
  expect_corrupt_at_open(b, "index [");
  b = good;
  set32(b, bf::kHeaderRecordSizeOffset, 0);
  reseal(b);
  expect_corrupt_at_open(b, "record size 0");
}

TEST(BundleFormatTest, RejectsEntriesOutOfRange) {
  const auto good = serialize(small_kernels());
  struct Case {
    uint64_t offset, stored;
    const char *needle;
  };
  for (Case c : {Case{good.size(), 1, "lies outside the file"},
                 Case{good.size() - 4, 8, "lies outside the file"},
                 Case{UINT64_MAX - 3, 8, "lies outside the file"},  // wraps around
                 Case{8, 16, "overlaps the header"},
                 Case{record(0), 16, "overlaps the index"},
                 Case{bf::kHeaderSize + 2 * bf::kRecordSize, 0, "stored size is 0"}}) {
    auto b = good;
    set64(b, record(1) + bf::kRecordPayloadOffset, c.offset);
    set64(b, record(1) + bf::kRecordStoredSizeOffset, c.stored);
    set64(b, record(1) + bf::kRecordRawSizeOffset, c.stored);
    reseal(b);
    expect_corrupt_at_open(b, c.needle);
  }
  auto b = good;
  set64(b, record(0) + bf::kRecordRawSizeOffset, get64(b, record(0) + bf::kRecordRawSizeOffset) + 1);
  reseal(b);
  expect_corrupt_at_open(b, "raw size");
}

TEST(BundleFormatTest, RejectsOverlappingEntries) {
  auto b = serialize(small_kernels());
  // Entry 1 starts inside entry 0's payload.
  set64(b, record(1) + bf::kRecordPayloadOffset, get64(b, record(0) + bf::kRecordPayloadOffset) + 1);
  reseal(b);
  expect_corrupt_at_open(b, "overlap");
}

TEST(BundleFormatTest, RejectsDuplicateAndMalformedKeys) {
  auto b = serialize(small_kernels());
  std::memcpy(b.data() + record(1), b.data() + record(0), bf::kKeySize);
  reseal(b);
  expect_corrupt_at_open(b, "duplicate key");
  b = serialize(small_kernels());
  b[record(0) + 5] = 'Z';
  reseal(b);
  expect_corrupt_at_open(b, "not 32 lowercase hex digits");
  b = serialize(small_kernels());
  b[record(0) + bf::kRecordTargetIdOffset + 50] = 'x';  // after the NUL terminator
  reseal(b);
  expect_corrupt_at_open(b, "target id");
}

TEST(BundleFormatTest, DetectsPayloadServedUnderTheWrongKey) {
  // Swap where two records point; every checksum is valid, but the kernels
  // no longer match the keys that lead to them.
  const auto kernels = small_kernels();
  auto b = serialize(kernels);
  for (size_t f : {bf::kRecordPayloadOffset, bf::kRecordStoredSizeOffset, bf::kRecordRawSizeOffset,
                   bf::kRecordSumOffset})
    std::swap_ranges(b.begin() + record(0) + f, b.begin() + record(0) + f + 8, b.begin() + record(1) + f);
  reseal(b);
  auto r = open_bytes(b);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  for (const auto &kb : kernels) {
    auto got = (*r)->find(kb.key);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), StatusCode::kCorrupt);
    EXPECT_NE(got.status().message().find("holds the kernel for"), std::string::npos) << got.status().message();
  }
}

TEST(BundleFormatTest, SkipsEntriesForUnknownTargets) {
  const auto kernels = small_kernels();
  auto b = serialize(kernels);
  set32(b, record(0) + bf::kRecordTargetOffset, 99);
  reseal(b);
  auto r = open_bytes(b);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)->size(), kernels.size() - 1);
  // Records are sorted by target: record 0 is the gfx950 kernel.
  EXPECT_FALSE((*r)->contains(kernels[0].key));
  EXPECT_TRUE((*r)->find(kernels[1].key).ok());
}

TEST(BundleFormatTest, CompressedEntryNeedsZstd) {
  const auto kernels = small_kernels();
  auto b = serialize(kernels);
  set32(b, record(0) + bf::kRecordFlagsOffset, bf::kEntryFlagZstd);  // claims zstd, holds a raw blob
  reseal(b);
  auto r = open_bytes(b);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE((*r)->entries()[0].compressed);
  auto got = (*r)->find(kernels[0].key);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find(kernels[0].key), std::string::npos);
  if (bundle_zstd_available()) {
    EXPECT_EQ(got.status().code(), StatusCode::kCorrupt) << got.status().to_string();
  } else {
    EXPECT_EQ(got.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(got.status().message().find("compressed with zstd, but this build has no zstd support"),
              std::string::npos)
        << got.status().message();
  }
  EXPECT_TRUE((*r)->find(kernels[1].key).ok());
}

TEST(BundleFormatTest, UnknownEntryFlagsAreUnsupported) {
  const auto kernels = small_kernels();
  auto b = serialize(kernels);
  set32(b, record(1) + bf::kRecordFlagsOffset, 1u << 5);
  reseal(b);
  auto r = open_bytes(b);
  ASSERT_TRUE(r.ok());
  auto got = (*r)->find(kernels[1].key);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(got.status().message().find("0x20"), std::string::npos) << got.status().message();
}

// ---------------------------------------- issue 19, point 8: coverage and ids

// Every byte after the header lies in the index or one payload: nothing
// trailing, no gap, so every byte is under a checksum.
TEST(BundleFormatTest, RejectsTrailingBytes) {
  for (size_t extra : {1, 7, 4096}) {
    auto b = serialize(small_kernels());
    b.insert(b.end(), extra, 0x5a);
    expect_corrupt_at_open(b, "lie in no entry, so no checksum covers them");
  }
}

TEST(BundleFormatTest, RejectsAGapBetweenPayloads) {
  auto b = serialize(small_kernels());
  // Move the last payload 16 bytes on, leaving bytes no checksum covers.
  const size_t rec = record(1) + bf::kRecordPayloadOffset;
  const uint64_t off = get64(b, rec), size = get64(b, record(1) + bf::kRecordStoredSizeOffset);
  ASSERT_EQ(off + size, b.size());
  std::vector<uint8_t> payload(b.begin() + off, b.end());
  b.resize(off);
  b.insert(b.end(), 16, 0);
  b.insert(b.end(), payload.begin(), payload.end());
  set64(b, rec, off + 16);
  reseal(b);
  expect_corrupt_at_open(b, "bytes [" + std::to_string(off) + ", " + std::to_string(off + 16) + ") lie in no entry");
}

TEST(BundleFormatTest, RejectsATargetIdWithoutTerminator) {
  auto b = serialize(small_kernels());
  std::memset(b.data() + record(0) + bf::kRecordTargetIdOffset, 'x', bf::kTargetIdSize);
  reseal(b);
  expect_corrupt_at_open(b, "fills all 56 bytes without a NUL terminator");
}

TEST(BundleFormatTest, RejectsATargetIdThatDisagreesWithTheTargetCode) {
  auto b = serialize(small_kernels());
  // Record 0 is the gfx950 kernel; give it gfx942's id.
  const std::string other = bundle_target_id(Target::kGfx942);
  uint8_t *id = b.data() + record(0) + bf::kRecordTargetIdOffset;
  std::memset(id, 0, bf::kTargetIdSize);
  std::memcpy(id, other.data(), other.size());
  reseal(b);
  expect_corrupt_at_open(b, "target id '" + other + "' does not match target code 1 ('" +
                                bundle_target_id(Target::kGfx950) + "')");
}

}  // namespace
}  // namespace gatejit

namespace gatejit {
namespace {

// The encoded binary with one metadata field (`,"name":value`) rewritten by
// `edit` and the checksum redone: an entry as another writer would have made it.
std::vector<uint8_t> with_metadata(const std::vector<uint8_t> &full, const std::string &field,
                                   const std::string &replacement) {
  // The metadata JSON sits after "GJKB" | u32 version | u32 length.
  uint32_t meta_len = 0;
  for (int i = 0; i < 4; ++i) meta_len |= uint32_t(full[8 + i]) << (8 * i);
  std::string meta(full.begin() + 12, full.begin() + 12 + meta_len);
  const size_t at = meta.find(field);
  EXPECT_NE(at, std::string::npos) << meta;
  if (at == std::string::npos) return full;
  meta.replace(at, field.size(), replacement);
  std::vector<uint8_t> out(full.begin(), full.begin() + 8);
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(meta.size() >> (8 * i)));
  out.insert(out.end(), meta.begin(), meta.end());
  out.insert(out.end(), full.begin() + 12 + meta_len, full.end() - 8);  // code length and code
  const uint64_t sum = XXH3_64bits(out.data(), out.size());
  for (int i = 0; i < 8; ++i) out.push_back(uint8_t(sum >> (8 * i)));
  return out;
}

// Entries written before an optional geometry field existed load with the
// field's default, which is what their kernels expect: m_per_block (added
// with the mma template; 0 = one grid row), k_blocks (mma_tiled; 1 = no K
// split) and shared_bytes (mma_tiled; 0 = none).
TEST(KernelBinaryTest, EntryWithoutAnOptionalGeometryFieldLoadsWithItsDefault) {
  KernelBinary kb = make_kernel(Target::kSm90, 3075, 64);
  kb.geometry.shared_bytes = 4096;
  ASSERT_EQ(kb.geometry.m_per_block, 128u);
  ASSERT_EQ(kb.geometry.k_blocks, 4u);
  const std::vector<uint8_t> full = encode_kernel_binary(kb);
  struct Field {
    const char *text;
    uint32_t LaunchGeometry::*member;
    uint32_t default_value;
  };
  for (const Field &f : {Field{",\"m_per_block\":128", &LaunchGeometry::m_per_block, 0},
                         Field{",\"k_blocks\":4", &LaunchGeometry::k_blocks, 1},
                         Field{",\"shared_bytes\":4096", &LaunchGeometry::shared_bytes, 0}}) {
    auto decoded = decode_kernel_binary(with_metadata(full, f.text, ""));
    ASSERT_TRUE(decoded.ok()) << f.text << ": " << decoded.status().to_string();
    EXPECT_EQ(decoded->geometry.*f.member, f.default_value) << f.text;
    EXPECT_EQ(decoded->code, kb.code);
  }
  auto again = decode_kernel_binary(full);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  expect_same(*again, kb);
}

// A K split of 0 blocks (or more than a grid's z allows), or more shared
// memory than any device gives a block, is corrupt, not a launch that fails.
TEST(KernelBinaryTest, KBlocksOutOfRangeIsCorrupt) {
  KernelBinary kb = make_kernel(Target::kSm90, 3070, 64);
  const std::vector<uint8_t> full = encode_kernel_binary(kb);
  for (const char *bad : {",\"k_blocks\":0", ",\"k_blocks\":65536"}) {
    auto decoded = decode_kernel_binary(with_metadata(full, ",\"k_blocks\":4", bad));
    ASSERT_FALSE(decoded.ok()) << bad;
    EXPECT_NE(decoded.status().message().find("launch geometry"), std::string::npos) << decoded.status().message();
  }
  // Per target: 227 KiB on sm_90, 160 KiB of LDS on gfx950.
  auto too_much = decode_kernel_binary(with_metadata(full, ",\"shared_bytes\":0", ",\"shared_bytes\":232449"));
  ASSERT_FALSE(too_much.ok());
  EXPECT_NE(too_much.status().message().find("launch geometry"), std::string::npos) << too_much.status().message();
  const std::vector<uint8_t> amd = encode_kernel_binary(make_kernel(Target::kGfx950, 3070, 64));
  EXPECT_TRUE(decode_kernel_binary(with_metadata(amd, ",\"shared_bytes\":0", ",\"shared_bytes\":163840")).ok());
  EXPECT_FALSE(decode_kernel_binary(with_metadata(amd, ",\"shared_bytes\":0", ",\"shared_bytes\":163841")).ok());
}

}  // namespace
}  // namespace gatejit
