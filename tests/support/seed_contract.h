// The seed contract, Kimi-K3's MLA output gate at decode: M = 1, N = 1536,
// K = 7168 (bf16, sigmoid and boundary rounding are Contract's defaults).
// Header-only: the tests and the host benchmarks start from it.
#pragma once

#include "gatejit/contract.h"

namespace gatejit::testing_support {

inline Contract seed(Target t = Target::kGfx950) {
  Contract c;
  c.target = t;
  c.m = 1;
  c.n = 1536;
  c.k = 7168;
  return c;
}

}  // namespace gatejit::testing_support
