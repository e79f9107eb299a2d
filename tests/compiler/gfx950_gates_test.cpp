// The gfx950 gates (perf_model.cpp's plan_gates) read from every gfx950 code
// object of the shapes the issues name: N in {1536, 3072, 12288}, M from 1
// to 4096, bf16 and f16. A gate that fails today is listed, with the issue
// that closes it, in gfx950_gate_expectations.txt (an expected failure); any
// other failure is a regression, and a listed gate that passes fails the
// test too (the list must shrink as plans are fixed, never go stale).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "gatejit/compiler/compiler.h"

namespace gatejit::compiler {
namespace {

constexpr const char *kExpectations = GATEJIT_SOURCE_DIR "/tests/compiler/gfx950_gate_expectations.txt";

std::string shape_key(int64_t n, int64_t m, const char *dtype) {
  return "n=" + std::to_string(n) + " m=" + std::to_string(m) + " " + dtype;
}

// "gate n=1536 m=17 bf16" lines; '#' starts a comment.
std::set<std::string> expected_failures() {
  std::set<std::string> out;
  std::ifstream in(kExpectations);
  EXPECT_TRUE(in.good()) << "cannot read " << kExpectations;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string gate, n, m, dtype;
    if (words >> gate >> n >> m >> dtype) out.insert(gate + " " + n + " " + m + " " + dtype);
  }
  return out;
}

const std::set<std::string> &expectations() {
  static const std::set<std::string> e = expected_failures();
  return e;
}

using Shape = std::tuple<int64_t, int64_t, const char *>;

class Gfx950Gates : public ::testing::TestWithParam<Shape> {};

TEST_P(Gfx950Gates, PassOrAreListedAsExpectedFailures) {
  const auto [n, m, dtype] = GetParam();
  Contract c;
  c.target = Target::kGfx950;
  c.m = m;
  c.n = n;
  c.k = 7168;
  // "bf16", "f16", or an fp8 weight with 16-bit activations: "bf16_wfp8_block128".
  const std::string label = dtype;
  c.dtype_hidden = c.dtype_weight = c.dtype_attn = c.dtype_out = label.rfind("bf16", 0) == 0 ? DType::kBF16 : DType::kF16;
  if (label.find("_wfp8_") != std::string::npos) {
    c.dtype_weight = DType::kFP8E4M3;
    c.weight_scale = label.ends_with("per_channel") ? WeightScale::kPerChannel : WeightScale::kBlock128;
  }
  auto kernel = compile(c);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  const nlohmann::json &gates = kernel->report.at("gates");
  ASSERT_EQ(gates.size(), 6u);
  for (const auto &[gate, verdict] : gates.items()) {
    const std::string key = gate + " " + shape_key(n, m, dtype);
    const bool listed = expectations().count(key) > 0;
    const bool failed = verdict.at("applies").get<bool>() && !verdict.at("passed").get<bool>();
    if (failed && !listed)
      ADD_FAILURE() << "gate " << gate << " fails for " << shape_key(n, m, dtype) << ": "
                    << verdict.at("detail").get<std::string>();
    if (!failed && listed)
      ADD_FAILURE() << "gate " << gate << " now passes for " << shape_key(n, m, dtype)
                    << ": remove its line from tests/compiler/gfx950_gate_expectations.txt ("
                    << verdict.at("detail").get<std::string>() << ")";
  }
}

std::string shape_name(const ::testing::TestParamInfo<Shape> &info) {
  const auto [n, m, dtype] = info.param;
  return "n" + std::to_string(n) + "_m" + std::to_string(m) + "_" + dtype;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Gfx950Gates,
                         ::testing::Combine(::testing::Values(1536, 3072, 12288),
                                            ::testing::Values(1, 2, 4, 8, 16, 17, 32, 64, 128, 256, 512, 1024, 2048,
                                                              4096),
                                            ::testing::Values("bf16", "f16")),
                         shape_name);

// fp8 weights (issue 20), both scale kinds: the gemv up to M = 16 (the mma
// at N = 12288 M = 16), the mma above (v57).
constexpr const char *kFp8Labels[] = {"bf16_wfp8_per_channel", "bf16_wfp8_block128"};
constexpr int64_t kFp8Ms[] = {1, 2, 4, 8, 16, 32, 64, 128};
INSTANTIATE_TEST_SUITE_P(Fp8Shapes, Gfx950Gates,
                         ::testing::Combine(::testing::Values(1536, 3072, 12288), ::testing::ValuesIn(kFp8Ms),
                                            ::testing::ValuesIn(kFp8Labels)),
                         shape_name);

// Every listed line names a gate the model has and a shape the test covers:
// a line nothing checks would hide nothing and rot.
TEST(Gfx950GateExpectations, NameKnownGatesAndCoveredShapes) {
  const std::set<std::string> gates = {"workgroups_fill_cus",        "weight_bytes_in_flight",
                                       "no_single_load_wait_in_loop", "occupancy_holds_the_grid",
                                       "wide_epilogue_accesses",      "no_scratch"};
  std::set<std::string> shapes;
  for (int64_t n : {1536, 3072, 12288})
    for (int64_t m : {1, 2, 4, 8, 16, 17, 32, 64, 128, 256, 512, 1024, 2048, 4096})
      for (const char *d : {"bf16", "f16"}) shapes.insert(shape_key(n, m, d));
  for (int64_t n : {1536, 3072, 12288})
    for (int64_t m : kFp8Ms)
      for (const char *d : kFp8Labels) shapes.insert(shape_key(n, m, d));
  for (const std::string &line : expectations()) {
    const std::string gate = line.substr(0, line.find(' '));
    EXPECT_TRUE(gates.count(gate)) << "unknown gate in: " << line;
    EXPECT_TRUE(shapes.count(line.substr(line.find(' ') + 1))) << "shape not covered: " << line;
  }
}

}  // namespace
}  // namespace gatejit::compiler
