// Random contracts over every field, for coverage tests (the generic kernel
// set, the shipped bundle): most are invalid; a test keeps those normalize()
// accepts. Deterministic for a seeded generator.
#pragma once

#include <random>

#include "gatejit/contract.h"

namespace gatejit::testing_support {

inline Contract random_contract(std::mt19937_64 &rng) {
  auto pick = [&](int n) { return int(rng() % uint64_t(n)); };
  constexpr DType kDTypes[] = {DType::kBF16, DType::kF16, DType::kF32, DType::kFP8E4M3};
  Contract c;
  c.target = Target(pick(3));
  c.m_dynamic = pick(4) == 0;
  c.m_max = c.m_dynamic ? 1 + pick(8192) : 0;
  c.m = c.m_dynamic ? 0 : 1 + pick(4096);
  c.n = pick(3) == 0 ? 128 * (1 + pick(64)) : 1 + pick(20000);  // whole out groups a third of the time
  c.k = 1 + pick(20000);
  c.dtype_hidden = c.dtype_attn = kDTypes[pick(3)];
  c.dtype_weight = pick(2) ? c.dtype_hidden : kDTypes[pick(4)];
  c.dtype_out = pick(2) ? c.dtype_hidden : DType::kFP8E4M3;
  c.weight_scale = c.dtype_weight == DType::kFP8E4M3 ? WeightScale(1 + pick(2)) : WeightScale::kNone;
  c.out_scale = c.dtype_out == DType::kFP8E4M3 ? OutScale::kPerTokenGroup128 : OutScale::kNone;
  c.ld_hidden = pick(2) ? 0 : c.k + pick(9);
  c.ld_weight = pick(2) ? 0 : c.k + pick(9);
  c.ld_attn = pick(2) ? 0 : c.n + pick(9);
  c.ld_out = pick(2) ? 0 : c.n + pick(9);
  c.align = int64_t(1) << pick(9);
  c.act = Activation(pick(2));
  c.rounding = Rounding(pick(2));
  return c;
}

}  // namespace gatejit::testing_support
