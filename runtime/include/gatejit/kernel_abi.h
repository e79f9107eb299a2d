// The kernel ABI as data: the argument list a kernel declares. The planner
// writes it into the KernelBinary (format version 3), and the runtime packs
// a launch by walking it, so a kernel with other arguments (a scale tensor,
// another tensor map) needs no launcher that knows its list by hand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gatejit/status.h"

namespace gatejit {

// How an argument is passed: a device pointer, a 64-bit integer, or a
// 128-byte TMA descriptor by value (sm_90).
enum class AbiArgKind : uint8_t { kPointer, kScalar, kTensorMap };

// What the launcher puts in it: a tensor's base pointer (or the tensor map
// it encodes for that tensor), a size, or a leading dimension. kWeightScale:
// the fp32 scales of an fp8 weight (contract.h's WeightScale); kOutScale:
// the fp32 scales the kernel writes for an fp8 out (contract.h's OutScale).
enum class AbiValue : uint8_t {
  kHidden, kWeight, kAttn, kOut, kM, kN, kK, kLdHidden, kLdWeight, kLdAttn, kLdOut, kWeightScale, kOutScale
};

struct AbiArg {
  AbiArgKind kind = AbiArgKind::kPointer;
  AbiValue value = AbiValue::kHidden;
  bool operator==(const AbiArg &) const = default;
};

// Every argument list a kernel may declare has at most this many entries.
inline constexpr size_t kMaxAbiArgs = 16;

const char *abi_kind_name(AbiArgKind k);
const char *abi_value_name(AbiValue v);
StatusOr<AbiArgKind> parse_abi_kind(std::string_view s);
StatusOr<AbiValue> parse_abi_value(std::string_view s);

// Bytes of the argument in the kernel's parameter space: 8, 8, 128.
size_t abi_arg_bytes(AbiArgKind k);

// The list every kernel had before it was declared (format versions 1 and
// 2): (ptr hidden, ptr weight, ptr attn, ptr out, i64 M, N, K, ld_hidden,
// ld_weight, ld_attn, ld_out), then the tensor maps of weight and hidden for
// the kernels that take them.
std::vector<AbiArg> classic_abi(bool tensor_maps);

// Well-formed: at most kMaxAbiArgs entries; pointers and tensor maps of
// tensors, scalars of sizes and leading dimensions; tensor maps only of
// hidden and weight and only where `tensor_maps_allowed`; no (kind, value)
// twice. The message names the entry.
Status validate_abi(const std::vector<AbiArg> &args, bool tensor_maps_allowed);

// The classic list, then the pointer to the weight's scales where it has
// them, then the pointer to the out's scales where the kernel writes them.
std::vector<AbiArg> gate_abi(bool tensor_maps, bool weight_scale, bool out_scale = false);

// "ptr hidden, ptr weight, ..., i64 m, ..., tensor_map weight", for reports
// and messages.
std::string abi_text(const std::vector<AbiArg> &args);

}  // namespace gatejit
