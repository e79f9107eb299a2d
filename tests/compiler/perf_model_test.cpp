// The performance model's terms respond to the facts they read: each test
// changes one input and checks the term it names (and the limiter) moves
// the way the hardware would.
#include <gtest/gtest.h>

#include <cmath>

#include "perf_model.h"

namespace gatejit::compiler {
namespace {

// A gfx950 decode kernel like the seed: 384 workgroups of 256 lanes, every
// lane with 448 bytes of its loads in flight in one round trip, one round
// trip after the loop (the attn load).
ModelInput seed_like() {
  ModelInput in;
  in.target = &target_info(Target::kGfx950);
  in.contract.target = Target::kGfx950;
  in.contract.m = in.contract.m_max = 1;
  in.contract.n = 1536;
  in.contract.k = 7168;
  in.contract.ld_hidden = in.contract.ld_weight = 7168;
  in.contract.ld_attn = in.contract.ld_out = 1536;
  in.plan.form = "gemv";
  in.plan.weight_rows_per_block = 4;
  in.plan.hidden_rows_per_block = 1;
  in.grid_blocks[0] = 384;
  in.block_threads = 256;
  in.registers_per_lane = 64;
  in.code.loop_round_trips = 1;
  in.code.bytes_in_flight_at_wait = 448;
  in.code.tail_round_trips = 1;
  return in;
}

double term(const Prediction &p, const std::string &name) {
  for (const ModelTerm &t : p.terms)
    if (t.name == name) return t.us.mid();
  ADD_FAILURE() << "no term " << name;
  return 0;
}

TEST(PerfModel, SeedStructureIsBandwidthBoundNearTheSeedsTime) {
  const Prediction p = predict(seed_like());
  EXPECT_EQ(p.limiter, "hbm");
  EXPECT_EQ(p.hbm_bytes, 2 * (7168 + 1536 * 7168 + 2 * 1536));
  // The seed measured 5.42 us on MI355X (research/gfx950-vs-seed.md): the
  // model's range holds it.
  EXPECT_LE(p.us.low, 5.42);
  EXPECT_GE(p.us.high, 5.42);
}

TEST(PerfModel, FewerWorkgroupsInFlightMakeLittlesLawTheLimiter) {
  ModelInput in = seed_like();
  in.grid_blocks[0] = 48;
  in.code.bytes_in_flight_at_wait = 32;  // two 16-byte loads a lane per round trip
  const Prediction p = predict(in);
  EXPECT_EQ(p.limiter, "in_flight");
  EXPECT_GT(term(p, "in_flight"), 4 * term(predict(seed_like()), "in_flight"));
  const auto gates = plan_gates(in, p);
  EXPECT_FALSE(gates[0].passed) << gates[0].detail;  // workgroups_fill_cus
  EXPECT_FALSE(gates[1].passed) << gates[1].detail;  // weight_bytes_in_flight
}

TEST(PerfModel, RoundTripsAfterTheLoopAddLatency) {
  ModelInput in = seed_like();
  const Prediction one = predict(in);
  in.code.tail_round_trips = 33;  // a 2-byte epilogue waiting per element
  const Prediction many = predict(in);
  EXPECT_GT(many.point_us - one.point_us, 32 * in.target->l2_latency_us.low);
  EXPECT_EQ(many.limiter, "latency chain");
}

TEST(PerfModel, HiddenReReadsCountInL2Bytes) {
  ModelInput in = seed_like();
  in.contract.m = in.contract.m_max = 16;
  in.plan.hidden_rows_per_block = 16;
  const Prediction p16 = predict(in);
  // Each of the 384 workgroups reads 16 hidden rows of K.
  EXPECT_EQ(p16.l2_bytes - predict(seed_like()).l2_bytes,
            384 * 15 * 7168 * 2 + 2 * 15 * 1536 * 2);
}

// v83: a grid row past M loads clamped copies of row M - 1 (the same lines),
// so the hidden bytes are M rows a grid column, not the grid rows' whole
// blocks: at M = 33 in blocks of 16 (grid y 3), 33 rows, not 48.
TEST(PerfModel, HiddenBytesCountOnlyRowsInsideM) {
  ModelInput in = seed_like();
  in.plan.form = "mma";
  in.plan.weight_rows_per_block = 16;
  in.plan.hidden_rows_per_block = 16;
  in.grid_blocks[0] = 96;
  in.grid_blocks[1] = 3;
  in.contract.m = in.contract.m_max = 33;
  const Prediction p = predict(in);
  const int64_t weight = 3 * 1536 * 7168 * 2, epilogue = 33 * 1536 * 4;
  EXPECT_EQ(p.l2_bytes, weight + 96 * 33 * 7168 * 2 + epilogue);
  // Blocks of 11 rows (the same grid) read the same bytes.
  in.plan.hidden_rows_per_block = 11;
  EXPECT_EQ(predict(in).l2_bytes, p.l2_bytes);
}

// sm_90, M = 2048, N = 1536, K = 7168: the benchmark's prefill row.
ModelInput sm90_prefill() {
  ModelInput in;
  in.target = &target_info(Target::kSm90);
  in.contract.target = Target::kSm90;
  in.contract.m = in.contract.m_max = 2048;
  in.contract.n = 1536;
  in.contract.k = 7168;
  return in;
}

TEST(PerfModel, MatrixFormsAreComputeBoundAtLargeM) {
  ModelInput in = sm90_prefill();
  in.plan = {.form = "mma_tiled", .weight_rows_per_block = 192, .hidden_rows_per_block = 128, .stages_ahead = 3,
             .stage_bytes = 40960, .matrix = true, .warpgroup_matrix = true};
  in.grid_blocks[0] = 8;
  in.grid_blocks[1] = 16;
  in.block_threads = 256;
  const Prediction p = predict(in);
  EXPECT_EQ(p.limiter, "matrix");
  EXPECT_FALSE(p.memory_bound);
  const auto gates = plan_gates(in, p);
  EXPECT_FALSE(gates[0].applies);  // 128 blocks < 132 SMs is allowed when compute-bound
}

// The fragment form (v72): reads from workgroup memory and products take
// turns, so their times add; a second round of lone blocks costs a whole
// round; blocks with fewer than two waves a SIMD run no faster than two.
TEST(PerfModel, FragmentReadsAndProductsAddUp) {
  ModelInput in = sm90_prefill();
  // 64 x 64 tiles, 2 x 2 warps: each stage row read by two warps.
  const int64_t shared = (2 * 64 * 2 + 2 * 64 * 2) * 7168;
  in.plan = {.form = "mma_tiled", .weight_rows_per_block = 64, .hidden_rows_per_block = 64, .stages_ahead = 3,
             .stage_bytes = 16384, .matrix = true, .shared_operand_bytes = shared};
  in.grid_blocks[0] = 24;
  in.grid_blocks[1] = 32;
  in.block_threads = 128;
  in.shared_bytes = 65536;  // 3 blocks an SM
  const Prediction p = predict(in);
  const TargetInfo &t = *in.target;
  const double reads = double(shared) * 768 / (t.shared_read_tbs.mid() * 1e6);
  EXPECT_EQ(p.limiter, "shared_then_matrix");
  EXPECT_FALSE(p.memory_bound);
  // 768 blocks, 396 at a time: 3 + 3 on the busiest SM, 6 x 132 / 768.
  EXPECT_GT(term(p, "shared_then_matrix"), 1.03 * (reads + term(p, "matrix")) - 0.01);
  // The wgmma form reads no fragments: no such term.
  in.plan.shared_operand_bytes = 0;
  for (const ModelTerm &m : predict(in).terms) EXPECT_NE(m.name, "shared_then_matrix");
  // 408 blocks: a round of 396 (3 on the busiest SM), then 12 lone blocks
  // that count as 2 each: 5 blocks' time where 768 took 6.
  in.plan.shared_operand_bytes = shared;
  in.grid_blocks[1] = 17;
  const double rounds = term(predict(in), "shared_then_matrix");
  EXPECT_NEAR(rounds, term(p, "shared_then_matrix") * 5 / 6, 0.01 * rounds);
  // 96 blocks of 4 warps, one an SM: each runs as if it shared its SM with a
  // second, so 132 / 96 x 2 of the even spread.
  in.grid_blocks[1] = 4;
  const Prediction lone = predict(in);
  const double even = (double(shared) * 96 / (t.shared_read_tbs.mid() * 1e6)) +
                      term(lone, "matrix") * 96.0 / 132.0;
  EXPECT_NEAR(term(lone, "shared_then_matrix"), even * 2 * 132 / 96, 0.05 * even);
}

TEST(PerfModel, ScratchAndNarrowAccessesFailTheirGates) {
  ModelInput in = seed_like();
  in.scratch_bytes = 16;
  in.code.narrow_global_loads = 1;
  const auto gates = plan_gates(in, predict(in));
  EXPECT_FALSE(gates[4].passed);  // wide_epilogue_accesses
  EXPECT_FALSE(gates[5].passed);  // no_scratch
}

// A K split across workgroups pays its meeting after the loads: the
// release fence waits for the partial stores, the arrival atomic returns and
// the last workgroup acquires before it may load them. Three more round trips
// in the serial part, each between an L2 hit and a DRAM round trip (v50: 2;
// v52: 3, from the H200), once per round of workgroups the GPU holds (v52).
TEST(PerfModel, AKSplitPaysItsMeetingInTheSerialPart) {
  ModelInput in = seed_like();
  in.plan.form = "mma";
  in.plan.matrix = true;
  in.grid_blocks[0] = 48;
  const Prediction alone = predict(in);
  in.grid_blocks[2] = 7;
  in.plan.splits = 7;
  in.plan.reduction_rounds = 1;
  const Prediction split = predict(in);
  const TargetInfo &t = target_info(Target::kGfx950);
  ASSERT_EQ(split.resident_workgroups, split.workgroups);  // one round: 336 workgroups
  EXPECT_NEAR(split.serial_us.low - alone.serial_us.low, 3 * t.l2_latency_us.low, 1e-9);
  EXPECT_NEAR(split.serial_us.high - alone.serial_us.high, 3 * t.latency_us.high, 1e-9);
  // More workgroups than the GPU holds meet in rounds, each waiting for its
  // own meeting (v52): twice the rows, twice the serial part past the launch.
  in.grid_blocks[1] = 2 * split.occupancy.workgroups_per_cu * t.compute_units / (48 * 7) + 1;
  const Prediction rounds = predict(in);
  const double per_round_low = split.serial_us.low - t.launch_us.low;
  const double expected_rounds =
      std::ceil(double(rounds.workgroups) / double(rounds.resident_workgroups));
  ASSERT_GE(expected_rounds, 2);
  EXPECT_NEAR(rounds.serial_us.low - t.launch_us.low, expected_rounds * per_round_low, 1e-9);
}

// Narrow accesses beside 8- or 16-byte stores are an element-wise fallback next to
// a wide path (the mma form checks the attn/out pointers at run time): the
// gate passes, and says so.
TEST(PerfModel, AWidePathBesideAnElementwiseFallbackPassesTheEpilogueGate) {
  ModelInput in = seed_like();
  in.code.narrow_global_loads = 8;
  in.code.narrow_global_stores = 8;
  in.code.wide_global_stores = 1;
  const auto gates = plan_gates(in, predict(in));
  ASSERT_EQ(gates[4].name, "wide_epilogue_accesses");
  EXPECT_TRUE(gates[4].passed) << gates[4].detail;
  EXPECT_NE(gates[4].detail.find("element-wise fallback"), std::string::npos) << gates[4].detail;
  in.code.wide_global_stores = 0;
  EXPECT_FALSE(plan_gates(in, predict(in))[4].passed);
}

}  // namespace
}  // namespace gatejit::compiler
