// GATEJIT_MMA_TUNING, parsed once per compile (tuning_override.h): which
// items are taken, and that the planner reads the object it is given, not
// the environment (the fingerprint and the plan must see the same override).
#include <gtest/gtest.h>

#include "compiler/compiler_test_support.h"
#include "kernel_plan.h"
#include "tuning_override.h"

namespace gatejit::compiler {
namespace {

using namespace testing_support;

TEST(TuningOverride, TakesSizesAboveZeroAndSwitchesAtZero) {
  const TuningOverride o = TuningOverride::parse("rt=2,ksplit=0,tiled=0,bogus,=3,attn=-1,vecs=x,gwfirst=1");
  EXPECT_EQ(o.text, "rt=2,ksplit=0,tiled=0,bogus,=3,attn=-1,vecs=x,gwfirst=1");
  const std::map<std::string, int64_t, std::less<>> want = {{"rt", 2}, {"tiled", 0}, {"gwfirst", 1}};
  EXPECT_EQ(o.keys, want);
  EXPECT_TRUE(o.has("tiled"));
  EXPECT_EQ(o.at("rt"), 2);
  EXPECT_TRUE(TuningOverride::parse("").keys.empty());
}

TEST(TuningOverride, PlannerReadsTheObjectItIsGivenNotTheEnvironment) {
  ScopedMmaTuning scoped("ksplit=2");
  Contract c;  // the seed's shape, M = 4 on sm_90: the mma
  c.target = Target::kSm90;
  c.m = 4;
  c.n = 1536;
  c.k = 7168;
  auto normal = normalize(c);
  ASSERT_TRUE(normal.ok()) << normal.status().message();
  c = *normal;
  auto from_table = plan_kernel(c, TuningOverride{});
  ASSERT_TRUE(from_table.ok()) << from_table.status().to_string();
  EXPECT_NE(from_table->params.at("KSPLIT"), "2") << "the table's split, whatever the environment says";
  auto overridden = plan_kernel(c, TuningOverride::from_env());
  ASSERT_TRUE(overridden.ok()) << overridden.status().to_string();
  EXPECT_EQ(overridden->params.at("KSPLIT"), "2");
  EXPECT_EQ(overridden->tuning.text, "ksplit=2");
}

}  // namespace
}  // namespace gatejit::compiler
