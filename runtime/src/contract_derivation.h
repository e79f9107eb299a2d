// From the call's tensor descriptors to a Contract: checks that the four
// shapes agree (errors name the field), and derives the alignment the
// runtime can prove from the pointers and row strides.
#pragma once

#include "gatejit/contract.h"
#include "gatejit/gatejit.h"

namespace gatejit {

// Bytes of one element of a C API tensor (its dtype already checked).
int64_t element_bytes(const gatejit_tensor_t &t);

// Largest power of two (<= 256) that divides every address and byte stride.
int64_t provable_alignment(const gatejit_gate_args_t &args);

// `target` comes from the device. The result is validated and normalised.
StatusOr<Contract> derive_contract(const gatejit_gate_args_t &args, Target target);

}  // namespace gatejit
