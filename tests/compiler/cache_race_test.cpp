// Issue 19, point 7: cache maintenance beside live writers. Eight compiling
// processes race `gatejit cache clear` and two `gatejit cache verify`, each
// run in a loop, on one cache that starts with a few hundred entries (so a
// verify is reading entries while a clear removes them). Every compile must succeed and its summary must
// say truly whether its kernel was stored; every clear must succeed and
// every verify must exit 0 (nothing in the cache is ever damaged, so a
// vanished entry or a live writer's temporary file is no problem).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "compiler/compiler_test_support.h"
#include "disk_cache.h"

namespace gatejit {
namespace {

using namespace testing_support;
using testing::HasSubstr;

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// Well-formed entries of made-up kernels, stored through the cache itself.
void fill_cache(const std::string &dir, int count) {
  DiskCacheOptions o;
  o.dir = dir;
  o.max_bytes = 0;
  auto cache = DiskCache::open(o);
  ASSERT_TRUE(cache.ok()) << cache.status().message();
  for (int i = 0; i < count; ++i) {
    KernelBinary kb;
    char key[33];
    std::snprintf(key, sizeof key, "%032x", i);
    kb.key = key;
    kb.contract_text = "filler " + std::to_string(i);
    kb.symbol = "filler";
    kb.geometry.block_x = 64;
    kb.geometry.n_per_block = 1;
    kb.toolchain = "race-filler";
    kb.report_json = "{}";
    kb.code.assign(256, uint8_t(i));
    ASSERT_TRUE((*cache)->put(cache_key(kb.key, kb.toolchain), kb).ok());
  }
}

TEST(CacheRace, CompilesRaceClearAndVerify) {
  TempDir dir;
  const std::string tool = GATEJIT_TOOL, d = dir.path().string();
  fill_cache(d + "/cache", 300);
  // Four contracts, two processes each: some compile, some wait on the
  // key's lock and then hit (or compile again after a clear).
  std::string script = "cd " + d + " && export GATEJIT_CACHE_DIR=" + d + "/cache && pids=; ";
  for (int i = 0; i < 8; ++i) {
    const std::string n = std::to_string(256 * (i % 4 + 1)), tag = "c" + std::to_string(i);
    script += "(" + tool + " compile --m 1 --n " + n + " --k 512 --target gfx950 >" + tag + ".out 2>" + tag +
              ".err; echo $? >" + tag + ".rc) & pids=\"$pids $!\"; ";
  }
  script += "(while [ ! -e done ]; do " + tool + " cache clear >>clear.out 2>&1; echo $? >>clear.rc; done) & ";
  for (int v = 0; v < 2; ++v)
    script += "(while [ ! -e done ]; do " + tool + " cache verify >>verify.out 2>&1; echo $? >>verify.rc; done) & ";
  script += "wait $pids; touch done; wait";
  ASSERT_EQ(std::system(("bash -c '" + script + "'").c_str()), 0);

  for (int i = 0; i < 8; ++i) {
    const std::string tag = "c" + std::to_string(i);
    SCOPED_TRACE(tag);
    const std::string out = slurp(dir / (tag + ".out")), err = slurp(dir / (tag + ".err"));
    EXPECT_EQ(slurp(dir / (tag + ".rc")), "0\n") << err;
    const bool hit = out.find("cache: hit") != std::string::npos;
    const bool stored = out.find("cache: miss, compiled and stored") != std::string::npos;
    const bool not_stored = out.find("cache: miss, compiled, NOT stored (") != std::string::npos;
    EXPECT_EQ(int(hit) + int(stored) + int(not_stored), 1) << out;
    // A warning that the store failed must come with a summary that says so.
    if (err.find("cannot store") != std::string::npos) EXPECT_TRUE(not_stored) << out << err;
  }
  const auto clears = lines_of(slurp(dir / "clear.rc")), verifies = lines_of(slurp(dir / "verify.rc"));
  EXPECT_FALSE(clears.empty());
  for (const auto &rc : clears) EXPECT_EQ(rc, "0") << slurp(dir / "clear.out");
  for (const auto &rc : verifies) EXPECT_EQ(rc, "0") << slurp(dir / "verify.out");
  RecordProperty("clears", int(clears.size()));
  RecordProperty("verifies", int(verifies.size()));
}

}  // namespace
}  // namespace gatejit
