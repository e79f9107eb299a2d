#include "gatejit/contract.h"

#include "gatejit/target_info.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cstdio>

namespace gatejit {
namespace {

constexpr int64_t kMaxDim = int64_t(1) << 24;   // 16M rows/cols: far past any model
constexpr int64_t kMaxLd = int64_t(1) << 30;

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

Status check_dim(const char *field, int64_t v) {
  if (v < 1 || v > kMaxDim)
    return invalid_argument(std::string(field) + " = " + std::to_string(v) +
                            ": must be in [1, " + std::to_string(kMaxDim) + "]");
  return Status::Ok();
}

Status check_ld(const char *field, int64_t ld, int64_t min, const char *min_name) {
  if (ld == 0) return Status::Ok();  // packed
  if (ld < min || ld > kMaxLd)
    return invalid_argument(std::string(field) + " = " + std::to_string(ld) +
                            ": leading dimension must be at least " + min_name + " = " +
                            std::to_string(min) + " (or 0 for packed) and at most " +
                            std::to_string(kMaxLd));
  return Status::Ok();
}

}  // namespace

const char *target_name(Target t) { return target_info(t).name; }
const char *dtype_name(DType d) {
  switch (d) {
    case DType::kBF16: return "bf16";
    case DType::kF16: return "f16";
    case DType::kF32: return "f32";
    case DType::kFP8E4M3: return "fp8_e4m3";
  }
  return "?";
}
const char *weight_scale_name(WeightScale s) {
  switch (s) {
    case WeightScale::kNone: return "none";
    case WeightScale::kPerChannel: return "per_channel";
    case WeightScale::kBlock128: return "block128";
  }
  return "?";
}
const char *out_scale_name(OutScale s) {
  return s == OutScale::kPerTokenGroup128 ? "per_token_group128" : "none";
}
const char *activation_name(Activation a) { return a == Activation::kSigmoid ? "sigmoid" : "silu"; }
const char *rounding_name(Rounding r) { return r == Rounding::kBoundary ? "boundary" : "fused"; }
const char *template_name(TemplateKind t) {
  switch (t) {
    case TemplateKind::kAuto: return "auto";
    case TemplateKind::kGemv: return "gemv";
    case TemplateKind::kMma: return "mma";
    case TemplateKind::kGeneric: return "generic";
  }
  return "?";
}
int64_t dtype_bytes(DType d) { return d == DType::kF32 ? 4 : d == DType::kFP8E4M3 ? 1 : 2; }
int64_t weight_scale_count(const Contract &c) {
  switch (c.weight_scale) {
    case WeightScale::kNone: return 0;
    case WeightScale::kPerChannel: return c.n;
    case WeightScale::kBlock128: return scale_blocks(c.n) * scale_blocks(c.k);
  }
  return 0;
}
bool target_is_amdgpu(Target t) { return target_info(t).amdgpu; }
int target_wave_size(Target t) { return target_info(t).wave_size; }
std::string target_triple_id(Target t) {
  const TargetInfo &info = target_info(t);
  return std::string(info.triple) + "--" + (info.amdgpu ? info.name : "sm_90");
}

StatusOr<Target> parse_target(std::string_view s) {
  // Clang / HIP target ids carry features after the processor
  // ("gfx950:sramecc+:xnack-", what HIP's gcnArchName reports); the code
  // object is built for the processor with every feature at its default
  // ("any"), which runs on either setting.
  const std::string_view processor = s.substr(0, s.find(':'));
  const TargetInfo *info = processor == "sm90" ? &target_info(Target::kSm90) : find_target_info(processor);
  if (!info) {
    std::string allowed;
    for (const TargetInfo &row : target_table()) allowed += (allowed.empty() ? "" : ", ") + std::string(row.name);
    return invalid_argument("target = " + quoted(s) + ": allowed targets are " + allowed);
  }
  std::string_view features = processor.size() < s.size() ? s.substr(processor.size() + 1) : std::string_view();
  while (!features.empty()) {
    const std::string_view f = features.substr(0, features.find(':'));
    features = f.size() < features.size() ? features.substr(f.size() + 1) : std::string_view();
    const bool known = info->amdgpu && (f == "sramecc+" || f == "sramecc-" || f == "xnack+" || f == "xnack-");
    if (!known)
      return invalid_argument("target = " + quoted(s) + ": feature " + quoted(f) +
                              " is not allowed (AMD targets take sramecc+/- and xnack+/-)");
  }
  return info->target;
}
StatusOr<DType> parse_dtype(std::string_view s, std::string_view field) {
  if (s == "bf16" || s == "bfloat16") return DType::kBF16;
  if (s == "f16" || s == "fp16" || s == "float16") return DType::kF16;
  if (s == "f32" || s == "fp32" || s == "float32") return DType::kF32;
  if (s == "fp8_e4m3" || s == "float8_e4m3fn" || s == "e4m3") return DType::kFP8E4M3;
  return invalid_argument(std::string(field) + " = " + quoted(s) +
                          ": allowed dtypes are bf16, f16, f32, fp8_e4m3 (weight and out only)");
}
StatusOr<WeightScale> parse_weight_scale(std::string_view s) {
  if (s == "none") return WeightScale::kNone;
  if (s == "per_channel") return WeightScale::kPerChannel;
  if (s == "block128") return WeightScale::kBlock128;
  return invalid_argument("weight_scale = " + quoted(s) + ": allowed are none, per_channel, block128");
}
StatusOr<OutScale> parse_out_scale(std::string_view s) {
  if (s == "none") return OutScale::kNone;
  if (s == "per_token_group128") return OutScale::kPerTokenGroup128;
  return invalid_argument("out_scale = " + quoted(s) + ": allowed are none, per_token_group128");
}
StatusOr<Activation> parse_activation(std::string_view s) {
  if (s == "sigmoid") return Activation::kSigmoid;
  if (s == "silu") return Activation::kSilu;
  return invalid_argument("act = " + quoted(s) + ": allowed activations are sigmoid, silu");
}
StatusOr<Rounding> parse_rounding(std::string_view s) {
  if (s == "boundary") return Rounding::kBoundary;
  if (s == "fused") return Rounding::kFused;
  return invalid_argument("rounding = " + quoted(s) + ": allowed policies are boundary, fused");
}
StatusOr<TemplateKind> parse_template(std::string_view s) {
  if (s == "auto") return TemplateKind::kAuto;
  if (s == "gemv") return TemplateKind::kGemv;
  if (s == "mma") return TemplateKind::kMma;
  if (s == "generic") return TemplateKind::kGeneric;
  return invalid_argument("template = " + quoted(s) + ": allowed templates are auto, gemv, mma, generic");
}

Status check_fp8_only_weight_and_out(DType hidden, DType attn) {
  for (const auto &[d, field] : {std::pair{hidden, "dtype_hidden"}, std::pair{attn, "dtype_attn"}})
    if (d == DType::kFP8E4M3)
      return invalid_argument(std::string(field) + " = fp8_e4m3: only the weight and out may be fp8 (hidden and "
                              "attn are bf16, f16 or f32)");
  return Status::Ok();
}

Status validate(const Contract &c) {
  if (c.m_dynamic) {
    if (c.m_max < 1)
      return invalid_argument("m_max = " + std::to_string(c.m_max) +
                              ": dynamic M needs an upper bound m_max >= 1");
    GATEJIT_RETURN_IF_ERROR(check_dim("m_max", c.m_max));
  } else {
    GATEJIT_RETURN_IF_ERROR(check_dim("m", c.m));
    if (c.m_max != 0 && c.m > c.m_max)
      return invalid_argument("m = " + std::to_string(c.m) + ": M must not exceed m_max = " +
                              std::to_string(c.m_max));
    if (c.m_max != 0) GATEJIT_RETURN_IF_ERROR(check_dim("m_max", c.m_max));
  }
  GATEJIT_RETURN_IF_ERROR(check_dim("n", c.n));
  GATEJIT_RETURN_IF_ERROR(check_dim("k", c.k));
  GATEJIT_RETURN_IF_ERROR(check_fp8_only_weight_and_out(c.dtype_hidden, c.dtype_attn));
  const bool fp8_weight = c.dtype_weight == DType::kFP8E4M3;
  const bool fp8_out = c.dtype_out == DType::kFP8E4M3;
  if (c.dtype_hidden != c.dtype_attn || (!fp8_out && c.dtype_hidden != c.dtype_out) ||
      (!fp8_weight && c.dtype_hidden != c.dtype_weight))
    return invalid_argument(std::string("dtype: mixed dtypes (hidden=") + dtype_name(c.dtype_hidden) +
                            ", weight=" + dtype_name(c.dtype_weight) + ", attn=" +
                            dtype_name(c.dtype_attn) + ", out=" + dtype_name(c.dtype_out) +
                            "): all four tensors must have the same dtype, except an fp8_e4m3 weight or out");
  if (fp8_out) {
    if (c.dtype_attn == DType::kF32)
      return invalid_argument("dtype_attn = f32: an fp8_e4m3 out takes bf16 or f16 hidden and attn");
    if (c.out_scale == OutScale::kNone)
      return invalid_argument("out_scale = none: an fp8_e4m3 out needs its scales (per_token_group128)");
    if (c.n % kOutGroup != 0)
      return invalid_argument("n = " + std::to_string(c.n) +
                              ": out_scale = per_token_group128 needs N a multiple of 128 (whole groups)");
    if (!target_info(c.target).ocp_fp8)
      return invalid_argument(std::string("dtype_out = fp8_e4m3: target ") + target_name(c.target) +
                              " converts only the fnuz fp8 variant (bias 8), not OCP e4m3; gfx950 and sm_90 "
                              "take it");
  } else if (c.out_scale != OutScale::kNone) {
    return invalid_argument(std::string("out_scale = ") + out_scale_name(c.out_scale) +
                            ": scales go with an fp8_e4m3 out, not " + dtype_name(c.dtype_out));
  }
  if (fp8_weight) {
    if (c.dtype_hidden == DType::kF32)
      return invalid_argument("dtype_hidden = f32: an fp8_e4m3 weight takes bf16 or f16 hidden, attn and out");
    if (c.weight_scale == WeightScale::kNone)
      return invalid_argument("weight_scale = none: an fp8_e4m3 weight needs its scales (per_channel or block128)");
    if (!target_info(c.target).ocp_fp8)
      return invalid_argument(std::string("dtype_weight = fp8_e4m3: target ") + target_name(c.target) +
                              " converts only the fnuz fp8 variant (bias 8), not OCP e4m3; gfx950 and sm_90 "
                              "take it");
  } else if (c.weight_scale != WeightScale::kNone) {
    return invalid_argument(std::string("weight_scale = ") + weight_scale_name(c.weight_scale) +
                            ": scales go with an fp8_e4m3 weight, not " + dtype_name(c.dtype_weight));
  }
  GATEJIT_RETURN_IF_ERROR(check_ld("ld_hidden", c.ld_hidden, c.k, "k"));
  GATEJIT_RETURN_IF_ERROR(check_ld("ld_weight", c.ld_weight, c.k, "k"));
  GATEJIT_RETURN_IF_ERROR(check_ld("ld_attn", c.ld_attn, c.n, "n"));
  GATEJIT_RETURN_IF_ERROR(check_ld("ld_out", c.ld_out, c.n, "n"));
  // The smallest element among the tensors `align` covers (hidden, weight):
  // an fp8 weight with an odd K has 1-byte row strides, which the generic
  // kernel serves.
  const int64_t eb = std::min(dtype_bytes(c.dtype_hidden), dtype_bytes(c.dtype_weight));
  if (c.align < eb || c.align > 256 || (c.align & (c.align - 1)) != 0)
    return invalid_argument("align = " + std::to_string(c.align) +
                            ": must be a power of two between the element size (" +
                            std::to_string(eb) + " bytes for " + dtype_name(eb == dtype_bytes(c.dtype_weight) ? c.dtype_weight : c.dtype_hidden) +
                            ") and 256");
  if (c.template_kind == TemplateKind::kGemv && c.dtype() == DType::kF32)
    return invalid_argument("template = gemv: the gemv template takes bf16 or f16, not f32");
  if (c.template_kind == TemplateKind::kMma && c.dtype() == DType::kF32)
    return invalid_argument("template = mma: the mma template takes bf16 or f16, not f32");
  return Status::Ok();
}

StatusOr<Contract> normalize(Contract c) {
  GATEJIT_RETURN_IF_ERROR(validate(c));
  if (c.m_dynamic) c.m = 0;
  else if (c.m_max == 0) c.m_max = c.m;
  if (c.ld_hidden == 0) c.ld_hidden = c.k;
  if (c.ld_weight == 0) c.ld_weight = c.k;
  if (c.ld_attn == 0) c.ld_attn = c.n;
  if (c.ld_out == 0) c.ld_out = c.n;
  // No template exploits more than 16-byte alignment: a 256-byte aligned call
  // and a 16-byte aligned one share a kernel, so they must share a key.
  c.align = std::min(c.align, kMaxUsefulAlign);
  return c;
}

std::string canonical_text(const Contract &c) {
  // Plain string building (no iostreams: the runtime is loaded into hosts such
  // as Python processes whose C++ library state it should not depend on).
  std::string s = std::string("gatejit-contract/1 target=") + target_name(c.target) +
                  " template=" + template_name(c.template_kind) + " dtype=" + dtype_name(c.dtype()) +
                  " act=" + activation_name(c.act) + " rounding=" + rounding_name(c.rounding);
  // Only where the weight differs: every key from before fp8 stays the same.
  if (c.dtype_weight != c.dtype())
    s += std::string(" dtype_weight=") + dtype_name(c.dtype_weight) + " weight_scale=" + weight_scale_name(c.weight_scale);
  if (c.fp8_out()) s += std::string(" dtype_out=") + dtype_name(c.dtype_out) + " out_scale=" + out_scale_name(c.out_scale);
  // A generic kernel takes the shape at launch: the shape is not part of its key.
  if (c.template_kind != TemplateKind::kGeneric) {
    s += " m=" + (c.m_dynamic ? std::string("dynamic") : std::to_string(c.m)) + " m_max=" + std::to_string(c.m_max) +
         " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) + " ld_hidden=" + std::to_string(c.ld_hidden) +
         " ld_weight=" + std::to_string(c.ld_weight) + " ld_attn=" + std::to_string(c.ld_attn) +
         " ld_out=" + std::to_string(c.ld_out) + " align=" + std::to_string(c.align);
  }
  return s;
}

std::string contract_key(const Contract &c) {
  const std::string text = canonical_text(c);
  XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)h.high64,
                (unsigned long long)h.low64);
  return buf;
}

}  // namespace gatejit
