// One record per target: every hardware fact the planner, the runtime and the
// performance model read (IREE's #iree_gpu.target in spirit). LLVM-free; the
// figures and their sources are in research/gfx950-model.md. A Target without a
// row here is a build mistake: target_info() aborts naming it rather than
// letting it take another target's numbers.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "gatejit/contract.h"

namespace gatejit {

// A figure known as a range (published spread, or what a run measured).
struct FactRange {
  double low = 0, high = 0;
  double mid() const { return 0.5 * (low + high); }
};

// The matrix instruction the mma templates use, and how fast one SIMD (AMD)
// or SM sub-partition (NVIDIA) issues it.
struct MatrixInstructionInfo {
  const char *name;   // "v_mfma_f32_16x16x32_bf16", "mma.sync.m16n8k16", "wgmma.m64nNk16"
  int m, n, k;
  double cycles;      // issue interval per SIMD / sub-partition, dense bf16
};

struct TargetInfo {
  Target target;
  const char *name;          // contract spelling: "gfx950", "sm_90"
  const char *device;        // what it stands for: "AMD Instinct MI355X", ...
  const char *triple;        // LLVM target triple
  const char *processor;     // LLVM CPU ("gfx950", "sm_90a")
  const char *llvm_features; // LLVM feature string
  bool amdgpu;
  // Compute units (CUs / SMs) and what a wave may use on one.
  int wave_size;
  int compute_units;
  // Dies the dispatcher deals workgroups to in turn (AMD XCDs: workgroup i
  // of a launch runs on die i mod dies, each die with its own L2); 1 where
  // the GPU is one die.
  int dies;
  int simds_per_cu;             // SIMDs (AMD) / SM sub-partitions (NVIDIA)
  int max_waves_per_simd;
  int max_threads_per_workgroup;
  int max_threads_per_cu;
  int registers_per_lane;       // 32-bit registers one lane may hold (gfx950: VGPR + AGPR, unified)
  int register_granule;         // allocation unit per lane
  int64_t registers_per_simd;   // 32-bit registers of one SIMD's / sub-partition's file, all lanes
  // Workgroup memory (LDS / shared memory), bytes.
  int64_t shared_per_cu;
  int64_t shared_static_budget;   // what a kernel takes without opting in (sm_90 static 48 KiB;
                                  // gfx9: the planner's share that leaves room for a second workgroup)
  int64_t shared_per_workgroup_max;
  int64_t shared_reserved_per_workgroup;  // taken per block besides what the kernel asks
  // Memory system.
  double hbm_peak_tbs;
  FactRange hbm_read_tbs;       // achievable streaming read
  FactRange latency_us;         // loaded DRAM round trip of one load
  FactRange l2_latency_us;      // round trip of a load that hits L2
  int64_t l2_bytes;
  FactRange l2_read_tbs;        // achievable L2 -> CU bandwidth, all CUs together
  FactRange shared_read_tbs;    // workgroup memory -> registers, all CUs together (bytes a clock x CUs x clock)
  int64_t last_level_cache_bytes;  // MALL / Infinity Cache; 0 where none
  // Global loads and stores of several elements need not be aligned to
  // their width (gfx9 runs in unaligned access mode, and LLVM widens adjacent
  // element accesses into dwordx2 / dwordx4 itself); on sm_90 a vector
  // access must be aligned to its size.
  bool unaligned_global_vectors;
  // Converts OCP fp8 e4m3 in hardware (gfx950 v_cvt_pk_f32_fp8, sm_90
  // cvt.rn.f16x2.e4m3x2); gfx942's conversions take the fnuz variant.
  bool ocp_fp8;
  // Arithmetic.
  double clock_ghz;
  MatrixInstructionInfo matrix;     // the fragment form's instruction (mma template, tiled fragments)
  double matrix_bf16_peak_tflops;
  FactRange matrix_bf16_tflops;     // achievable with `matrix`
  FactRange warpgroup_matrix_tflops;  // sm_90 wgmma, achievable; {0, 0} where none
  double vector_fp32_peak_tflops;
  // One kernel in a replayed graph: the cost of an (almost) empty kernel.
  FactRange launch_us;
};

// Every target's row; the order of Target's enumerators.
std::span<const TargetInfo> target_table();
// The row of `t`; aborts naming `t` when the table has none (a build mistake).
const TargetInfo &target_info(Target t);
// The row whose name or LLVM processor is `name` ("gfx950", "sm_90a"), or null.
const TargetInfo *find_target_info(std::string_view name);

// Waves of one workgroup's kind a SIMD can hold, given the registers a lane
// uses (VGPR + AGPR on AMD, registers per thread on NVIDIA) and the workgroup
// memory a workgroup takes. Occupancy as the hardware computes it.
struct Occupancy {
  int64_t waves_per_simd_by_registers = 0;
  int64_t workgroups_per_cu_by_shared = 0;
  int64_t workgroups_per_cu = 0;   // the smallest limit
  int64_t waves_per_simd = 0;      // workgroups_per_cu * waves per workgroup / SIMDs
  const char *limiter = "";        // "registers", "workgroup memory", "waves", "threads"
};
Occupancy occupancy(const TargetInfo &t, int64_t registers_per_lane, int64_t shared_bytes, int64_t workgroup_threads);

// Waves per SIMD a grid of `workgroups` places at once: its workgroups per
// CU (capped at what the hardware holds by waves and threads: a larger grid
// runs in rounds whatever the registers) times their waves, over the SIMDs.
int64_t waves_per_simd_placed(const TargetInfo &t, int64_t workgroups, int64_t workgroup_threads);

}  // namespace gatejit
