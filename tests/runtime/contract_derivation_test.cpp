// From the C API's tensor descriptors to a contract: shapes must agree
// (errors name the field) and the alignment is what the pointers and strides
// prove.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gatejit
