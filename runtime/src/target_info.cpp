#include "gatejit/target_info.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>

namespace gatejit {
namespace {

constexpr int64_t KiB = 1024, MiB = 1024 * 1024;

// Sources per figure: research/gfx950-model.md ("The target table"). Rows in the
// order of Target's enumerators.
constexpr std::array<TargetInfo, 3> kTargets = {{
    {
        .target = Target::kGfx950,
        .name = "gfx950",
        .device = "AMD Instinct MI355X (CDNA4)",
        .triple = "amdgcn-amd-amdhsa",
        .processor = "gfx950",
        .llvm_features = "",
        .amdgpu = true,
        .wave_size = 64,
        .compute_units = 256,
        .dies = 8,  // 8 XCDs of 32 CUs
        .simds_per_cu = 4,
        .max_waves_per_simd = 8,
        .max_threads_per_workgroup = 1024,
        .max_threads_per_cu = 2048,
        .registers_per_lane = 512,  // 256 VGPR + 256 AGPR, one unified file
        .register_granule = 8,
        .registers_per_simd = 512 * 64,
        .shared_per_cu = 160 * KiB,
        .shared_static_budget = 64 * KiB,
        .shared_per_workgroup_max = 160 * KiB,
        .shared_reserved_per_workgroup = 0,
        .hbm_peak_tbs = 8.0,
        .hbm_read_tbs = {5.5, 6.5},
        .latency_us = {0.5, 0.9},
        .l2_latency_us = {0.25, 0.45},
        .l2_bytes = 8 * 4 * MiB,  // 4 MiB per XCD, 8 XCDs
        .l2_read_tbs = {20.0, 40.0},
        .shared_read_tbs = {137.6, 157.3},  // 256 B a clock a CU (CDNA4 doubled CDNA3's 128) x 256 x 2.1-2.4 GHz
        .last_level_cache_bytes = 256 * MiB,
        .unaligned_global_vectors = true,
        .ocp_fp8 = true,
        .clock_ghz = 2.4,
        .matrix = {"v_mfma_f32_16x16x32_bf16", 16, 16, 32, 16.0},
        .matrix_bf16_peak_tflops = 2516.6,
        .matrix_bf16_tflops = {1500.0, 1900.0},
        .warpgroup_matrix_tflops = {0, 0},
        .vector_fp32_peak_tflops = 157.3,
        .launch_us = {0.6, 1.2},
    },
    {
        .target = Target::kGfx942,
        .name = "gfx942",
        .device = "AMD Instinct MI300X (CDNA3)",
        .triple = "amdgcn-amd-amdhsa",
        .processor = "gfx942",
        .llvm_features = "",
        .amdgpu = true,
        .wave_size = 64,
        .compute_units = 304,
        .dies = 8,  // 8 XCDs of 38 CUs
        .simds_per_cu = 4,
        .max_waves_per_simd = 8,
        .max_threads_per_workgroup = 1024,
        .max_threads_per_cu = 2048,
        .registers_per_lane = 512,
        .register_granule = 8,
        .registers_per_simd = 512 * 64,
        .shared_per_cu = 64 * KiB,
        .shared_static_budget = 64 * KiB,
        .shared_per_workgroup_max = 64 * KiB,
        .shared_reserved_per_workgroup = 0,
        .hbm_peak_tbs = 5.3,
        .hbm_read_tbs = {3.8, 4.3},
        .latency_us = {0.6, 1.0},
        .l2_latency_us = {0.25, 0.45},
        .l2_bytes = 8 * 4 * MiB,
        .l2_read_tbs = {15.0, 30.0},
        .shared_read_tbs = {73.9, 81.7},  // 128 B a clock a CU x 304 x 1.9-2.1 GHz
        .last_level_cache_bytes = 256 * MiB,
        .unaligned_global_vectors = true,
        .ocp_fp8 = false,
        .clock_ghz = 2.1,
        .matrix = {"v_mfma_f32_16x16x16_bf16", 16, 16, 16, 16.0},
        .matrix_bf16_peak_tflops = 1307.4,
        .matrix_bf16_tflops = {700.0, 950.0},
        .warpgroup_matrix_tflops = {0, 0},
        .vector_fp32_peak_tflops = 163.4,
        .launch_us = {1.0, 2.0},
    },
    {
        .target = Target::kSm90,
        .name = "sm_90",
        .device = "NVIDIA H200 SXM (Hopper)",
        .triple = "nvptx64-nvidia-cuda",
        // sm_90a: every sm_90 device has the architecture-specific
        // instructions, and the wgmma form of mma_tiled needs them.
        .processor = "sm_90a",
        .llvm_features = "+ptx80",
        .amdgpu = false,
        .wave_size = 32,
        .compute_units = 132,
        .dies = 1,
        .simds_per_cu = 4,
        .max_waves_per_simd = 16,
        .max_threads_per_workgroup = 1024,
        .max_threads_per_cu = 2048,
        .registers_per_lane = 255,
        .register_granule = 8,
        .registers_per_simd = 16384,
        .shared_per_cu = 228 * KiB,
        .shared_static_budget = 48 * KiB,
        .shared_per_workgroup_max = 227 * KiB,
        .shared_reserved_per_workgroup = 1 * KiB,
        .hbm_peak_tbs = 4.8,
        .hbm_read_tbs = {3.9, 4.3},
        .latency_us = {0.6, 0.9},
        .l2_latency_us = {0.2, 0.35},
        .l2_bytes = 60 * MiB,  // what the H200 reports (bench/target_probe.py)
        .l2_read_tbs = {9.0, 12.0},
        .shared_read_tbs = {27.0, 33.5},  // 128 B a clock an SM x 132 x 1.6-1.98 GHz (loaded clocks)
        .last_level_cache_bytes = 0,
        .unaligned_global_vectors = false,
        .ocp_fp8 = true,
        .clock_ghz = 1.98,
        .matrix = {"mma.sync.m16n8k16", 16, 8, 16, 8.0},
        .matrix_bf16_peak_tflops = 989.4,
        .matrix_bf16_tflops = {450.0, 600.0},
        .warpgroup_matrix_tflops = {660.0, 790.0},
        .vector_fp32_peak_tflops = 66.9,
        .launch_us = {1.0, 1.2},
    },
}};

static_assert(kTargets[0].target == Target::kGfx950 && kTargets[1].target == Target::kGfx942 &&
              kTargets[2].target == Target::kSm90, "rows in the order of Target's enumerators");

}  // namespace

std::span<const TargetInfo> target_table() { return kTargets; }

const TargetInfo &target_info(Target t) {
  for (const TargetInfo &row : kTargets)
    if (row.target == t) return row;
  std::fprintf(stderr, "gatejit: target %d has no row in the target table (runtime/src/target_info.cpp)\n",
               static_cast<int>(t));
  std::abort();
}

const TargetInfo *find_target_info(std::string_view name) {
  for (const TargetInfo &row : kTargets)
    if (name == row.name || name == row.processor) return &row;
  return nullptr;
}

Occupancy occupancy(const TargetInfo &t, int64_t registers_per_lane, int64_t shared_bytes, int64_t workgroup_threads) {
  Occupancy o;
  const int64_t waves_per_group = std::max<int64_t>(1, (workgroup_threads + t.wave_size - 1) / t.wave_size);
  const int64_t granule = t.register_granule;
  const int64_t regs = std::max<int64_t>(granule, (registers_per_lane + granule - 1) / granule * granule);
  // A wave's registers come from its SIMD's file: lanes x registers each.
  o.waves_per_simd_by_registers =
      std::min<int64_t>(t.max_waves_per_simd, t.registers_per_simd / (regs * t.wave_size));
  const int64_t waves_per_simd_of_group = (waves_per_group + t.simds_per_cu - 1) / t.simds_per_cu;
  const int64_t by_registers = o.waves_per_simd_by_registers / waves_per_simd_of_group;
  const int64_t per_group_shared = shared_bytes + (shared_bytes > 0 ? t.shared_reserved_per_workgroup : 0);
  o.workgroups_per_cu_by_shared = per_group_shared > 0 ? t.shared_per_cu / per_group_shared : 1 << 20;
  const int64_t by_threads = t.max_threads_per_cu / (waves_per_group * t.wave_size);
  const int64_t by_waves = t.max_waves_per_simd / waves_per_simd_of_group;
  o.workgroups_per_cu = std::min({by_registers, o.workgroups_per_cu_by_shared, by_threads, by_waves});
  o.limiter = o.workgroups_per_cu == by_registers               ? "registers"
              : o.workgroups_per_cu == o.workgroups_per_cu_by_shared ? "workgroup memory"
              : o.workgroups_per_cu == by_threads                ? "threads"
                                                                 : "waves";
  o.waves_per_simd = o.workgroups_per_cu * waves_per_group / t.simds_per_cu;
  return o;
}

int64_t waves_per_simd_placed(const TargetInfo &t, int64_t workgroups, int64_t workgroup_threads) {
  auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  const int64_t waves_per_group = std::max<int64_t>(1, ceil_div(workgroup_threads, t.wave_size));
  const int64_t held = std::min<int64_t>(t.max_waves_per_simd * t.simds_per_cu / waves_per_group,
                                         t.max_threads_per_cu / std::max<int64_t>(1, workgroup_threads));
  const int64_t per_cu = std::min(ceil_div(workgroups, t.compute_units), std::max<int64_t>(1, held));
  return ceil_div(per_cu * waves_per_group, t.simds_per_cu);
}

}  // namespace gatejit
