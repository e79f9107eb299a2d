#include "launch_args.h"

#include <algorithm>

namespace gatejit {
namespace {

void *tensor_slot(AbiValue v, LaunchValues &x) {
  switch (v) {
    case AbiValue::kHidden: return &x.hidden;
    case AbiValue::kWeight: return &x.weight;
    case AbiValue::kAttn: return &x.attn;
    case AbiValue::kOut: return &x.out;
    case AbiValue::kWeightScale: return &x.weight_scale;
    case AbiValue::kOutScale: return &x.out_scale;
    default: return nullptr;
  }
}

void *scalar_slot(AbiValue v, LaunchValues &x) {
  switch (v) {
    case AbiValue::kM: return &x.m;
    case AbiValue::kN: return &x.n;
    case AbiValue::kK: return &x.k;
    case AbiValue::kLdHidden: return &x.ld_hidden;
    case AbiValue::kLdWeight: return &x.ld_weight;
    case AbiValue::kLdAttn: return &x.ld_attn;
    case AbiValue::kLdOut: return &x.ld_out;
    default: return nullptr;
  }
}

}  // namespace

LaunchSlots pack_launch_args(const std::vector<AbiArg> &abi, LaunchValues &values) {
  LaunchSlots slots{};
  for (size_t i = 0; i < abi.size() && i < slots.size(); ++i) {
    const AbiArg &a = abi[i];
    switch (a.kind) {
      case AbiArgKind::kPointer: slots[i] = tensor_slot(a.value, values); break;
      case AbiArgKind::kScalar: slots[i] = scalar_slot(a.value, values); break;
      case AbiArgKind::kTensorMap:
        slots[i] = a.value == AbiValue::kWeight ? static_cast<void *>(&values.weight_map)
                                                : static_cast<void *>(&values.hidden_map);
        break;
    }
  }
  return slots;
}

bool declares(const std::vector<AbiArg> &abi, AbiArgKind kind, AbiValue value) {
  return std::any_of(abi.begin(), abi.end(), [&](const AbiArg &a) { return a.kind == kind && a.value == value; });
}

bool declares_tensor_map(const std::vector<AbiArg> &abi, AbiValue tensor) {
  return declares(abi, AbiArgKind::kTensorMap, tensor);
}

}  // namespace gatejit
