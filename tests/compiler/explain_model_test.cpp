// `gatejit explain` shows the performance model's prediction and the gates
// of the kernel the contract gets (docs/gfx950-model.md), through the real
// CLI.
#include <gtest/gtest.h>

#include "compiler_test_support.h"

namespace gatejit::testing_support {
namespace {

TEST(ExplainModel, PrintsThePredictionAndTheFailingGates) {
  TempDir dir;
  const CliResult r = gatejit_cli(dir, "explain --m 4 --n 1536 --k 7168 --target gfx950");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("  model: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on AMD Instinct MI355X"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("limited by "), std::string::npos) << r.out;
  // The gemv form at M = 4 keeps too few weight bytes in flight (issue 16).
  EXPECT_NE(r.out.find("  gates: failing weight_bytes_in_flight"), std::string::npos) << r.out;
  // The mma form at M = 17 passes every gate since v45-v46 (K split, wide
  // epilogue pieces).
  const CliResult m17 = gatejit_cli(dir, "explain --m 17 --n 1536 --k 7168 --target gfx950");
  ASSERT_EQ(m17.rc, 0) << m17.err;
  EXPECT_NE(m17.out.find("  gates: all pass"), std::string::npos) << m17.out;
}

TEST(ExplainModel, Sm90KernelsArePredictedForTheH200) {
  TempDir dir;
  const CliResult r = gatejit_cli(dir, "explain --m 1 --n 1536 --k 7168 --target sm_90");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("on NVIDIA H200 SXM"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gatejit::testing_support
