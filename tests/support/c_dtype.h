// The C API's dtype enum for a contract dtype: what the tests and the
// emulator's harness write into gatejit_gate_args_t (the runtime maps back
// in contract_derivation.cpp).
#pragma once

#include "gatejit/contract.h"
#include "gatejit/gatejit.h"

namespace gatejit {

inline gatejit_dtype_t c_dtype(DType d) {
  switch (d) {
    case DType::kBF16: return GATEJIT_BF16;
    case DType::kF16: return GATEJIT_F16;
    case DType::kF32: return GATEJIT_F32;
    case DType::kFP8E4M3: return GATEJIT_FP8_E4M3;
  }
  return GATEJIT_F32;
}

}  // namespace gatejit
