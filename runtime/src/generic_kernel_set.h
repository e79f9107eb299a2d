// The generic kernels a target can need: one per (dtypes, weight-scale kind,
// out-scale kind, activation, rounding) that validate() accepts there. The
// generic kernel takes its shape, strides and alignment at launch, so its key
// (canonical_text) holds only these fields: this set covers every valid
// contract of the target. The build ships it (gatejit precompile
// --all-generic, installed as the shipped bundle: shipped_bundle.h).
#pragma once

#include <vector>

#include "gatejit/contract.h"

namespace gatejit {

// Normalised generic contracts, one per distinct key, in a stable order.
std::vector<Contract> generic_kernel_contracts(Target target);

}  // namespace gatejit
