// The generic kernel set (what the shipped bundle holds): its size on each
// target, counted by hand from the contract rules, and its coverage: every
// valid contract, whatever its shape, strides, alignment or M, has its
// generic kernel in the set of its target.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "gatejit/template_choice.h"
#include "generic_kernel_set.h"
#include "shipped_bundle.h"
#include "support/random_contract.h"

namespace gatejit {
namespace {

std::set<std::string> keys_of(Target t) {
  std::set<std::string> keys;
  for (const Contract &c : generic_kernel_contracts(t)) keys.insert(contract_key(c));
  return keys;
}

// Per target, act (2) x rounding (2) x the dtype combinations: bf16, f16,
// f32 alike (3), and where the target converts OCP e4m3 (gfx950, sm_90) a
// bf16 or f16 hidden/attn with an fp8 weight (2 scale kinds) and/or an fp8
// out: 2 x (3 weights x 2 outs - 1) = 10 more.
TEST(GenericKernelSet, HoldsOneKernelPerKeyAndTheCountTheRulesAllow) {
  EXPECT_EQ(generic_kernel_contracts(Target::kGfx950).size(), 4u * 13);
  EXPECT_EQ(generic_kernel_contracts(Target::kSm90).size(), 4u * 13);
  EXPECT_EQ(generic_kernel_contracts(Target::kGfx942).size(), 4u * 3);
  for (Target t : {Target::kGfx950, Target::kGfx942, Target::kSm90}) {
    const auto set = generic_kernel_contracts(t);
    EXPECT_EQ(keys_of(t).size(), set.size());
    for (const Contract &c : set) {
      EXPECT_EQ(c.template_kind, TemplateKind::kGeneric);
      EXPECT_EQ(c.target, t);
      EXPECT_TRUE(validate(c).ok()) << canonical_text(c);
    }
  }
  // gfx942 takes no OCP e4m3.
  for (const Contract &c : generic_kernel_contracts(Target::kGfx942)) {
    EXPECT_NE(c.dtype_weight, DType::kFP8E4M3);
    EXPECT_NE(c.dtype_out, DType::kFP8E4M3);
  }
}

TEST(GenericKernelSet, CoversEveryValidContract) {
  std::set<std::string> all;
  for (Target t : {Target::kGfx950, Target::kGfx942, Target::kSm90})
    for (const std::string &k : keys_of(t)) all.insert(k);
  std::mt19937_64 rng(46);
  int valid = 0;
  std::set<Target> targets;
  std::set<std::pair<DType, DType>> fp8;
  for (int i = 0; i < 20000; ++i) {
    auto c = normalize(testing_support::random_contract(rng));
    if (!c.ok()) continue;
    ++valid;
    targets.insert(c->target);
    fp8.insert({c->dtype_weight, c->dtype_out});
    const auto choice = choose_template(*c);
    ASSERT_TRUE(choice.ok()) << canonical_text(*c);
    EXPECT_TRUE(all.count(contract_key(generic_contract_for(*c)))) << canonical_text(*c);
  }
  // The spread is broad: every target, fp8 weights and outs both.
  EXPECT_GT(valid, 2000);
  EXPECT_EQ(targets.size(), 3u);
  EXPECT_TRUE(fp8.count({DType::kFP8E4M3, DType::kFP8E4M3}));
}

TEST(ShippedBundle, SearchesBesideTheLibraryThenTheInstallPrefix) {
  const auto path = shipped_bundle_search_path("/opt/g/lib");
  ASSERT_GE(path.size(), 3u);
  EXPECT_EQ(path.front(), std::string("/opt/g/lib/") + kShippedBundleName);
  EXPECT_EQ(path.back().substr(path.back().size() - std::string("/gatejit/gatejit-generic.gjb").size()),
            "/gatejit/gatejit-generic.gjb");
  EXPECT_EQ(path.back().front(), '/');  // the configured prefix, absolute
  // The prefix layout relative to the library (lib -> share) comes before it.
  bool relative_share = false;
  for (const std::string &p : path) relative_share |= p.rfind("/opt/g/lib/", 0) == 0 && p.find("/share/gatejit/") != p.npos;
  EXPECT_TRUE(relative_share);
  // Without a known folder, only the install prefix.
  EXPECT_EQ(shipped_bundle_search_path("").size(), 1u);
}

}  // namespace
}  // namespace gatejit
