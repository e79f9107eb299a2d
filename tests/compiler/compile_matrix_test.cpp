// The compile matrix: every (target, M, shape, dtype, activation, template)
// case below goes through the real pipeline (template -> MLIR -> LLVM -> code
// object) and must produce a well-formed code object for its target.
//
// Coverage: the full cross product (3 x 6 x 6 x 2 x 2 x 2 = 864 compiles, about
// a minute on 2 cores; one test per target x M x shape, 108 tests) of
//   target   gfx950, gfx942, sm_90
//   M        1, 2, 4, 8, 16, dynamic with m_max 16
//   shape    (N, K) = (1536, 7168) [seed], (3072, 7168), (12288, 7168),
//            (4096, 2048), (1000, 1000) [K*2 bytes is a multiple of 16, so
//            auto still picks gemv; N is no multiple of the block], and the
//            seed shape with padded leading dimensions ld_hidden = ld_weight
//            = K + 2 (not 16-byte aligned: auto must fall back to generic and
//            say why)
//   dtype    bf16, f16
//   act      sigmoid, silu
//   template auto (gemv where the documented rule allows) and generic forced
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "gatejit/compiler/compiler.h"
#include "gatejit/contract.h"
#include "gatejit/kernel_binary.h"
#include "gatejit/target_info.h"
#include "gatejit/template_choice.h"

namespace gatejit {
namespace {

struct Shape {
  int64_t n, k;
  int64_t ld_pad = 0;  // added to K for ld_hidden/ld_weight; 0 = packed
};

struct MatrixCase {
  Target target;
  int64_t m;  // 0 = dynamic with m_max 16
  Shape shape;
  DType dtype;
  Activation act;
  TemplateKind tmpl;

  Contract contract() const {
    Contract c;
    c.target = target;
    if (m == 0) {
      c.m_dynamic = true;
      c.m = 0;
      c.m_max = 16;
    } else {
      c.m = m;
    }
    c.n = shape.n;
    c.k = shape.k;
    c.dtype_hidden = c.dtype_weight = c.dtype_attn = c.dtype_out = dtype;
    if (shape.ld_pad) c.ld_hidden = c.ld_weight = shape.k + shape.ld_pad;
    c.act = act;
    c.template_kind = tmpl;
    return c;
  }

  // The documented rule (docs/templates.md): both specialised templates need
  // 16-byte aligned rows and K a whole number of 16-byte vectors; then mma on
  // sm_90 from M = 2 and at M = 1 where 2048 < N <= 3072 (v51) and on gfx950 above M = 16,
  // or above M = 8 where N > 16 x 256 CUs (gfx942 has no mma), gemv for the
  // rest of M <= 16, generic otherwise.
  std::string expected_template() const {
    if (tmpl == TemplateKind::kGeneric) return "generic";
    if (tmpl == TemplateKind::kGemv) return "gemv";  // forced (only where it can serve)
    const int64_t eb = dtype_bytes(dtype);
    const int64_t ld = shape.k + shape.ld_pad;
    if ((ld * eb) % 16 != 0 || (shape.k * eb) % 16 != 0) return "generic";
    const int64_t m_max = m == 0 ? 16 : m;
    if (target == Target::kSm90 && (m_max >= 2 || (shape.n > 2048 && shape.n <= 3072))) return "mma";
    if (target == Target::kGfx950 && (m_max > 16 || (m_max > 8 && shape.n > 4096))) return "mma";
    // gfx950 at a fixed M = 15-16 where 2-4 grid rows of at most 128
    // 16-column tiles fill the 256 CUs one workgroup a CU, K 3072-7168: the
    // mma's thin grid rows (v84, v86, v87, v99).
    const int64_t col_tiles = (shape.n + 15) / 16, thin_rows = (256 + col_tiles - 1) / col_tiles;
    if (target == Target::kGfx950 && m != 0 && m_max >= 15 && thin_rows >= 2 && thin_rows <= 4 &&
        col_tiles * thin_rows <= 256 && shape.k >= 3072 && shape.k <= 7168)
      return "mma";
    return m_max <= 16 ? "gemv" : "generic";
  }
};

std::string case_name(const MatrixCase &p) {
  std::string s = std::string(target_name(p.target)) + " m=" + (p.m == 0 ? "dynamic(16)" : std::to_string(p.m)) +
                  " n=" + std::to_string(p.shape.n) + " k=" + std::to_string(p.shape.k);
  if (p.shape.ld_pad) s += " ld=k+" + std::to_string(p.shape.ld_pad);
  return s + " " + dtype_name(p.dtype) + " " + activation_name(p.act) + " template=" + template_name(p.tmpl);
}

// One test per (target, M, shape); it compiles every dtype x act x template
// case of that group (8 compiles), so that a per-test process (ctest) pays the
// process start-up once per 8 compiles, not once per compile.
struct MatrixGroup {
  Target target;
  int64_t m;  // 0 = dynamic with m_max 16
  Shape shape;
};

std::string group_name(const testing::TestParamInfo<MatrixGroup> &info) {
  const MatrixGroup &g = info.param;
  std::string s = std::string(target_name(g.target)) + "_m" + (g.m == 0 ? "dyn16" : std::to_string(g.m)) + "_n" +
                  std::to_string(g.shape.n) + "_k" + std::to_string(g.shape.k);
  if (g.shape.ld_pad) s += "_ldpad" + std::to_string(g.shape.ld_pad);
  for (char &ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

std::vector<MatrixGroup> build_matrix() {
  const Target targets[] = {Target::kGfx950, Target::kGfx942, Target::kSm90};
  const int64_t ms[] = {1, 2, 4, 8, 16, 0, 32, 128, 300};
  const Shape shapes[] = {{1536, 7168}, {3072, 7168}, {12288, 7168}, {4096, 2048}, {1000, 1000}, {1536, 7168, 2}};
  std::vector<MatrixGroup> groups;
  for (Target t : targets)
    for (int64_t m : ms)
      for (const Shape &shape : shapes) groups.push_back({t, m, shape});
  return groups;
}

// Compiles one case and checks its code object; returns the code (empty on failure).
std::vector<uint8_t> check_case(const MatrixCase &p) {
  const Contract c = p.contract();
  auto compiled = compiler::compile(c);
  EXPECT_TRUE(compiled.ok()) << compiled.status().to_string();
  if (!compiled.ok()) return {};
  const KernelBinary &kb = compiled->binary;
  const nlohmann::json &r = compiled->report;
  EXPECT_FALSE(kb.code.empty());
  EXPECT_EQ(kb.report_json, r.dump());
  EXPECT_EQ(kb.target, p.target);
  EXPECT_EQ(kb.toolchain, compiler::fingerprint());

  // Template choice: auto picks gemv exactly where the documented rule allows.
  const std::string expected_template = p.expected_template();
  EXPECT_EQ(r.value("template", ""), expected_template) << r.value("reason", "");
  const std::string reason = r.value("reason", "");
  EXPECT_FALSE(reason.empty());
  if (p.shape.ld_pad && p.tmpl == TemplateKind::kAuto) {
    EXPECT_TRUE(reason.find("ld_hidden") != std::string::npos || reason.find("ld_weight") != std::string::npos)
        << "reason should name the leading dimension: " << reason;
  }
  EXPECT_NE(kb.symbol.find(expected_template), std::string::npos) << kb.symbol;

  // Each workgroup barrier of the template is one barrier instruction in
  // the code, and no helper is left as a call. LLVM must not copy a barrier
  // into both sides of a thread-dependent branch (a warp split across two
  // copies hangs). This matrix (16-bit, M <= 16) held that even before v88
  // made every function convergent; the case that did not is
  // Fp8OutPlan.KSplitKeepsEachBarrierOneInstruction. The tiled form's K loop
  // is unrolled by its stages, so its barriers multiply; every other form
  // calls each helper with a barrier once.
  if (r.value("template_file", "") != "mma_tiled") {
    auto gpu = compiler::emit_stage(c, compiler::Stage::kGpu);
    EXPECT_TRUE(gpu.ok()) << gpu.status().to_string();
    int64_t template_barriers = 0;
    for (size_t at = 0; gpu.ok() && (at = gpu->find("gpu.barrier", at)) != std::string::npos; at += 11)
      ++template_barriers;
    const char *barrier = target_is_amdgpu(p.target) ? "s_barrier" : "bar.sync";
    EXPECT_EQ(r["instructions"]["histogram"].value(barrier, int64_t(0)), template_barriers) << barrier;
    if (target_is_amdgpu(p.target)) EXPECT_EQ(r["instructions"]["histogram"].value("s_swappc_b64", int64_t(0)), 0);
  }

  // Launch geometry covers the output.
  EXPECT_TRUE(r.contains("grid") && r.contains("tiles") && r.contains("workgroup_size"));
  if (!r.contains("grid") || !r.contains("tiles") || !r.contains("workgroup_size")) return {};
  // (The tiles: the grid but for a persistent one, whose workgroups loop over them.)
  const int64_t m_launch = p.m == 0 ? 16 : p.m;
  EXPECT_GE(int64_t(r["tiles"][0].get<uint32_t>()) * kb.geometry.n_per_block, p.shape.n);
  EXPECT_EQ(r["tiles"][1].get<uint32_t>(), kb.geometry.grid_y(m_launch));
  // sm_90 mma above M = 16 takes the tiled form where K is a whole number of
  // 64-element stages (kernel_plan.cpp, docs/templates.md); gfx950 where
  // 128 x 64 tiles fill the CUs three times over (v74), and from M = 128
  // where 64 x 128 tiles fill one round of two a CU at least three quarters
  // (v77) or 64 x 64 tiles fit that round (v76).
  const int64_t target_cus = target_info(p.target).compute_units;
  auto amd_tiles = [&](int64_t bn, int64_t bm) { return (p.shape.n + bn - 1) / bn * ((m_launch + bm - 1) / bm); };
  const bool amd_prefill = amd_tiles(128, 64) >= 3 * target_cus;
  const bool amd_tall = !amd_prefill && m_launch >= 128 && 4 * amd_tiles(64, 128) >= 6 * target_cus &&
                        amd_tiles(64, 128) <= 2 * target_cus;
  const bool gfx950_tiled = p.target == Target::kGfx950 &&
                            (amd_prefill || amd_tall || (m_launch >= 128 && amd_tiles(64, 64) <= 2 * target_cus));
  const bool tiled = expected_template == "mma" && p.shape.k % 64 == 0 &&
                     ((p.target == Target::kSm90 && m_launch > 16) || gfx950_tiled);
  EXPECT_EQ(r.value("template_file", ""), tiled ? "mma_tiled" : expected_template);
  // Grid rows cover M: one per row (generic); for mma one per block of hidden
  // rows (tiled sm_90: 32 up to M = 32 (mma.sync), then a warpgroup's 64, two
  // warpgroups' 128 above M = 1024; register-streamed: 128, or 32 on sm_90
  // above M = 32; on gfx950 32 at M = 17-256 where the row tiles of 32
  // columns do not outnumber the 256 CUs (v43, v48), 16 at M = 17-32 where
  // they do (v58)), or a single one.
  const int64_t amd_row_tiles = (p.shape.n + 31) / 32;
  const bool gfx950_mid = p.target == Target::kGfx950 && m_launch > 16 && m_launch <= 256 && amd_row_tiles <= 256;
  const bool gfx950_wide = p.target == Target::kGfx950 && m_launch > 16 && m_launch <= 32 && amd_row_tiles > 256;
  // ... and 16, with no K split, at a fixed M = 17-48 where 16-column tiles x
  // 16-row blocks fill the CUs (v70).
  // v83: or, at a fixed M = 15-32 where those leave CUs idle, at most 4 (v86)
  // grid rows of ceil(M / grid rows) rows that fill them.
  const int64_t col_tiles16 = (p.shape.n + 15) / 16, thin_grid_rows = (256 + col_tiles16 - 1) / col_tiles16;
  const bool gfx950_thin = p.target == Target::kGfx950 && p.m != 0 && m_launch >= 15 && m_launch <= 32 &&
                           thin_grid_rows <= 4 && col_tiles16 * ((m_launch + 15) / 16) < 256 &&
                           p.shape.k <= 7168 && (m_launch > 16 || expected_template == "mma");
  const bool gfx950_unsplit =
      gfx950_mid && p.m != 0 && m_launch <= 48 && p.shape.k <= 7168 &&
      (col_tiles16 * ((m_launch + 15) / 16) >= 256 || gfx950_thin);
  const int64_t mma_rows = gfx950_tiled && tiled                          ? (amd_tall ? 128 : 64)
                           : tiled                                        ? (m_launch <= 32 ? 32 : m_launch <= 1024 ? 64 : 128)
                           : p.target == Target::kSm90 && m_launch > 32 ? 32
                           : gfx950_unsplit                               ? 16
                           : gfx950_mid                                   ? 32
                           : gfx950_wide                                  ? 16
                                                                          : 128;
  const int64_t mma_stride = gfx950_thin && !tiled ? (m_launch + thin_grid_rows - 1) / thin_grid_rows : mma_rows;
  const uint32_t expected_rows = expected_template == "generic" ? uint32_t(m_launch)
                                 : expected_template == "mma" ? uint32_t((m_launch + mma_stride - 1) / mma_stride)
                                                              : 1u;
  EXPECT_EQ(r["tiles"][1].get<uint32_t>(), expected_rows);
  // Grid z splits K in the tiled form, into splits of at least 4 stages;
  // and in the register-streamed form on AMD targets above M = 16 where the
  // row tiles leave CUs idle, and always in its 16-wave blocks (v45, v48):
  // then the grid covers every CU (unless the waves would run out of 64-K
  // steps), at most about twice over, each wave keeping at least one step.
  EXPECT_EQ(r["tiles"][2].get<uint32_t>(), kb.geometry.k_blocks);
  const int64_t grid_xy = int64_t(r["tiles"][0].get<uint32_t>()) * r["tiles"][1].get<uint32_t>();
  if (tiled) {
    EXPECT_GE(kb.geometry.k_blocks, 1u);
    EXPECT_LE(int64_t(kb.geometry.k_blocks), std::max<int64_t>(1, p.shape.k / 64 / 4));
  } else if (gfx950_unsplit && expected_template == "mma") {
    EXPECT_EQ(kb.geometry.k_blocks, 1u);
    EXPECT_GE(grid_xy, target_info(p.target).compute_units) << "the unsplit blocks leave CUs idle";
  } else if (expected_template == "mma" && target_is_amdgpu(p.target) && m_launch > 16 &&
             (m_launch <= 256 || grid_xy < target_info(p.target).compute_units)) {
    const int64_t splits = kb.geometry.k_blocks, waves = kb.geometry.block_x / 64;
    const int64_t cus = target_info(p.target).compute_units;
    const int64_t steps = (p.shape.k + 63) / 64;
    // 16-wave blocks (M <= 256, N <= 8192) split at least 4 ways: a wave's
    // K range at most 2 steps at K = 7168; the 8-wave form above M = 64
    // (v53) at least 5 ways, at most 3 steps.
    const int64_t least = waves == 16                   ? std::min<int64_t>(4, steps / waves)
                          : waves == 8 && m_launch > 64 ? std::min<int64_t>(5, steps / waves)
                                                        : 1;
    const int64_t cover = std::max<int64_t>(least, (cus + grid_xy - 1) / grid_xy);
    EXPECT_GE(splits, std::min(cover, std::max<int64_t>(1, steps / waves))) << "the K split leaves CUs idle";
    EXPECT_LE(splits, 2 * cover);
    EXPECT_LE(splits * waves, std::max<int64_t>(1, steps));
    // One round of the workgroups the GPU holds (32 waves a CU), unless the
    // minimum split forces more (v52).
    EXPECT_LE(splits * grid_xy, std::max<int64_t>(least * grid_xy, cus * 32 / waves)) << "split into rounds";
  } else {
    EXPECT_EQ(kb.geometry.k_blocks, 1u);
  }
  EXPECT_EQ(r["workgroup_size"][0].get<uint32_t>(), kb.geometry.block_x);
  EXPECT_EQ(kb.geometry.block_x % target_wave_size(p.target), 0u);

  EXPECT_TRUE(r.contains("kernels") && r["kernels"].size() == 1) << r.dump();
  if (!r.contains("kernels") || r["kernels"].size() != 1) return {};
  const nlohmann::json &k = r["kernels"][0];
  if (target_is_amdgpu(p.target)) {
    EXPECT_EQ(kb.format, BinaryFormat::kHsaco);
    EXPECT_TRUE(kb.code.size() >= 4 && std::memcmp(kb.code.data(), "\x7f" "ELF", 4) == 0)
        << "not an ELF code object";
    EXPECT_EQ(r.value("format", ""), "hsaco");
    EXPECT_EQ(r.value("target_id", ""), target_triple_id(p.target));
    EXPECT_EQ(k.value("name", ""), kb.symbol);
    EXPECT_EQ(k.value("symbol", ""), kb.symbol + ".kd");
    EXPECT_EQ(k.value("wave_size", 0), 64);
    EXPECT_EQ(k.value("kernarg_bytes", 0), kKernelArgBytes);
    EXPECT_GE(k.value("max_flat_workgroup_size", 0), int(kb.geometry.block_x));
    EXPECT_GT(k.value("vgpr_count", 0), 0);
    EXPECT_EQ(k.value("scratch_bytes", -1), 0);
    EXPECT_EQ(r["instructions"].value("undecodable_words", -1), 0);
    EXPECT_GT(r["instructions"]["histogram"].value("s_endpgm", 0), 0);
  } else {
    EXPECT_EQ(kb.format, BinaryFormat::kPtx);
    const std::string ptx(kb.code.begin(), kb.code.end());
    // sm_90a: the architecture-specific instructions (wgmma) of every sm_90 device.
    EXPECT_NE(ptx.find(".target sm_90a"), std::string::npos);
    EXPECT_NE(ptx.find(".entry " + kb.symbol + "("), std::string::npos) << "no .entry for " << kb.symbol;
    EXPECT_EQ(r.value("format", ""), "ptx");
    EXPECT_EQ(r.value("target_id", ""), "sm_90a");
    EXPECT_EQ(k.value("symbol", ""), kb.symbol);
    EXPECT_GT(r["instructions"].value("total", 0), 0);
    EXPECT_GT(r["instructions"]["histogram"].value("ret", 0), 0);
  }
  return kb.code;
}

class CompileMatrix : public testing::TestWithParam<MatrixGroup> {};

TEST_P(CompileMatrix, EveryDtypeActAndTemplateProducesACodeObject) {
  const MatrixGroup &g = GetParam();
  const std::pair<DType, Activation> combos[] = {{DType::kBF16, Activation::kSigmoid},
                                                 {DType::kBF16, Activation::kSilu},
                                                 {DType::kF16, Activation::kSigmoid},
                                                 {DType::kF16, Activation::kSilu}};
  for (auto [dtype, act] : combos) {
    const MatrixCase auto_case{g.target, g.m, g.shape, dtype, act, TemplateKind::kAuto};
    const MatrixCase generic_case{g.target, g.m, g.shape, dtype, act, TemplateKind::kGeneric};
    std::vector<uint8_t> auto_code, generic_code;
    {
      SCOPED_TRACE(case_name(auto_case));
      auto_code = check_case(auto_case);
    }
    {
      SCOPED_TRACE(case_name(generic_case));
      generic_code = check_case(generic_case);
    }
    // Where auto falls back to generic it compiles the same shape-free
    // generic kernel as the forced template; where it picks gemv the code
    // is a different (specialised) kernel.
    if (!auto_code.empty() && !generic_code.empty()) {
      SCOPED_TRACE(case_name(auto_case));
      if (auto_case.expected_template() != "generic") {
        EXPECT_NE(auto_code, generic_code);
      } else {
        EXPECT_EQ(auto_code, generic_code);
      }
    }
    // Where auto picks mma for a decode M, gemv must still compile when forced
    // (it is the gfx9xx decode template and the A/B reference).
    if (auto_case.expected_template() == "mma" && (g.m == 0 || g.m <= kGemvMaxM)) {
      const MatrixCase gemv_case{g.target, g.m, g.shape, dtype, act, TemplateKind::kGemv};
      SCOPED_TRACE(case_name(gemv_case));
      check_case(gemv_case);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTargets, CompileMatrix, testing::ValuesIn(build_matrix()), group_name);

}  // namespace
}  // namespace gatejit
