// The K split's poll meeting (templates/split_poll.mlir, session 18): the
// real pipeline's code objects, gfx950's own plans and their sm_90 mirror
// (gfx950_plan=1, the plans the GPU suite runs on the H200).
#include <gtest/gtest.h>

#include <string>

#include "compiler/compiler_test_support.h"
#include "gatejit/compiler/compiler.h"
#include "gatejit/contract.h"

namespace gatejit {
namespace {

using namespace testing_support;

struct Meeting {
  const char *atomic, *fence, *poll_load, *poll_store;
};
Meeting meeting_of(Target t) {
  if (t == Target::kGfx950) return {"global_atomic", "buffer_wbl2", "global_load_dword ", "global_store_dword "};
  return {"atom.global", "fence.", "ld.relaxed.gpu.global", "st.relaxed.gpu.global"};
}

// gfx950's register-streamed splits (N = 1536 M = 49-64; M = 96 asked for
// with tiled=0, v98 took the 64 x 64 tiles there) meet by poll: no arrival
// atomic, no fence, the polls relaxed loads at device scope; with poll=0 the
// same plan has both (so the test tells the two apart).
TEST(SplitPoll, MeetsWithoutArrivalOrFence) {
  for (Target t : {Target::kGfx950, Target::kSm90}) {
    for (int64_t m : {64, 96}) {
      SCOPED_TRACE(std::string(target_name(t)) + " m=" + std::to_string(m));
      const Meeting k = meeting_of(t);
      const std::string form = std::string(t == Target::kSm90 ? "gfx950_plan=1" : "") +
                               (m > 64 ? (t == Target::kSm90 ? ",tiled=0" : "tiled=0") : "");
      ScopedMmaTuning tuning{form.c_str()};
      const Contract c = seed_mma_row(t, m);
      auto compiled = compiler::compile(c);
      ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
      ASSERT_GT(compiled->report["tuning"].value("SPLITS", 1), 1);
      EXPECT_EQ(compiled->report["tuning"].value("SPLIT_POLL", 0), 1);
      EXPECT_TRUE(compiled->report["plan_facts"].value("split_poll", false));
      const std::string isa = isa_of(c);
      EXPECT_EQ(count_of(isa, k.atomic), 0);
      EXPECT_EQ(count_of(isa, k.fence), 0);
      if (t == Target::kGfx950) {
        // Device scope on gfx950: sc1 on the polls and the partials' stores.
        EXPECT_GT(count_of(isa, " sc1"), 0);
      } else {
        EXPECT_GT(count_of(isa, k.poll_load), 0);
        EXPECT_GT(count_of(isa, k.poll_store), 0);
      }
      tuning.set((form + (form.empty() ? "" : ",") + "poll=0").c_str());
      auto arrival = compiler::compile(c);
      ASSERT_TRUE(arrival.ok()) << arrival.status().to_string();
      EXPECT_EQ(arrival->report["tuning"].value("SPLIT_POLL", 1), 0);
      const std::string arrival_isa = isa_of(c);
      EXPECT_GT(count_of(arrival_isa, k.atomic), 0);
      if (t == Target::kSm90) EXPECT_EQ(count_of(arrival_isa, k.poll_load), 0);
    }
  }
}

// The polling split loads its attn pieces before it polls, so the tail is
// one round trip (attn and the partials together), and the polls keep the
// occupancy the plan asked for: each split's words of a piece are addressed
// from one pointer (a pointer a word took gfx950 M = 96 from 54 to 82
// VGPRs, past the 64 its 8 waves a SIMD allow).
TEST(SplitPoll, OneRoundTripAfterTheLoopAndTheRegistersOfEightWaves) {
  for (int64_t m : {49, 64, 96}) {
    SCOPED_TRACE("gfx950 m=" + std::to_string(m));
    ScopedMmaTuning tuning{m > 64 ? "tiled=0" : ""};  // (v98: the 64 x 64 tiles from M = 65)
    auto compiled = compiler::compile(seed_mma_row(Target::kGfx950, m));
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    ASSERT_EQ(compiled->report["tuning"].value("SPLIT_POLL", 0), 1);
    EXPECT_EQ(compiled->report["code_facts"].value("tail_round_trips", -1), 1);
    EXPECT_LE(compiled->report["kernels"][0].value("vgpr_count", 999), 64);
    EXPECT_EQ(compiled->report["kernels"][0].value("scratch_bytes", -1), 0);
  }
}

// The code facts take a device-scope access (sc1; PTX's relaxed ld/st) as a
// meeting, as they take the arrival's atomic: what follows reads what other
// workgroups wrote. With 8-column pieces the polling split's attn load is
// 16 bytes, and before that rule the straight-line main region ran on to
// it: the tail counted 0 round trips.
TEST(SplitPoll, ThePollIsInTheTail) {
  ScopedMmaTuning tuning{"rt=2,mtiles=2,splits=7,mstride=32,vw=8"};
  auto compiled = compiler::compile(seed_mma_row(Target::kGfx950, 32));
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  ASSERT_EQ(compiled->report["tuning"].value("SPLIT_POLL", 0), 1);
  ASSERT_EQ(compiled->report["tuning"].value("VW", 0), 8);
  EXPECT_EQ(compiled->report["code_facts"].value("tail_round_trips", -1), 1);
}

// Only a split grid that fits one round of what the GPU holds polls (the
// H200 ran a 2.9-round poll 34% slower); the model charges the poll one
// round trip where the arrival costs three.
TEST(SplitPoll, OnlyInOneRoundAndChargedOneRoundTrip) {
  {
    ScopedMmaTuning tuning{"tiled=0,splits=4"};
    auto one_round = compiler::compile(seed_mma_row(Target::kSm90, 64));
    ASSERT_TRUE(one_round.ok()) << one_round.status().to_string();
    EXPECT_EQ(one_round->report["tuning"].value("SPLIT_POLL", 0), 1);
    auto rounds = compiler::compile(seed_mma_row(Target::kSm90, 1));  // 768 blocks of 24 warps: 2.9 rounds
    ASSERT_TRUE(rounds.ok()) << rounds.status().to_string();
    EXPECT_EQ(rounds->report["tuning"].value("SPLITS", 1), 4);
    EXPECT_EQ(rounds->report["tuning"].value("SPLIT_POLL", 1), 0);
  }
  ScopedMmaTuning tuning{""};
  auto poll = compiler::compile(seed_mma_row(Target::kGfx950, 64));
  tuning.set("poll=0");
  auto arrival = compiler::compile(seed_mma_row(Target::kGfx950, 64));
  ASSERT_TRUE(poll.ok() && arrival.ok());
  ASSERT_EQ(poll->report["code_facts"]["tail_round_trips"], arrival->report["code_facts"]["tail_round_trips"]);
  // Two round trips fewer: each between an L2 hit and a DRAM round trip.
  const double saved = serial_mid_us(arrival->report) - serial_mid_us(poll->report);
  EXPECT_GT(saved, 2 * 0.25);
  EXPECT_LT(saved, 2 * 0.9);
}

}  // namespace
}  // namespace gatejit
