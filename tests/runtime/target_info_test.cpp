// The target table: its rows, the occupancy rule, and the names that reach it.
#include <gtest/gtest.h>

#include "gatejit/contract.h"
#include "gatejit/kernel_binary.h"
#include "gatejit/target_info.h"

namespace gatejit {
namespace {

TEST(TargetTable, HasARowPerTargetInEnumeratorOrder) {
  const auto table = target_table();
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0].target, Target::kGfx950);
  EXPECT_EQ(table[1].target, Target::kGfx942);
  EXPECT_EQ(table[2].target, Target::kSm90);
  for (const TargetInfo &t : table) {
    SCOPED_TRACE(t.name);
    EXPECT_EQ(&target_info(t.target), &t);
    EXPECT_GT(t.compute_units, 0);
    EXPECT_LE(t.hbm_read_tbs.low, t.hbm_read_tbs.high);
    EXPECT_LE(t.hbm_read_tbs.high, t.hbm_peak_tbs);
    EXPECT_LE(t.l2_latency_us.high, t.latency_us.high);
    EXPECT_LE(t.matrix_bf16_tflops.high, t.matrix_bf16_peak_tflops);
    EXPECT_EQ(max_shared_bytes(t.target), uint32_t(t.shared_per_workgroup_max));
  }
}

TEST(TargetTable, Gfx950FactsTheGatesUse) {
  const TargetInfo &t = target_info(Target::kGfx950);
  EXPECT_EQ(t.compute_units, 256);
  EXPECT_EQ(t.wave_size, 64);
  EXPECT_EQ(t.registers_per_lane, 512);  // VGPR + AGPR, unified
  EXPECT_EQ(t.shared_per_cu, 160 * 1024);
  EXPECT_TRUE(target_is_amdgpu(Target::kGfx950));
  EXPECT_FALSE(target_is_amdgpu(Target::kSm90));
  EXPECT_EQ(target_wave_size(Target::kSm90), 32);
}

// gfx950: 512 registers a lane shared by the waves of a SIMD, in granules of 8.
TEST(Occupancy, Gfx950RegistersDecideWavesPerSimd) {
  const TargetInfo &t = target_info(Target::kGfx950);
  EXPECT_EQ(occupancy(t, 64, 0, 256).waves_per_simd_by_registers, 8);
  EXPECT_EQ(occupancy(t, 128, 0, 256).waves_per_simd_by_registers, 4);
  EXPECT_EQ(occupancy(t, 132, 0, 256).waves_per_simd_by_registers, 3);  // 136 after the granule
  EXPECT_EQ(occupancy(t, 256, 0, 256).waves_per_simd_by_registers, 2);
  const Occupancy o = occupancy(t, 132, 0, 256);  // 4 waves a workgroup: one per SIMD
  EXPECT_EQ(o.workgroups_per_cu, 3);
  EXPECT_STREQ(o.limiter, "registers");
}

TEST(Occupancy, WorkgroupMemoryLimitsWorkgroupsPerCu) {
  const TargetInfo &t = target_info(Target::kGfx950);
  const Occupancy o = occupancy(t, 32, 64 * 1024, 256);
  EXPECT_EQ(o.workgroups_per_cu_by_shared, 2);  // 160 KiB / 64 KiB
  EXPECT_EQ(o.workgroups_per_cu, 2);
  EXPECT_STREQ(o.limiter, "workgroup memory");
  // sm_90 counts the 1 KiB the hardware reserves per block.
  const TargetInfo &h = target_info(Target::kSm90);
  EXPECT_EQ(occupancy(h, 0, 57 * 1024, 128).workgroups_per_cu_by_shared, 3);  // 228 / 58
}

TEST(TargetNames, ClangTargetIdsWithFeaturesAreAccepted) {
  EXPECT_EQ(*parse_target("gfx950:sramecc+:xnack-"), Target::kGfx950);
  EXPECT_EQ(*parse_target("gfx942:xnack+"), Target::kGfx942);
  EXPECT_EQ(*parse_target("sm_90a"), Target::kSm90);
  EXPECT_EQ(*parse_target("sm90"), Target::kSm90);
  const auto unknown = parse_target("gfx1100");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("allowed targets are gfx950, gfx942, sm_90"), std::string::npos)
      << unknown.status().message();
  const auto bad_feature = parse_target("gfx950:wavefrontsize32+");
  ASSERT_FALSE(bad_feature.ok());
  EXPECT_NE(bad_feature.status().message().find("feature 'wavefrontsize32+'"), std::string::npos);
  EXPECT_FALSE(parse_target("sm_90:xnack+").ok());
}

}  // namespace
}  // namespace gatejit
