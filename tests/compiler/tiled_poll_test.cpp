// The tiled form's K split meeting by poll (templates/split_poll_tile.mlir,
// v94): the real pipeline's code objects, gfx950's own plans, sm_90's table
// and its mirror of gfx950's plans (gfx950_plan=1).
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/compiler_test_support.h"
#include "gatejit/compiler/compiler.h"
#include "gatejit/contract.h"

namespace gatejit {
namespace {

using namespace testing_support;

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    const size_t first = l.find_first_not_of(" \t");
    if (first != std::string::npos) lines.push_back(l.substr(first));
  }
  return lines;
}
bool starts_with(const std::string &s, const std::string &prefix) { return s.rfind(prefix, 0) == 0; }
bool is_poll_load(const std::string &l) {
  return starts_with(l, "global_load_dwordx2") && l.find(" sc1") != std::string::npos;
}

// gfx950's tiled splits (N = 1536 M = 97-256) meet by poll in one round: no
// arrival atomic, no fence; every pair of partials of the other splits is
// one 8-byte device-scope load (sc1), and they go out together, as many as
// the load counter holds (63), before the first wait. Each split's pairs of
// a thread lie within 4 KiB, so its loads share one address and carry the
// rest as offsets: an address a split. (The arrival's layout, 16-byte groups
// a lane, gave an address a pair: 408 VGPRs at M = 128.) poll=0 brings the
// atomic back.
TEST(TiledPoll, Gfx950PollsEveryPairInOneRoundFromOneAddressASplit) {
  for (int64_t m : {97, 128, 256}) {
    SCOPED_TRACE("m=" + std::to_string(m));
    ScopedMmaTuning tuning{""};
    const Contract c = seed_mma_row(Target::kGfx950, m);
    auto compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const nlohmann::json &r = compiled->report;
    ASSERT_EQ(r.value("template_file", ""), "mma_tiled");
    const int64_t splits = r["tuning"].value("SPLITS", 1);
    ASSERT_GT(splits, 1);
    EXPECT_EQ(r["tuning"].value("SPLIT_POLL", 0), 1);
    EXPECT_TRUE(r["plan_facts"].value("split_poll", false));
    EXPECT_EQ(r["plan_facts"].value("reduction_rounds", 0), 1);
    EXPECT_LE(r["kernels"][0].value("vgpr_count", 999), 256);  // two waves a SIMD
    EXPECT_EQ(r["kernels"][0].value("scratch_bytes", -1), 0);
    const std::vector<std::string> isa = lines_of(isa_of(c));
    auto has = [&](const char *prefix) {
      return std::any_of(isa.begin(), isa.end(), [&](const std::string &l) { return starts_with(l, prefix); });
    };
    EXPECT_FALSE(has("global_atomic"));
    EXPECT_FALSE(has("buffer_wbl2"));
    constexpr int64_t kPairsALane = 8;  // 64 x 64 tiles, 256 lanes: 16 partials
    const int64_t polls = std::count_if(isa.begin(), isa.end(), is_poll_load);
    EXPECT_EQ(polls, (splits - 1) * kPairsALane);
    auto first = std::find_if(isa.begin(), isa.end(), is_poll_load);
    ASSERT_NE(first, isa.end());
    int64_t together = 0;
    for (auto it = first; it != isa.end() && !starts_with(*it, "s_waitcnt vmcnt"); ++it) together += is_poll_load(*it);
    EXPECT_GE(together, std::min<int64_t>(polls, 63));
    std::set<std::string> addresses;
    const std::regex address(R"(global_load_dwordx2 v\[\d+:\d+\], (v\[\d+:\d+\]|v\d+), )");
    for (const std::string &l : isa) {
      std::smatch found;
      if (is_poll_load(l) && std::regex_search(l, found, address)) addresses.insert(found[1]);
    }
    EXPECT_EQ(int64_t(addresses.size()), splits - 1);
    // A split's pairs of a thread are a wave's 8-byte pairs apart: 512-byte
    // steps from the split's address (wave-major, then pair, then lane).
    std::set<int64_t> offsets;
    const std::regex offset(R"(offset:(\d+))");
    for (const std::string &l : isa) {
      std::smatch found;
      if (is_poll_load(l)) offsets.insert(std::regex_search(l, found, offset) ? std::stoll(found[1]) : 0);
    }
    std::set<int64_t> steps;
    for (int64_t j = 0; j < kPairsALane; ++j) steps.insert(j * 64 * 8);
    EXPECT_EQ(offsets, steps);
    // Each producer stores its 8 pairs, and the polling split zeroes every
    // pair it read (whether each store lands where its poll reads is the
    // GPU suite's to see: gfx950's and the mirror's bundles on the H200).
    const int64_t stores = std::count_if(isa.begin(), isa.end(), [](const std::string &l) {
      return starts_with(l, "global_store_dwordx2") && l.find(" sc1") != std::string::npos;
    });
    EXPECT_EQ(stores, kPairsALane + polls);
    tuning.set("poll=0");
    const std::string arrival = isa_of(c);
    EXPECT_NE(arrival.find("global_atomic"), std::string::npos);
  }
}

// The model charges the poll one round trip where the arrival costs three,
// so gfx950's tiled rows are predicted faster by about two round trips.
TEST(TiledPoll, ChargedOneRoundTripNotThree) {
  for (int64_t m : {128, 256}) {
    SCOPED_TRACE("m=" + std::to_string(m));
    ScopedMmaTuning tuning{""};
    auto poll = compiler::compile(seed_mma_row(Target::kGfx950, m));
    tuning.set("poll=0");
    auto arrival = compiler::compile(seed_mma_row(Target::kGfx950, m));
    ASSERT_TRUE(poll.ok() && arrival.ok());
    ASSERT_EQ(poll->report["plan_facts"]["reduction_rounds"], arrival->report["plan_facts"]["reduction_rounds"]);
    const double saved = serial_mid_us(arrival->report) - serial_mid_us(poll->report);
    EXPECT_GT(saved, 2 * 0.25) << poll->report["code_facts"].dump() << arrival->report["code_facts"].dump();
    EXPECT_LT(saved, 3 * 0.9);
  }
}

// Only a grid the GPU holds in one round polls, counted on the GPU that
// runs it: gfx950's 64 x 64 splits at N = 1536 M = 97-256 (480 workgroups)
// fit gfx950's 2 x 256 but not the H200's 3 x 132, so their mirror keeps
// the arrival. A poll of more rounds than two keeps it too: each round
// waits for its own loads (the H200 ran gfx950's 10-way split mirrored, its
// polls in 5 rounds of two splits, 4-5% slower than the arrival). poll=1
// polls any split grid (the GPU suite's mirror of gfx950's splits; not
// gfx950's instantiation: sm_90's registers cut its rounds).
TEST(TiledPoll, OnlyWhereItsGridAndRoundsFit) {
  {
    ScopedMmaTuning tuning{""};
    auto own = compiler::compile(seed_mma_row(Target::kGfx950, 256));
    ASSERT_TRUE(own.ok()) << own.status().to_string();
    ASSERT_EQ(own->report["tuning"].value("SPLITS", 0), 5);
    EXPECT_EQ(own->report["tuning"].value("SPLIT_POLL", 0), 1);
    tuning.set("gfx950_plan=1");
    for (int64_t m : {128, 256}) {
      auto mirrored = compiler::compile(seed_mma_row(Target::kSm90, m));
      ASSERT_TRUE(mirrored.ok()) << mirrored.status().to_string();
      EXPECT_EQ(mirrored->report["model"].value("workgroups", 0), 480) << m;
      EXPECT_EQ(mirrored->report["tuning"].value("SPLIT_POLL", 1), 0) << m;
    }
    tuning.set("gfx950_plan=1,poll=1");
    auto forced = compiler::compile(seed_mma_row(Target::kSm90, 128));
    ASSERT_TRUE(forced.ok()) << forced.status().to_string();
    ASSERT_EQ(forced->report["tuning"].value("SPLITS", 0), 10);
    ASSERT_EQ(forced->report["tuning"].value("SPLIT_ROUND", 0), 2);
    EXPECT_EQ(forced->report["tuning"].value("SPLIT_POLL", 0), 1);
    EXPECT_EQ(forced->report["plan_facts"].value("reduction_rounds", 0), 5);
    // gfx950's own grid with its polls in 3 rounds (the arrival's rounds
    // of 64 registers) keeps the arrival.
    tuning.set("oneround=0");
    auto rounds = compiler::compile(seed_mma_row(Target::kGfx950, 128));
    ASSERT_TRUE(rounds.ok()) << rounds.status().to_string();
    ASSERT_EQ(rounds->report["tuning"].value("SPLIT_ROUND", 0), 4);  // 9 splits polled in 3 rounds
    EXPECT_EQ(rounds->report["tuning"].value("SPLIT_POLL", 1), 0);
  }
  {
    ScopedMmaTuning tuning{""};
    auto table = compiler::compile(seed_mma_row(Target::kSm90, 64));
    ASSERT_TRUE(table.ok()) << table.status().to_string();
    ASSERT_GT(table->report["tuning"].value("SPLITS", 0), 1);
    EXPECT_EQ(table->report["tuning"].value("SPLIT_POLL", 0), 1);
    EXPECT_EQ(table->report["plan_facts"].value("reduction_rounds", 0), 1);
  }
}

}  // namespace
}  // namespace gatejit
