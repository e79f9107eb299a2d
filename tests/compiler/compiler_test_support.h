// Helpers shared by the compiler test files: a temporary directory, whole-file
// reads, running the gatejit tool, a scoped tuning override, the seed
// contract (support/seed_contract.h), a contract's ISA from the real pipeline.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "gatejit/compiler/compiler.h"
#include "gatejit/contract.h"
#include "support/scoped_env.h"
#include "support/seed_contract.h"

namespace gatejit::testing_support {

namespace fs = std::filesystem;

// GATEJIT_MMA_TUNING set for a scope; the caller's own value (or its
// absence) is put back afterwards.
class ScopedMmaTuning : public ScopedEnv {
 public:
  explicit ScopedMmaTuning(const char *value) : ScopedEnv("GATEJIT_MMA_TUNING") { set(value); }
};

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gatejit-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path operator/(const std::string &name) const { return path_ / name; }
  const fs::path &path() const { return path_; }

 private:
  fs::path path_;
};

// Non-overlapping occurrences of `needle` in `text`.
inline int count_of(const std::string &text, const std::string &needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

inline std::string slurp(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct CliResult {
  int rc = -1;
  std::string out, err;
};

// Runs `gatejit ARGS` with stdout and stderr captured separately. The compile
// command goes through the disk cache: it gets a cache of its own inside the
// test's directory, never the user's.
inline CliResult gatejit_cli(const TempDir &dir, const std::string &args) {
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string cmd = "GATEJIT_CACHE_DIR=" + (dir / "cache").string() + " " + std::string(GATEJIT_TOOL) + " " +
                          args + " >" + out.string() + " 2>" + err.string();
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// N = 1536, K = 7168 (the seed's weight) at M = m, as an mma contract for
// target t: the rows the K-split meetings are planned and tested at.
inline Contract seed_mma_row(Target t, int64_t m) {
  Contract c;
  c.target = t;
  c.m = m;
  c.n = 1536;
  c.k = 7168;
  c.template_kind = TemplateKind::kMma;
  return c;
}

// The middle of a compile report's predicted serial part, µs.
inline double serial_mid_us(const nlohmann::json &report) {
  return (report["model"]["serial_us"][0].get<double>() + report["model"]["serial_us"][1].get<double>()) / 2;
}

// The code object's text (AMDGPU disassembly, or PTX) of a contract; empty,
// with a test failure, where it does not compile.
inline std::string isa_of(const Contract &c) {
  auto isa = compiler::emit_stage(c, compiler::Stage::kIsa);
  EXPECT_TRUE(isa.ok()) << isa.status().to_string();
  return isa.ok() ? *isa : std::string();
}

}  // namespace gatejit::testing_support
