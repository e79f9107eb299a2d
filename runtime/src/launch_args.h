// A launch's argument slots, packed in the order a kernel declares them
// (kernel_abi.h): the backends take one pointer per argument.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "device_backend.h"
#include "gatejit/kernel_abi.h"

namespace gatejit {

// What a gate call gives the arguments: the four tensors' base pointers,
// the sizes and leading dimensions, and the tensor maps of hidden and
// weight (encoded by the caller where the kernel declares them).
struct LaunchValues {
  void *hidden = nullptr, *weight = nullptr, *attn = nullptr, *out = nullptr;
  int64_t m = 0, n = 0, k = 0;
  int64_t ld_hidden = 0, ld_weight = 0, ld_attn = 0, ld_out = 0;
  TensorMap hidden_map{}, weight_map{};
  void *weight_scale = nullptr;
  void *out_scale = nullptr;
};

// One pointer per declared argument, into `values` (which must outlive the
// launch), in a fixed array: a launch allocates nothing. The ABI was
// validated (at most kMaxAbiArgs entries) when its binary was decoded.
using LaunchSlots = std::array<void *, kMaxAbiArgs>;
LaunchSlots pack_launch_args(const std::vector<AbiArg> &abi, LaunchValues &values);

// Whether the kernel declares argument (kind, value).
bool declares(const std::vector<AbiArg> &abi, AbiArgKind kind, AbiValue value);
// Whether the kernel takes a tensor map of `tensor` (AbiValue::kHidden or kWeight).
bool declares_tensor_map(const std::vector<AbiArg> &abi, AbiValue tensor);

}  // namespace gatejit
