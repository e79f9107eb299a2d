// The gfx950 part of the GPU suite (tests/gpu/gate_epilogue_gpu_test.cpp) on
// the emulated GPU, through the runtime's C API: the runtime resolves each
// call, loads the module and packs the arguments, the emulated backend runs
// it, and every output element is checked against the host reference. Where
// the GPU suite's K would make a case slow here, K is reduced and the test
// asserts that the reduced contract keeps the form (template, tile, K split
// and its meeting) of the GPU suite's.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <set>
#include <string>

#include "emulate/tuning_scope.h"
#include "gatejit/emulator/gate_run.h"

namespace gatejit::emulator {
namespace {

struct Totals {
  std::atomic<int64_t> cases{0}, elements{0}, exact{0}, instructions{0};
};
Totals g_totals;

class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    if (g_totals.cases == 0) return;
    std::printf("[emulate summary] emulated gfx950/gfx942: %lld cases, %lld elements checked (%lld required bit-exact), "
                "%lld instructions\n",
                (long long)g_totals.cases.load(), (long long)g_totals.elements.load(), (long long)g_totals.exact.load(),
                (long long)g_totals.instructions.load());
  }
};
const auto *g_env = ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

struct Case {
  int64_t m, n, k;
  DType dtype = DType::kBF16;
  Activation act = Activation::kSigmoid;
  Rounding rounding = Rounding::kBoundary;
  bool in_place = false;
  int64_t pad = 0;                 // extra elements per row of hidden and weight
  std::string expect;              // substring of the runtime's explanation ("direct launch": through the ABI)
  TemplateKind forced = TemplateKind::kAuto;
  WeightScale weight_scale = WeightScale::kNone;
  bool fp8_out = false;
  size_t misalign = 0, attn_out_misalign = 0;
  const char *tuning = nullptr;    // GATEJIT_MMA_TUNING: a form the default plan takes only at larger sizes
  // The GPU suite's case this one stands for, where it was made smaller (its
  // M, K; N if non-zero): the case must keep its form.
  int64_t suite_m = 0, suite_k = 0, suite_n = 0;
  int64_t m_max = 0;               // a dynamic-M kernel (m_max) launched at M = m
  Target target = Target::kGfx950;
};

std::string case_name(const Case &c) {
  std::string s = std::string(target_name(c.target)) + "_m" + std::to_string(c.m) + "_n" + std::to_string(c.n) + "_k" +
                  std::to_string(c.k) + "_" + dtype_name(c.dtype) + "_" + activation_name(c.act) + "_" +
                  rounding_name(c.rounding);
  if (c.m_max) s += "_dynamic" + std::to_string(c.m_max);
  if (c.in_place) s += "_inplace";
  if (c.pad) s += "_pad" + std::to_string(c.pad);
  if (c.forced != TemplateKind::kAuto) s += std::string("_") + template_name(c.forced);
  if (c.weight_scale != WeightScale::kNone) s += std::string("_wfp8_") + weight_scale_name(c.weight_scale);
  if (c.fp8_out) s += "_ofp8";
  if (c.misalign) s += "_misalign" + std::to_string(c.misalign);
  if (c.attn_out_misalign) s += "_attnoutmisalign" + std::to_string(c.attn_out_misalign);
  if (c.tuning) {
    s += "_tuned_";
    for (const char *p = c.tuning; *p; ++p) s += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
  }
  return s;
}
void PrintTo(const Case &c, std::ostream *os) { *os << case_name(c); }

Contract contract_of(const Case &c, int64_t m, int64_t n, int64_t k) {
  Contract ct;
  ct.target = c.target;
  ct.m = m, ct.n = n, ct.k = k;
  if (c.m_max) ct.m = 0, ct.m_dynamic = true, ct.m_max = c.m_max;
  ct.dtype_hidden = ct.dtype_attn = ct.dtype_out = ct.dtype_weight = c.dtype;
  if (c.weight_scale != WeightScale::kNone) ct.dtype_weight = DType::kFP8E4M3, ct.weight_scale = c.weight_scale;
  if (c.fp8_out) ct.dtype_out = DType::kFP8E4M3, ct.out_scale = OutScale::kPerTokenGroup128;
  if (c.pad) ct.ld_hidden = ct.ld_weight = k + c.pad;
  if (c.misalign % 16) ct.align = int64_t(c.misalign & -c.misalign);
  ct.act = c.act;
  ct.rounding = c.rounding;
  ct.template_kind = c.forced;
  return ct;
}


// `background`: through the runtime in background JIT mode with the shipped
// generic bundle: the generic kernel first, then the specialised one (three
// launches, each checked).
void run_case(const Case &c, bool background = false) {
  if (c.suite_m || c.suite_k || c.suite_n) {
    // The GPU suite's contract, planned as by default (no tuning).
    auto suite = compile_cached(contract_of(c, c.suite_m ? c.suite_m : c.m, c.suite_n ? c.suite_n : c.n,
                                            c.suite_k ? c.suite_k : c.k));
    TuningScope tuning(c.tuning);
    auto here = compile_cached(contract_of(c, c.m, c.n, c.k));
    ASSERT_TRUE(suite.ok() && here.ok()) << (suite.ok() ? here.status() : suite.status()).message();
    ASSERT_EQ(kernel_form(*here), kernel_form(*suite)) << "the smaller case does not keep the GPU suite's form";
  }
  TuningScope tuning(c.tuning);
  EmulatedGpu gpu(c.target);
  GateRunRequest r;
  r.contract = contract_of(c, c.m, c.n, c.k);
  r.launch_m = c.m;
  r.through_runtime = c.m_max == 0;
  r.in_place = c.in_place;
  r.misalign_bytes = c.misalign;
  r.attn_out_misalign = c.attn_out_misalign;
  r.seed = 0x5eed + uint64_t(c.m * 131 + c.n * 7 + c.k);
#ifdef GATEJIT_SHIPPED_BUNDLE_PATH
  if (background) {
    r.background_jit = true;
    r.bundles = {GATEJIT_SHIPPED_BUNDLE_PATH};
    r.launches = 3;
  }
#endif
  auto report = run_gate(gpu, r);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const std::string &last_path = background ? report->paths.back() : report->path;
  EXPECT_NE(last_path.find(c.expect), std::string::npos) << "path: " << last_path;
  if (background) {
    if (!report->kernel.empty())  // compiled (a generic kernel from the bundle is not)
      EXPECT_EQ(report->launches.back().kernel, report->kernel) << "the last launch is not the contract's own kernel";
    if (c.forced != TemplateKind::kGeneric)
      EXPECT_NE(report->paths.front().find("generic ("), std::string::npos) << report->paths.front();
  }
  EXPECT_TRUE(report->passed()) << report->mismatches << " mismatches, " << report->unwritten << " unwritten of "
                                << report->checked << "; first: "
                                << (report->first_mismatches.empty() ? "" : report->first_mismatches[0]);
  EXPECT_EQ(report->checked, r.launches * (c.m * c.n + (c.fp8_out ? c.m * (c.n / 128) : 0)));
  ::testing::Test::RecordProperty("form", report->form);
  g_totals.cases++;
  g_totals.elements += report->checked;
  g_totals.exact += report->exact_required;
  for (const auto &l : report->launches) g_totals.instructions += int64_t(l.stats.instructions);
}

class EmulatedGpuSuite : public ::testing::TestWithParam<Case> {};
TEST_P(EmulatedGpuSuite, MatchesReference) { run_case(GetParam()); }

// Every mode serves the same values: cases of each form through the runtime
// again in background JIT mode (the generic kernel first, which the emulator
// runs slowly: hence a subset, see background_cases()).
class EmulatedGpuSuiteInBackgroundMode : public ::testing::TestWithParam<Case> {};
TEST_P(EmulatedGpuSuiteInBackgroundMode, MatchesReference) {
#ifndef GATEJIT_SHIPPED_BUNDLE_PATH
  GTEST_SKIP() << "no shipped generic bundle in this build (gatejit_generic_bundle)";
#else
  run_case(GetParam(), /*background=*/true);
#endif
}

// Field order: m, n, k, dtype, act, rounding, in_place, pad, expect.
std::vector<Case> cases() {
  using enum DType;
  const auto sig = Activation::kSigmoid, silu = Activation::kSilu;
  const auto b = Rounding::kBoundary, fused = Rounding::kFused;
  const auto pc = WeightScale::kPerChannel, b128 = WeightScale::kBlock128;
  const char *gemv = "specialised gemv", *mma = "specialised mma", *generic = "generic";
  std::vector<Case> v;
  // gemv (decode): the seed shape at M = 1..16, bf16 and f16, both activations, in place.
  v.push_back({1, 1536, 7168, kBF16, sig, b, false, 0, gemv});
  v.push_back({1, 1536, 7168, kF16, silu, b, true, 0, gemv});
  v.push_back({2, 1536, 7168, kBF16, silu, b, false, 0, gemv});
  v.push_back({4, 1536, 7168, kF16, sig, b, true, 0, gemv});
  v.push_back({8, 1536, 7168, kBF16, sig, b, false, 0, gemv});
  v.push_back({16, 1536, 7168, kF16, silu, b, true, 0, gemv});
  v.push_back({1, 1000, 1000, kBF16, sig, b, false, 0, gemv});  // K / 8 = 125 vectors: the tail loop
  v.push_back({2, 1000, 1088, kBF16, sig, b, false, 0, gemv});  // a partial tail step
  v.push_back({8, 1536, 7168, kBF16, sig, fused, false, 0, gemv});
  {
    Case c{1, 1536, 7168, kBF16, sig, b, false, 0, gemv};
    c.attn_out_misalign = 2;  // attn and out 2 bytes off (the contract's align covers hidden and weight)
    v.push_back(c);
  }
  // Thin decode's rows (N = 1024 and 2048).
  v.push_back({4, 1024, 7168, kBF16, sig, b, false, 0, gemv});
  v.push_back({1, 2048, 7168, kF16, silu, b, true, 0, gemv});
  // fp8 e4m3 weights, per channel and per 128 x 128 block, and an fp8 out.
  {
    Case c{1, 1536, 7168, kBF16, sig, b, false, 0, gemv};
    c.weight_scale = pc;
    v.push_back(c);
    c = Case{4, 1536, 7168, kF16, silu, b, false, 0, gemv};
    c.weight_scale = b128;
    v.push_back(c);
    c = Case{4, 1536, 7168, kBF16, sig, b, false, 0, gemv};
    c.fp8_out = true;
    v.push_back(c);
  }
  // Streamed mma: no K split (M = 32), K split met by poll (M = 64) and by
  // arrival; forced at M = 1; padded rows; misaligned attn/out; fp8.
  v.push_back({32, 1536, 7168, kBF16, sig, b, false, 0, mma});
  {
    Case c{64, 1536, 2048, kBF16, sig, b, false, 0, mma};
    c.suite_k = 7168;
    v.push_back(c);
    c = Case{64, 1536, 2048, kF16, silu, b, true, 0, mma};
    c.tuning = "poll=0";
    v.push_back(c);
    c = Case{64, 1536, 2048, kBF16, sig, b, false, 8, mma};
    c.suite_k = 7168;
    v.push_back(c);
    c = Case{1, 1536, 7168, kBF16, sig, b, false, 0, mma, TemplateKind::kMma};
    v.push_back(c);
    c = Case{8, 1536, 7168, kF16, silu, b, true, 0, mma, TemplateKind::kMma};
    c.attn_out_misalign = 6;
    v.push_back(c);
    c = Case{64, 1536, 2048, kBF16, sig, b, false, 0, mma};
    c.weight_scale = pc;
    v.push_back(c);
    c = Case{32, 1536, 2048, kF16, silu, b, false, 0, mma};
    c.weight_scale = b128;
    v.push_back(c);
    c = Case{32, 1536, 2048, kBF16, sig, b, false, 0, mma};
    c.fp8_out = true;
    v.push_back(c);
  }
  // The streamed mma's element-wise finish (sm_90's decode plan; elements=1
  // asks gfx950 for it), attn loaded before the loop and after it: in place
  // with a partial column group and the fused rounding (its ds_read2 writes
  // the register it reads its address from), and attn and out misaligned.
  {
    Case c{3, 1000, 1024, kF16, silu, fused, true, 0, mma, TemplateKind::kMma};
    c.tuning = "elements=1,attn=2";
    v.push_back(c);
    c = Case{8, 1536, 1024, kBF16, sig, b, false, 0, mma, TemplateKind::kMma};
    c.tuning = "elements=1,attn=1";
    c.attn_out_misalign = 6;
    v.push_back(c);
  }
  // Tiled mma: 64 x 64 with its K split met by poll and by arrival, 128 x 128,
  // 128 x 64 and the persistent grid, at sizes that keep the emulated run short.
  {
    Case c{128, 1536, 1024, kBF16, sig, b, false, 0, mma};
    c.suite_k = 7168;
    v.push_back(c);
    c = Case{128, 1536, 1024, kF16, silu, b, true, 0, mma};
    c.tuning = "poll=0";
    v.push_back(c);
    c = Case{256, 1536, 1024, kBF16, sig, b, false, 0, mma};
    c.tuning = "bm=128,bn=128";
    c.suite_m = 512, c.suite_k = 7168;
    v.push_back(c);
    c = Case{256, 768, 512, kF16, silu, b, false, 0, mma};
    c.tuning = "bm=128,bn=64";
    v.push_back(c);
    c = Case{256, 1536, 256, kBF16, sig, b, true, 0, mma};
    c.tuning = "persistent=1";
    v.push_back(c);
  }
  // Dynamic M: one kernel per bucket, launched at two values of M.
  for (int64_t m : {3, 13}) {
    Case c{m, 1536, 7168, kBF16, sig, b, false, 0, "direct launch"};
    c.m_max = 16;
    v.push_back(c);
  }
  for (int64_t m : {20, 90}) {
    Case c{m, 1536, 2048, kF16, silu, b, false, 0, "direct launch"};
    c.m_max = 128;
    v.push_back(c);
  }
  // The generic fallback: unaligned rows, a misaligned base, f32.
  v.push_back({1, 1000, 999, kBF16, sig, b, false, 0, generic});
  v.push_back({3, 1000, 999, kF16, silu, b, true, 0, generic});
  v.push_back({4, 1000, 999, kF32, sig, b, false, 0, generic});
  {
    Case c{2, 1536, 1024, kBF16, sig, b, false, 0, "generic (align = 2"};
    c.misalign = 2;
    v.push_back(c);
  }
  // gfx942 (MI300X): the gemv and the generic fallback (its plans take no mma).
  for (Case c : {Case{1, 1536, 7168, kBF16, sig, b, false, 0, gemv}, Case{16, 1536, 7168, kF16, silu, b, true, 0, gemv},
                 Case{4, 1000, 999, kBF16, sig, b, false, 0, generic}}) {
    c.target = Target::kGfx942;
    v.push_back(c);
  }
  return v;
}
INSTANTIATE_TEST_SUITE_P(Emulated, EmulatedGpuSuite, ::testing::ValuesIn(cases()),
                         [](const auto &info) { return case_name(info.param); });

// One case of each form whose generic stand-in the emulator runs in seconds:
// the gemv (gfx950 and gfx942), the streamed mma with its K split and with
// the fp8 out's band meeting, the persistent tiled mma, an fp8 weight, and a
// contract only the generic kernel serves.
std::vector<Case> background_cases() {
  const std::set<std::string> names = {
      "gfx950_m1_n1536_k7168_bf16_sigmoid_boundary",
      "gfx950_m64_n1536_k2048_bf16_sigmoid_boundary",
      "gfx950_m32_n1536_k2048_bf16_sigmoid_boundary_ofp8",
      "gfx950_m4_n1536_k7168_bf16_sigmoid_boundary_ofp8",
      "gfx950_m256_n1536_k256_bf16_sigmoid_boundary_inplace_tuned_persistent_1",
      "gfx950_m1_n1536_k7168_bf16_sigmoid_boundary_wfp8_per_channel",
      "gfx950_m2_n1536_k1024_bf16_sigmoid_boundary_misalign2",
      "gfx942_m1_n1536_k7168_bf16_sigmoid_boundary",
  };
  std::vector<Case> out;
  for (const Case &c : cases())
    if (names.count(case_name(c))) out.push_back(c);
  if (out.size() != names.size()) std::abort();  // a renamed case: keep the list in step
  return out;
}
INSTANTIATE_TEST_SUITE_P(Emulated, EmulatedGpuSuiteInBackgroundMode, ::testing::ValuesIn(background_cases()),
                         [](const auto &info) { return case_name(info.param); });

}  // namespace
}  // namespace gatejit::emulator
