// The performance model against one fresh H200 benchmark run
// (docs/data/bench-h200-2026-12-01-v51.json, docs/gfx950-model.md): every
// row's sm_90 kernel, compiled here, predicted within +-30% of the time the
// run measured for it. The measurements are data; when a template changes
// the kernels they timed, the run is redone (and the file named here), and
// when a prediction misses, the model is fixed.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

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

}  // namespace
}  // namespace gatejit::compiler
