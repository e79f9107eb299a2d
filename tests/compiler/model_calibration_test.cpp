// The performance model against one fresh H200 benchmark run
// (docs/data/bench-h200-2026-12-01-v51.json, docs/gfx950-model.md): every
// row's sm_90 kernel, compiled here, predicted within +-30% of the time the
// run measured for it. The measurements are data; when a template changes
// the kernels they timed, the run is redone (and the file named here), and
// when a prediction misses, the model is fixed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "compiler_test_support.h"
#include "gatejit/compiler/compiler.h"

namespace gatejit::compiler {
namespace {

constexpr const char *kCalibrationRun = GATEJIT_SOURCE_DIR "/docs/data/bench-h200-2026-12-01-v51.json";
constexpr double kTolerance = 0.30;

TEST(ModelCalibration, EveryH200BenchmarkRowWithin30Percent) {
  std::ifstream in(kCalibrationRun);
  ASSERT_TRUE(in.good()) << kCalibrationRun;
  const nlohmann::json run = nlohmann::json::parse(in);
  ASSERT_EQ(run.at("device"), "NVIDIA H200");
  int rows = 0;
  for (const nlohmann::json &row : run.at("configs")) {
    if (!row.at("gatejit_us").is_number()) continue;
    Contract c;
    c.target = Target::kSm90;
    c.m = row.at("m").get<int64_t>();
    c.n = row.at("n").get<int64_t>();
    c.k = row.at("k").get<int64_t>();
    auto kernel = compile(c);
    ASSERT_TRUE(kernel.ok()) << kernel.status().message();
    const double predicted = kernel->report.at("model").at("predicted_us").get<double>();
    const double measured = row.at("gatejit_us").get<double>();
    EXPECT_LE(std::abs(predicted / measured - 1), kTolerance)
        << "M=" << c.m << " N=" << c.n << ": predicted " << predicted << " us, measured " << measured << " us ("
        << kernel->report.at("model").at("limiter").get<std::string>() << ")";
    ++rows;
  }
  EXPECT_EQ(rows, 20);
}

// The tiled form's fragment variant (mma.sync from shared memory: the form
// gfx950's tiled plans take, lowered for sm_90), timed in one sweep on the
// H200 at five tile shapes and M = 512-2048 (docs/perf-notes.md, v72). The
// model sees its reads and products taking turns (`shared_then_matrix`);
// before v72 it was 1.7-2.6x low for this form and ranked its shapes
// backwards. Not here: q4 (64 x 64 warp tiles, as swept: 1 block an SM
// asked, 2 K splits at M = 512), which ran at the 255 registers a thread of
// sm_90 with bank conflicts the PTX does not show; its M = 512 row is
// predicted 1.40x (docs/gfx950-model.md).
constexpr const char *kFragmentSweep = GATEJIT_SOURCE_DIR "/docs/data/mma-sweep-2026-12-02-v72-fragments-unpipelined.json";

TEST(ModelCalibration, FragmentTiledFormWithin30Percent) {
  const std::string base = "tiled=1,wgmma=0,refill=1,bk=64,stages=4,warps_n=2,";
  const std::map<std::string, std::string> variants = {
      {"f1", base + "bn=64,bm=64,waves=4,bps=1"},   {"f3", base + "bn=64,bm=64,waves=4,bps=3"},
      {"f8", base + "bn=128,bm=128,waves=8,bps=1"}, {"g4", base + "bn=128,bm=64,waves=4,bps=2"},
      {"h4", base + "bn=64,bm=128,waves=4,bps=2"}};
  std::ifstream in(kFragmentSweep);
  ASSERT_TRUE(in.good()) << kFragmentSweep;
  const nlohmann::json sweep = nlohmann::json::parse(in);
  int rows = 0;
  for (const nlohmann::json &row : sweep) {
    for (const auto &[name, tuning] : variants) {
      Contract c;
      c.target = Target::kSm90;
      c.m = row.at("m").get<int64_t>();
      c.n = row.at("n").get<int64_t>();
      c.k = row.at("k").get<int64_t>();
      testing_support::ScopedMmaTuning scoped{tuning.c_str()};
      auto kernel = compile(c);
      ASSERT_TRUE(kernel.ok()) << kernel.status().message();
      ASSERT_EQ(kernel->report.at("plan_facts").at("form"), "mma_tiled") << name;
      const double predicted = kernel->report.at("model").at("predicted_us").get<double>();
      const double measured = row.at(name).get<double>();
      EXPECT_LE(std::abs(predicted / measured - 1), kTolerance)
          << name << " M=" << c.m << ": predicted " << predicted << " us, measured " << measured << " us";
      ++rows;
    }
  }
  EXPECT_EQ(rows, 15);
}

// gfx950's choice between its two forms from M = 128 (v76: the tiled form's
// 64 x 64 tiles, two blocks a CU counted in the K split, against the
// register-streamed form) rests on the model; the same two templates,
// lowered for sm_90, were timed side by side on the H200 at N = 1536
// (M = 128-2048) and N = 3072 (M = 128-512). Each row within 30% of the
// model, and the model ranks the two forms as the H200 does on every row
// (the tiled form measured 1.45-2.15x faster).
constexpr const char *kTiledRowsSweep = GATEJIT_SOURCE_DIR "/docs/data/mma-sweep-2026-12-03-v76-tiled-rows.json";

TEST(ModelCalibration, TiledAndRegisterStreamedFormsWithin30PercentAndRanked) {
  const std::map<std::string, std::string> variants = {
      {"g64", "tiled=1,wgmma=0,bn=64,bm=64,bk=64,stages=4,bps=2"}, {"rs", "tiled=0"}};
  std::ifstream in(kTiledRowsSweep);
  ASSERT_TRUE(in.good()) << kTiledRowsSweep;
  const nlohmann::json sweep = nlohmann::json::parse(in);
  int rows = 0;
  for (const nlohmann::json &row : sweep) {
    // Rows a variant's bundle did not hold ran another kernel: not this form.
    if (row.at("g64_path").get<std::string>().find("bundle sweep-g64") == std::string::npos) continue;
    std::map<std::string, double> predicted, measured;
    for (const auto &[name, tuning] : variants) {
      Contract c;
      c.target = Target::kSm90;
      c.m = row.at("m").get<int64_t>();
      c.n = row.at("n").get<int64_t>();
      c.k = row.at("k").get<int64_t>();
      testing_support::ScopedMmaTuning scoped{tuning.c_str()};
      auto kernel = compile(c);
      ASSERT_TRUE(kernel.ok()) << kernel.status().message();
      ASSERT_EQ(kernel->report.at("plan_facts").at("form"), name == "rs" ? "mma" : "mma_tiled") << name;
      predicted[name] = kernel->report.at("model").at("predicted_us").get<double>();
      measured[name] = row.at(name).get<double>();
      EXPECT_LE(std::abs(predicted[name] / measured[name] - 1), kTolerance)
          << name << " M=" << c.m << " N=" << c.n << ": predicted " << predicted[name] << " us, measured "
          << measured[name] << " us";
    }
    EXPECT_EQ(predicted["g64"] < predicted["rs"], measured["g64"] < measured["rs"])
        << "M=" << row.at("m") << " N=" << row.at("n") << ": the model ranks the forms unlike the H200";
    ++rows;
  }
  EXPECT_EQ(rows, 8);
}

}  // namespace
}  // namespace gatejit::compiler
