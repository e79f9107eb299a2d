// libFuzzer target: the disk cache's entry reader on arbitrary bytes.
//
// Each input is planted as the cache entry of one fixed key, twice: as given
// (the magic, version and checksum checks), and with its trailing checksum
// recomputed where it starts like an entry, so that mutations reach the
// decoder, the key and toolchain match and the report check behind it. A
// read must either serve an entry whose key, toolchain and report are what
// a hit promises, or refuse it; a refused entry is removed (the next read
// is a plain miss), never served.
//
// Built with -DGATEJIT_FUZZ_SEED_MAIN, this file is instead a small program
// that writes valid seed entries into a directory (scripts/run_fuzzers.sh).
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "disk_cache.h"
#include "gatejit/contract.h"
#include "gatejit/kernel_binary.h"
#include "json_input.h"
#include "kernel_entry_seal.h"

namespace {

using namespace gatejit;

constexpr const char *kToolchain = "fuzz-toolchain/1";

const std::string &contract_key_text() {
  static const std::string key = [] {
    Contract c;
    c.target = Target::kGfx950;
    c.m = 1;
    c.n = 1536;
    c.k = 7168;
    return contract_key(*normalize(c));
  }();
  return key;
}

KernelBinary seed_binary(const std::string &report) {
  KernelBinary kb;
  kb.key = contract_key_text();
  kb.contract_text = "gatejit-contract/1 target=gfx950 template=gemv";
  kb.target = Target::kGfx950;
  kb.format = BinaryFormat::kHsaco;
  kb.symbol = "gatejit_gemv_bf16_sigmoid_boundary";
  kb.geometry = {256, 8, false};
  kb.toolchain = kToolchain;
  kb.report_json = report;
  kb.code = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  return kb;
}

DiskCache &cache() {
  static std::unique_ptr<DiskCache> c = [] {
    char tmpl[] = "/tmp/gatejit-cache-fuzz-XXXXXX";
    if (!mkdtemp(tmpl)) std::abort();
    DiskCacheOptions o;
    o.dir = tmpl;
    auto opened = DiskCache::open(o);
    if (!opened.ok()) {
      std::fprintf(stderr, "cannot open the fuzz cache: %s\n", opened.status().message().c_str());
      std::abort();
    }
    return std::move(*opened);
  }();
  return *c;
}

const std::string &cache_key_text() {
  static const std::string key = cache_key(contract_key_text(), kToolchain);
  return key;
}

// Writes the input where the fixed key's entry lives (its shard folder made
// by one real put first).
void plant(const uint8_t *data, size_t size) {
  static const bool shard_made = cache().put(cache_key_text(), seed_binary("{}")).ok();
  if (!shard_made) std::abort();
  const std::string path = cache().entry_path(cache_key_text());
  // Mode 0600 whatever the umask: the reader refuses (and keeps) a
  // group-writable entry, which would hide every later input from it.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  for (size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += size_t(n);
  }
  ::close(fd);
}

void read_once(const uint8_t *data, size_t size) {
  plant(data, size);
  auto kb = cache().get(cache_key_text(), contract_key_text(), kToolchain);
  if (kb.ok()) {
    // A hit is what a hit promises.
    if (kb->key != contract_key_text() || kb->toolchain != kToolchain) {
      std::fprintf(stderr, "property violated: served an entry for another key or toolchain\n");
      std::abort();
    }
    auto report = parse_json_input(kb->report_json, "report");
    if (!report.ok() || !report->is_object()) {
      std::fprintf(stderr, "property violated: served an entry whose report is not a JSON object\n");
      std::abort();
    }
    return;
  }
  // A refusal removes what it refused: the next read is a plain miss.
  auto again = cache().get(cache_key_text(), contract_key_text(), kToolchain);
  if (again.ok() || again.status().code() != StatusCode::kNotFound) {
    std::fprintf(stderr, "property violated: a refused entry was %s on the next read: %s\n",
                 again.ok() ? "served" : "not removed", again.ok() ? "" : again.status().message().c_str());
    std::abort();
  }
}

}  // namespace

#ifndef GATEJIT_FUZZ_SEED_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  read_once(data, size);
  if (gatejit::fuzz::is_kernel_entry(data, size)) {
    std::vector<uint8_t> sealed(data, data + size);
    gatejit::fuzz::seal_kernel_entry(sealed.data(), sealed.size());
    read_once(sealed.data(), sealed.size());
  }
  return 0;
}
#else
int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR (writes valid seed cache entries there)\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  int i = 0;
  for (const char *report : {"{}", R"({"form": "gemv", "gates": []})", "not json", "[1, 2]"}) {
    const std::vector<uint8_t> bytes = encode_kernel_binary(seed_binary(report));
    std::ofstream(dir + "/entry-" + std::to_string(i++) + ".gjk", std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
  }
  return 0;
}
#endif
