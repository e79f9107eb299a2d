// The grid of contracts whose machine code a restructuring must keep
// byte-identical: every form (gemv, thin rows, streamed mma with and without
// a K split, tiled 64x64 / 128x128 / persistent, generic), dtypes,
// activations, roundings, fp8 weights and outs, dynamic M, strided and
// padded rows, for gfx950, sm_90 and gfx942, plus a few development
// overrides (GATEJIT_MMA_TUNING).
#pragma once

#include <string>
#include <vector>

#include "gatejit/contract.h"

namespace gatejit::invariant {

struct GridCase {
  Contract contract;
  std::string tuning;  // GATEJIT_MMA_TUNING for this compile ("" for none)
};

std::vector<GridCase> codegen_grid();

}  // namespace gatejit::invariant
