// The host reference itself: storage conversions round to nearest even, and
// the checker rejects an output computed without the boundary roundings
// (crafted inputs where the skipped rounding changes the bf16 result), while
// accepting the output computed with them.
#include <gtest/gtest.h>

#include <cmath>

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

}  // namespace
}  // namespace gatejit::reference
