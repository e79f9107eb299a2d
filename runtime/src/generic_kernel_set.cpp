#include "generic_kernel_set.h"

#include <set>
#include <string>

namespace gatejit {

std::vector<Contract> generic_kernel_contracts(Target target) {
  constexpr DType kDTypes[] = {DType::kBF16, DType::kF16, DType::kF32, DType::kFP8E4M3};
  constexpr WeightScale kWeightScales[] = {WeightScale::kNone, WeightScale::kPerChannel, WeightScale::kBlock128};
  constexpr OutScale kOutScales[] = {OutScale::kNone, OutScale::kPerTokenGroup128};
  constexpr Activation kActivations[] = {Activation::kSigmoid, Activation::kSilu};
  constexpr Rounding kRoundings[] = {Rounding::kBoundary, Rounding::kFused};
  std::vector<Contract> out;
  std::set<std::string> keys;
  // Every combination of the key's fields; validate() decides which exist.
  // The nominal shape passes every shape rule (N a whole number of 128-wide
  // out groups, packed rows, 16-byte alignment), so only the fields the key
  // holds can reject a combination.
  for (DType hidden : kDTypes)
    for (DType weight : kDTypes)
      for (DType out_dtype : kDTypes)
        for (WeightScale ws : kWeightScales)
          for (OutScale os : kOutScales)
            for (Activation act : kActivations)
              for (Rounding rounding : kRoundings) {
                Contract c;
                c.target = target;
                c.m = 1;
                c.n = 128;
                c.k = 128;
                c.dtype_hidden = c.dtype_attn = hidden;
                c.dtype_weight = weight;
                c.dtype_out = out_dtype;
                c.weight_scale = ws;
                c.out_scale = os;
                c.act = act;
                c.rounding = rounding;
                c.template_kind = TemplateKind::kGeneric;
                auto normalised = normalize(c);
                if (!normalised.ok()) continue;
                if (keys.insert(contract_key(*normalised)).second) out.push_back(*normalised);
              }
  return out;
}

}  // namespace gatejit
