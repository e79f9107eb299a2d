#include "gatejit/kernel_abi.h"

#include <array>
#include <set>
#include <utility>

namespace gatejit {
namespace {

constexpr std::array<std::pair<AbiArgKind, const char *>, 3> kKinds = {
    {{AbiArgKind::kPointer, "pointer"}, {AbiArgKind::kScalar, "scalar"}, {AbiArgKind::kTensorMap, "tensor_map"}}};
constexpr std::array<std::pair<AbiValue, const char *>, 13> kValues = {{{AbiValue::kHidden, "hidden"},
                                                                        {AbiValue::kWeight, "weight"},
                                                                        {AbiValue::kAttn, "attn"},
                                                                        {AbiValue::kOut, "out"},
                                                                        {AbiValue::kM, "m"},
                                                                        {AbiValue::kN, "n"},
                                                                        {AbiValue::kK, "k"},
                                                                        {AbiValue::kLdHidden, "ld_hidden"},
                                                                        {AbiValue::kLdWeight, "ld_weight"},
                                                                        {AbiValue::kLdAttn, "ld_attn"},
                                                                        {AbiValue::kLdOut, "ld_out"},
                                                                        {AbiValue::kWeightScale, "weight_scale"},
                                                                        {AbiValue::kOutScale, "out_scale"}}};

bool is_tensor(AbiValue v) {
  return v == AbiValue::kHidden || v == AbiValue::kWeight || v == AbiValue::kAttn || v == AbiValue::kOut ||
         v == AbiValue::kWeightScale || v == AbiValue::kOutScale;
}

std::string entry_name(size_t i, const AbiArg &a) {
  return "abi[" + std::to_string(i) + "] = " + abi_kind_name(a.kind) + " " + abi_value_name(a.value);
}

}  // namespace

const char *abi_kind_name(AbiArgKind k) {
  for (const auto &[kind, name] : kKinds)
    if (kind == k) return name;
  return "?";
}

const char *abi_value_name(AbiValue v) {
  for (const auto &[value, name] : kValues)
    if (value == v) return name;
  return "?";
}

StatusOr<AbiArgKind> parse_abi_kind(std::string_view s) {
  for (const auto &[kind, name] : kKinds)
    if (s == name) return kind;
  return invalid_argument("abi kind '" + std::string(s) + "': allowed are pointer, scalar, tensor_map");
}

StatusOr<AbiValue> parse_abi_value(std::string_view s) {
  for (const auto &[value, name] : kValues)
    if (s == name) return value;
  return invalid_argument("abi value '" + std::string(s) +
                          "': allowed are hidden, weight, attn, out, m, n, k, ld_hidden, ld_weight, ld_attn, ld_out, "
                          "weight_scale, out_scale");
}

size_t abi_arg_bytes(AbiArgKind k) { return k == AbiArgKind::kTensorMap ? 128 : 8; }

std::vector<AbiArg> classic_abi(bool tensor_maps) {
  std::vector<AbiArg> args;
  for (AbiValue v : {AbiValue::kHidden, AbiValue::kWeight, AbiValue::kAttn, AbiValue::kOut})
    args.push_back({AbiArgKind::kPointer, v});
  for (AbiValue v : {AbiValue::kM, AbiValue::kN, AbiValue::kK, AbiValue::kLdHidden, AbiValue::kLdWeight,
                     AbiValue::kLdAttn, AbiValue::kLdOut})
    args.push_back({AbiArgKind::kScalar, v});
  if (tensor_maps)
    for (AbiValue v : {AbiValue::kWeight, AbiValue::kHidden}) args.push_back({AbiArgKind::kTensorMap, v});
  return args;
}

std::vector<AbiArg> gate_abi(bool tensor_maps, bool weight_scale, bool out_scale) {
  std::vector<AbiArg> args = classic_abi(tensor_maps);
  if (weight_scale) args.push_back({AbiArgKind::kPointer, AbiValue::kWeightScale});
  if (out_scale) args.push_back({AbiArgKind::kPointer, AbiValue::kOutScale});
  return args;
}

Status validate_abi(const std::vector<AbiArg> &args, bool tensor_maps_allowed) {
  if (args.size() > kMaxAbiArgs)
    return invalid_argument("abi: " + std::to_string(args.size()) + " arguments, at most " +
                            std::to_string(kMaxAbiArgs) + " allowed");
  std::set<std::pair<AbiArgKind, AbiValue>> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    const AbiArg &a = args[i];
    const bool tensor = is_tensor(a.value);
    if (a.kind == AbiArgKind::kScalar && tensor)
      return invalid_argument(entry_name(i, a) + ": a scalar is a size or a leading dimension, not a tensor");
    if (a.kind != AbiArgKind::kScalar && !tensor)
      return invalid_argument(entry_name(i, a) +
                              ": pointers and tensor maps are of tensors (hidden, weight, attn, out, weight_scale, out_scale)");
    if (a.kind == AbiArgKind::kTensorMap) {
      if (!tensor_maps_allowed)
        return invalid_argument(entry_name(i, a) + ": only CUDA kernels with tensor map boxes take tensor maps");
      if (a.value != AbiValue::kHidden && a.value != AbiValue::kWeight)
        return invalid_argument(entry_name(i, a) + ": tensor maps are of hidden and weight only");
    }
    if (!seen.insert({a.kind, a.value}).second) return invalid_argument(entry_name(i, a) + ": declared twice");
  }
  return Status::Ok();
}

std::string abi_text(const std::vector<AbiArg> &args) {
  std::string s;
  for (const AbiArg &a : args) {
    if (!s.empty()) s += ", ";
    s += a.kind == AbiArgKind::kPointer ? "ptr " : a.kind == AbiArgKind::kScalar ? "i64 " : "tensor_map ";
    s += abi_value_name(a.value);
  }
  return s;
}

}  // namespace gatejit
