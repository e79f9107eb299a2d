// From the C API's tensor descriptors to a contract: shapes must agree
// (errors name the field) and the alignment is what the pointers and strides
// prove.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "contract_derivation.h"

namespace gatejit {
namespace {

// Fake device addresses: derivation never dereferences them.
gatejit_gate_args_t seed_args(uintptr_t base = 0x7f0000000000) {
  gatejit_gate_args_t a = GATEJIT_GATE_ARGS_INIT;
  a.hidden = {reinterpret_cast<void *>(base), GATEJIT_BF16, 1, 7168, 7168};
  a.weight = {reinterpret_cast<void *>(base + 0x100000), GATEJIT_BF16, 1536, 7168, 7168};
  a.attn = {reinterpret_cast<void *>(base + 0x2000000), GATEJIT_BF16, 1, 1536, 1536};
  a.out = a.attn;
  a.act = GATEJIT_SIGMOID;
  a.rounding = GATEJIT_ROUNDING_BOUNDARY;
  a.device_kind = GATEJIT_DEVICE_CUDA;
  return a;
}

TEST(ContractDerivation, SeedCallGivesTheSeedContract) {
  auto c = derive_contract(seed_args(), Target::kGfx950);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->m, 1);
  EXPECT_EQ(c->n, 1536);
  EXPECT_EQ(c->k, 7168);
  EXPECT_EQ(c->align, 16);  // clamped: no template uses more
  EXPECT_EQ(c->target, Target::kGfx950);
}

TEST(ContractDerivation, AlignmentIsTheWeakestPointerOrStride) {
  gatejit_gate_args_t a = seed_args();
  EXPECT_EQ(provable_alignment(a), 256);
  a.weight.data = static_cast<char *>(a.weight.data) + 4;
  EXPECT_EQ(provable_alignment(a), 4);
  a = seed_args();
  a.hidden.rows = 2;
  a.attn.rows = a.out.rows = 2;
  a.hidden.ld = 7172;  // 14344 bytes: 8-byte aligned rows
  EXPECT_EQ(provable_alignment(a), 8);
  auto c = derive_contract(a, Target::kSm90);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->align, 8);
  a = seed_args();
  a.hidden.data = static_cast<char *>(a.hidden.data) + 1;
  auto odd = derive_contract(a, Target::kSm90);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("1-byte aligned"), std::string::npos);
  // attn and out are accessed per element: an odd row length there (N = 1003)
  // keeps the vector alignment of hidden and weight ...
  a = seed_args();
  a.weight.rows = 1003;
  a.hidden.rows = a.attn.rows = a.out.rows = 4;
  a.attn.cols = a.out.cols = a.attn.ld = a.out.ld = 1003;
  auto narrow_rows = derive_contract(a, Target::kSm90);
  ASSERT_TRUE(narrow_rows.ok()) << narrow_rows.status().message();
  EXPECT_EQ(narrow_rows->align, 16);
  // ... but they must still reach the element size.
  a.out.data = static_cast<char *>(a.out.data) + 1;
  auto odd_out = derive_contract(a, Target::kSm90);
  ASSERT_FALSE(odd_out.ok());
  EXPECT_NE(odd_out.status().message().find("1-byte aligned"), std::string::npos);
}

TEST(ContractDerivation, ShapeMismatchesNameTheField) {
  struct Case {
    void (*mutate)(gatejit_gate_args_t &);
    const char *field;
  } cases[] = {
      {[](gatejit_gate_args_t &a) { a.weight.cols = 7000; }, "weight.cols"},
      {[](gatejit_gate_args_t &a) { a.attn.cols = 1535; }, "attn.cols"},
      {[](gatejit_gate_args_t &a) { a.out.rows = 2; }, "out.rows"},
      {[](gatejit_gate_args_t &a) { a.hidden.data = nullptr; }, "hidden.data is NULL"},
      {[](gatejit_gate_args_t &a) { a.weight.ld = 7000; }, "weight.ld = 7000"},
      {[](gatejit_gate_args_t &a) { a.weight.dtype = GATEJIT_F16; }, "mixed dtypes"},
      // Enum fields out of range are refused at the C API, before C++ loads
      // them as enums (c_api_hostile_test.cpp: EnumFieldsOutOfRangeAreNamed).
  };
  for (const Case &c : cases) {
    gatejit_gate_args_t a = seed_args();
    c.mutate(a);
    auto r = derive_contract(a, Target::kGfx950);
    ASSERT_FALSE(r.ok()) << c.field;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.field), std::string::npos) << r.status().message();
  }
}

// --- fp8 e4m3 weights: args.weight_scale (API version 3) -------------------------

// The seed call with an fp8 weight of n x k and scales of the given shape
// (fake, 4-byte aligned addresses: derivation never dereferences them).
gatejit_gate_args_t fp8_args(int64_t scale_rows, int64_t scale_cols, int64_t n = 1536, int64_t k = 7168) {
  gatejit_gate_args_t a = seed_args();
  a.hidden.cols = a.hidden.ld = k;
  a.weight = {a.weight.data, GATEJIT_FP8_E4M3, n, k, k};
  a.attn.cols = a.attn.ld = n;
  a.out = a.attn;
  a.weight_scale = {reinterpret_cast<void *>(0x7f0004000000), GATEJIT_F32, scale_rows, scale_cols, scale_cols};
  return a;
}

// An fp8 out and its scales [M, N / 128] (fp32, packed), apart from attn.
gatejit_gate_args_t fp8_out_args(int64_t m = 2, int64_t n = 1536) {
  gatejit_gate_args_t a = seed_args();
  a.hidden.rows = m;
  a.attn = {a.attn.data, GATEJIT_BF16, m, n, n};
  a.weight.rows = n;
  a.out = {reinterpret_cast<void *>(0x7f0008000000), GATEJIT_FP8_E4M3, m, n, n};
  a.out_scale = {reinterpret_cast<void *>(0x7f000c000000), GATEJIT_F32, m, n / 128, n / 128};
  return a;
}

TEST(ContractDerivationFp8Out, DerivesTheOutScale) {
  auto c = derive_contract(fp8_out_args(), Target::kSm90);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->dtype_out, DType::kFP8E4M3);
  EXPECT_EQ(c->out_scale, OutScale::kPerTokenGroup128);
  EXPECT_EQ(c->dtype(), DType::kBF16);
}

TEST(ContractDerivationFp8Out, OutScaleErrorsNameTheField) {
  struct Case {
    const char *what;
    void (*mutate)(gatejit_gate_args_t &);
    std::vector<std::string> says;
  } cases[] = {
      {"no scales", [](gatejit_gate_args_t &a) { a.out_scale = {}; }, {"out_scale.data is NULL", "[2, 12]"}},
      {"f16 scales", [](gatejit_gate_args_t &a) { a.out_scale.dtype = GATEJIT_F16; }, {"out_scale.dtype = 1"}},
      {"wrong shape", [](gatejit_gate_args_t &a) { a.out_scale.cols = a.out_scale.ld = 13; },
       {"out_scale shape [2, 13]", "[M, N / 128] = [2, 12]"}},
      {"a row stride", [](gatejit_gate_args_t &a) { a.out_scale.ld = 16; }, {"out_scale.ld = 16", "packed"}},
      {"misaligned", [](gatejit_gate_args_t &a) { a.out_scale.data = static_cast<char *>(a.out_scale.data) + 2; },
       {"out_scale.data", "4-byte aligned"}},
      {"in place", [](gatejit_gate_args_t &a) { a.out.data = a.attn.data; }, {"out:", "may not overlap attn"}},
      {"scales over out", [](gatejit_gate_args_t &a) { a.out_scale.data = static_cast<char *>(a.out.data) + 64; },
       {"out_scale:", "overlap out"}},
      {"N not whole groups",
       [](gatejit_gate_args_t &a) {
         a.weight.rows = a.attn.cols = a.attn.ld = a.out.cols = a.out.ld = 1000;
       },
       {"out.cols = 1000", "groups of 128"}},
      {"scales with a bf16 out", [](gatejit_gate_args_t &a) { a.out.dtype = GATEJIT_BF16; }, {"out_scale", "bf16 out"}},
      // fp8 attn or hidden is named as such, before the scales are asked for.
      {"fp8 attn, no scales",
       [](gatejit_gate_args_t &a) {
         a.attn.dtype = GATEJIT_FP8_E4M3;
         a.out_scale = {};
       },
       {"dtype_attn = fp8_e4m3", "only the weight and out may be fp8"}},
      {"fp8 hidden", [](gatejit_gate_args_t &a) { a.hidden.dtype = GATEJIT_FP8_E4M3; }, {"dtype_hidden = fp8_e4m3"}},
  };
  for (const Case &c : cases) {
    gatejit_gate_args_t a = fp8_out_args();
    c.mutate(a);
    auto r = derive_contract(a, Target::kSm90);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.what;
    for (const std::string &s : c.says)
      EXPECT_NE(r.status().message().find(s), std::string::npos) << c.what << ": " << r.status().message();
  }
}

TEST(ContractDerivationFp8, TheScalesShapeNamesTheirKind) {
  struct Case {
    int64_t n, k, rows, cols;
    WeightScale want;
  } cases[] = {
      {1536, 7168, 1536, 1, WeightScale::kPerChannel}, {1536, 7168, 12, 56, WeightScale::kBlock128},
      {1000, 2064, 1000, 1, WeightScale::kPerChannel}, {1000, 2064, 8, 17, WeightScale::kBlock128},
      {1, 7168, 1, 56, WeightScale::kBlock128},
      // N = 1, K <= 128: one scale, per channel and per block alike.
      {1, 128, 1, 1, WeightScale::kPerChannel},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::to_string(c.n) + " x " + std::to_string(c.k) + " scales [" + std::to_string(c.rows) + ", " +
                 std::to_string(c.cols) + "]");
    auto r = derive_contract(fp8_args(c.rows, c.cols, c.n, c.k), Target::kSm90);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->dtype_weight, DType::kFP8E4M3);
    EXPECT_EQ(r->dtype_hidden, DType::kBF16);
    EXPECT_EQ(r->weight_scale, c.want);
    EXPECT_EQ(weight_scale_count(*r), c.rows * c.cols);
    EXPECT_EQ(r->n, c.n);
    EXPECT_EQ(r->k, c.k);
  }
  // A bf16 call with weight_scale zeroed (and a version-2 caller's, which the
  // C API zeroes) has no scales.
  auto plain = derive_contract(seed_args(), Target::kSm90);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->weight_scale, WeightScale::kNone);
}

TEST(ContractDerivationFp8, WeightScaleErrorsNameWeightScale) {
  struct Case {
    const char *what;
    void (*mutate)(gatejit_gate_args_t &);
    std::vector<std::string> says;
  } cases[] = {
      {"no scales", [](gatejit_gate_args_t &a) { a.weight_scale = gatejit_tensor_t{}; },
       {"weight_scale.data is NULL", "[1536, 1]", "[12, 56]"}},
      {"N + 1 rows", [](gatejit_gate_args_t &a) { a.weight_scale.rows = 1537; },
       {"weight_scale shape [1537, 1]", "[1536, 1]", "[12, 56]"}},
      {"two columns", [](gatejit_gate_args_t &a) { a.weight_scale.cols = a.weight_scale.ld = 2; },
       {"weight_scale shape [1536, 2]", "[1536, 1]", "[12, 56]"}},
      {"block scales transposed",
       [](gatejit_gate_args_t &a) {
         a.weight_scale.rows = 56;
         a.weight_scale.cols = a.weight_scale.ld = 12;
       },
       {"weight_scale shape [56, 12]", "[1536, 1]", "[12, 56]"}},
      {"one block row short",
       [](gatejit_gate_args_t &a) {
         a.weight_scale.rows = 11;
         a.weight_scale.cols = a.weight_scale.ld = 56;
       },
       {"weight_scale shape [11, 56]"}},
      {"bf16 scales", [](gatejit_gate_args_t &a) { a.weight_scale.dtype = GATEJIT_BF16; },
       {"weight_scale.dtype = 0", "GATEJIT_F32"}},
      {"fp8 scales", [](gatejit_gate_args_t &a) { a.weight_scale.dtype = GATEJIT_FP8_E4M3; },
       {"weight_scale.dtype = 3", "GATEJIT_F32"}},
      {"a row stride", [](gatejit_gate_args_t &a) { a.weight_scale.ld = 4; }, {"weight_scale.ld = 4", "packed"}},
      {"misaligned",
       [](gatejit_gate_args_t &a) { a.weight_scale.data = static_cast<char *>(a.weight_scale.data) + 2; },
       {"weight_scale.data", "4-byte aligned"}},
      {"scales with a bf16 weight",
       [](gatejit_gate_args_t &a) { a.weight.dtype = GATEJIT_BF16; }, {"weight_scale", "bf16"}},
      {"fp8 hidden", [](gatejit_gate_args_t &a) { a.hidden.dtype = GATEJIT_FP8_E4M3; }, {"dtype_hidden = fp8_e4m3"}},
      {"fp8 attn", [](gatejit_gate_args_t &a) { a.attn.dtype = GATEJIT_FP8_E4M3; }, {"dtype_attn = fp8_e4m3"}},
      {"fp8 out without its scales", [](gatejit_gate_args_t &a) { a.out.dtype = GATEJIT_FP8_E4M3; },
       {"out_scale.data is NULL", "fp8_e4m3 out"}},
      {"f32 activations",
       [](gatejit_gate_args_t &a) { a.hidden.dtype = a.attn.dtype = a.out.dtype = GATEJIT_F32; },
       {"dtype_hidden = f32", "fp8_e4m3"}},
  };
  for (const Case &c : cases) {
    gatejit_gate_args_t a = fp8_args(1536, 1);
    c.mutate(a);
    auto r = derive_contract(a, Target::kGfx950);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.what;
    for (const std::string &s : c.says)
      EXPECT_NE(r.status().message().find(s), std::string::npos) << c.what << ": " << r.status().message();
  }
  // On gfx942 (fnuz conversions only) the call is refused, naming why.
  auto fnuz = derive_contract(fp8_args(1536, 1), Target::kGfx942);
  ASSERT_FALSE(fnuz.ok());
  EXPECT_NE(fnuz.status().message().find("fnuz"), std::string::npos) << fnuz.status().message();
}

// The weight's row stride counts bytes for an fp8 weight: K = 7176 bytes is
// 8-byte aligned (a bf16 row of 7176 elements would be 16-byte aligned).
TEST(ContractDerivationFp8, AlignmentCountsTheWeightsBytes) {
  gatejit_gate_args_t a = fp8_args(1536, 1, 1536, 7176);
  EXPECT_EQ(provable_alignment(a), 8);
  auto c = derive_contract(a, Target::kSm90);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->align, 8);
  a = fp8_args(1536, 1, 1536, 7184);
  EXPECT_EQ(provable_alignment(a), 16);
}

// An odd K is a whole number of fp8 elements per row: the weight's byte
// stride is odd, but its element is one byte, and the generic kernel reads
// it element by element. The call must not be refused for an alignment
// below "the element size 2" (the activations' element, not the weight's).
TEST(ContractDerivationFp8, OddKIsServedByTheGenericKernel) {
  gatejit_gate_args_t a = fp8_args(1000, 1, 1000, 1001);
  auto c = derive_contract(a, Target::kSm90);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->k, 1001);
  EXPECT_EQ(c->weight_scale, WeightScale::kPerChannel);
}

}  // namespace
}  // namespace gatejit
