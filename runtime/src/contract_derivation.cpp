#include "contract_derivation.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

namespace gatejit {
namespace {

StatusOr<DType> to_dtype(gatejit_dtype_t d, const char *field) {
  switch (d) {
    case GATEJIT_BF16: return DType::kBF16;
    case GATEJIT_F16: return DType::kF16;
    case GATEJIT_F32: return DType::kF32;
    case GATEJIT_FP8_E4M3: return DType::kFP8E4M3;
  }
  return invalid_argument(std::string(field) + ".dtype = " + std::to_string(int(d)) +
                          ": allowed are GATEJIT_BF16, GATEJIT_F16, GATEJIT_F32, GATEJIT_FP8_E4M3");
}

Status check_tensor(const gatejit_tensor_t &t, const char *name) {
  if (!t.data) return invalid_argument(std::string(name) + ".data is NULL");
  if (t.rows < 1 || t.cols < 1)
    return invalid_argument(std::string(name) + " shape [" + std::to_string(t.rows) + ", " + std::to_string(t.cols) +
                            "]: both dimensions must be at least 1");
  if (t.ld < t.cols)
    return invalid_argument(std::string(name) + ".ld = " + std::to_string(t.ld) + ": the row stride must be at least cols = " +
                            std::to_string(t.cols) + " (inner dimension contiguous)");
  return Status::Ok();
}

Status check_dim(const char *field, int64_t got, const char *what, int64_t want) {
  if (got == want) return Status::Ok();
  return invalid_argument(std::string(field) + " = " + std::to_string(got) + ": must equal " + what + " = " +
                          std::to_string(want));
}

}  // namespace

int64_t element_bytes(const gatejit_tensor_t &t) {
  return t.dtype == GATEJIT_F32 ? 4 : t.dtype == GATEJIT_FP8_E4M3 ? 1 : 2;
}

namespace {
int64_t lowest_alignment(std::initializer_list<const gatejit_tensor_t *> tensors) {
  uint64_t bits = 256;
  for (const gatejit_tensor_t *t : tensors) {
    const uint64_t eb = uint64_t(element_bytes(*t));
    bits |= uint64_t(reinterpret_cast<uintptr_t>(t->data));
    if (t->rows > 1) bits |= uint64_t(t->ld) * eb;  // a single row has no stride to honour
  }
  return int64_t(bits & (~bits + 1));  // lowest set bit
}

// The scales of an fp8 weight: fp32, packed, 4-byte aligned, and a shape that
// names their kind ([N, 1] per channel, [ceil(N/128), ceil(K/128)] per block;
// with N = 1 and K <= 128 the two are one scale and mean the same).
StatusOr<WeightScale> weight_scale_of(const gatejit_gate_args_t &a, DType weight, int64_t n, int64_t k) {
  const gatejit_tensor_t &s = a.weight_scale;
  if (weight != DType::kFP8E4M3) {
    if (s.data)
      return invalid_argument(std::string("weight_scale: given for a ") + dtype_name(weight) +
                              " weight; scales go with an fp8_e4m3 weight only (leave weight_scale zeroed)");
    return WeightScale::kNone;
  }
  const int64_t nb = scale_blocks(n), kb = scale_blocks(k);
  // Built on the error paths only: a launch derives its contract every call.
  auto allowed = [&] {
    return "[N, 1] = [" + std::to_string(n) + ", 1] (one per output channel) or [ceil(N/128), ceil(K/128)] = [" +
           std::to_string(nb) + ", " + std::to_string(kb) + "] (one per 128 x 128 block)";
  };
  if (!s.data)
    return invalid_argument("weight_scale.data is NULL: an fp8_e4m3 weight needs its fp32 scales, " + allowed());
  if (s.dtype != GATEJIT_F32)
    return invalid_argument("weight_scale.dtype = " + std::to_string(int(s.dtype)) + ": scales are GATEJIT_F32");
  if (s.ld != s.cols)
    return invalid_argument("weight_scale.ld = " + std::to_string(s.ld) + ": scales are packed (ld = cols = " +
                            std::to_string(s.cols) + ")");
  if (reinterpret_cast<uintptr_t>(s.data) % 4 != 0)
    return invalid_argument("weight_scale.data is not 4-byte aligned");
  if (s.rows == n && s.cols == 1) return WeightScale::kPerChannel;
  if (s.rows == nb && s.cols == kb) return WeightScale::kBlock128;
  return invalid_argument("weight_scale shape [" + std::to_string(s.rows) + ", " + std::to_string(s.cols) +
                          "]: allowed are " + allowed());
}

// The scales an fp8 out's kernel writes: fp32, packed [M, N / 128], 4-byte
// aligned; and the out itself apart from attn (the kernel writes a group's
// bytes after other workgroups read their attn). Nothing for another out.
StatusOr<OutScale> out_scale_of(const gatejit_gate_args_t &a, DType out, int64_t m, int64_t n) {
  const gatejit_tensor_t &s = a.out_scale;
  if (out != DType::kFP8E4M3) {
    if (s.data)
      return invalid_argument(std::string("out_scale: given for a ") + dtype_name(out) +
                              " out; scales go with an fp8_e4m3 out only (leave out_scale zeroed)");
    return OutScale::kNone;
  }
  if (n % kOutGroup != 0)
    return invalid_argument("out.cols = " + std::to_string(n) +
                            ": an fp8_e4m3 out is quantised in groups of 128 columns (N a multiple of 128)");
  const std::string shape = "[M, N / 128] = [" + std::to_string(m) + ", " + std::to_string(n / kOutGroup) + "]";
  if (!s.data) return invalid_argument("out_scale.data is NULL: an fp8_e4m3 out needs fp32 scales " + shape);
  if (s.dtype != GATEJIT_F32)
    return invalid_argument("out_scale.dtype = " + std::to_string(int(s.dtype)) + ": scales are GATEJIT_F32");
  if (s.rows != m || s.cols != n / kOutGroup)
    return invalid_argument("out_scale shape [" + std::to_string(s.rows) + ", " + std::to_string(s.cols) +
                            "]: must be " + shape);
  if (s.ld != s.cols)
    return invalid_argument("out_scale.ld = " + std::to_string(s.ld) + ": scales are packed (ld = cols = " +
                            std::to_string(s.cols) + ")");
  if (reinterpret_cast<uintptr_t>(s.data) % 4 != 0) return invalid_argument("out_scale.data is not 4-byte aligned");
  const auto span = [](const gatejit_tensor_t &t) {
    const uintptr_t begin = reinterpret_cast<uintptr_t>(t.data);
    return std::pair{begin, begin + uintptr_t(((t.rows - 1) * t.ld + t.cols) * element_bytes(t))};
  };
  const auto [o0, o1] = span(a.out);
  const auto [a0, a1] = span(a.attn);
  const auto [s0, s1] = span(s);
  if (o0 < a1 && a0 < o1)
    return invalid_argument("out: an fp8_e4m3 out may not overlap attn (in place is for a bf16 / f16 out)");
  if (s0 < a1 && a0 < s1) return invalid_argument("out_scale: may not overlap attn");
  if (s0 < o1 && o0 < s1) return invalid_argument("out_scale: may not overlap out");
  return OutScale::kPerTokenGroup128;
}

}  // namespace

// Only hidden and weight are read in vectors; attn and out are read and
// written one element at a time by every template, so their alignment does
// not limit the kernel (it only has to reach the element size).
int64_t provable_alignment(const gatejit_gate_args_t &a) { return lowest_alignment({&a.hidden, &a.weight}); }

StatusOr<Contract> derive_contract(const gatejit_gate_args_t &a, Target target) {
  GATEJIT_RETURN_IF_ERROR(check_tensor(a.hidden, "hidden"));
  GATEJIT_RETURN_IF_ERROR(check_tensor(a.weight, "weight"));
  GATEJIT_RETURN_IF_ERROR(check_tensor(a.attn, "attn"));
  GATEJIT_RETURN_IF_ERROR(check_tensor(a.out, "out"));
  const int64_t m = a.hidden.rows, k = a.hidden.cols, n = a.weight.rows;
  GATEJIT_RETURN_IF_ERROR(check_dim("weight.cols", a.weight.cols, "hidden.cols (K)", k));
  GATEJIT_RETURN_IF_ERROR(check_dim("attn.rows", a.attn.rows, "hidden.rows (M)", m));
  GATEJIT_RETURN_IF_ERROR(check_dim("attn.cols", a.attn.cols, "weight.rows (N)", n));
  GATEJIT_RETURN_IF_ERROR(check_dim("out.rows", a.out.rows, "hidden.rows (M)", m));
  GATEJIT_RETURN_IF_ERROR(check_dim("out.cols", a.out.cols, "weight.rows (N)", n));
  if (a.act != GATEJIT_SIGMOID && a.act != GATEJIT_SILU)
    return invalid_argument("act = " + std::to_string(int(a.act)) + ": allowed are GATEJIT_SIGMOID, GATEJIT_SILU");
  if (a.rounding != GATEJIT_ROUNDING_BOUNDARY && a.rounding != GATEJIT_ROUNDING_FUSED)
    return invalid_argument("rounding = " + std::to_string(int(a.rounding)) +
                            ": allowed are GATEJIT_ROUNDING_BOUNDARY, GATEJIT_ROUNDING_FUSED");
  Contract c;
  c.target = target;
  c.m = m;
  c.n = n;
  c.k = k;
  auto dh = to_dtype(a.hidden.dtype, "hidden");
  auto dw = to_dtype(a.weight.dtype, "weight");
  auto da = to_dtype(a.attn.dtype, "attn");
  auto dout = to_dtype(a.out.dtype, "out");
  for (auto *d : {&dh, &dw, &da, &dout})
    if (!d->ok()) return d->status();
  c.dtype_hidden = *dh;
  c.dtype_weight = *dw;
  c.dtype_attn = *da;
  c.dtype_out = *dout;
  // fp8 is a weight or out dtype only: say so before the scales' checks
  // would (an fp8 attn with an fp8 out first asked for out_scale).
  GATEJIT_RETURN_IF_ERROR(check_fp8_only_weight_and_out(c.dtype_hidden, c.dtype_attn));
  auto scale = weight_scale_of(a, c.dtype_weight, n, k);
  if (!scale.ok()) return scale.status();
  c.weight_scale = *scale;
  auto out_scale = out_scale_of(a, c.dtype_out, m, n);
  if (!out_scale.ok()) return out_scale.status();
  c.out_scale = *out_scale;
  c.ld_hidden = a.hidden.ld;
  c.ld_weight = a.weight.ld;
  c.ld_attn = a.attn.ld;
  c.ld_out = a.out.ld;
  c.act = a.act == GATEJIT_SIGMOID ? Activation::kSigmoid : Activation::kSilu;
  c.rounding = a.rounding == GATEJIT_ROUNDING_BOUNDARY ? Rounding::kBoundary : Rounding::kFused;
  // Every tensor, attn and out included, must reach its own element size
  // (one byte for an fp8 weight).
  const std::pair<const gatejit_tensor_t *, DType> tensors[] = {
      {&a.hidden, c.dtype_hidden}, {&a.weight, c.dtype_weight}, {&a.attn, c.dtype_attn}, {&a.out, c.dtype_out}};
  for (const auto &[t, d] : tensors) {
    const int64_t weakest = lowest_alignment({t});
    if (weakest < dtype_bytes(d))
      return invalid_argument("alignment: a base pointer or row stride is only " + std::to_string(weakest) +
                              "-byte aligned, less than the element size " + std::to_string(dtype_bytes(d)) +
                              " of " + dtype_name(d));
  }
  c.align = provable_alignment(a);
  return normalize(c);
}

}  // namespace gatejit
