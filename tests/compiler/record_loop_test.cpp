// Recorded contracts become bundles, end to end with real processes: a host
// process with the JIT attached records what it resolved (GATEJIT_RECORD),
// `gatejit precompile --contracts` builds a bundle from the record, and a
// fresh process with the JIT off and an empty cache serves every recorded
// contract from that bundle, compiling nothing (resolution only: no GPU).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "compiler/cli_run.h"

namespace gatejit {
namespace {

using namespace testing_support;
using testing::HasSubstr;

void write_file(const fs::path &p, const std::string &text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

struct HostRun {
  int rc;
  std::vector<std::string> lines;  // stdout, a line each
  std::string err;
};

HostRun resolve_contracts(const TempDir &dir, const std::string &env, const std::string &args, const std::string &tag) {
  const fs::path out = dir / (tag + ".out"), err = dir / (tag + ".err");
  const std::string cmd = env + " timeout -s KILL 300 " + RESOLVE_CONTRACTS + " " + args + " >" + out.string() +
                          " 2>" + err.string();
  const int status = std::system(cmd.c_str());
  HostRun r{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), {}, slurp(err)};
  std::istringstream text(slurp(out));
  for (std::string line; std::getline(text, line);) r.lines.push_back(line);
  return r;
}

size_t files_under(const fs::path &dir) {
  size_t n = 0;
  if (fs::exists(dir))
    for (const auto &e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

// What a serving process meets: decode and prefill M on sm_90 (gemv, mma,
// the wgmma tiles), an fp8 weight and an fp8 out on gfx950, gfx942, an
// unaligned K that only the generic kernel serves, one contract twice.
constexpr const char *kTraffic = R"({"m": 1, "n": 1536, "k": 7168, "target": "sm_90"}
{"m": 64, "n": 1536, "k": 7168, "target": "sm_90", "act": "silu"}
{"m": 1, "n": 1536, "k": 7168, "target": "sm_90"}

{"m": 4, "n": 2048, "k": 7168, "target": "gfx950", "dtype_weight": "fp8_e4m3", "weight_scale": "block128"}
{"m": 2, "n": 1536, "k": 7168, "target": "gfx950", "dtype_out": "fp8_e4m3", "out_scale": "per_token_group128"}
{"m": 8, "n": 1536, "k": 7168, "target": "gfx942", "dtype": "f16", "rounding": "fused"}
{"m": 3, "n": 1000, "k": 999, "target": "sm_90"}
)";
constexpr size_t kDistinct = 6;

TEST(RecordLoop, RecordedContractsBuildABundleThatServesThemWithoutCompiling) {
  TempDir dir;
  write_file(dir / "traffic.jsonl", kTraffic);
  const std::string record = (dir / "record.jsonl").string();
  // Two serving processes with the JIT, one after the other, appending to
  // one record file.
  for (const char *tag : {"serve1", "serve2"}) {
    const HostRun r = resolve_contracts(dir,
                                    "GATEJIT_RECORD=" + record + " GATEJIT_CACHE_DIR=" + (dir / tag).string() +
                                        " GATEJIT_SHIPPED_BUNDLE=0",
                                    "--jit " + (dir / "traffic.jsonl").string(), tag);
    ASSERT_EQ(r.rc, 0) << r.err;
    ASSERT_EQ(r.lines.size(), kDistinct + 1);
    // Each distinct contract compiled once (its repeat comes from the cache).
    size_t compiled = 0;
    for (const std::string &line : r.lines) compiled += line.find("compiled by the JIT") != std::string::npos;
    EXPECT_EQ(compiled, kDistinct) << r.lines[0];
  }
  // Each process wrote each distinct contract once.
  std::istringstream recorded(slurp(dir / "record.jsonl"));
  size_t lines = 0;
  for (std::string line; std::getline(recorded, line);) ++lines;
  EXPECT_EQ(lines, 2 * kDistinct);

  const CliResult built =
      gatejit_run(dir, "", "precompile --contracts " + record + " -o " + (dir / "next.gjb").string(), 300);
  ASSERT_EQ(built.rc, 0) << built.err;
  EXPECT_THAT(built.out, HasSubstr("kernels -> "));

  // A fresh process: the JIT off, an empty cache, only the new bundle.
  const fs::path cache = dir / "fresh-cache";
  const HostRun served = resolve_contracts(dir,
                                       "GATEJIT_DISABLE_JIT=1 GATEJIT_SHIPPED_BUNDLE=0 GATEJIT_BUNDLE_PATH=" +
                                           (dir / "next.gjb").string() + " GATEJIT_CACHE_DIR=" + cache.string(),
                                       record, "replay");
  ASSERT_EQ(served.rc, 0) << served.err;
  ASSERT_EQ(served.lines.size(), 2 * kDistinct);
  size_t specialised = 0;
  for (const std::string &line : served.lines) {
    EXPECT_EQ(line.rfind("ok ", 0), 0u) << line;
    EXPECT_THAT(line, HasSubstr(" from bundle next.gjb")) << line;
    // The exact contract's kernel, not a bucket's or a fallback's (the
    // unaligned one is generic by its shape).
    EXPECT_EQ(line.find("dynamic-M bucket"), std::string::npos) << line;
    specialised += line.rfind("ok specialised ", 0) == 0;
  }
  EXPECT_EQ(specialised, 2 * (kDistinct - 1));
  EXPECT_EQ(files_under(cache), 0u) << "nothing compiled, nothing cached";
}

TEST(RecordLoop, PrecompileNamesTheLineOfABadRecord) {
  TempDir dir;
  write_file(dir / "bad.jsonl", std::string(R"({"m": 1, "n": 1536, "k": 7168, "target": "sm_90"})") + "\n\n" +
                                    R"({"m": 1, "n": 1536, "k": 7168, "colour": "red"})" + "\n");
  const CliResult r =
      gatejit_run(dir, "", "precompile --contracts " + (dir / "bad.jsonl").string() + " -o " + (dir / "b.gjb").string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_THAT(r.err, HasSubstr("bad.jsonl line 3: contract key 'colour' is unknown"));
  EXPECT_FALSE(fs::exists(dir / "b.gjb"));
  // Nothing to compile at all is a usage error.
  EXPECT_EQ(gatejit_run(dir, "", "precompile -o " + (dir / "b.gjb").string()).rc, 2);
}

}  // namespace
}  // namespace gatejit
