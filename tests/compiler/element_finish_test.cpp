// The register-streamed mma's element-wise finish (ELEMENT_FINISH,
// templates/epilogue/finish_owned_elements.mlir): sm_90's decode rows take
// it, and with it one barrier between the block's reduction and the stores
// (the pieces need a second); no contract it cannot serve gets it, whatever
// the override asks.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "compiler/compiler_test_support.h"
#include "gatejit/contract.h"
#include "kernel_plan.h"
#include "tuning_override.h"

namespace gatejit {
namespace {

using namespace testing_support;

// Whether `c`, planned with the override `tuning`, finishes element-wise.
bool finishes_elementwise(const Contract &c, const char *tuning) {
  auto normal = normalize(c);
  EXPECT_TRUE(normal.ok()) << normal.status().message();
  auto o = compiler::TuningOverride::parse(tuning);
  EXPECT_TRUE(o.ok()) << o.status().message();
  if (!normal.ok() || !o.ok()) return false;
  auto plan = compiler::plan_kernel(*normal, *o);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  if (!plan.ok()) return false;
  const auto *streamed = std::get_if<compiler::StreamedSchedule>(&plan->schedule.form);
  return streamed && streamed->element_finish && plan->params.at("ELEMENT_FINISH") == "true";
}

TEST(ElementFinish, Sm90DecodeRowsMeetOnceBeforeTheirStores) {
  for (int64_t m : {2, 4, 8}) {
    SCOPED_TRACE("m=" + std::to_string(m));
    Contract c = seed_mma_row(Target::kSm90, m);
    c.template_kind = TemplateKind::kAuto;
    EXPECT_TRUE(finishes_elementwise(c, ""));
    EXPECT_EQ(count_of(isa_of(c), "bar.sync"), 1);
    ScopedMmaTuning pieces{"elements=0"};
    EXPECT_EQ(count_of(isa_of(c), "bar.sync"), 2);
  }
}

TEST(ElementFinish, OnlyWhereItCanServe) {
  // The table's rule: sm_90 to M = 8; not gfx950, not M = 16.
  EXPECT_FALSE(finishes_elementwise(seed_mma_row(Target::kSm90, 16), ""));
  EXPECT_FALSE(finishes_elementwise(seed_mma_row(Target::kGfx950, 4), ""));
  // The override reaches any target's unsplit 16-bit contract...
  EXPECT_TRUE(finishes_elementwise(seed_mma_row(Target::kGfx950, 4), "elements=1"));
  // ...but never a K split, an fp8 out or an fp8 weight (scales on the sums).
  EXPECT_FALSE(finishes_elementwise(seed_mma_row(Target::kSm90, 4), "elements=1,splits=2"));
  Contract fp8_out = seed_mma_row(Target::kSm90, 4);
  fp8_out.dtype_out = DType::kFP8E4M3;
  fp8_out.out_scale = OutScale::kPerTokenGroup128;
  EXPECT_FALSE(finishes_elementwise(fp8_out, "elements=1"));
  Contract fp8_weight = seed_mma_row(Target::kSm90, 4);
  fp8_weight.dtype_weight = DType::kFP8E4M3;
  fp8_weight.weight_scale = WeightScale::kPerChannel;
  EXPECT_FALSE(finishes_elementwise(fp8_weight, "elements=1"));
}

}  // namespace
}  // namespace gatejit
