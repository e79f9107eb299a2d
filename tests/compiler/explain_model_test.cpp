// `gatejit explain` shows the performance model's prediction and the gates
// of the kernel the contract gets (research/gfx950-model.md), through the real
// CLI.
#include <gtest/gtest.h>

#include "compiler_test_support.h"

namespace gatejit::testing_support {
namespace {

TEST(ExplainModel, PrintsThePredictionAndTheFailingGates) {
  TempDir dir;
  const CliResult r = gatejit_cli(dir, "explain --m 256 --n 1536 --k 7168 --target gfx950");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("  model: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on AMD Instinct MI355X"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("limited by "), std::string::npos) << r.out;
  // The mma form at M = 256 keeps too few weight bytes in flight (issue 16;
  // the gemv at M = 4 did until v54).
  EXPECT_NE(r.out.find("  gates: failing weight_bytes_in_flight"), std::string::npos) << r.out;
  // The mma form at M = 17 passes every gate since v45-v46 (K split, wide
  // epilogue pieces), and so does the gemv at M = 4 since v54.
  const CliResult m4 = gatejit_cli(dir, "explain --m 4 --n 1536 --k 7168 --target gfx950");
  ASSERT_EQ(m4.rc, 0) << m4.err;
  EXPECT_NE(m4.out.find("  gates: all pass"), std::string::npos) << m4.out;
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
