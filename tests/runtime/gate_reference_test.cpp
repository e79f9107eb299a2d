// The host reference itself: storage conversions round to nearest even, and
// the checker rejects an output computed without the boundary roundings
// (crafted inputs where the skipped rounding changes the bf16 result), while
// accepting the output computed with them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "support/gate_reference.h"

namespace gatejit::reference {
namespace {

TEST(StorageConversion, RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(1.0f + 1.0f / 256), 0x3f80);   // tie: stays even
  EXPECT_EQ(f32_to_bf16(1.0f + 3.0f / 256), 0x3f82);   // tie: rounds to even (up)
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(1e6f), 0x7c00);                 // overflow -> inf
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  for (uint32_t h = 0; h < 0x7c00; ++h) ASSERT_EQ(f32_to_f16(f16_to_f32(uint16_t(h))), h) << h;
  for (uint32_t b = 0; b < 0x7f80; ++b) ASSERT_EQ(f32_to_bf16(bf16_to_f32(uint16_t(b))), b) << b;
}

// OCP e4m3 from its bit fields, computed here without the reference's code:
// sign, 4 exponent bits (bias 7), 3 mantissa bits; exponent 0 is subnormal
// (m x 2^-9), 0x7f / 0xff are NaN, there is no infinity.
double e4m3_value(int code) {
  const int sign = code >> 7, e = (code >> 3) & 15, m = code & 7;
  if (e == 15 && m == 7) return std::numeric_limits<double>::quiet_NaN();
  double magnitude = e == 0 ? m / 512.0 : (1.0 + m / 8.0);
  for (int i = 0; e != 0 && i < e - 7; ++i) magnitude *= 2;
  for (int i = 0; e != 0 && i < 7 - e; ++i) magnitude /= 2;
  return sign ? -magnitude : magnitude;
}

TEST(StorageConversion, EveryE4m3CodeDecodesExactlyAndReencodesToItself) {
  int nans = 0;
  for (int code = 0; code < 256; ++code) {
    SCOPED_TRACE(code);
    const double want = e4m3_value(code);
    const float got = e4m3_to_f32(uint8_t(code));
    if (std::isnan(want)) {
      ++nans;
      EXPECT_TRUE(std::isnan(got)) << got;
      // NaN stays NaN, its sign kept: 0x7f or 0xff.
      EXPECT_EQ(f32_to_e4m3(got), uint8_t(code));
      continue;
    }
    EXPECT_EQ(double(got), want);
    EXPECT_EQ(std::signbit(got), code >= 0x80);  // -0 (0x80) too
    EXPECT_EQ(f32_to_e4m3(got), uint8_t(code)) << "decoded " << got;
  }
  EXPECT_EQ(nans, 2);
  // The landmarks of the format.
  EXPECT_EQ(e4m3_to_f32(0x7e), 448.0f);                     // largest finite
  EXPECT_EQ(e4m3_to_f32(0x08), std::ldexp(1.0f, -6));       // smallest normal
  EXPECT_EQ(e4m3_to_f32(0x01), std::ldexp(1.0f, -9));       // smallest subnormal
  EXPECT_EQ(e4m3_to_f32(0x38), 1.0f);
  EXPECT_EQ(f32_to_e4m3(-0.0f), 0x80);
  EXPECT_EQ(f32_to_e4m3(0.0f), 0x00);
}

// Between two neighbouring codes the midpoint goes to the even code (RNE),
// anything off the midpoint to the nearer one: every pair of neighbours,
// subnormals and the subnormal/normal boundary included, both signs.
TEST(StorageConversion, E4m3RoundsToNearestEven) {
  EXPECT_EQ(f32_to_e4m3(1.0625f), 0x38);   // between 1.0 (0x38) and 1.125 (0x39): to 1.0
  EXPECT_EQ(f32_to_e4m3(1.1875f), 0x3a);   // between 1.125 and 1.25 (0x3a): to 1.25
  EXPECT_EQ(f32_to_e4m3(-1.1875f), 0xba);
  EXPECT_EQ(f32_to_e4m3(std::ldexp(1.0f, -10)), 0x00);  // half the smallest subnormal: to zero (even)
  EXPECT_EQ(f32_to_e4m3(std::nextafter(std::ldexp(1.0f, -10), 1.0f)), 0x01);
  EXPECT_EQ(f32_to_e4m3(1e-30f), 0x00);
  EXPECT_EQ(f32_to_e4m3(-1e-30f), 0x80);
  for (int code = 0; code < 0x7e; ++code) {
    SCOPED_TRACE(code);
    const float lo = float(e4m3_value(code)), hi = float(e4m3_value(code + 1));
    const float mid = 0.5f * (lo + hi);  // exact: one bit more than e4m3 has
    ASSERT_EQ(double(mid), 0.5 * (e4m3_value(code) + e4m3_value(code + 1)));
    const int even = code % 2 == 0 ? code : code + 1;
    EXPECT_EQ(f32_to_e4m3(mid), uint8_t(even));
    EXPECT_EQ(f32_to_e4m3(-mid), uint8_t(0x80 | even));
    EXPECT_EQ(f32_to_e4m3(std::nextafter(mid, 0.0f)), uint8_t(code));
    EXPECT_EQ(f32_to_e4m3(std::nextafter(mid, 1000.0f)), uint8_t(code + 1));
    EXPECT_EQ(f32_to_e4m3(-std::nextafter(mid, 1000.0f)), uint8_t(0x80 | (code + 1)));
  }
}

// Out of range saturates to +-448 (0x7e / 0xfe), infinity too: as the header
// documents (cvt.rn.satfinite), not NaN.
TEST(StorageConversion, E4m3SaturatesAbove448) {
  for (float big : {448.0f, 449.0f, 463.9f, 464.0f, 465.0f, 480.0f, 1e6f, 3e38f,
                    std::numeric_limits<float>::infinity()}) {
    SCOPED_TRACE(big);
    EXPECT_EQ(f32_to_e4m3(big), 0x7e);
    EXPECT_EQ(f32_to_e4m3(-big), 0xfe);
  }
  EXPECT_EQ(f32_to_e4m3(432.0f), 0x7e);   // midpoint of 416 and 448: to the even 448
  EXPECT_EQ(f32_to_e4m3(431.9f), 0x7d);   // 416
  EXPECT_EQ(f32_to_e4m3(std::numeric_limits<float>::quiet_NaN()) & 0x7f, 0x7f);
  // A host fp8 tensor stores through the same conversion.
  HostTensor t = make_tensor(DType::kFP8E4M3, 1, 3, 3);
  t.set(0, 0, 1.0625f);
  t.set(0, 1, 1000.0f);
  t.set(0, 2, -std::ldexp(3.0f, -9));
  EXPECT_EQ(t.bytes, (std::vector<uint8_t>{0x38, 0x7e, 0x83}));
  EXPECT_EQ(t.at(0, 1), 448.0f);
  EXPECT_EQ(t.at(0, 2), -std::ldexp(3.0f, -9));
}

// A host "kernel" for the seed op in bf16, with or without the roundings.
HostTensor host_kernel(const HostTensor &h, const HostTensor &w, const HostTensor &a, bool boundary) {
  HostTensor out = make_tensor(h.dtype, h.rows, w.rows, w.rows);
  for (int64_t m = 0; m < h.rows; ++m)
    for (int64_t n = 0; n < w.rows; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < h.cols; ++k) acc += double(h.at(m, k)) * w.at(n, k);
      float p = float(acc);
      if (boundary) p = bf16_to_f32(f32_to_bf16(p));
      float g = 1.0f / (1.0f + std::exp(-p));
      if (boundary) g = bf16_to_f32(f32_to_bf16(g));
      out.set(m, n, g * a.at(m, n));
    }
  return out;
}

TEST(GateReference, CatchesAKernelThatSkipsTheBoundaryRoundings) {
  // K = 1: the projection is one product of two bf16 values, exact in fp32
  // but (for these inputs) not a bf16 value, so rounding it matters.
  HostTensor h = make_tensor(DType::kBF16, 1, 1, 1), w = make_tensor(DType::kBF16, 64, 1, 1),
             a = make_tensor(DType::kBF16, 1, 64, 64);
  h.set(0, 0, 1.0078125f);  // 1 + 2^-7
  for (int64_t n = 0; n < 64; ++n) {
    w.set(n, 0, 0.5f + 0.0078125f * float(n));
    a.set(0, n, 3.0f - 0.03125f * float(n));
  }
  GateProblem p{Activation::kSigmoid, Rounding::kBoundary, &h, &w, &a};
  const CheckResult right = check_gate(p, host_kernel(h, w, a, /*boundary=*/true));
  EXPECT_EQ(right.mismatches, 0) << right.first_failure;
  const CheckResult wrong = check_gate(p, host_kernel(h, w, a, /*boundary=*/false));
  EXPECT_GT(wrong.mismatches, 0) << "a kernel without intermediate roundings passed the boundary check";
  // Judged by the fused policy, the fused output is right.
  GateProblem fused = p;
  fused.rounding = Rounding::kFused;
  EXPECT_EQ(check_gate(fused, host_kernel(h, w, a, false)).mismatches, 0);
}

TEST(GateReference, FlagsUnwrittenElements) {
  HostTensor h = make_tensor(DType::kF16, 2, 8, 8), w = make_tensor(DType::kF16, 4, 8, 8),
             a = make_tensor(DType::kF16, 2, 4, 4);
  fill_random(h, 1, 1);
  fill_random(w, 1, 2);
  fill_random(a, 1, 3);
  HostTensor out = make_tensor(DType::kF16, 2, 4, 4);
  for (int64_t i = 0; i < 8; ++i) out.set(i / 4, i % 4, NAN);
  GateProblem p{Activation::kSilu, Rounding::kBoundary, &h, &w, &a};
  const CheckResult r = check_gate(p, out);
  EXPECT_EQ(r.unwritten, 8);
  EXPECT_EQ(r.mismatches, 8);
}

// A host "kernel" for an fp8 out (groups of 128 columns): from the gated
// values `y` (a bf16 out, or its fp32 values before the last rounding), the
// scale max(amax, 1e-10) / 448 and the bytes e4m3(y / s), computed here with
// the reference's e4m3 narrowing only.
struct QuantisedOut {
  HostTensor q;
  std::vector<float> scales;
};
QuantisedOut host_fp8_out(const std::vector<float> &y, int64_t rows, int64_t cols) {
  QuantisedOut r{make_tensor(DType::kFP8E4M3, rows, cols, cols), {}};
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t g = 0; g < cols / 128; ++g) {
      float amax = 0;
      for (int64_t j = 0; j < 128; ++j) amax = std::max(amax, std::fabs(y[size_t(m * cols + g * 128 + j)]));
      const float s = std::max(amax, 1e-10f) / 448.0f;
      r.scales.push_back(s);
      for (int64_t j = 0; j < 128; ++j) {
        const int64_t n = g * 128 + j;
        r.q.bytes[size_t(m * cols + n)] = f32_to_e4m3(std::clamp(y[size_t(m * cols + n)] / s, -448.0f, 448.0f));
      }
    }
  return r;
}

// The fp8-out check accepts the quantisation of the bf16 gated values and
// rejects: the quantisation of the unrounded fp32 products (a kernel that
// skips the last boundary rounding), a scale one ulp off, a byte one code off,
// and the poison.
TEST(GateReference, Fp8OutQuantisationIsChecked) {
  constexpr int64_t kRows = 2, kCols = 256;
  HostTensor h = make_tensor(DType::kBF16, kRows, 1, 1), w = make_tensor(DType::kBF16, kCols, 1, 1),
             a = make_tensor(DType::kBF16, kRows, kCols, kCols);
  h.set(0, 0, 1.0078125f);
  h.set(1, 0, -0.75f);
  for (int64_t n = 0; n < kCols; ++n) w.set(n, 0, 0.5f + 0.0078125f * float(n % 97));
  fill_random(a, 3.0f, 7);
  GateProblem p{Activation::kSigmoid, Rounding::kBoundary, &h, &w, &a};
  const HostTensor gated = host_kernel(h, w, a, /*boundary=*/true);
  ASSERT_EQ(check_gate(p, gated).mismatches, 0);
  std::vector<float> y, unrounded;
  for (int64_t m = 0; m < kRows; ++m)
    for (int64_t n = 0; n < kCols; ++n) {
      y.push_back(gated.at(m, n));
      // The same product before its rounding to bf16.
      const float proj = bf16_to_f32(f32_to_bf16(h.at(m, 0) * w.at(n, 0)));
      const float g = bf16_to_f32(f32_to_bf16(1.0f / (1.0f + std::exp(-proj))));
      unrounded.push_back(g * a.at(m, n));
    }
  const QuantisedOut right = host_fp8_out(y, kRows, kCols);
  const CheckResult ok = check_gate_fp8_out(p, right.q, right.scales);
  EXPECT_EQ(ok.mismatches, 0) << ok.first_failure;
  EXPECT_EQ(ok.checked, kRows * kCols + kRows * 2);
  EXPECT_GT(ok.exact_required, kRows * kCols / 2);

  const QuantisedOut skipped = host_fp8_out(unrounded, kRows, kCols);
  EXPECT_GT(check_gate_fp8_out(p, skipped.q, skipped.scales).mismatches, 0)
      << "a quantisation of the unrounded products passed";
  QuantisedOut scale_off = right;
  scale_off.scales[1] = std::nextafter(scale_off.scales[1], 1.0f);
  EXPECT_GT(check_gate_fp8_out(p, scale_off.q, scale_off.scales).mismatches, 0) << "a scale one ulp off passed";
  QuantisedOut byte_off = right;
  byte_off.q.bytes[300] = uint8_t(byte_off.q.bytes[300] ^ 1);
  EXPECT_EQ(check_gate_fp8_out(p, byte_off.q, byte_off.scales).mismatches, 1) << "a byte one code off passed";
  QuantisedOut poisoned = right;
  poisoned.q.bytes[5] = 0x7f;
  poisoned.scales[3] = NAN;
  const CheckResult unwritten = check_gate_fp8_out(p, poisoned.q, poisoned.scales);
  EXPECT_EQ(unwritten.unwritten, 2);
}

// A host "kernel" for an fp8 weight with bf16 hidden/attn/out and the
// boundary roundings: weight (n, k) is the decoded e4m3 value times
// scale_of(n, k) in fp32 (the dequantised weight), or, with `scale_after`,
// the fp32 sum of the unscaled products times scale_of(n, 0) (a per-channel
// kernel that scales the finished sum).
template <class ScaleOf>
HostTensor host_fp8_kernel(const HostTensor &h, const HostTensor &w, const HostTensor &a, const ScaleOf &scale_of,
                           bool scale_after = false) {
  HostTensor out = make_tensor(h.dtype, h.rows, w.rows, w.rows);
  for (int64_t m = 0; m < h.rows; ++m)
    for (int64_t n = 0; n < w.rows; ++n) {
      float acc = 0;
      for (int64_t k = 0; k < h.cols; ++k) {
        const float wk = scale_after ? w.at(n, k) : w.at(n, k) * scale_of(n, k);
        acc = std::fma(h.at(m, k), wk, acc);
      }
      if (scale_after) acc *= scale_of(n, 0);
      const float p = bf16_to_f32(f32_to_bf16(acc));
      const float g = bf16_to_f32(f32_to_bf16(1.0f / (1.0f + std::exp(-p))));
      out.set(m, n, g * a.at(m, n));
    }
  return out;
}

// The reference applies an fp8 weight's scales, per channel and per
// 128 x 128 block (N and K not multiples of 128): a kernel that applies them
// passes, one that ignores them or reads the wrong ones (channel n + 1's, or
// the first K block's for a whole row) is flagged.
TEST(GateReference, Fp8WeightScalesAreChecked) {
  const int64_t M = 2, N = 200, K = 300, kb = (K + kScaleBlock - 1) / kScaleBlock;
  HostTensor h = make_tensor(DType::kBF16, M, K, K), w = make_tensor(DType::kFP8E4M3, N, K, K),
             a = make_tensor(DType::kBF16, M, N, N);
  fill_random(h, 1, 11);
  fill_random_fp8(w, 12);
  fill_random(a, 1, 13);
  EXPECT_EQ(weight_scale_shape(WeightScale::kBlock128, N, K).rows, 2);
  EXPECT_EQ(weight_scale_shape(WeightScale::kBlock128, N, K).cols, 3);
  for (WeightScale kind : {WeightScale::kPerChannel, WeightScale::kBlock128}) {
    SCOPED_TRACE(weight_scale_name(kind));
    const std::vector<float> scales = random_weight_scales(kind, N, K, 6.0f / std::sqrt(float(K)), 14);
    const bool block = kind == WeightScale::kBlock128;
    ASSERT_EQ(int64_t(scales.size()), block ? 2 * kb : N);
    auto right = [&](int64_t n, int64_t k) {
      return block ? scales[size_t((n / kScaleBlock) * kb + k / kScaleBlock)] : scales[size_t(n)];
    };
    auto wrong = [&](int64_t n, int64_t k) {
      return block ? scales[size_t((n / kScaleBlock) * kb)] : scales[size_t((n + 1) % N)];
    };
    GateProblem p{Activation::kSigmoid, Rounding::kBoundary, &h, &w, &a, kind, &scales};
    const CheckResult ok = check_gate(p, host_fp8_kernel(h, w, a, right));
    EXPECT_EQ(ok.mismatches, 0) << ok.first_failure;
    EXPECT_GT(ok.exact_required, ok.checked / 2);
    if (!block) {
      const CheckResult after = check_gate(p, host_fp8_kernel(h, w, a, right, /*scale_after=*/true));
      EXPECT_EQ(after.mismatches, 0) << after.first_failure;
    }
    const CheckResult unscaled = check_gate(p, host_fp8_kernel(h, w, a, [](int64_t, int64_t) { return 1.0f; }));
    EXPECT_GT(unscaled.mismatches, unscaled.checked / 2);
    const CheckResult misread = check_gate(p, host_fp8_kernel(h, w, a, wrong));
    EXPECT_GT(misread.mismatches, misread.checked / 2);
    // Scales that do not fit the kind are refused, not read past.
    const std::vector<float> short_scales(scales.begin(), scales.end() - 1);
    GateProblem bad = p;
    bad.scales = &short_scales;
    EXPECT_THROW(check_gate(bad, host_fp8_kernel(h, w, a, right)), std::invalid_argument);
  }
}

}  // namespace
}  // namespace gatejit::reference
