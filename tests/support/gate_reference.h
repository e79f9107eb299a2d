// The host reference for the gate epilogue, mirroring the contract's rounding
// boundaries exactly. Each stage is evaluated in fp64 on an interval that
// covers the GPU's legitimate fp32 error (accumulation order, exp2/divide
// ulps); a rounding to the storage dtype maps the interval to dtype values.
// Where no interval straddles a rounding midpoint (nearly every element) the
// check demands bit equality; a skipped or extra rounding is caught.
//
// An fp8 e4m3 weight carries fp32 scales (per output channel or per 128 x 128
// block): its value is e4m3(w) x scale, exact in fp64. The kernel may apply
// the scale to each weight element in fp32 or to an fp32 (partial) sum; the
// interval covers both. Everything after the projection is as for bf16/f16.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gatejit/contract.h"

namespace gatejit::reference {

// Storage encodings (round-to-nearest-even on narrowing).
uint16_t f32_to_bf16(float f);
float bf16_to_f32(uint16_t b);
uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);
// OCP e4m3 ("e4m3fn": bias 7, max 448, NaN 0x7f / 0xff, no infinity,
// subnormals m x 2^-9). Narrowing rounds to nearest even, bit for bit as
// torch's .to(torch.float8_e4m3fn) for |x| <= 464 (which rounds to 448); out
// of range this saturates to +-448, infinity too (as cvt.rn.satfinite does;
// torch gives NaN above 464). NaN stays NaN (0x7f with the sign). Decoding is
// exact.
uint8_t f32_to_e4m3(float f);
float e4m3_to_f32(uint8_t b);

// A host tensor in storage dtype: `bytes` holds 1-, 2- or 4-byte elements.
struct HostTensor {
  DType dtype = DType::kBF16;
  int64_t rows = 0, cols = 0, ld = 0;
  std::vector<uint8_t> bytes;
  float at(int64_t r, int64_t c) const;
  void set(int64_t r, int64_t c, float v);  // rounds v to dtype
  size_t element_bytes() const { return size_t(dtype_bytes(dtype)); }
};

HostTensor make_tensor(DType dtype, int64_t rows, int64_t cols, int64_t ld);
// Fresh uniform values in [-scale, scale], rounded to dtype (never all zeros).
void fill_random(HostTensor &t, float scale, uint64_t seed);

// Fresh fp8 e4m3 weights (t.dtype must be kFP8E4M3) as a block-quantised
// checkpoint has them, and then some: 3/4 of the elements uniform in
// [-448, 448] (the full range a block's absmax scaling uses), 1/4 with
// log-uniform magnitudes over [2^-11, 448] (every exponent: ~5% subnormals,
// ~1.3% zeros); random signs. Their RMS is about 228.
void fill_random_fp8(HostTensor &t, uint64_t seed);

// The shape of the scale tensor of an [n, k] fp8 weight: [n, 1] or
// [ceil(n/128), ceil(k/128)] ({0, 0} for kNone).
struct ScaleShape {
  int64_t rows = 0, cols = 0;
};
ScaleShape weight_scale_shape(WeightScale kind, int64_t n, int64_t k);
// Fresh positive scales for fill_random_fp8 weights, row-major in
// weight_scale_shape: each is base x 2^u, u uniform in [-1, 1], with base
// chosen so that the scaled weights have about the RMS of uniform values in
// [-bound, bound] (the bf16 tests' weights: bound = 6 / sqrt(K)).
std::vector<float> random_weight_scales(WeightScale kind, int64_t n, int64_t k, float bound, uint64_t seed);

struct GateProblem {
  Activation act = Activation::kSigmoid;
  Rounding rounding = Rounding::kBoundary;
  const HostTensor *hidden, *weight, *attn;  // [M,K], [N,K], [M,N]
  // The weight's scales (an fp8 weight): kPerChannel, N values; kBlock128,
  // ceil(N/128) x ceil(K/128) row-major (scale of (n, k) at
  // (n / 128) * ceil(K/128) + k / 128). kNone: every scale is 1.
  WeightScale weight_scale = WeightScale::kNone;
  const std::vector<float> *scales = nullptr;
};

struct CheckResult {
  int64_t checked = 0;
  int64_t exact_required = 0;  // elements whose reference is a single value
  int64_t mismatches = 0;
  int64_t unwritten = 0;       // NaN left from the poison
  std::string first_failure;   // "out[3, 17] = 0.5 not in [0.25, 0.25] (proj ...)"
};

// Checks every element of `out` against the reference (multi-threaded).
// The roundings after the projection are to hidden's dtype (bf16/f16/f32).
// Throws std::invalid_argument where `scales` does not fit weight_scale.
CheckResult check_gate(const GateProblem &p, const HostTensor &out);

// An fp8 out quantised per token group of 128 columns (contract.h's
// OutScale): with y the gated value in hidden's dtype (check_gate's
// reference), s = max(max |y| of the group, 1e-10f) / 448 in fp32 and q =
// e4m3(clamp(y / s, -448, 448)) with an fp32 IEEE division. Where y may be
// one of several dtype values (an fp32 sum near a rounding midpoint, or a
// tiny projection whose activation interval is wide), the group's scale
// must lie between those of the smallest and largest possible maximum, and
// each q between those of its interval's ends under the kernel's scale (both
// are monotonic); everything else bit for bit. `q` is [M, N] fp8, `scales` [M, N / 128] row-major. A scale
// or an element left as the NaN poison counts as unwritten; `checked`
// counts elements and scales.
CheckResult check_gate_fp8_out(const GateProblem &p, const HostTensor &q, const std::vector<float> &scales);
// The reference scale of a group whose largest |y| is `amax`.
float out_group_scale(float amax);

}  // namespace gatejit::reference
