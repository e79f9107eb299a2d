// The host reference for the gate epilogue, mirroring the contract's rounding
// boundaries exactly. Each stage is evaluated in fp64 on an interval that
// covers the GPU's legitimate fp32 error (accumulation order, exp2/divide
// ulps); a rounding to the storage dtype maps the interval to dtype values.
// Where no interval straddles a rounding midpoint (nearly every element) the
// check demands bit equality; a skipped or extra rounding is caught.
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

// A host tensor in storage dtype: `bits` holds 2- or 4-byte elements.
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

struct GateProblem {
  Activation act = Activation::kSigmoid;
  Rounding rounding = Rounding::kBoundary;
  const HostTensor *hidden, *weight, *attn;  // [M,K], [N,K], [M,N]
};

struct CheckResult {
  int64_t checked = 0;
  int64_t exact_required = 0;  // elements whose reference is a single value
  int64_t mismatches = 0;
  int64_t unwritten = 0;       // NaN left from the poison
  std::string first_failure;   // "out[3, 17] = 0.5 not in [0.25, 0.25] (proj ...)"
};

// Checks every element of `out` against the reference (multi-threaded).
CheckResult check_gate(const GateProblem &p, const HostTensor &out);

}  // namespace gatejit::reference
