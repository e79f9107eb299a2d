// libFuzzer target: the bundle reader on arbitrary bytes.
//
// Each input is read twice: as given (so the magic, version and checksum
// checks are exercised), and again with every checksum recomputed, so that
// mutations reach the structural checks, decompression and the kernel-binary
// decoder behind them instead of dying at the first checksum. Whatever the
// reader accepts and decodes must survive a write/read round trip, and what
// it refuses gets one short line of printable text. Every bundle that opens
// also goes through `bundle extract`'s plan (bundle_extract.h): each file
// name it makes stays in its fixed alphabet (no '/', no NUL) and unique, and
// index.tsv has exactly one three-field line per file.
//
// Built with -DGATEJIT_FUZZ_SEED_MAIN, this file is instead a small program
// that writes valid seed bundles into a directory (scripts/run_fuzzers.sh).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bundle.h"
#include "bundle_extract.h"
#include "gatejit/contract.h"
#include "kernel_entry_seal.h"

namespace {

using namespace gatejit;
namespace bf = bundle_format;

uint64_t get(const std::vector<uint8_t> &b, size_t at, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v |= uint64_t(b[at + i]) << (8 * i);
  return v;
}
void put64(std::vector<uint8_t> &b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = uint8_t(v >> (8 * i));
}
bool in_range(uint64_t off, uint64_t size, uint64_t limit) { return off <= limit && size <= limit - off; }

// Recomputes, where the layout lets it be found, each uncompressed payload's
// kernel-binary checksum, each record's payload checksum, the index checksum
// and the header checksum. Returns false where there is nothing to reseal.
bool reseal(std::vector<uint8_t> &b) {
  if (b.size() < bf::kHeaderSize || std::memcmp(b.data(), bf::kMagic, sizeof bf::kMagic) != 0) return false;
  const uint64_t index_off = get(b, bf::kHeaderIndexOffset, 8), index_size = get(b, bf::kHeaderIndexSizeOffset, 8);
  const uint64_t record_size = get(b, bf::kHeaderRecordSizeOffset, 4);
  if (record_size >= bf::kRecordSize && in_range(index_off, index_size, b.size())) {
    const uint64_t records = std::min<uint64_t>(index_size / record_size, 4096);
    for (uint64_t i = 0; i < records; ++i) {
      const size_t rec = size_t(index_off + i * record_size);
      const uint64_t off = get(b, rec + bf::kRecordPayloadOffset, 8), stored = get(b, rec + bf::kRecordStoredSizeOffset, 8);
      if (!in_range(off, stored, b.size())) continue;
      const bool zstd = get(b, rec + bf::kRecordFlagsOffset, 4) & bf::kEntryFlagZstd;
      if (!zstd && gatejit::fuzz::is_kernel_entry(b.data() + off, size_t(stored)))
        gatejit::fuzz::seal_kernel_entry(b.data() + off, size_t(stored));
      put64(b, rec + bf::kRecordSumOffset, XXH3_64bits(b.data() + off, size_t(stored)));
    }
    put64(b, bf::kHeaderIndexSumOffset, XXH3_64bits(b.data() + index_off, size_t(index_size)));
  }
  put64(b, bf::kHeaderSumOffset, XXH3_64bits(b.data(), bf::kHeaderSumOffset));
  return true;
}

void check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "bundle_reader_fuzz: property violated: %s\n", what);
    std::abort();
  }
}

void check_message(const std::string &m) {
  check(!m.empty(), "an error without a message");
  check(m.size() <= 1024, "an error message longer than 1 KiB");
  for (unsigned char c : m) check(c >= 0x20 && c < 0x7f, "an error message with a control or non-ASCII byte");
}

// What `gatejit bundle extract` would write: names in the fixed alphabet and
// unique, one index line of three fields per file.
void check_extract_plan(const Bundle &bundle) {
  auto plan = plan_extract(bundle);
  // Its refusals may carry find()'s, which echo decoded fields raw (the
  // tool's error line and the C API escape every message they print).
  if (!plan.ok()) return check(!plan.status().message().empty(), "an extract refusal without a message");
  std::vector<std::string> names;
  for (const ExtractedFile &f : plan->files) {
    check(!f.name.empty() && f.name.size() <= 128, "an extracted file name that is empty or long");
    for (char c : f.name)
      check((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.',
            "an extracted file name outside its alphabet");
    check(f.name.find("..") == std::string::npos, "an extracted file name with '..'");
    names.push_back(f.name);
  }
  std::sort(names.begin(), names.end());
  check(std::adjacent_find(names.begin(), names.end()) == names.end(), "two extracted files with one name");
  size_t lines = 0, tabs = 0;
  for (char c : plan->index_tsv) {
    lines += c == '\n';
    tabs += c == '\t';
    check(c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f), "an index.tsv byte that is not printable");
  }
  check(lines == plan->files.size() + 1 && tabs == 2 * lines, "index.tsv lines do not match the files");
}

void exercise(std::vector<uint8_t> bytes) {
  auto opened = Bundle::from_bytes(std::move(bytes), "fuzz-input");
  if (!opened.ok()) return check_message(opened.status().message());
  const Bundle &bundle = **opened;
  check_extract_plan(bundle);
  BundleWriter writer;
  std::vector<KernelBinary> found;
  for (const BundleEntryInfo &e : bundle.entries()) {
    check(bundle.contains(e.key), "an entry that contains() does not know");
    auto kb = bundle.find(e.key);
    if (!kb.ok()) continue;
    check(kb->key == e.key && kb->target == e.target, "find() returned another entry's kernel");
    check(writer.add(*kb).ok(), "the writer refused a kernel the reader produced");
    found.push_back(std::move(*kb));
  }
  (void)bundle.find("00000000000000000000000000000000");

  // Round trip: what was read can be written and read back unchanged.
  auto again = writer.serialize(false);
  check(again.ok(), "serialize failed");
  auto reopened = Bundle::from_bytes(std::move(*again), "fuzz-roundtrip");
  check(reopened.ok(), "a bundle written from decoded kernels does not open");
  check((*reopened)->size() == found.size(), "round trip changed the entry count");
  for (const KernelBinary &kb : found) {
    auto back = (*reopened)->find(kb.key);
    check(back.ok(), "round trip lost an entry");
    check(back->code == kb.code && back->symbol == kb.symbol && back->contract_text == kb.contract_text &&
              back->report_json == kb.report_json,
          "round trip changed a kernel");
  }
}

}  // namespace

#ifndef GATEJIT_FUZZ_SEED_MAIN

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  exercise(bytes);
  if (reseal(bytes)) exercise(std::move(bytes));
  return 0;
}

#else

// Writes a few valid bundles (several targets, compressed and not, empty)
// into argv[1] as seeds.
int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  std::vector<KernelBinary> kernels;
  for (Target t : {Target::kGfx950, Target::kGfx942, Target::kSm90}) {
    Contract c;
    c.target = t;
    c.n = t == Target::kSm90 ? 256 : 1536;
    c.k = 512;
    auto n = normalize(c);
    if (!n.ok()) {
      std::fprintf(stderr, "%s\n", n.status().to_string().c_str());
      return 1;
    }
    KernelBinary kb;
    kb.key = contract_key(*n);
    kb.contract_text = canonical_text(*n);
    kb.target = t;
    kb.format = target_is_amdgpu(t) ? BinaryFormat::kHsaco : BinaryFormat::kPtx;
    kb.symbol = "gatejit_seed";
    kb.geometry = {256, 64, false};
    kb.toolchain = "seed";
    kb.report_json = "{}";
    for (int i = 0; i < 48; ++i) kb.code.push_back(uint8_t("\x7f" "ELF-seed-code"[i % 14]));
    kernels.push_back(kb);
  }
  const std::string dir = argv[1];
  int written = 0;
  auto emit = [&](const std::string &name, size_t count, bool compress) {
    BundleWriter w;
    for (size_t i = 0; i < count; ++i)
      if (!w.add(kernels[i]).ok()) std::abort();
    if (compress && !bundle_zstd_available()) return true;
    Status s = w.write(dir + "/" + name, compress);
    if (!s.ok()) std::fprintf(stderr, "%s\n", s.to_string().c_str());
    written += s.ok();
    return s.ok();
  };
  bool ok = emit("empty.gjb", 0, false) && emit("one.gjb", 1, false) && emit("three.gjb", 3, false) &&
            emit("three-zstd.gjb", 3, true);
  std::printf("wrote %d seed bundles to %s\n", written, dir.c_str());
  return ok ? 0 : 1;
}

#endif
