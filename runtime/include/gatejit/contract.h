// The gate-epilogue contract: everything a generated kernel is specialised on.
//
//   out[m, n] = act(sum_k hidden[m, k] * weight[n, k]) * attn[m, n]
//
// An fp8 weight carries fp32 scales: weight[n, k] = e4m3(w[n, k]) * scale(n, k).
// An fp8 output is quantised per token group of 128 columns: with y the gated
// value in attn's dtype, s[m, g] = max(max |y[m, 128 g ..]|, 1e-10) / 448 and
// out[m, n] = e4m3(clamp(y[m, n] / s[m, n / 128], -448, 448)) (docs/contract.md).
//
// A Contract is validated once (validate), then normalised (leading dimensions
// defaulted, m_max filled in). Its canonical text is the cache and bundle key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gatejit/status.h"

namespace gatejit {

enum class Target { kGfx950, kGfx942, kSm90 };
// kFP8E4M3: OCP e4m3 ("e4m3fn": bias 7, max 448, NaN 0x7f/0xff, no
// infinity), one byte; a weight (with its scales) or an output (with the
// scales the kernel writes) may be fp8.
enum class DType { kBF16, kF16, kF32, kFP8E4M3 };
// The fp32 scales of an fp8 weight: one per output channel ([N] values), or
// one per 128 x 128 block of the weight ([ceil(N/128), ceil(K/128)] row-major,
// DeepSeek-V3's layout). kNone: the weight is bf16/f16/f32.
enum class WeightScale { kNone, kPerChannel, kBlock128 };
inline constexpr int64_t kScaleBlock = 128;
// The scales of an fp8 output: kPerTokenGroup128, one fp32 scale per row and
// 128 consecutive columns, written by the kernel to a packed [M, N / 128]
// tensor (row-major: vLLM's per_token_group_quant_fp8 layout). kNone: out is
// bf16/f16/f32.
enum class OutScale { kNone, kPerTokenGroup128 };
inline constexpr int64_t kOutGroup = 128;
// The e4m3 quantisation's constants (vLLM's per-token-group quantisation).
inline constexpr float kFp8Max = 448.0f;
inline constexpr float kOutScaleEps = 1e-10f;
// 128-wide blocks that cover `extent` elements: ceil(extent / 128), without
// overflow for any extent a caller may pass.
inline constexpr int64_t scale_blocks(int64_t extent) { return extent / kScaleBlock + (extent % kScaleBlock != 0); }
enum class Activation { kSigmoid, kSilu };
// kBoundary: round the projection, the activation and the product to the
// storage dtype, as the unfused PyTorch expression does. kFused: fp32
// throughout, one rounding at the end.
enum class Rounding { kBoundary, kFused };
// kAuto lets the generator choose; the others force a template.
enum class TemplateKind { kAuto, kGemv, kMma, kGeneric };

struct Contract {
  Target target = Target::kGfx950;
  int64_t m = 1;          // rows of hidden/attn/out; with m_dynamic, unused (0)
  bool m_dynamic = false; // the kernel takes the actual M at launch, M <= m_max
  int64_t m_max = 0;      // upper bound for M; 0 = same as m (fixed M)
  int64_t n = 0;
  int64_t k = 0;
  DType dtype_hidden = DType::kBF16;
  DType dtype_weight = DType::kBF16;
  DType dtype_attn = DType::kBF16;
  DType dtype_out = DType::kBF16;
  WeightScale weight_scale = WeightScale::kNone;
  OutScale out_scale = OutScale::kNone;
  // Row strides in elements; 0 means packed (K for hidden/weight, N for attn/out).
  int64_t ld_hidden = 0;
  int64_t ld_weight = 0;
  int64_t ld_attn = 0;
  int64_t ld_out = 0;
  // Bytes the caller guarantees for every base pointer and every row stride.
  int64_t align = 16;
  Activation act = Activation::kSigmoid;
  Rounding rounding = Rounding::kBoundary;
  TemplateKind template_kind = TemplateKind::kAuto;

  // The storage dtype of hidden and attn, and of the gated value every
  // rounding boundary rounds to (out's too, except for an fp8 output; the
  // weight's too, except for an fp8 weight).
  DType dtype() const { return dtype_attn; }
  bool fp8_out() const { return out_scale != OutScale::kNone; }
  bool operator==(const Contract &) const = default;
};

// Names used in canonical text, JSON, flags and messages.
const char *target_name(Target t);
const char *dtype_name(DType d);
const char *activation_name(Activation a);
const char *rounding_name(Rounding r);
const char *template_name(TemplateKind t);
const char *weight_scale_name(WeightScale s);
const char *out_scale_name(OutScale s);
int64_t dtype_bytes(DType d);
bool target_is_amdgpu(Target t);
int target_wave_size(Target t);
// The full target id a device reports, e.g. "amdgcn-amd-amdhsa--gfx950".
std::string target_triple_id(Target t);

StatusOr<Target> parse_target(std::string_view s);
StatusOr<DType> parse_dtype(std::string_view s, std::string_view field = "dtype");
StatusOr<Activation> parse_activation(std::string_view s);
StatusOr<Rounding> parse_rounding(std::string_view s);
StatusOr<TemplateKind> parse_template(std::string_view s);
StatusOr<WeightScale> parse_weight_scale(std::string_view s);
StatusOr<OutScale> parse_out_scale(std::string_view s);
// Elements of the scale tensor an fp8 weight of `c` carries (0 for kNone).
int64_t weight_scale_count(const Contract &c);

// Checks every field; the message names the field, the value and what is
// allowed. Does not modify the contract.
Status validate(const Contract &c);
// validate()'s first dtype check, also run by the C API's derivation before
// it asks for scales (an fp8 attn is named as such, not as a missing scale).
Status check_fp8_only_weight_and_out(DType hidden, DType attn);

// The largest alignment any template exploits (16-byte vector loads).
inline constexpr int64_t kMaxUsefulAlign = 16;

// validate() then fill defaults (packed leading dimensions, m_max) and clamp
// align to kMaxUsefulAlign.
StatusOr<Contract> normalize(Contract c);

// Stable one-line text of a normalised contract, e.g.
// "gatejit-contract/1 target=gfx950 m=1 m_max=1 n=1536 ...".
std::string canonical_text(const Contract &c);

// 32 hex digits of XXH3-128 over canonical_text(c).
std::string contract_key(const Contract &c);

}  // namespace gatejit
