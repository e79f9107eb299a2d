// Generated kernels on a real GPU through the runtime's C API: every template
// and M of the compiler's matrix on sm_90, bf16/f16, sigmoid/silu, out
// separate and in place, padded leading dimensions, dynamic M, the loader's
// generic fallback, graph replay with changed inputs, fp8 e4m3 weights with
// per-channel and 128 x 128 block scales, and proof that the checker catches
// a kernel that skips the boundary roundings or the weight scales.
//
// Kernels come from the bundle named by GATEJIT_TEST_BUNDLE (precompiled for
// sm_90 from tests/gpu/bundle_spec.json; the GPU machine has no LLVM), or,
// with GATEJIT_TEST_JIT=1, from the JIT: no bundle, the JIT library named by
// GATEJIT_JIT_LIBRARY compiles each kernel from its contract on first use
// into the disk cache ($GATEJIT_CACHE_DIR), which serves it from then on (a
// second run in a fresh process is all cache hits). With
// GATEJIT_TEST_JIT_MODE=background as well, the runtime runs in background JIT
// mode: each case's first call is served at once by whatever is loadable (the
// shipped generic kernel) and checked, then prepare() waits for the
// specialised kernel, which is checked as in the other modes. Where no GPU is
// present every test is skipped with the reason.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "support/cuda_driver.h"
#include "gatejit/env_flag.h"
#include "gatejit/gatejit.h"
#include "support/c_dtype.h"
#include "support/gate_reference.h"

namespace gatejit::gputest {
namespace {

using reference::HostTensor;

struct Totals {
  std::atomic<int64_t> cases{0}, elements{0}, exact_required{0};
};
Totals g_totals;

class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    if (g_totals.cases == 0) return;
    std::printf("[gpu summary] device %s: %lld cases, %lld elements checked, %lld (%.4f%%) required bit-exact\n",
                device_name().c_str(), (long long)g_totals.cases.load(), (long long)g_totals.elements.load(),
                (long long)g_totals.exact_required.load(),
                100.0 * double(g_totals.exact_required) / double(std::max<int64_t>(1, g_totals.elements)));
  }
};
const auto *g_env = ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

uint64_t fresh_seed() {
  static std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

// NaN in the storage dtype, so an element the kernel never writes fails.
void poison(const DeviceBuffer &buf, DType d) {
  const Driver *drv = driver(nullptr);
  if (d == DType::kF32) check(drv->cuMemsetD32(buf.dptr(), 0x7fc00000u, buf.bytes() / 4), "cuMemsetD32");
  else check(drv->cuMemsetD16(buf.dptr(), d == DType::kBF16 ? 0x7fc0 : 0x7e00, buf.bytes() / 2), "cuMemsetD16");
}

struct Case {
  int64_t m, n, k;
  DType dtype = DType::kBF16;
  Activation act = Activation::kSigmoid;
  Rounding rounding = Rounding::kBoundary;
  bool in_place = false;
  int64_t pad = 0;              // extra elements per row of hidden and weight
  size_t misalign_bytes = 0;    // offset of every base pointer
  std::string expect;           // substring of the explanation
  size_t attn_out_misalign = 0; // offset of attn and out only (the contract's align covers hidden and weight)
  // Not kNone: the weight is fp8 e4m3 with fp32 scales of this kind (hidden,
  // attn and out stay `dtype`).
  WeightScale weight_scale = WeightScale::kNone;
  // The out is fp8 e4m3 with scales per token group of 128 columns, written
  // by the kernel (N a multiple of 128; never in place).
  bool fp8_out = false;
};

DType weight_dtype(const Case &c) { return c.weight_scale == WeightScale::kNone ? c.dtype : DType::kFP8E4M3; }

std::string case_name(const Case &c) {
  std::string s = "m" + std::to_string(c.m) + "_n" + std::to_string(c.n) + "_k" + std::to_string(c.k) + "_" +
                  dtype_name(c.dtype) + "_" + activation_name(c.act) + "_" + rounding_name(c.rounding);
  if (c.in_place) s += "_inplace";
  if (c.pad) s += "_pad" + std::to_string(c.pad);
  if (c.misalign_bytes) s += "_misalign" + std::to_string(c.misalign_bytes);
  if (c.attn_out_misalign) s += "_attnoutmisalign" + std::to_string(c.attn_out_misalign);
  if (c.weight_scale != WeightScale::kNone) s += std::string("_wfp8_") + weight_scale_name(c.weight_scale);
  if (c.fp8_out) s += "_ofp8_group128";
  return s;
}

// gtest prints parameters with this (instead of a byte dump).
void PrintTo(const Case &c, std::ostream *os) { *os << case_name(c); }

class GpuTest : public ::testing::Test {
 protected:
  // A template every call of this fixture must use (GATEJIT_TEMPLATE), or
  // null for the loader's own choice.
  virtual const char *forced_template() const { return nullptr; }

  void SetUp() override {
    std::string why;
    if (!driver(&why)) GTEST_SKIP() << "no GPU: " << why;
    gatejit_runtime_options_t options = GATEJIT_RUNTIME_OPTIONS_INIT;
    if (jit_mode()) {
      ASSERT_TRUE(std::getenv("GATEJIT_JIT_LIBRARY")) << "GATEJIT_TEST_JIT=1 needs GATEJIT_JIT_LIBRARY";
      if (background_mode()) options.jit_mode = GATEJIT_JIT_BACKGROUND;
    } else {
      const char *bundle = std::getenv("GATEJIT_TEST_BUNDLE");
      ASSERT_TRUE(bundle && *bundle) << "a GPU is present but GATEJIT_TEST_BUNDLE names no kernel bundle "
                                        "(scripts/device_run.sh builds one)";
      options.bundle_path = bundle;
      options.disable_jit = 1;
      options.disable_cache = 1;
    }
    if (const char *t = forced_template()) setenv("GATEJIT_TEMPLATE", t, 1);
    const std::string created = expect_ok(gatejit_runtime_create(&options, &rt_));
    unsetenv("GATEJIT_TEMPLATE");
    ASSERT_EQ(created, "");
  }
  void TearDown() override { gatejit_runtime_destroy(rt_); }

  static bool jit_mode() {
    auto on = env_flag("GATEJIT_TEST_JIT");  // 1/true/yes/on, as every gatejit boolean variable
    if (!on.ok()) ADD_FAILURE() << on.status().message();
    return on.ok() && *on;
  }
  // GATEJIT_TEST_JIT_MODE: "sync" (the default) or "background" (with the JIT only).
  static bool background_mode() {
    const char *v = std::getenv("GATEJIT_TEST_JIT_MODE");
    const std::string mode = v ? v : "sync";
    if (mode != "sync" && mode != "background")
      ADD_FAILURE() << "GATEJIT_TEST_JIT_MODE=" << mode << ": allowed are sync and background";
    if (mode == "background" && !jit_mode()) ADD_FAILURE() << "GATEJIT_TEST_JIT_MODE=background needs GATEJIT_TEST_JIT=1";
    return mode == "background" && jit_mode();
  }
  // The path a case expects. Under the JIT every kernel is the exact
  // contract's (there is no bundle with dynamic-M buckets), compiled now or
  // earlier (the disk cache), never from a bundle but the shipped generic
  // one (where it lies beside the suite, as device_background.sh puts it).
  static void expect_path(const std::string &explanation, const std::string &expect) {
    if (!jit_mode()) {
      EXPECT_NE(explanation.find(expect), std::string::npos) << "path: " << explanation;
      return;
    }
    // A generic kernel only where the case expects one (a failed background
    // compile leaves the generic kernel, and its explanation names the form).
    const bool served_generic = explanation.rfind("generic", 0) == 0;
    EXPECT_EQ(served_generic, expect.rfind("generic", 0) == 0) << "path: " << explanation;
    const bool shipped_generic = served_generic && explanation.find("from the shipped bundle") != std::string::npos;
    EXPECT_TRUE(explanation.find("compiled by the JIT") != std::string::npos ||
                explanation.find("from the disk cache") != std::string::npos || shipped_generic)
        << "path: " << explanation;
    const size_t bucket = expect.find("dynamic-M bucket");
    const std::string kind = bucket == std::string::npos ? expect : "specialised";
    EXPECT_NE(explanation.find(kind), std::string::npos) << "path: " << explanation;
  }

  static std::string expect_ok(gatejit_status_t s) {
    std::string m = s ? gatejit_status_message(s) : "";
    gatejit_status_free(s);
    return m;
  }
  // The code and message of a status (GATEJIT_OK and "" for success), freed.
  static std::pair<gatejit_status_code_t, std::string> status_of(gatejit_status_t s) {
    std::pair<gatejit_status_code_t, std::string> r{gatejit_status_code(s), s ? gatejit_status_message(s) : ""};
    gatejit_status_free(s);
    return r;
  }

  struct Buffers {
    HostTensor hidden, weight, attn;
    std::vector<float> scales;  // an fp8 weight's, row-major in weight_scale_shape
    std::unique_ptr<DeviceBuffer> d_hidden, d_weight, d_attn, d_out, d_scales, d_out_scales;
    gatejit_gate_args_t args = GATEJIT_GATE_ARGS_INIT;
  };

  // Allocates, fills with fresh random values and uploads one problem.
  Buffers make(const Case &c) {
    Buffers b;
    const int64_t ldk = c.k + c.pad;  // in each tensor's own elements (fp8: bytes)
    b.hidden = reference::make_tensor(c.dtype, c.m, c.k, ldk);
    b.weight = reference::make_tensor(weight_dtype(c), c.n, c.k, ldk);
    b.attn = reference::make_tensor(c.dtype, c.m, c.n, c.n);
    const reference::ScaleShape scale_shape = reference::weight_scale_shape(c.weight_scale, c.n, c.k);
    b.scales.resize(size_t(scale_shape.rows * scale_shape.cols));
    if (!b.scales.empty()) b.d_scales = std::make_unique<DeviceBuffer>(b.scales.size() * sizeof(float));
    randomize(b, c);
    const size_t off = c.misalign_bytes;
    b.d_hidden = std::make_unique<DeviceBuffer>(b.hidden.bytes.size() + off);
    b.d_weight = std::make_unique<DeviceBuffer>(b.weight.bytes.size() + off);
    const size_t off_ao = off + c.attn_out_misalign;
    b.d_attn = std::make_unique<DeviceBuffer>(b.attn.bytes.size() + off_ao);
    const size_t out_bytes = c.fp8_out ? size_t(c.m * c.n) : b.attn.bytes.size();
    if (!c.in_place) b.d_out = std::make_unique<DeviceBuffer>(out_bytes + off_ao);
    if (c.fp8_out) b.d_out_scales = std::make_unique<DeviceBuffer>(size_t(c.m * (c.n / kOutGroup)) * sizeof(float));
    upload(b, c);
    auto tensor = [&](const DeviceBuffer &d, const HostTensor &h, size_t at) {
      return gatejit_tensor_t{static_cast<char *>(d.ptr()) + at, c_dtype(h.dtype), h.rows, h.cols, h.ld};
    };
    b.args.hidden = tensor(*b.d_hidden, b.hidden, off);
    b.args.weight = tensor(*b.d_weight, b.weight, off);
    b.args.attn = tensor(*b.d_attn, b.attn, off_ao);
    b.args.out = c.in_place ? b.args.attn : tensor(*b.d_out, b.attn, off_ao);
    if (c.fp8_out) {
      b.args.out.dtype = GATEJIT_FP8_E4M3;
      b.args.out_scale = gatejit_tensor_t{b.d_out_scales->ptr(), GATEJIT_F32, c.m, c.n / kOutGroup, c.n / kOutGroup};
    }
    // fp32, packed; never offset (misalign_bytes is about hidden and weight).
    if (b.d_scales)
      b.args.weight_scale = gatejit_tensor_t{b.d_scales->ptr(), GATEJIT_F32, scale_shape.rows, scale_shape.cols,
                                             scale_shape.cols};
    b.args.act = c.act == Activation::kSigmoid ? GATEJIT_SIGMOID : GATEJIT_SILU;
    b.args.rounding = c.rounding == Rounding::kBoundary ? GATEJIT_ROUNDING_BOUNDARY : GATEJIT_ROUNDING_FUSED;
    b.args.device_kind = GATEJIT_DEVICE_CUDA;
    b.args.device_ordinal = 0;
    b.args.stream = nullptr;
    return b;
  }

  static void randomize(Buffers &b, const Case &c) {
    const uint64_t seed = fresh_seed();
    // Projections of O(1): the activation is exercised away from saturation.
    reference::fill_random(b.hidden, 1.0f, seed);
    if (c.weight_scale == WeightScale::kNone) {
      reference::fill_random(b.weight, float(6.0 / std::sqrt(double(c.k))), seed + 1);
    } else {
      // e4m3 over its whole range, scaled to the same effective weights.
      reference::fill_random_fp8(b.weight, seed + 1);
      b.scales = reference::random_weight_scales(c.weight_scale, c.n, c.k, float(6.0 / std::sqrt(double(c.k))), seed + 3);
    }
    reference::fill_random(b.attn, 2.0f, seed + 2);
    ::testing::Test::RecordProperty("seed", std::to_string(seed));
  }

  static void upload(Buffers &b, const Case &c) {
    const size_t off = c.misalign_bytes;
    b.d_hidden->upload(b.hidden.bytes.data(), b.hidden.bytes.size(), off);
    b.d_weight->upload(b.weight.bytes.data(), b.weight.bytes.size(), off);
    b.d_attn->upload(b.attn.bytes.data(), b.attn.bytes.size(), off + c.attn_out_misalign);
    if (b.d_scales) b.d_scales->upload(b.scales.data(), b.scales.size() * sizeof(float));
    const Driver *drv = driver(nullptr);
    if (b.d_out && c.fp8_out) check(drv->cuMemsetD8(b.d_out->dptr(), 0x7f, b.d_out->bytes()), "cuMemsetD8");
    else if (b.d_out) poison(*b.d_out, c.dtype);
    if (b.d_out_scales) poison(*b.d_out_scales, DType::kF32);
  }

  // (An fp8 out and its scales are downloaded by verify.)
  HostTensor download_out(const Buffers &b, const Case &c) {
    if (c.fp8_out) return {};
    HostTensor out = reference::make_tensor(c.dtype, c.m, c.n, c.n);
    const DeviceBuffer &src = c.in_place ? *b.d_attn : *b.d_out;
    src.download(out.bytes.data(), out.bytes.size(), c.misalign_bytes + c.attn_out_misalign);
    return out;
  }

  reference::CheckResult verify(const Buffers &b, const Case &c, const HostTensor &out, Rounding policy) {
    reference::GateProblem p{c.act, policy, &b.hidden, &b.weight, &b.attn, c.weight_scale, &b.scales};
    if (!c.fp8_out) return reference::check_gate(p, out);
    HostTensor q = reference::make_tensor(DType::kFP8E4M3, c.m, c.n, c.n);
    b.d_out->download(q.bytes.data(), q.bytes.size(), c.misalign_bytes + c.attn_out_misalign);
    std::vector<float> scales(size_t(c.m * (c.n / kOutGroup)));
    b.d_out_scales->download(scales.data(), scales.size() * sizeof(float));
    return reference::check_gate_fp8_out(p, q, scales);
  }

  // Every element written and matching; counted in the run's summary.
  // `where` prefixes the failure messages ("" or e.g. "stream 1, launch 3: ").
  static void expect_all_correct(const reference::CheckResult &r, const std::string &where) {
    EXPECT_EQ(r.unwritten, 0) << where << "elements left as the NaN poison";
    EXPECT_EQ(r.mismatches, 0) << where << r.first_failure << " (" << r.mismatches << " of " << r.checked << ")";
    g_totals.cases++;
    g_totals.elements += r.checked;
    g_totals.exact_required += r.exact_required;
  }

  // Background mode: the call's first launch, served by whatever is loadable
  // while the specialised kernel compiles, is checked in full; then prepare()
  // waits for the specialised kernel and swaps it in, for the checks that follow.
  void serve_at_once_then_prepare(Buffers &b, const Case &c) {
    if (!background_mode()) return;
    char *text = nullptr;
    ASSERT_EQ(expect_ok(gatejit_explain(rt_, &b.args, &text)), "");
    const std::string served = text ? text : "";
    gatejit_string_free(text);
    // Generic meanwhile, or a kernel an earlier case (or process) compiled into the cache.
    EXPECT_TRUE(served.rfind("generic (", 0) == 0 || served.find("from the disk cache") != std::string::npos)
        << "served at once: " << served;
    ASSERT_EQ(expect_ok(gatejit_gate_epilogue(rt_, &b.args)), "");
    check(driver(nullptr)->cuCtxSynchronize(), "cuCtxSynchronize");
    expect_all_correct(verify(b, c, download_out(b, c), c.rounding), "served at once (" + served + "): ");
    ASSERT_EQ(expect_ok(gatejit_prepare(rt_, &b.args)), "");
    randomize(b, c);
    upload(b, c);  // fresh inputs, the out poisoned again
  }
  void run_and_check(const Case &c) {
    SCOPED_TRACE(case_name(c));
    Buffers b = make(c);
    serve_at_once_then_prepare(b, c);
    if (HasFatalFailure()) return;
    char *text = nullptr;
    ASSERT_EQ(expect_ok(gatejit_explain(rt_, &b.args, &text)), "");
    const std::string explanation = text ? text : "";
    gatejit_string_free(text);
    expect_path(explanation, c.expect);
    ASSERT_EQ(expect_ok(gatejit_gate_epilogue(rt_, &b.args)), "");
    check(driver(nullptr)->cuCtxSynchronize(), "cuCtxSynchronize");
    const HostTensor out = download_out(b, c);
    expect_all_correct(verify(b, c, out, c.rounding), "");
  }

  // A CUDA graph captured from a stream, destroyed with its instance.
  struct CapturedGraph {
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    ~CapturedGraph() {
      const Driver *drv = driver(nullptr);
      if (exec) drv->cuGraphExecDestroy(exec);
      if (graph) drv->cuGraphDestroy(graph);
    }
  };
  // Captures what `launch` enqueues on `stream` and instantiates it; returns
  // the launches' error text (empty when they launched).
  static std::string capture(CUstream stream, const std::function<std::string()> &launch, CapturedGraph &g) {
    const Driver *drv = driver(nullptr);
    check(drv->cuStreamBeginCapture(stream, 0 /* global */), "cuStreamBeginCapture");
    const std::string launched = launch();
    check(drv->cuStreamEndCapture(stream, &g.graph), "cuStreamEndCapture");
    if (launched.empty()) check(drv->cuGraphInstantiate(&g.exec, g.graph, 0), "cuGraphInstantiate");
    return launched;
  }

  gatejit_runtime_t rt_ = nullptr;
};

// --- The compiler matrix on sm_90 -------------------------------------------

// gemv is forced: on sm_90 the loader picks mma from M = 2 on, but gemv is
// the decode template of gfx9xx for every M <= 16 and must stay correct.
class GemvMatrix : public GpuTest, public ::testing::WithParamInterface<Case> {
  const char *forced_template() const override { return "gemv"; }
};
TEST_P(GemvMatrix, MatchesBoundaryReference) { run_and_check(GetParam()); }

std::vector<Case> gemv_cases() {
  std::vector<Case> cases;
  // The seed shape: every M, dtype, activation, in place or not.
  for (int64_t m : {1, 2, 4, 8, 16})
    for (DType d : {DType::kBF16, DType::kF16})
      for (Activation a : {Activation::kSigmoid, Activation::kSilu})
        for (bool in_place : {false, true}) cases.push_back({m, 1536, 7168, d, a, Rounding::kBoundary, in_place, 0, 0, "specialised gemv"});
  // The other shapes: every M in bf16/sigmoid, plus f16/silu in place.
  for (auto [n, k] : {std::pair<int64_t, int64_t>{3072, 7168}, {12288, 7168}, {4096, 2048}}) {
    for (int64_t m : {1, 2, 4, 8, 16}) cases.push_back({m, n, k, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "specialised gemv"});
    for (int64_t m : {1, 16}) cases.push_back({m, n, k, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 0, 0, "specialised gemv"});
  }
  // N = K = 1000: K/8 = 125 vectors, not a multiple of the warp: the tail loop runs.
  for (int64_t m : {1, 3, 16}) cases.push_back({m, 1000, 1000, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, m == 3, 0, 0, "specialised gemv"});
  // K = 1088: 136 vectors = 4 full warp-wide steps split over 4 warps, plus a
  // partial tail step summed by the last warp of the group.
  for (int64_t m : {1, 2}) cases.push_back({m, 1000, 1088, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "specialised gemv"});
  // Fused rounding policy.
  for (int64_t m : {1, 8}) cases.push_back({m, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kFused, false, 0, 0, "specialised gemv"});
  return cases;
}
INSTANTIATE_TEST_SUITE_P(Sm90, GemvMatrix, ::testing::ValuesIn(gemv_cases()),
                         [](const auto &info) { return case_name(info.param); });

// --- The loader's choice at M = 1 on sm_90: the gemv (v51), which loads attn
// while it reduces.

class LoaderChoiceAtM1 : public GpuTest, public ::testing::WithParamInterface<Case> {};
TEST_P(LoaderChoiceAtM1, MatchesBoundaryReference) { run_and_check(GetParam()); }
INSTANTIATE_TEST_SUITE_P(
    Sm90, LoaderChoiceAtM1,
    ::testing::Values(Case{1, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "specialised gemv"},
                      Case{1, 1536, 7168, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 0, 0, "specialised gemv"},
                      Case{1, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "specialised gemv", 2}),
    [](const auto &info) { return case_name(info.param); });

// --- The mma template at M = 1, forced (the loader takes the gemv there; a
// contract may still ask for the mma form).

class MmaAtM1 : public GpuTest, public ::testing::WithParamInterface<Case> {
  const char *forced_template() const override { return "mma"; }
};
TEST_P(MmaAtM1, MatchesBoundaryReference) { run_and_check(GetParam()); }
std::vector<Case> mma_m1_cases() {
  std::vector<Case> cases;
  const std::string mma = "specialised mma";
  for (DType d : {DType::kBF16, DType::kF16})
    for (bool in_place : {false, true})
      cases.push_back({1, 1536, 7168, d, in_place ? Activation::kSilu : Activation::kSigmoid, Rounding::kBoundary, in_place, 0, 0, mma});
  // attn and out 2 bytes off 16: the element-wise pieces.
  cases.push_back({1, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, mma, 2});
  // N below one weight tile, K below one step.
  cases.push_back({1, 24, 64, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, mma});
  return cases;
}
INSTANTIATE_TEST_SUITE_P(Sm90, MmaAtM1, ::testing::ValuesIn(mma_m1_cases()),
                         [](const auto &info) { return case_name(info.param); });

// --- The mma template, as the loader chooses it (sm_90: M >= 2)

class MmaMatrix : public GpuTest, public ::testing::WithParamInterface<Case> {};
TEST_P(MmaMatrix, MatchesBoundaryReference) { run_and_check(GetParam()); }

std::vector<Case> mma_cases() {
  std::vector<Case> cases;
  const std::string mma = "specialised mma";
  // The seed shape: every M bucket (one and several hidden tiles), both
  // dtypes and activations, in place or not.
  for (int64_t m : {2, 4, 8, 16, 32, 64, 128})
    for (DType d : {DType::kBF16, DType::kF16})
      for (bool in_place : {false, true}) {
        const Activation a = (m / 2 + int(in_place)) % 2 ? Activation::kSilu : Activation::kSigmoid;
        cases.push_back({m, 1536, 7168, d, a, Rounding::kBoundary, in_place, 0, 0, mma});
      }
  // Grid y tiles M past 128 hidden rows; the last tile is partial.
  cases.push_back({512, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, mma});
  // The two-warpgroup tiles: M = 1024 splits K and loads attn after the K
  // loop (in place), M = 2048 loads it before (staged epilogue, v35).
  cases.push_back({1024, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, true, 0, 0, mma});
  cases.push_back({2048, 1536, 7168, DType::kF16, Activation::kSilu, Rounding::kBoundary, false, 0, 0, mma});
  // attn and out 2 bytes off 16 (hidden and weight on it, so the contract,
  // and the kernel, are the aligned ones): the tiled kernels check at run
  // time and take the element-wise epilogue, not 16-byte pieces.
  cases.push_back({64, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, mma, 2});
  cases.push_back({128, 1536, 7168, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 0, 0, mma, 2});
  // The same for the register-streamed form's pieces (v46: 16-byte attn
  // loads and out stores only where both pointers are on 16): M = 8 on the
  // decode path (M = 1: MmaAtM1), M = 16 with a partial last piece (N = 1003).
  cases.push_back({8, 1536, 7168, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 0, 0, mma, 6});
  cases.push_back({16, 1003, 1000, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, mma, 8});
  cases.push_back({300, 1003, 1000, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 0, 0, mma});
  cases.push_back({2048, 256, 512, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, mma});
  // gfx950's tiled shapes (run here with the suite's bundle built with
  // gfx950_plan=1, scripts/device_run.sh): 128 x 64 prefill tiles, three a
  // CU (N = 12288 M = 512, in place), and 64 x 64 tiles with N not a whole
  // number of 8-element pieces (element-wise epilogue, partial last tile).
  cases.push_back({512, 12288, 512, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, true, 0, 0, mma});
  cases.push_back({256, 1003, 2048, DType::kF16, Activation::kSilu, Rounding::kBoundary, false, 0, 0, mma});
  // gfx950's 128 x 128 tiles of 8 waves with a K split of 2-5 (v96; M = 512
  // and 1024 above take them too): a partial last 128-row tile (M = 448, in
  // place, 5 splits), padded hidden and weight rows (M = 640, 4 splits), N
  // not a whole number of 8-element pieces (N = 1540: element-wise
  // epilogue, a partial last weight tile), attn and out off 16 bytes (the
  // run-time fallback, 3 splits).
  cases.push_back({448, 1536, 7168, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 0, 0, mma});
  cases.push_back({640, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 8, 0, mma});
  cases.push_back({512, 1540, 7168, DType::kF16, Activation::kSilu, Rounding::kBoundary, false, 0, 0, mma});
  cases.push_back({768, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, mma, 2});
  // gfx950's 64 x 64 tiles where the split that fills the round (16) would
  // poll in more than two rounds, so it meets by arrival, its partials in
  // rounds of 4 splits (N = 1024 M = 97-128; v97 studied 12 polled).
  cases.push_back({112, 1024, 7168, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 0, 0, mma});
  // gfx950's 64 x 64 tiles from M = 65 where their split polls (v98): the
  // second tile row 16 rows full (N = 1536 M = 80, 10 splits) and 8 (N = 2048
  // M = 72, in place, 8 splits).
  cases.push_back({80, 1536, 7168, DType::kF16, Activation::kSilu, Rounding::kBoundary, false, 0, 0, mma});
  cases.push_back({72, 2048, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, true, 0, 0, mma});
  // More 128 x 64 tiles than one round of three a CU holds: gfx950's
  // persistent grid (768 workgroups, each looping over tiles in die bands,
  // v79): two whole rounds (N = 12288 M = 1024), and a partial last round
  // with a partial last tile both ways and the element-wise epilogue
  // (N = 12290 M = 1100, in place).
  cases.push_back({1024, 12288, 512, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, mma});
  cases.push_back({1100, 12290, 512, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 0, 0, mma});
  // K = 1000: the last 32-element step is partial (lanes past K load zeros);
  // N = 1003: the last weight tile is partial.
  for (int64_t m : {3, 16, 40}) cases.push_back({m, 1003, 1000, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, m == 3, 0, 0, mma});
  // Tiny shapes: K below one step (K = 8: one vector; K = 40, 64), N below
  // one weight tile (8, 20, 24): most lanes and warps only load zeros.
  cases.push_back({5, 24, 64, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 0, 0, mma});
  cases.push_back({3, 8, 8, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, mma});
  cases.push_back({17, 20, 40, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, mma});
  // K = 1088: 34 steps over 8 warps: some warps have a step more than others.
  for (int64_t m : {2, 24}) cases.push_back({m, 1000, 1088, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, mma});
  // Padded leading dimensions that keep 16-byte rows.
  for (int64_t m : {4, 64}) cases.push_back({m, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 8, 0, mma});
  // The other shapes of the decode benchmark.
  for (auto [n, k] : {std::pair<int64_t, int64_t>{3072, 7168}, {12288, 7168}, {4096, 2048}})
    for (int64_t m : {2, 16, 64}) cases.push_back({m, n, k, m == 16 ? DType::kF16 : DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, m == 16, 0, 0, mma});
  // Fused rounding policy.
  for (int64_t m : {8, 64}) cases.push_back({m, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kFused, false, 0, 0, mma});
  // The tiled form (sm_90, M > 32, K a whole number of 64-element stages)
  // with a partial last weight tile (N = 1000, 1003: rows past N clamped for
  // the copies, columns past N never stored) and a partial last hidden tile.
  cases.push_back({100, 1000, 1024, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, mma});
  cases.push_back({300, 1003, 1024, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 0, 0, mma});
  // Above M = 1024 the wgmma form takes two warpgroups and 192 weight rows
  // per block: partial last weight tile (400 = 2 x 192 + 16) and hidden tile
  // (1500 = 11 x 128 + 92). M = 24: the mma.sync tiles below the wgmma form.
  cases.push_back({1500, 400, 1024, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 0, 0, mma});
  cases.push_back({24, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, mma});
  // K = 8192, past a wave's whole K range (v89): gfx950's thin grid rows with
  // a K loop of 8 steps a wave, 2 in flight (the gfx950-plan bundle).
  cases.push_back({18, 1536, 8192, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, mma});
  cases.push_back({16, 1536, 8192, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 0, 0, mma});
  return cases;
}
INSTANTIATE_TEST_SUITE_P(Sm90, MmaMatrix, ::testing::ValuesIn(mma_cases()),
                         [](const auto &info) { return case_name(info.param); });

// Dynamic M: the bundle's dynamic-M buckets (gemv and mma m_max = 16; mma
// m_max = 32, 64, 128, 512, 1024) serve M values it has no exact kernel for.
class DynamicM : public GpuTest, public ::testing::WithParamInterface<Case> {};
TEST_P(DynamicM, BucketServesEveryM) { run_and_check(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Sm90, DynamicM,
                         ::testing::Values(Case{3, 4096, 2048, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "dynamic-M bucket"},
                                           Case{5, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, true, 0, 0, "dynamic-M bucket"},
                                           Case{7, 1536, 7168, DType::kF16, Activation::kSilu, Rounding::kBoundary, false, 0, 0, "dynamic-M bucket"},
                                           Case{13, 4096, 2048, DType::kF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "dynamic-M bucket"},
                                           Case{20, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "mma (dynamic-M bucket, m_max 32"},
                                           Case{33, 1536, 7168, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 0, 0, "mma (dynamic-M bucket, m_max 64"},
                                           Case{90, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "mma (dynamic-M bucket, m_max 128"},
                                           // gfx950's 128 x 128 tiles (m_max 512: 5 splits)
                                           // at run-time M: 3 of 4 tile rows, the last partial
                                           // (M = 300), and all 4 (M = 500).
                                           Case{300, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, true, 0, 0, "mma (dynamic-M bucket, m_max 512"},
                                           Case{500, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "mma (dynamic-M bucket, m_max 512"},
                                           // gfx950's persistent grid at run-time M: more tiles
                                           // than workgroups (M = 700), and fewer (M = 100: a
                                           // workgroup a tile, one pass).
                                           Case{700, 12288, 512, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, true, 0, 0, "mma (dynamic-M bucket, m_max 1024"},
                                           Case{100, 12288, 512, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "mma (dynamic-M bucket, m_max 1024"}),
                         [](const auto &info) { return case_name(info.param); });

// The generic template, chosen by the loader for contracts gemv refuses.
class GenericFallback : public GpuTest, public ::testing::WithParamInterface<Case> {};
TEST_P(GenericFallback, MatchesBoundaryReference) { run_and_check(GetParam()); }
INSTANTIATE_TEST_SUITE_P(
    Sm90, GenericFallback,
    ::testing::Values(
        // K = 999: rows are no whole number of 16-byte vectors.
        Case{1, 1000, 999, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "generic (leading dimension"},
        Case{3, 1000, 999, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 0, 0, "generic (leading dimension"},
        Case{16, 1000, 999, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "generic (leading dimension"},
        // Padded leading dimensions that break 16-byte rows.
        Case{1, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 2, 0, "generic (leading dimension"},
        Case{5, 1536, 7168, DType::kF16, Activation::kSilu, Rounding::kBoundary, true, 6, 0, "generic (leading dimension"},
        // Base pointers only 2-byte aligned.
        Case{2, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 2, "generic (align = 2"},
        // M = 32 with 2-byte aligned rows: neither gemv nor mma.
        Case{32, 1536, 7170, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "generic (leading dimension"},
        // f32 storage.
        Case{4, 1000, 999, DType::kF32, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "generic (dtype f32"}),
    [](const auto &info) { return case_name(info.param); });

// --- fp8 e4m3 out, quantised per token group of 128 columns ----------------

// The out e4m3 with one fp32 scale per row and 128 columns, which the kernel
// writes (vLLM's per_token_group_quant_fp8 layout); hidden and attn bf16 or
// f16, the weight bf16/f16 or e4m3. The gemv and mma stage the gated values
// and the last workgroup of each group's band quantises it; the generic
// kernel quantises in its workgroup. check_gate_fp8_out demands every scale
// and element bit for bit where no rounding straddles.
Case fp8_out_case(int64_t m, int64_t n, int64_t k, DType d, Activation a, std::string expect,
                  WeightScale ws = WeightScale::kNone, int64_t pad = 0, Rounding r = Rounding::kBoundary) {
  return Case{.m = m, .n = n, .k = k, .dtype = d, .act = a, .rounding = r, .pad = pad, .expect = std::move(expect),
              .weight_scale = ws, .fp8_out = true};
}
class Fp8Out : public GpuTest, public ::testing::WithParamInterface<Case> {};
TEST_P(Fp8Out, MatchesReference) { run_and_check(GetParam()); }
class Fp8OutGemv : public GpuTest, public ::testing::WithParamInterface<Case> {
  const char *forced_template() const override { return "gemv"; }
};
TEST_P(Fp8OutGemv, MatchesReference) { run_and_check(GetParam()); }

std::vector<Case> fp8_out_cases(bool forced_gemv) {
  constexpr DType bf16 = DType::kBF16, f16 = DType::kF16;
  constexpr Activation sig = Activation::kSigmoid, silu = Activation::kSilu;
  const std::string gemv = "specialised gemv", mma = "specialised mma";
  if (forced_gemv)
    return {fp8_out_case(4, 1536, 7168, bf16, sig, gemv), fp8_out_case(16, 1536, 7168, bf16, sig, gemv),
            fp8_out_case(8, 1536, 7168, f16, silu, gemv)};
  std::vector<Case> all;
  // The decode M of the seed shape: the gemv at M = 1, the mma above (one
  // row block up to 32; M = 100: grid y tiles M, each row block its own
  // group counters, the last block partial).
  for (int64_t m : {1, 2, 4, 8, 16, 32, 100}) all.push_back(fp8_out_case(m, 1536, 7168, bf16, sig, m == 1 ? gemv : mma));
  for (int64_t m : {1, 4, 16}) all.push_back(fp8_out_case(m, 1536, 7168, f16, silu, m == 1 ? gemv : mma));
  for (int64_t m : {1, 8})
    all.push_back(fp8_out_case(m, 1536, 7168, bf16, sig, m == 1 ? gemv : mma, WeightScale::kNone, 0, Rounding::kFused));
  // 96 groups a row.
  for (int64_t m : {2, 16}) all.push_back(fp8_out_case(m, 12288, 7168, bf16, sig, mma));
  // K = 1000: a partial last K step.
  for (int64_t m : {3, 40}) all.push_back(fp8_out_case(m, 1024, 1000, bf16, sig, mma));
  // Padded hidden and weight rows.
  for (int64_t m : {4, 64}) all.push_back(fp8_out_case(m, 1536, 7168, bf16, sig, mma, WeightScale::kNone, 8));
  // Dynamic M buckets.
  for (int64_t m : {3, 13}) all.push_back(fp8_out_case(m, 1536, 7168, bf16, sig, "dynamic-M bucket, m_max 16"));
  all.push_back(fp8_out_case(50, 1536, 7168, f16, silu, "dynamic-M bucket, m_max 64"));
  // fp8 weights and an fp8 out.
  for (int64_t m : {1, 4, 16})
    all.push_back(fp8_out_case(m, 1536, 7168, bf16, sig, m <= 2 ? gemv : mma, WeightScale::kBlock128));
  for (int64_t m : {2, 8})
    all.push_back(fp8_out_case(m, 1536, 7168, f16, silu, m <= 2 ? gemv : mma, WeightScale::kPerChannel));
  // The generic kernel: rows no whole number of 16-byte vectors (K = 7170),
  // and 2-byte pointers.
  all.push_back(fp8_out_case(3, 1536, 7170, bf16, sig, "generic (leading dimension"));
  all.push_back(fp8_out_case(5, 256, 7170, f16, silu, "generic (leading dimension"));
  all.push_back(fp8_out_case(2, 1536, 7168, bf16, sig, "generic (leading dimension", WeightScale::kNone, 2));
  return all;
}
INSTANTIATE_TEST_SUITE_P(Sm90, Fp8Out, ::testing::ValuesIn(fp8_out_cases(false)),
                         [](const auto &info) { return case_name(info.param); });
INSTANTIATE_TEST_SUITE_P(Sm90, Fp8OutGemv, ::testing::ValuesIn(fp8_out_cases(true)),
                         [](const auto &info) { return case_name(info.param); });

// --- fp8 e4m3 weights with fp32 scales -------------------------------------

// hidden, attn and out bf16 or f16; the weight e4m3 over its whole range
// (subnormals and zeros included) with per-channel or 128 x 128 block scales.
// The loader takes the gemv up to M = 2 on sm_90 at these N, the mma above
// (its fragments decoded from e4m3; v57's measurement); the
// generic kernel where the layout refuses both. Fp8WeightGemv runs the
// specialised cases again through the gemv, forced: gfx950's decode template
// up to M = 16.
Case fp8_case(int64_t m, int64_t n, int64_t k, DType d, Activation a, WeightScale ws, std::string expect,
              bool in_place = false, int64_t pad = 0, Rounding r = Rounding::kBoundary, size_t misalign = 0) {
  return Case{.m = m, .n = n, .k = k, .dtype = d, .act = a, .rounding = r, .in_place = in_place, .pad = pad,
              .misalign_bytes = misalign, .expect = std::move(expect), .weight_scale = ws};
}

class Fp8Weight : public GpuTest, public ::testing::WithParamInterface<Case> {};
TEST_P(Fp8Weight, MatchesReference) { run_and_check(GetParam()); }
class Fp8WeightGemv : public GpuTest, public ::testing::WithParamInterface<Case> {
  const char *forced_template() const override { return "gemv"; }
};
TEST_P(Fp8WeightGemv, MatchesReference) { run_and_check(GetParam()); }

// forced_gemv: the cases the gemv can serve (M <= 16, whole 16-byte rows),
// each expecting it.
std::vector<Case> fp8_cases(bool forced_gemv) {
  constexpr DType bf16 = DType::kBF16, f16 = DType::kF16;
  constexpr Activation sig = Activation::kSigmoid, silu = Activation::kSilu;
  constexpr WeightScale pc = WeightScale::kPerChannel, b128 = WeightScale::kBlock128;
  constexpr Rounding fused = Rounding::kFused;
  const std::string generic = "generic (";
  // What serves M on sm_90 (N <= 2048): the gemv up to M = 2, the mma above
  // (or the gemv, forced).
  const auto spec = [&](int64_t m) {
    return std::string(forced_gemv || m <= 2 ? "specialised gemv" : "specialised mma");
  };
  const std::string bucket =
      std::string(forced_gemv ? "specialised gemv" : "specialised mma") + " (dynamic-M bucket, m_max 16";
  std::vector<Case> all;
  const auto add = [&](Case c) {
    // Forced: the specialised cases above M = 2 (where auto takes the gemv too).
    if (!forced_gemv || (c.m > 2 && c.expect.rfind("specialised", 0) == 0)) all.push_back(std::move(c));
  };
  // The seed shape (DeepSeek-V3's, K = 56 scale blocks, N = 12): every
  // decode M with both scale kinds; each kind meets every (dtype, act).
  const struct {
    int64_t m;
    DType d;
    Activation a;
    WeightScale ws;
  } seed[] = {{1, bf16, sig, pc},  {1, f16, silu, b128}, {1, bf16, sig, b128},  {2, f16, sig, pc},
              {2, bf16, silu, b128}, {4, bf16, silu, pc}, {4, f16, sig, b128},  {8, f16, silu, pc},
              {8, bf16, sig, b128}, {16, bf16, sig, pc}, {16, f16, silu, b128}, {16, f16, silu, pc}};
  for (const auto &s : seed) add(fp8_case(s.m, 1536, 7168, s.d, s.a, s.ws, spec(s.m)));
  // In place (out = attn: the same contracts).
  add(fp8_case(1, 1536, 7168, bf16, sig, b128, spec(1), true));
  add(fp8_case(8, 1536, 7168, f16, silu, pc, spec(8), true));
  // Padded rows that keep 16-byte vectors: 16 elements (fp8: 16 bytes; bf16: 32).
  for (int64_t m : {1, 4})
    for (WeightScale ws : {pc, b128}) add(fp8_case(m, 1536, 7168, bf16, sig, ws, spec(m), false, 16));
  // N = 1000 and 1537: the last block row of scales is partial (104 rows; 1 row).
  for (int64_t m : {1, 4}) add(fp8_case(m, 1000, 7168, bf16, sig, b128, spec(m)));
  add(fp8_case(2, 1000, 7168, bf16, sig, pc, spec(2)));
  add(fp8_case(1, 1537, 7168, f16, silu, b128, spec(1)));
  add(fp8_case(16, 1537, 7168, f16, silu, b128, spec(16), true));
  // K = 2064 = 16 x 128 + 16: a partial last K block (whole 16-byte vectors).
  for (int64_t m : {1, 8}) add(fp8_case(m, 1536, 2064, bf16, sig, b128, spec(m)));
  add(fp8_case(2, 1536, 2064, f16, silu, pc, spec(2)));
  add(fp8_case(3, 1000, 2064, f16, silu, b128, spec(3)));  // partial in N and K
  // Per-channel scales on the finished sums of the mma: a last piece past N
  // (N = 1537: its clamped scale column), and a partial last K step.
  add(fp8_case(4, 1537, 7168, f16, silu, pc, spec(4)));
  add(fp8_case(8, 1536, 2064, bf16, sig, pc, spec(8)));
  // Fused rounding policy.
  for (int64_t m : {1, 8}) add(fp8_case(m, 1536, 7168, bf16, sig, pc, spec(m), false, 0, fused));
  add(fp8_case(4, 1536, 7168, bf16, sig, b128, spec(4), false, 0, fused));
  // Dynamic M: the m_max 16 bucket (the mma's on sm_90, the gemv's forced)
  // serves M values with no exact kernel.
  add(fp8_case(3, 1536, 7168, bf16, sig, pc, bucket));
  add(fp8_case(7, 1536, 7168, bf16, sig, pc, bucket));
  add(fp8_case(5, 1536, 7168, f16, silu, b128, bucket, true));
  add(fp8_case(13, 1536, 7168, f16, silu, b128, bucket));
  // M past the gemv's 16: the mma alone (32: one row block; 100: grid y
  // tiles M, the last block partial) ...
  if (!forced_gemv) {
    const std::string mma = "specialised mma";
    add(fp8_case(32, 1536, 7168, bf16, sig, b128, mma));
    add(fp8_case(100, 1536, 7168, f16, silu, pc, mma));
    add(fp8_case(100, 1000, 2064, bf16, sig, b128, mma));
    add(fp8_case(32, 1536, 7168, bf16, sig, pc, mma, true, 0, fused));
  }
  // The generic kernel (one per dtype, act, rounding and scale kind): fp8
  // rows that are no whole number of 16-byte vectors (K = 1000, K =
  // 7176, padding 8: 8 bytes off; the bf16/f16 hidden rows are whole) ...
  add(fp8_case(3, 1000, 1000, bf16, sig, b128, "generic (leading dimension ld_weight"));
  add(fp8_case(1, 1536, 7176, f16, silu, pc, "generic (leading dimension ld_weight"));
  add(fp8_case(2, 1536, 7168, bf16, sig, b128, "generic (leading dimension ld_weight", false, 8));
  // ... an odd K: the weight's rows are an odd number of bytes (1-byte
  // aligned), which the generic kernel reads element by element ...
  add(fp8_case(2, 1000, 1001, bf16, sig, pc, generic));
  add(fp8_case(3, 1001, 1001, f16, silu, b128, generic));
  add(fp8_case(17, 1000, 1001, bf16, sig, pc, generic, false, 0, fused));
  // ... and base pointers only 8-byte aligned.
  add(fp8_case(2, 1536, 7168, bf16, sig, pc, "generic (align = 8", false, 0, Rounding::kBoundary, 8));
  return all;
}
INSTANTIATE_TEST_SUITE_P(Sm90, Fp8Weight, ::testing::ValuesIn(fp8_cases(false)),
                         [](const auto &info) { return case_name(info.param); });
INSTANTIATE_TEST_SUITE_P(Sm90, Fp8WeightGemv, ::testing::ValuesIn(fp8_cases(true)),
                         [](const auto &info) { return case_name(info.param); });

// --- The checker is known to catch a skipped rounding -----------------------

TEST_F(GpuTest, CheckerCatchesKernelThatSkipsBoundaryRoundings) {
  // Run the fused kernel (one rounding at the end) and judge it by the
  // boundary reference: a suite that cannot tell them apart proves nothing.
  const Case c{4, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kFused, false, 0, 0, "gemv"};
  Buffers b = make(c);
  ASSERT_EQ(expect_ok(gatejit_gate_epilogue(rt_, &b.args)), "");
  check(driver(nullptr)->cuCtxSynchronize(), "cuCtxSynchronize");
  const HostTensor out = download_out(b, c);
  const auto as_fused = verify(b, c, out, Rounding::kFused);
  const auto as_boundary = verify(b, c, out, Rounding::kBoundary);
  EXPECT_EQ(as_fused.mismatches, 0) << as_fused.first_failure;
  EXPECT_GT(as_boundary.mismatches, as_boundary.checked / 100)
      << "the boundary check accepted a kernel without the intermediate roundings";
  std::printf("[wrong-variant] fused kernel judged by the boundary reference: %lld of %lld elements flagged\n",
              (long long)as_boundary.mismatches, (long long)as_boundary.checked);
}

// The fp8 suite cannot pass a kernel that ignores the weight scales or reads
// the wrong ones: the real output, right by the reference with its scales, is
// flagged by the reference without them, with the first K block's scale for
// the whole row (a block kernel that drops the K index), or with channel n's
// scale taken from channel n + 1.
TEST_F(GpuTest, CheckerCatchesFp8KernelWithWrongScales) {
  for (const Case &c : {fp8_case(4, 1536, 7168, DType::kBF16, Activation::kSigmoid, WeightScale::kBlock128, "gemv"),
                        fp8_case(4, 1536, 7168, DType::kBF16, Activation::kSilu, WeightScale::kPerChannel, "gemv")}) {
    SCOPED_TRACE(case_name(c));
    Buffers b = make(c);
    ASSERT_EQ(expect_ok(gatejit_gate_epilogue(rt_, &b.args)), "");
    check(driver(nullptr)->cuCtxSynchronize(), "cuCtxSynchronize");
    const HostTensor out = download_out(b, c);
    expect_all_correct(verify(b, c, out, c.rounding), "");
    const int64_t kb = (c.k + kScaleBlock - 1) / kScaleBlock;
    std::vector<float> wrong(size_t(c.n));
    for (int64_t n = 0; n < c.n; ++n)
      wrong[size_t(n)] = c.weight_scale == WeightScale::kBlock128 ? b.scales[size_t((n / kScaleBlock) * kb)]
                                                                  : b.scales[size_t((n + 1) % c.n)];
    const struct {
      const char *what;
      WeightScale kind;
      const std::vector<float> *scales;
    } judges[] = {{"no scales", WeightScale::kNone, nullptr},
                  {c.weight_scale == WeightScale::kBlock128 ? "the first K block's scale per row" : "channel n + 1's scale",
                   WeightScale::kPerChannel, &wrong}};
    for (const auto &j : judges) {
      reference::GateProblem p{c.act, c.rounding, &b.hidden, &b.weight, &b.attn, j.kind, j.scales};
      const auto r = reference::check_gate(p, out);
      EXPECT_GT(r.mismatches, r.checked / 2) << "judged with " << j.what << ", the output passed";
      std::printf("[wrong-scales] %s judged with %s: %lld of %lld elements flagged\n", case_name(c).c_str(), j.what,
                  (long long)r.mismatches, (long long)r.checked);
    }
  }
}

// --- Graph replay follows changed inputs --------------------------------------

TEST_F(GpuTest, GraphReplayFollowsNewInputs) {
  const Driver *drv = driver(nullptr);
  const Case c{4, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "gemv"};
  Buffers b = make(c);
  CUstream stream = nullptr;
  check(drv->cuStreamCreate(&stream, 1 /* non-blocking */), "cuStreamCreate");
  b.args.stream = stream;
  ASSERT_EQ(expect_ok(gatejit_prepare(rt_, &b.args)), "");  // resolve + load outside the capture
  CapturedGraph g;
  ASSERT_EQ(capture(stream, [&] { return expect_ok(gatejit_gate_epilogue(rt_, &b.args)); }, g), "");
  for (int replay = 0; replay < 3; ++replay) {
    randomize(b, c);  // new inputs, same buffers
    upload(b, c);
    check(drv->cuGraphLaunch(g.exec, stream), "cuGraphLaunch");
    check(drv->cuStreamSynchronize(stream), "cuStreamSynchronize");
    const auto r = verify(b, c, download_out(b, c), c.rounding);
    EXPECT_EQ(r.mismatches, 0) << "replay " << replay << ": " << r.first_failure;
    EXPECT_EQ(r.unwritten, 0);
  }
  drv->cuStreamDestroy(stream);
}

// --- Back-to-back kernels on one stream keep producer order -----------------------

// A chain of kSteps calls on one stream, each reading as hidden (N = K) and as
// attn the output of the call before it, with no synchronisation in between:
//   x[i + 1] = x[i] * act(x[i] @ W^T)
// A launch that did not order after its producer (a wrong stream, a launch
// attribute that lets it start early: v16 in research/perf-notes.md tried one)
// would read the NaN poison of x[i]. Run directly and as a replayed graph (how
// the benchmarks and the serving engines launch); every step is checked
// against the reference computed from the step's actual input.
struct ChainCase {
  int64_t m, nk;
  std::string expect;
};
class BackToBackChain : public GpuTest, public ::testing::WithParamInterface<ChainCase> {};

TEST_P(BackToBackChain, EveryStepSeesItsProducersOutput) {
  constexpr int kSteps = 8;
  const ChainCase cc = GetParam();
  const Case c{cc.m, cc.nk, cc.nk, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, cc.expect};
  SCOPED_TRACE(case_name(c));
  const Driver *drv = driver(nullptr);
  Buffers b = make(c);  // x[0] = b.hidden, weight = b.weight
  std::vector<std::unique_ptr<DeviceBuffer>> x;
  x.push_back(std::move(b.d_hidden));
  for (int i = 0; i < kSteps; ++i) x.push_back(std::make_unique<DeviceBuffer>(b.hidden.bytes.size()));
  auto step_args = [&](int i) {
    gatejit_gate_args_t a = b.args;
    a.hidden.data = a.attn.data = x[i]->ptr();
    a.attn.ld = a.hidden.ld;
    a.out.data = x[i + 1]->ptr();
    return a;
  };
  char *text = nullptr;
  gatejit_gate_args_t first = step_args(0);
  if (background_mode()) ASSERT_EQ(expect_ok(gatejit_prepare(rt_, &first)), "");  // the chain's own kernel
  ASSERT_EQ(expect_ok(gatejit_explain(rt_, &first, &text)), "");
  expect_path(text ? text : "", c.expect);
  gatejit_string_free(text);
  CUstream stream = nullptr;
  check(drv->cuStreamCreate(&stream, 1 /* non-blocking */), "cuStreamCreate");

  auto verify_chain = [&](const char *how) {
    HostTensor in = b.hidden;
    for (int i = 0; i < kSteps; ++i) {
      HostTensor out = reference::make_tensor(c.dtype, c.m, c.n, c.n);
      x[i + 1]->download(out.bytes.data(), out.bytes.size());
      reference::GateProblem p{c.act, c.rounding, &in, &b.weight, &in};
      expect_all_correct(reference::check_gate(p, out), std::string(how) + ", step " + std::to_string(i) + ": ");
      in = std::move(out);
    }
  };
  auto poison_chain = [&] {
    for (int i = 1; i <= kSteps; ++i) poison(*x[i], c.dtype);
  };

  poison_chain();
  for (int i = 0; i < kSteps; ++i) {
    gatejit_gate_args_t a = step_args(i);
    a.stream = stream;
    ASSERT_EQ(expect_ok(gatejit_gate_epilogue(rt_, &a)), "") << "step " << i;
  }
  check(drv->cuStreamSynchronize(stream), "cuStreamSynchronize");
  verify_chain("stream");

  {
    CapturedGraph g;
    const std::string launched = capture(stream, [&] {
      std::string error;
      for (int i = 0; i < kSteps && error.empty(); ++i) {
        gatejit_gate_args_t a = step_args(i);
        a.stream = stream;
        error = expect_ok(gatejit_gate_epilogue(rt_, &a));
      }
      return error;
    }, g);
    ASSERT_EQ(launched, "");
    for (int replay = 0; replay < 2; ++replay) {
      poison_chain();
      check(drv->cuGraphLaunch(g.exec, stream), "cuGraphLaunch");
    check(drv->cuStreamSynchronize(stream), "cuStreamSynchronize");
      verify_chain(replay == 0 ? "graph replay 0" : "graph replay 1");
    }
  }
  drv->cuStreamDestroy(stream);
}

INSTANTIATE_TEST_SUITE_P(
    Gpu, BackToBackChain,
    ::testing::Values(ChainCase{4, 2048, "specialised mma"}, ChainCase{1, 4096, "specialised gemv"},
                      ChainCase{64, 2048, "specialised mma"}),
    [](const auto &info) { return "m" + std::to_string(info.param.m) + "_nk" + std::to_string(info.param.nk); });

// --- Errors reach the caller as statuses ------------------------------------------

// --- K-split kernels on concurrent streams -----------------------------------

// Kernels whose launches share state in the loaded module (a K split's
// workspace and arrival counters, an fp8 out's staged values and group
// counters) need one module instance per stream (docs/runtime.md). Two
// streams launch the same kernel on different inputs, one after the other
// with no wait, so their launches overlap on the GPU; each launch writes its
// own poisoned outputs, and every output of every launch is checked. Had the
// streams shared one instance, blocks of both launches would count into the
// same counters and read each other's partials or staged values.
class TwoStreamsTest : public GpuTest {
 protected:
  static constexpr int kLaunches = 16;
  // One launch's outputs: out, and an fp8 out's scales.
  struct LaunchOutputs {
    std::unique_ptr<DeviceBuffer> out, scales;
  };

  void run_on_two_streams(const Case &c) {
    const Driver *drv = driver(nullptr);
    const int64_t groups = c.n / kOutGroup;
    Buffers a = make(c), b = make(c);
    Buffers *problems[2] = {&a, &b};
    CUstream streams[2] = {nullptr, nullptr};
    std::vector<LaunchOutputs> outs[2];
    for (int p = 0; p < 2; ++p) {
      check(drv->cuStreamCreate(&streams[p], 1 /* non-blocking */), "cuStreamCreate");
      problems[p]->args.stream = streams[p];
      ASSERT_EQ(expect_ok(gatejit_prepare(rt_, &problems[p]->args)), "");
      for (int i = 0; i < kLaunches; ++i) {
        LaunchOutputs o;
        if (c.fp8_out) {
          o.out = std::make_unique<DeviceBuffer>(size_t(c.m * c.n));
          check(drv->cuMemsetD8(o.out->dptr(), 0x7f, o.out->bytes()), "cuMemsetD8");  // e4m3 NaN
          o.scales = std::make_unique<DeviceBuffer>(size_t(c.m * groups) * sizeof(float));
          poison(*o.scales, DType::kF32);
        } else {
          o.out = std::make_unique<DeviceBuffer>(problems[p]->attn.bytes.size());
          poison(*o.out, c.dtype);
        }
        outs[p].push_back(std::move(o));
      }
    }
    check(drv->cuCtxSynchronize(), "cuCtxSynchronize");  // the poison is in place
    for (int i = 0; i < kLaunches; ++i) {
      for (int p = 0; p < 2; ++p) {
        gatejit_gate_args_t args = problems[p]->args;
        args.out.data = outs[p][i].out->ptr();
        if (c.fp8_out) args.out_scale.data = outs[p][i].scales->ptr();
        ASSERT_EQ(expect_ok(gatejit_gate_epilogue(rt_, &args)), "");
      }
    }
    for (CUstream s : streams) check(drv->cuStreamSynchronize(s), "cuStreamSynchronize");
    for (int p = 0; p < 2; ++p) {
      for (int i = 0; i < kLaunches; ++i) {
        const std::string where = "stream " + std::to_string(p) + ", launch " + std::to_string(i) + ": ";
        if (c.fp8_out) {
          reference::GateProblem problem{c.act, c.rounding, &problems[p]->hidden, &problems[p]->weight,
                                         &problems[p]->attn, c.weight_scale, &problems[p]->scales};
          HostTensor q = reference::make_tensor(DType::kFP8E4M3, c.m, c.n, c.n);
          outs[p][i].out->download(q.bytes.data(), q.bytes.size());
          std::vector<float> s(size_t(c.m * groups));
          outs[p][i].scales->download(s.data(), s.size() * sizeof(float));
          expect_all_correct(reference::check_gate_fp8_out(problem, q, s), where);
        } else {
          HostTensor out = reference::make_tensor(c.dtype, c.m, c.n, c.n);
          outs[p][i].out->download(out.bytes.data(), out.bytes.size());
          expect_all_correct(verify(*problems[p], c, out, c.rounding), where);
        }
      }
    }
    for (CUstream s : streams) drv->cuStreamDestroy(s);
  }
};

// The tiled mma (sm_90, M > 32) splits K across blocks that meet in a
// workspace and arrival counters in the loaded module.
TEST_F(TwoStreamsTest, KSplitKernelKeepsLaunchesApart) {
  run_on_two_streams(Case{128, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "mma"});
}

// An fp8 out (M = 16: the mma, no K split) stages its values and counts its
// bands in the loaded module: a block of one launch could otherwise complete
// the other's band count and quantise values the other had not staged.
TEST_F(TwoStreamsTest, Fp8OutKernelKeepsLaunchesApart) {
  Case c{16, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "mma"};
  c.fp8_out = true;
  run_on_two_streams(c);
}

TEST_F(GpuTest, ShapeMismatchIsAnErrorNamingTheField) {
  const Case c{1, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "gemv"};
  Buffers b = make(c);
  b.args.attn.cols = 1535;
  const std::string message = expect_ok(gatejit_gate_epilogue(rt_, &b.args));
  EXPECT_NE(message.find("attn.cols"), std::string::npos) << message;
}

// fp8 arguments the runtime must refuse before any kernel: invalid-argument
// statuses naming the field (the wording is the runtime's; only the field
// names and the allowed shapes' numbers are checked).
TEST_F(GpuTest, Fp8WeightScaleErrorsNameWeightScale) {
  const Case c = fp8_case(1, 1536, 7168, DType::kBF16, Activation::kSigmoid, WeightScale::kPerChannel, "gemv");
  Buffers b = make(c);
  auto expect_invalid = [&](const gatejit_gate_args_t &args, const char *what, std::initializer_list<const char *> names) {
    const auto [code, message] = status_of(gatejit_gate_epilogue(rt_, &args));
    EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT) << what << ": " << message;
    for (const char *name : names) EXPECT_NE(message.find(name), std::string::npos) << what << ": " << message;
  };
  gatejit_gate_args_t a = b.args;
  a.weight_scale = gatejit_tensor_t{};
  expect_invalid(a, "fp8 weight without weight_scale", {"weight_scale"});
  // Shapes of neither kind: [N + 1, 1], [N, 2], block128 transposed ([56, 12]).
  // The message names the allowed shapes: [1536, 1] and [12, 56].
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1537, 1}, {1536, 2}, {56, 12}}) {
    a = b.args;
    a.weight_scale.rows = rows;
    a.weight_scale.cols = a.weight_scale.ld = cols;
    expect_invalid(a, "weight_scale of a wrong shape", {"weight_scale", "1536", "12", "56"});
  }
  a = b.args;
  a.weight_scale.dtype = GATEJIT_BF16;
  expect_invalid(a, "bf16 weight_scale", {"weight_scale"});
  // Scales with a bf16 weight.
  const Case plain{1, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "gemv"};
  Buffers p = make(plain);
  a = p.args;
  a.weight_scale = b.args.weight_scale;
  expect_invalid(a, "weight_scale with a bf16 weight", {"weight_scale"});
}

// A caller built against API version 2 (no weight_scale: struct_size stops
// before it) still runs a bf16 problem; with an fp8 weight it gets the
// missing-scales error, not a read past its struct.
TEST_F(GpuTest, Version2ArgsRunWithoutWeightScale) {
  const Case c{4, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "gemv"};
  Buffers b = make(c);
  gatejit_gate_args_t v2 = b.args;
  v2.struct_size = offsetof(gatejit_gate_args_t, weight_scale);
  v2.weight_scale.data = reinterpret_cast<void *>(uintptr_t(0x10));  // past the caller's struct: never read
  ASSERT_EQ(expect_ok(gatejit_gate_epilogue(rt_, &v2)), "");
  check(driver(nullptr)->cuCtxSynchronize(), "cuCtxSynchronize");
  expect_all_correct(verify(b, c, download_out(b, c), c.rounding), "");
  v2.weight.dtype = GATEJIT_FP8_E4M3;
  const auto [code, message] = status_of(gatejit_gate_epilogue(rt_, &v2));
  EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT) << message;
  EXPECT_NE(message.find("weight_scale"), std::string::npos) << message;
}

TEST_F(GpuTest, Fp8HiddenOrAttnIsAnErrorNamingTheTensor) {
  const Case c{1, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "gemv"};
  Buffers b = make(c);
  gatejit_gate_args_t a = b.args;
  a.hidden.dtype = GATEJIT_FP8_E4M3;
  auto [code, message] = status_of(gatejit_gate_epilogue(rt_, &a));
  EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT) << message;
  EXPECT_NE(message.find("hidden"), std::string::npos) << message;
  EXPECT_NE(message.find("fp8"), std::string::npos) << message;
  a = b.args;
  a.attn.dtype = a.out.dtype = GATEJIT_FP8_E4M3;
  std::tie(code, message) = status_of(gatejit_gate_epilogue(rt_, &a));
  EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT) << message;
  EXPECT_NE(message.find("attn"), std::string::npos) << message;
}

// --- Background JIT: served at once, swapped in outside captures ---------------

// GATEJIT_JIT_BACKGROUND with the JIT library (GATEJIT_TEST_JIT=1) and an
// empty cache: the generic kernel (made loadable first, in the cache) serves
// the first call of an unseen mma contract at once; the call's explanation
// follows the compile; a launch inside a graph capture keeps the generic
// kernel even when the specialised one is ready; the next call outside a
// capture swaps it in; the graph captured before still replays correctly
// (its module stays loaded); prepare() waits for a kernel and swaps it in.
class BackgroundJitTest : public GpuTest {
 protected:
  void SetUp() override {
    std::string why;
    if (!driver(&why)) GTEST_SKIP() << "no GPU: " << why;
    if (!jit_mode()) GTEST_SKIP() << "needs the JIT: GATEJIT_TEST_JIT=1 with GATEJIT_JIT_LIBRARY";
    char tmpl[] = "/tmp/gatejit-background-gpu-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    cache_ = tmpl;
    gatejit_runtime_options_t options = GATEJIT_RUNTIME_OPTIONS_INIT;
    options.cache_dir = cache_.c_str();
    options.disable_shipped_bundle = 1;  // the generic kernel comes from the cache here
    options.jit_mode = GATEJIT_JIT_BACKGROUND;
    ASSERT_EQ(expect_ok(gatejit_runtime_create(&options, &rt_)), "");
  }
  void TearDown() override {
    GpuTest::TearDown();
    if (!cache_.empty()) std::system(("rm -rf '" + cache_ + "'").c_str());
  }
  std::string explain(const gatejit_gate_args_t &args) {
    char *text = nullptr;
    const std::string error = expect_ok(gatejit_explain(rt_, &args, &text));
    const std::string out = error.empty() ? std::string(text ? text : "") : "error: " + error;
    gatejit_string_free(text);
    return out;
  }
  std::string cache_;
};

TEST_F(BackgroundJitTest, ServesAtOnceAndSwapsOnlyOutsideACapture) {
  const Driver *drv = driver(nullptr);
  const Case c{64, 1536, 7168, DType::kBF16, Activation::kSigmoid, Rounding::kBoundary, false, 0, 0, "mma"};
  Buffers b = make(c);
  // The generic kernel of the contract, compiled into the cache (nothing
  // else serves it: this waits, as sync mode would).
  const std::string generic =
      R"({"template": "generic", "m": 64, "n": 1536, "k": 7168, "dtype": "bf16", "target": "sm_90"})";
  ASSERT_EQ(expect_ok(gatejit_resolve_contract_json(rt_, generic.c_str(), nullptr)), "");

  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(expect_ok(gatejit_gate_epilogue(rt_, &b.args)), "");
  const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("[background] first call of an unseen contract: %.2f ms host time\n", first_ms);
  const std::string served = explain(b.args);
  EXPECT_EQ(served.rfind("generic (specialised mma compiles in the background: ", 0), 0u) << served;
  check(drv->cuCtxSynchronize(), "cuCtxSynchronize");
  expect_all_correct(verify(b, c, download_out(b, c), c.rounding), "generic meanwhile: ");

  // Wait (bounded) until the specialised kernel is ready.
  std::string now;
  for (int i = 0; i < 1200 && (now = explain(b.args)).find("[now done") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_NE(now.find("[now done; the next call outside a graph capture swaps it in]"), std::string::npos) << now;

  CUstream stream = nullptr;
  check(drv->cuStreamCreate(&stream, 1 /* non-blocking */), "cuStreamCreate");
  b.args.stream = stream;
  CapturedGraph g;
  ASSERT_EQ(capture(stream, [&] { return expect_ok(gatejit_gate_epilogue(rt_, &b.args)); }, g), "");
  EXPECT_EQ(explain(b.args), now) << "swapped inside the capture";

  // Outside the capture: the call posts the module load to the loader thread
  // and keeps the generic kernel (it does not wait for the load).
  const auto swap_start = std::chrono::steady_clock::now();
  ASSERT_EQ(expect_ok(gatejit_gate_epilogue(rt_, &b.args)), "");
  std::printf("[background] the call that finds the kernel compiled: %.2f ms host time\n",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - swap_start).count());
  std::string swapped;
  for (int i = 0; i < 1200 && (swapped = explain(b.args)).rfind("specialised mma", 0) != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(swapped.rfind("specialised mma", 0), 0u) << swapped;
  ASSERT_EQ(expect_ok(gatejit_gate_epilogue(rt_, &b.args)), "");  // the specialised kernel now
  EXPECT_NE(swapped.find("in the background"), std::string::npos) << swapped;
  check(drv->cuStreamSynchronize(stream), "cuStreamSynchronize");
  expect_all_correct(verify(b, c, download_out(b, c), c.rounding), "specialised: ");
  for (int replay = 0; replay < 2; ++replay) {  // the graph keeps the generic kernel, still loaded
    randomize(b, c);
    upload(b, c);
    check(drv->cuGraphLaunch(g.exec, stream), "cuGraphLaunch");
    check(drv->cuStreamSynchronize(stream), "cuStreamSynchronize");
    expect_all_correct(verify(b, c, download_out(b, c), c.rounding), "graph replay " + std::to_string(replay) + ": ");
  }
  drv->cuStreamDestroy(stream);
}

TEST_F(BackgroundJitTest, PrepareWaitsForTheSpecialisedKernel) {
  const Case c{128, 1536, 7168, DType::kF16, Activation::kSilu, Rounding::kBoundary, false, 0, 0, "mma"};
  Buffers b = make(c);
  const std::string generic =
      R"({"template": "generic", "m": 128, "n": 1536, "k": 7168, "dtype": "f16", "act": "silu", "target": "sm_90"})";
  ASSERT_EQ(expect_ok(gatejit_resolve_contract_json(rt_, generic.c_str(), nullptr)), "");
  ASSERT_EQ(expect_ok(gatejit_prepare(rt_, &b.args)), "");
  const std::string prepared = explain(b.args);
  EXPECT_EQ(prepared.rfind("specialised mma", 0), 0u) << prepared;
  ASSERT_EQ(expect_ok(gatejit_gate_epilogue(rt_, &b.args)), "");
  check(driver(nullptr)->cuCtxSynchronize(), "cuCtxSynchronize");
  expect_all_correct(verify(b, c, download_out(b, c), c.rounding), "");
}

}  // namespace
}  // namespace gatejit::gputest
